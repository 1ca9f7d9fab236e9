"""A fault-injecting HTTP proxy in front of one OpenStack service, for the fault tests. Usage:
fault_proxy.py TARGET_URL MODE PORT_FILE. Writes its port to PORT_FILE, then forwards requests to TARGET_URL,
except what MODE changes:
  fail-consumers  POST …/consumers answers 503 (Barbican failing after the secret was stored)
  unauthorized-once  the first request carrying a token answers 401 (a token revoked or expired mid-run)
  stall-upload    PUT …/file reads one chunk, then never answers (an upload in progress, to kill)
  refuse-upload   PUT …/file answers 413 after reading one chunk (Glance refusing the data)
  bad-image-id    POST /v2/images answers 201 with the id `../../v2/images/x` (a server not to trust)
  fail-show       GET /v2/images/UUID answers 503 (Glance failing after the upload and the consumer)
Logs one line per request on stderr."""
import http.server
import re
import socketserver
import sys
import threading
import time
import urllib.error
import urllib.request

target, mode, port_file = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
state = {"unauthorized": 0}
lock = threading.Lock()


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.command, self.path))
        sys.stderr.flush()

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else None

    def first_chunk(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            self.rfile.read(size)
        else:
            self.rfile.read(min(int(self.headers.get("Content-Length") or 0), 65536))

    def handle_any(self):
        if mode == "unauthorized-once" and self.headers.get("X-Auth-Token"):
            with lock:
                state["unauthorized"] += 1
                first = state["unauthorized"] == 1
            if first:
                self.body()
                return self.answer(401, b'{"error": {"code": 401, "message": "The request you have made requires authentication."}}',
                                   [("Content-Type", "application/json")])
        if mode == "bad-image-id" and self.command == "POST" and self.path == "/v2/images":
            self.body()
            return self.answer(201, b'{"id": "../../v2/images/x", "status": "queued"}',
                               [("Content-Type", "application/json")])
        if mode == "fail-show" and self.command == "GET" and re.fullmatch(r"/v2/images/[0-9a-f-]{36}", self.path):
            return self.answer(503, b"image records are down")
        if mode == "fail-consumers" and self.command == "POST" and self.path.endswith("/consumers"):
            self.body()
            return self.answer(503, b"consumers are down")
        if self.command == "PUT" and self.path.endswith("/file") and mode in ("stall-upload", "refuse-upload"):
            if mode == "refuse-upload":
                self.body()
            else:
                self.first_chunk()
            sys.stderr.write("%s %s (%s)\n" % (self.command, self.path, mode))
            sys.stderr.flush()
            if mode == "stall-upload":
                while True:
                    time.sleep(3600)
            self.close_connection = True
            return self.answer(413, b'{"message": "Image exceeds the storage quota"}', [("Content-Type", "application/json")])
        data = self.body()
        req = urllib.request.Request(target + self.path, data=data, method=self.command)
        for name, value in self.headers.items():
            if name.lower() not in ("host", "content-length", "transfer-encoding", "connection"):
                req.add_header(name, value)
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                status, body, headers = resp.status, resp.read(), resp.headers.items()
        except urllib.error.HTTPError as e:
            status, body, headers = e.code, e.read(), e.headers.items()
        keep = [(n, v) for n, v in headers if n.lower() not in ("content-length", "transfer-encoding", "connection")]
        self.answer(status, body, keep)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


server = Server(("127.0.0.1", 0), Proxy)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
