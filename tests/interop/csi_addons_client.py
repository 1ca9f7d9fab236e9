#!/usr/bin/env python3
"""A CSI-Addons client that sends what the stock csi-addons sidecar sends (kubernetes-csi-addons,
internal/sidecar/service/encryptionkeyrotation.go and sidecar/internal/client/client.go), for tests of
`cryptadm volume serve`.

Stubs are generated at run time from the vendored protos (proto/) with grpcio-tools into a scratch
directory, once: a directory that already holds them (`generate`, or an earlier run) is used as it is. Nothing
generated is committed.

usage: csi_addons_client.py PROTO_DIR STUBS_DIR SOCKET AUTHORITY COMMAND [ARGS]
       csi_addons_client.py generate PROTO_DIR STUBS_DIR   (only the stubs: e.g. on a host, for a slow guest)
  AUTHORITY: `default` (grpcio's own: the socket path, percent-encoded) or a value for
             grpc.default_authority (grpc-go, i.e. the sidecar, sends `localhost`)
  COMMAND:
    identity                 Probe, GetIdentity, GetCapabilities; prints JSON
    rotate REQUEST_JSON...   one EncryptionKeyRotate per argument, all at once on one channel;
                             prints a JSON list of {"code", "details"}
    sidecar REQUEST_JSON...  both on one channel, as the sidecar connects and then rotates: identity's line, then
                             rotate's (one Python start instead of two, each costly in a guest under TCG)
A REQUEST_JSON is {"volume_id", "parameters", "secrets", "mode"} (mode: the CSI access mode number; the
sidecar sets only volume_capability.access_mode.mode and never volume_path or encryption_key), or has a
"volume_path" for tests that give one.
"""
import concurrent.futures
import json
import os
import sys


GENERATED = ".generated"


def generate(proto_dir, out_dir):
    if os.path.exists(os.path.join(out_dir, GENERATED)):
        sys.path.insert(0, out_dir)
        return
    from grpc_tools import protoc
    import grpc_tools

    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    os.makedirs(out_dir, exist_ok=True)
    protos = [
        "github.com/container-storage-interface/spec/lib/go/csi/csi.proto",
        "identity/identity.proto",
        "encryptionkeyrotation/encryptionkeyrotation.proto",
    ]
    for proto in protos:
        args = ["protoc", f"-I{proto_dir}", f"-I{well_known}", f"--python_out={out_dir}", f"--grpc_python_out={out_dir}", proto]
        if protoc.main(args) != 0:
            raise SystemExit(f"protoc failed for {proto}")
    open(os.path.join(out_dir, GENERATED), "w").close()
    # protoc writes packages without __init__.py; Python 3 namespace packages import them as they are.
    sys.path.insert(0, out_dir)


def main():
    if sys.argv[1:2] == ["generate"]:
        generate(*sys.argv[2:4])
        return
    proto_dir, out_dir, socket, authority, command, *rest = sys.argv[1:]
    generate(proto_dir, out_dir)
    import grpc
    from identity import identity_pb2, identity_pb2_grpc
    from encryptionkeyrotation import encryptionkeyrotation_pb2 as ekr, encryptionkeyrotation_pb2_grpc as ekr_grpc

    options = [] if authority == "default" else [("grpc.default_authority", authority)]
    channel = grpc.insecure_channel(f"unix://{socket}", options=options)
    grpc.channel_ready_future(channel).result(timeout=30)
    def identity():
        stub = identity_pb2_grpc.IdentityStub(channel)
        probe = stub.Probe(identity_pb2.ProbeRequest(), timeout=30)
        ident = stub.GetIdentity(identity_pb2.GetIdentityRequest(), timeout=30)
        caps = stub.GetCapabilities(identity_pb2.GetCapabilitiesRequest(), timeout=30)
        out = {
            "probe_ready": probe.ready.value if probe.HasField("ready") else None,
            "name": ident.name,
            "capabilities": [],
        }
        for cap in caps.capabilities:
            kind = cap.WhichOneof("type")
            out["capabilities"].append({"kind": kind, "type": getattr(cap, kind).type})
        print(json.dumps(out), flush=True)

    def rotate(specs):
        stub = ekr_grpc.EncryptionKeyRotationControllerStub(channel)

        def call(spec):
            request = ekr.EncryptionKeyRotateRequest(
                volume_id=spec["volume_id"],
                volume_path=spec.get("volume_path", ""),
                parameters=spec.get("parameters", {}),
                secrets=spec.get("secrets", {}),
            )
            request.volume_capability.access_mode.mode = spec.get("mode", 7)
            try:
                stub.EncryptionKeyRotate(request, timeout=600)
                return {"code": "OK", "details": ""}
            except grpc.RpcError as e:
                return {"code": e.code().name, "details": e.details()}

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(specs))) as pool:
            print(json.dumps(list(pool.map(call, specs))), flush=True)

    specs = [json.loads(arg) for arg in rest]
    if command == "identity":
        identity()
    elif command == "rotate":
        rotate(specs)
    elif command == "sidecar":
        identity()
        rotate(specs)
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
