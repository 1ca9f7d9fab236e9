#!/usr/bin/env python3
"""A hostile OCI registry for the hardening tests (plain HTTP on 127.0.0.1, a random port written to PORT_FILE).

usage: hostile_registry.py PORT_FILE [push]

Repositories (any tag) to pull from:
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
  samehost    as presigned, but the storage is on the registry's own host name (127.0.0.1) and another port
              (MinIO beside a self-hosted registry); its 403 quotes the query string and the signature, as S3's
              SignatureDoesNotMatch does
  envelope5xx every manifest request answers 500 with distribution's error envelope (code UNKNOWN)
  drip        the manifest's answer headers are dripped a byte every half second
Storage (the `presigned` and `samehost` redirect targets) refuses with a body quoting the request's query.

With `push`, a destination instead: an in-memory registry behind a token service (`/v2/` answers its challenge with
a body of 1.5 GiB, which a client must not read), whose repositories misbehave each at one step of a push:
  tokenhuge       the token service answers 1.5 GiB
  tokenecho       the token service refuses, echoing the Authorization header
  tokendrip       the token service drips its answer, a byte every half second
  headhuge        a blob HEAD answers 404 with Content-Length 1.5 GiB (and, as HEAD, no body): the push goes on
  posthuge        an upload's POST answers 400 with a chunked body of 1.5 GiB
  patchhuge       an upload's PATCH answers 403 (before reading the request) with a chunked body of 1.5 GiB
  puthuge         an upload's closing PUT answers 400 with a chunked body of 1.5 GiB
  putdrip         an upload's closing PUT answers 400 with a body dripped a byte every half second
  manifesthuge    a manifest PUT answers 201 with a body of 1.5 GiB: the push succeeds without reading it
  manifestrefused a manifest PUT answers 400 with a chunked body of 1.5 GiB
  pushnoisy       a manifest PUT answers 400 with an error envelope whose message has CR/LF, ESC, C1 and U+202E
Any other repository takes the push.
Every request is appended to PORT_FILE.log as `METHOD PATH`.
"""
import hashlib
import http.server
import json
import random
import socketserver
import sys
import time
import urllib.parse
import uuid

from serve_helpers import announce_port, exit_with_parent

INDEX = "application/vnd.oci.image.index.v1+json"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
GIB_1_5 = 1536 * 1024 * 1024

