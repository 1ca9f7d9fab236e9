#!/usr/bin/env python3
"""A hostile OCI registry for the hardening tests (plain HTTP on 127.0.0.1, a random port written to PORT_FILE).

usage: hostile_registry.py PORT_FILE

Repositories (any tag):
  deep        an index chain 30,000 levels deep (each index lists the next)
  wide        30 levels of indexes, each listing the next index twice (2^30 paths)
  huge        a manifest whose Content-Length says 1.5 GiB (zeros are sent until the client goes away)
  chunked     a manifest of 1.5 GiB without Content-Length (chunked)
  noisy       404 with an error envelope whose message has CR/LF, a forged `error:` line, ESC, C1 and U+202E
  loud        404 with an error body of 64 MiB
  tokenhuge   401 with a Bearer challenge whose token service answers 1.5 GiB
  tokenecho   401 with a Bearer challenge whose token service refuses, echoing the Authorization header
  tokenjunk   401 with a Bearer challenge whose token service answers 200 with something that is not a token
  presigned   a one-layer image whose blobs redirect to localhost storage with an X-Amz-Signature that answers 403
  redirected  a one-layer image (5 MiB layer) whose blobs redirect (307) to localhost storage with an
              X-Amz-Signature, which serves them and honours Range (206), as S3 does
Every request is appended to PORT_FILE.log as `METHOD PATH`.
"""
import hashlib
import http.server
import json
import random
import socketserver
import sys

INDEX = "application/vnd.oci.image.index.v1+json"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
GIB_1_5 = 1536 * 1024 * 1024

blobs = {}  # digest -> (media type, bytes)


def put(media_type, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    blobs[digest] = (media_type, data)
    return digest


def index_of(children):
    return json.dumps({
        "schemaVersion": 2,
        "mediaType": INDEX,
        "manifests": [{"mediaType": INDEX, "digest": d, "size": len(blobs[d][1])} for d in children],
    }).encode()


def chain(levels, fanout):
    """The root digest of `levels` indexes, each listing the next `fanout` times, over an empty index."""
    digest = put(INDEX, index_of([]))
    for _ in range(levels):
        digest = put(INDEX, index_of([digest] * fanout))
    return digest


roots = {"deep": chain(30000, 1), "wide": chain(30, 2)}
config = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}).encode()
config_digest = put("application/vnd.oci.image.config.v1+json", config)
layer_digest = "sha256:" + "1" * 64
roots["presigned"] = put(MANIFEST, json.dumps({
    "schemaVersion": 2,
    "mediaType": MANIFEST,
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": len(config)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest, "size": 10}],
}).encode())

stored_layer = random.Random(26).randbytes(5 << 20)
stored_digest = put("application/vnd.oci.image.layer.v1.tar", stored_layer)
roots["redirected"] = put(MANIFEST, json.dumps({
    "schemaVersion": 2,
    "mediaType": MANIFEST,
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": len(config)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": stored_digest,
                "size": len(stored_layer)}],
}).encode())


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def zeros(self, total, chunked):
        self.send_response(200)
        self.send_header("Content-Type", MANIFEST)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(total))
        self.end_headers()
        piece = b"0" * 65536
        try:
            for _ in range(total // len(piece)):
                if chunked:
                    self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
                else:
                    self.wfile.write(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def ranged(self, data):
        """`data`, or the part a `Range: bytes=A-B` asks for (206), as storage answers."""
        wanted = self.headers.get("Range", "")
        with open(sys.argv[1] + ".log", "a") as log:
            log.write(f"RANGE {wanted or '-'}\n")
        if not wanted.startswith("bytes="):
            return self.send(200, data, [("Accept-Ranges", "bytes")])
        first, _, last = wanted[len("bytes="):].partition("-")
        first, last = int(first), min(int(last) if last else len(data) - 1, len(data) - 1)
        return self.send(206, data[first:last + 1], [("Content-Range", f"bytes {first}-{last}/{len(data)}")])

    def challenge(self, service):
        realm = f"http://127.0.0.1:{self.server.server_address[1]}/token/{service}"
        self.send(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}',
                  [("WWW-Authenticate", f'Bearer realm="{realm}",service="hostile"')])

    def do_GET(self):
        with open(sys.argv[1] + ".log", "a") as log:
            log.write(f"GET {self.path}\n")
        path = self.path.split("?")[0]
        parts = path.strip("/").split("/")
        if path == "/v2/":
            return self.send(200, b"{}")
        if parts[0] == "token":
            kind = parts[1]
            if kind == "tokenhuge":
                return self.zeros(GIB_1_5, False)
            if kind == "tokenecho":
                echoed = self.headers.get("Authorization", "")
                return self.send(401, f"denied for {echoed}".encode())
            return self.send(200, b"<html>not a token</html>")
        if parts[0] == "storage":
            return self.send(403, b"<Error><Code>SignatureDoesNotMatch</Code></Error>")
        if parts[0] == "files" and len(parts) == 2 and parts[1] in blobs:
            return self.ranged(blobs[parts[1]][1])
        if len(parts) < 4 or parts[0] != "v2":
            return self.send(404)
        repo, kind, ref = parts[1], parts[2], parts[3]
        if repo in ("tokenhuge", "tokenecho", "tokenjunk") and not self.headers.get("Authorization"):
            return self.challenge(repo)
        if kind == "manifests":
            if repo == "huge":
                return self.zeros(GIB_1_5, False)
            if repo == "chunked":
                return self.zeros(GIB_1_5, True)
            if repo == "noisy":
                message = "bad\r\nerror: forged line\x1b[31m\u009b\u202eevil"
                body = json.dumps({"errors": [{"code": "MANIFEST_UNKNOWN", "message": message}]}).encode()
                return self.send(404, body, [("Content-Type", "application/json")])
            if repo == "loud":
                return self.send(404, b"x" * (64 * 1024 * 1024))
            digest = ref if ref.startswith("sha256:") else roots.get(repo)
            if digest not in blobs:
                return self.send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN","message":"unknown"}]}')
            media_type, data = blobs[digest]
            return self.send(200, data, [("Content-Type", media_type), ("Docker-Content-Digest", digest)])
        if kind == "blobs":
            if repo == "redirected":
                port = self.server.server_address[1]
                location = f"http://localhost:{port}/files/{ref}?X-Amz-Signature=s3cretsignature"
                return self.send(307, b"", [("Location", location)])
            if repo == "presigned":
                port = self.server.server_address[1]
                location = (f"http://localhost:{port}/storage/{ref}?X-Amz-Credential=AKIASECRETCRED"
                            "&X-Amz-Signature=deadbeefsignature")
                return self.send(307, b"", [("Location", location)])
            if ref in blobs:
                return self.send(200, blobs[ref][1])
        return self.send(404)

    do_HEAD = do_GET


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    server = Server(("127.0.0.1", 0), Handler)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
