"""A CRI client for the containerd proof test (tests/cli/containerd.rs), calling what the kubelet calls.

  cri_pull.py SOCKET pull IMAGE      -> {"image_ref": ...}; on failure {"grpc_code", "details"} and exit 2
  cri_pull.py SOCKET remove IMAGE
  cri_pull.py SOCKET run IMAGE LOGDIR [COMMAND [ARG...]]
      a Pod of one container, as the kubelet starts it: RunPodSandbox (host network, as the test makes no CNI
      network, hence the host's UTS namespace and no hostname), PullImage, CreateContainer (with a BestEffort
      Pod's resources), StartContainer, then waits for the container to exit, reads its CRI log (LOGDIR/app.log)
      and removes the container and the sandbox (StopPodSandbox, RemovePodSandbox), so that nothing holds the
      image's snapshots afterwards. COMMAND and ARGs: the container spec's `command` and `args` (the image's
      entrypoint when absent).
      -> {"exit_code": N, "stdout": "...", "stderr": "..."}; on failure {"stage": RPC, "grpc_code", "details"}
         and exit 2 (the sandbox is removed then too)

The stubs are generated at run time from the vendored tests/interop/cri/api.proto (grpcio-tools).
"""
import json
import os
import shutil
import sys
import tempfile
import time

import grpc
from grpc_tools import protoc

HERE = os.path.dirname(os.path.abspath(__file__))


def stubs():
    out = tempfile.mkdtemp(prefix="cri-stubs-")
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + os.path.join(HERE, "cri"), "-I" + include,
                      "--python_out=" + out, "--grpc_python_out=" + out, "api.proto"])
    if rc != 0:
        sys.exit("protoc failed on api.proto")
    sys.path.insert(0, out)
    import api_pb2, api_pb2_grpc
    # Loaded: the generated files are not needed any more (a test run left one directory per start in /tmp).
    sys.path.remove(out)
    shutil.rmtree(out, ignore_errors=True)
    return api_pb2, api_pb2_grpc


class Failed(Exception):
    def __init__(self, stage, error):
        super().__init__(stage)
        self.stage, self.error = stage, error


def call(stage, method, request, timeout=60):
    try:
        return method(request, timeout=timeout)
    except grpc.RpcError as e:
        raise Failed(stage, e) from None


def read_cri_log(path):
    """The CRI log format: `TIMESTAMP STREAM P|F CONTENT` per line (P: a partial line continued by the next)."""
    streams = {"stdout": "", "stderr": ""}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            _, stream, tag, content = line.rstrip("\n").split(" ", 3)
            streams[stream] += content + ("" if tag == "P" else "\n")
    return streams


def run_pod(pb, pbg, channel, image, log_dir, command=()):
    runtime, images = pbg.RuntimeServiceStub(channel), pbg.ImageServiceStub(channel)
    sandbox_config = pb.PodSandboxConfig(
        metadata=pb.PodSandboxMetadata(name="app", uid="cryptadm-test-pod", namespace="default", attempt=0),
        log_directory=log_dir,
        linux=pb.LinuxPodSandboxConfig(security_context=pb.LinuxSandboxSecurityContext(
            namespace_options=pb.NamespaceOption(network=pb.NODE))),
    )
    sandbox = call("RunPodSandbox", runtime.RunPodSandbox, pb.RunPodSandboxRequest(config=sandbox_config),
                   timeout=120).pod_sandbox_id
    try:
        image_ref = call("PullImage", images.PullImage,
                         pb.PullImageRequest(image=pb.ImageSpec(image=image), sandbox_config=sandbox_config),
                         timeout=120).image_ref
        # The resources the kubelet sends for a BestEffort Pod.
        resources = pb.LinuxContainerResources(cpu_shares=2, oom_score_adj=1000)
        # A Pod spec's `command` replaces the image's entrypoint, as the kubelet passes it (its `args` empty here:
        # the rest of COMMAND goes in `args`).
        config = pb.ContainerConfig(metadata=pb.ContainerMetadata(name="app", attempt=0),
                                    image=pb.ImageSpec(image=image_ref), log_path="app.log",
                                    command=list(command[:1]), args=list(command[1:]),
                                    linux=pb.LinuxContainerConfig(resources=resources))
        container = call("CreateContainer", runtime.CreateContainer, pb.CreateContainerRequest(
            pod_sandbox_id=sandbox, config=config, sandbox_config=sandbox_config)).container_id
        call("StartContainer", runtime.StartContainer, pb.StartContainerRequest(container_id=container))
        deadline = time.monotonic() + 60
        while True:
            status = call("ContainerStatus", runtime.ContainerStatus,
                          pb.ContainerStatusRequest(container_id=container)).status
            if status.state == pb.CONTAINER_EXITED:
                break
            if time.monotonic() > deadline:
                raise Failed("ContainerStatus", None)
            time.sleep(0.1)
        result = {"exit_code": status.exit_code, "reason": status.reason, "image_ref": image_ref}
        result.update(read_cri_log(os.path.join(log_dir, "app.log")))
        call("RemoveContainer", runtime.RemoveContainer, pb.RemoveContainerRequest(container_id=container))
        return result
    finally:
        runtime.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=sandbox), timeout=60)
        runtime.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=sandbox), timeout=60)


def main():
    sock, command, image = sys.argv[1], sys.argv[2], sys.argv[3]
    pb, pbg = stubs()
    channel = grpc.insecure_channel("unix://" + sock)
    grpc.channel_ready_future(channel).result(timeout=20)
    service = pbg.ImageServiceStub(channel)
    try:
        if command == "run":
            try:
                print(json.dumps(run_pod(pb, pbg, channel, image, sys.argv[4], sys.argv[5:])))
            except Failed as failed:
                error = failed.error
                print(json.dumps({"stage": failed.stage,
                                  "grpc_code": error.code().name if error else "DEADLINE_EXCEEDED",
                                  "details": error.details() if error else "the container did not exit"}))
                sys.exit(2)
        elif command == "pull":
            reply = service.PullImage(pb.PullImageRequest(image=pb.ImageSpec(image=image)), timeout=120)
            print(json.dumps({"image_ref": reply.image_ref}))
        elif command == "remove":
            service.RemoveImage(pb.RemoveImageRequest(image=pb.ImageSpec(image=image)), timeout=60)
            print(json.dumps({"removed": image}))
        else:
            sys.exit("unknown command " + command)
    except grpc.RpcError as e:
        print(json.dumps({"grpc_code": e.code().name, "details": e.details()}))
        sys.exit(2)


if __name__ == "__main__":
    main()