blobs = {}  # digest -> (media type, bytes)
storage_port = 0  # the second listener's port, set in main()


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
roots["samehost"] = roots["presigned"] = put(MANIFEST, json.dumps({
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

    def zeros(self, total, chunked, status=200):
        self.send_response(status)
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
            query = urllib.parse.urlsplit(self.path).query
            signature = urllib.parse.parse_qs(query).get("X-Amz-Signature", [""])[0]
            return self.send(403, (f"<Error><Code>SignatureDoesNotMatch</Code><CanonicalQueryString>{query}"
                                   f"</CanonicalQueryString><SignatureProvided>{signature}</SignatureProvided>"
                                   "</Error>").encode())
        if parts[0] == "files" and len(parts) == 2 and parts[1] in blobs:
            return self.ranged(blobs[parts[1]][1])
        if len(parts) < 4 or parts[0] != "v2":
            return self.send(404)
        repo, kind, ref = parts[1], parts[2], parts[3]
        if repo in ("tokenhuge", "tokenecho", "tokenjunk") and not self.headers.get("Authorization"):
            return self.challenge(repo)
        if kind == "manifests":
            if repo == "envelope5xx":
                return self.send(500, b'{"errors":[{"code":"UNKNOWN","message":"unknown error","detail":{}}]}',
                                 [("Content-Type", "application/json")])
            if repo == "drip":
                try:
                    for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"x" * 100000:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(0.5)
                except OSError:
                    pass
                self.close_connection = True
                return
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
            if repo == "samehost":
                location = (f"http://127.0.0.1:{storage_port}/storage/{ref}?X-Amz-Credential=AKIASAMEHOSTCRED"
                            "&X-Amz-Signature=samehostsignature")
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


NOISY = "bad\r\nerror: forged line\x1b[31m\u009b\u202eevil"
TOKEN = "hostile-push-token"
stored = {}  # repository -> set of blob digests
uploads = {}  # upload id -> bytearray


class PushHandler(Handler):
    """A push destination whose repositories misbehave (see the module's doc)."""

    def log_request_line(self):
        with open(sys.argv[1] + ".log", "a") as log:
            log.write(f"{self.command} {self.path}\n")

    def body(self):
        """The request's body, by Content-Length or chunked."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def drip(self, status):
        self.send_response(status)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for _ in range(240):
                self.wfile.write(b"1\r\nx\r\n")
                self.wfile.flush()
                time.sleep(0.5)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def push_challenge(self, huge=False):
        realm = f"http://127.0.0.1:{self.server.server_address[1]}/token"
        self.send_response(401)
        self.send_header("WWW-Authenticate", f'Bearer realm="{realm}",service="hostile"')
        if not huge:
            body = b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}'
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_header("Content-Length", str(GIB_1_5))
        self.end_headers()
        try:
            for _ in range(GIB_1_5 // 65536):
                self.wfile.write(b"0" * 65536)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def token(self):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        scope = (query.get("scope") or [""])[0]
        repo = scope.split(":")[1] if scope.count(":") >= 2 else ""
        if repo == "tokenhuge":
            return self.zeros(GIB_1_5, False)
        if repo == "tokenecho":
            return self.send(401, f"denied for {self.headers.get('Authorization', '')}".encode())
        if repo == "tokendrip":
            return self.drip(200)
        return self.send(200, json.dumps({"token": TOKEN}).encode())

    def handle_push(self):
        self.log_request_line()
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        if url.path == "/v2/":
            return self.push_challenge(huge=True)
        if url.path == "/token":
            return self.token()
        parts = url.path.strip("/").split("/")
        if len(parts) < 4 or parts[0] != "v2":
            return self.send(404)
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self.body() if self.command in ("PUT", "POST") else None
            return self.push_challenge()
        repo, kind = parts[1], parts[2]
        blobs_here = stored.setdefault(repo, set())
        if kind == "blobs" and parts[3] != "uploads":
            if self.command != "HEAD":
                return self.send(404)
            if repo == "headhuge":
                self.send_response(404)
                self.send_header("Content-Length", str(GIB_1_5))
                self.end_headers()
                return
            return self.send(200 if parts[3] in blobs_here else 404)
        if kind == "blobs":
            upload = parts[4] if len(parts) > 4 else None
            if self.command == "POST":
                self.body()
                if repo == "posthuge":
                    return self.zeros(GIB_1_5, True, 400)
                upload = uuid.uuid4().hex
                uploads[upload] = bytearray()
                return self.send(202, b"", [("Location", f"/v2/{repo}/blobs/uploads/{upload}"), ("Range", "0-0")])
            if upload not in uploads:
                self.body() if self.command in ("PUT", "PATCH") else None
                return self.send(404, b'{"errors":[{"code":"BLOB_UPLOAD_UNKNOWN","message":"unknown upload"}]}')
            if self.command == "PATCH":
                if repo == "patchhuge":
                    return self.zeros(GIB_1_5, True, 403)
                uploads[upload] += self.body()
                end = max(len(uploads[upload]) - 1, 0)
                return self.send(202, b"", [("Location", f"/v2/{repo}/blobs/uploads/{upload}"), ("Range", f"0-{end}")])
            if self.command == "PUT":
                data = uploads[upload] + self.body()
                if repo == "puthuge":
                    return self.zeros(GIB_1_5, True, 400)
                if repo == "putdrip":
                    return self.drip(400)
                digest = "sha256:" + hashlib.sha256(data).hexdigest()
                if digest != query.get("digest", [""])[0]:
                    return self.send(400, b'{"errors":[{"code":"DIGEST_INVALID","message":"digest mismatch"}]}')
                del uploads[upload]
                blobs_here.add(digest)
                return self.send(201, b"", [("Location", f"/v2/{repo}/blobs/{digest}"), ("Docker-Content-Digest", digest)])
            if self.command == "DELETE":
                uploads.pop(upload, None)
                return self.send(204)
            if self.command == "GET":
                end = max(len(uploads[upload]) - 1, 0)
                return self.send(204, b"", [("Location", f"/v2/{repo}/blobs/uploads/{upload}"), ("Range", f"0-{end}")])
        if kind == "manifests" and self.command == "PUT":
            data = self.body()
            if repo == "manifesthuge":
                return self.zeros(GIB_1_5, False, 201)
            if repo == "manifestrefused":
                return self.zeros(GIB_1_5, True, 400)
            if repo == "pushnoisy":
                body = json.dumps({"errors": [{"code": "MANIFEST_INVALID", "message": NOISY}]}).encode()
                return self.send(400, body, [("Content-Type", "application/json")])
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            return self.send(201, b"", [("Docker-Content-Digest", digest)])
        return self.send(404)

    do_GET = do_HEAD = do_POST = do_PATCH = do_PUT = do_DELETE = handle_push


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    exit_with_parent()
    global storage_port
    handler = PushHandler if sys.argv[2:] == ["push"] else Handler
    server = Server(("127.0.0.1", 0), handler)
    # Storage on the registry's host name and another port (the `samehost` repository's redirect target).
    storage = Server(("127.0.0.1", 0), Handler)
    storage_port = storage.server_address[1]
    import threading
    threading.Thread(target=storage.serve_forever, daemon=True).start()
    announce_port(sys.argv[1], server.server_address[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
