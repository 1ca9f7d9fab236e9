#!/usr/bin/env bash
# What tests/cli/containerd.rs and tests/cli/podman.rs need beyond .ci/run's reference tools: runc (containerd's
# and podman's OCI runtime), podman (CRI-O's image path: containers/image + containers/storage), a static busybox
# (the test images' entrypoint and the pod sandbox's pause process, no registry being reachable). Idempotent.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=()
for tool in runc:runc podman:podman containerd:containerd skopeo:skopeo; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
done
# busybox-static and the dynamic `busybox` package both provide /bin/busybox: the test needs the static one.
dpkg -s busybox-static >/dev/null 2>&1 || need+=(busybox-static)
if [ "${#need[@]}" -gt 0 ]; then
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
podman --version
runc --version | sed -n 1p
