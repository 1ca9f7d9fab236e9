"""An ocicrypt gRPC key provider (keyprovider.KeyProviderService) for cryptadm's tests.

  keyprovider_grpc.py ADDRESS LOGFILE     ADDRESS: unix:///path or 127.0.0.1:PORT

WrapKey seals the private options with AES-256-GCM under a fixed key; UnWrapKey opens them. Each call appends
{"rpc", "op", "dc_parameters"} to LOGFILE. The stubs are generated at start from keyprovider/keyprovider.proto.
"""
import base64
import json
import os
import shutil
import sys
import tempfile
from concurrent import futures

import grpc
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from grpc_tools import protoc

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = bytes(range(32))


def stubs():
    out = tempfile.mkdtemp(prefix="kp-stubs-")
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    if protoc.main(["protoc", "-I" + os.path.join(HERE, "keyprovider"), "-I" + include,
                    "--python_out=" + out, "--grpc_python_out=" + out, "keyprovider.proto"]) != 0:
        sys.exit("protoc failed on keyprovider.proto")
    sys.path.insert(0, out)
    import keyprovider_pb2, keyprovider_pb2_grpc
    # Loaded: the generated files are not needed any more (a test run left one directory per start in /tmp).
    sys.path.remove(out)
    shutil.rmtree(out, ignore_errors=True)
    return keyprovider_pb2, keyprovider_pb2_grpc


def main():
    address, logfile = sys.argv[1], sys.argv[2]
    pb, pbg = stubs()

    def log(**entry):
        with open(logfile, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def reply(obj):
        return pb.keyProviderKeyWrapProtocolOutput(KeyProviderKeyWrapProtocolOutput=json.dumps(obj).encode())

    class Provider(pbg.KeyProviderServiceServicer):
        def WrapKey(self, request, context):
            req = json.loads(request.KeyProviderKeyWrapProtocolInput)
            log(rpc="WrapKey", op=req["op"], dc_parameters=None)
            opts = base64.b64decode(req["keywrapparams"]["optsdata"])
            nonce = os.urandom(12)
            blob = json.dumps({"nonce": base64.b64encode(nonce).decode(),
                               "sealed": base64.b64encode(AESGCM(KEY).encrypt(nonce, opts, None)).decode()})
            return reply({"keywrapresults": {"annotation": base64.b64encode(blob.encode()).decode()}})

        def UnWrapKey(self, request, context):
            req = json.loads(request.KeyProviderKeyWrapProtocolInput)
            params = (req["keyunwrapparams"]["dc"] or {}).get("Parameters")
            log(rpc="UnWrapKey", op=req["op"], dc_parameters=sorted(params or {}))
            blob = json.loads(base64.b64decode(req["keyunwrapparams"]["annotation"]))
            opts = AESGCM(KEY).decrypt(base64.b64decode(blob["nonce"]), base64.b64decode(blob["sealed"]), None)
            return reply({"keyunwrapresults": {"optsdata": base64.b64encode(opts).decode()}})

    server = grpc.server(futures.ThreadPoolExecutor(4))
    pbg.add_KeyProviderServiceServicer_to_server(Provider(), server)
    server.add_insecure_port(address)
    server.start()
    print("listening", address, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
