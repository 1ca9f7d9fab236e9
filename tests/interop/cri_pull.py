"""A CRI ImageService client for the containerd proof test (tests/cli/containerd.rs).

  cri_pull.py SOCKET pull IMAGE      -> {"image_ref": ...}; on failure {"grpc_code", "details"} and exit 2
  cri_pull.py SOCKET remove IMAGE

The stubs are generated at run time from the vendored tests/interop/cri/api.proto (grpcio-tools).
"""
import json
import os
import sys
import tempfile

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
    return api_pb2, api_pb2_grpc


def main():
    sock, command, image = sys.argv[1], sys.argv[2], sys.argv[3]
    pb, pbg = stubs()
    channel = grpc.insecure_channel("unix://" + sock)
    grpc.channel_ready_future(channel).result(timeout=20)
    service = pbg.ImageServiceStub(channel)
    try:
        if command == "pull":
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
