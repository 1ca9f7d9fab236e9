#!/usr/bin/env python3
"""HTTPS test server for the RemoteConfig `https` provider.

usage: tls_server.py CERT KEY DOCROOT [PORTFILE]
Listens on 127.0.0.1 on a free port (written to PORTFILE, or printed) and serves:
  /files/<name>       bytes of DOCROOT/<name> (200), 404 if absent
  /status/<code>      an empty response with that status (404, 500, 301 without Location ...)
  /big/<n>            n bytes of 'x' with a Content-Length header
  /big-chunked/<n>    n bytes of 'x', chunked, no Content-Length (tests a bound that does not trust headers)
  /slow/<seconds>     headers at once, then the body after a delay (tests the deadline)
  /redirect/<name>    302 to /files/<name>
  /to-http/<name>     302 to http://127.0.0.1:<port>/files/<name> (a downgrade to plain http)
Every request line is appended to DOCROOT/../requests.log so a test can assert what was (not) fetched.
"""
import http.server, os, ssl, sys, time

cert, key, docroot = sys.argv[1:4]
portfile = sys.argv[4] if len(sys.argv) > 4 else None
log_path = os.path.join(os.path.dirname(os.path.abspath(docroot)), "requests.log")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        with open(log_path, "a") as log:
            log.write("%s %s\n" % (self.command, self.path))

    def send_body(self, code, body, headers=()):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        parts = self.path.split("/", 2)
        kind, arg = (parts[1], parts[2]) if len(parts) == 3 else ("", "")
        if kind == "files" and "/" not in arg and arg not in ("", ".", ".."):
            path = os.path.join(docroot, arg)
            if os.path.isfile(path):
                with open(path, "rb") as handle:
                    return self.send_body(200, handle.read(), [("Content-Type", "application/yaml")])
            return self.send_body(404, b"not found\n")
        if kind == "status":
            return self.send_body(int(arg), b"")
        if kind == "big":
            return self.send_body(200, b"x" * int(arg))
        if kind == "big-chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            left = int(arg)
            try:
                while left:
                    n = min(left, 65536)
                    self.wfile.write(b"%x\r\n%s\r\n" % (n, b"x" * n))
                    left -= n
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading at its bound: expected
            return
        if kind == "slow":
            self.send_response(200)
            self.send_header("Content-Length", "3")
            self.end_headers()
            self.wfile.flush()
            time.sleep(float(arg))
            try:
                self.wfile.write(b"ok\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if kind == "redirect":
            return self.send_body(302, b"", [("Location", "/files/" + arg)])
        if kind == "to-http":
            location = "http://127.0.0.1:%d/files/%s" % (self.server.server_address[1], arg)
            return self.send_body(302, b"", [("Location", location)])
        return self.send_body(404, b"not found\n")


context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.minimum_version = ssl.TLSVersion.TLSv1_2
context.load_cert_chain(cert, key)
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
server.socket = context.wrap_socket(server.socket, server_side=True)
port = server.server_address[1]
if portfile:
    with open(portfile + ".tmp", "w") as handle:
        handle.write(str(port))
    os.rename(portfile + ".tmp", portfile)  # the test polls for the file: never sees a partial port
else:
    print(port, flush=True)
server.serve_forever()
