#!/usr/bin/env python3
"""A server you do not trust, for the key-manager tests (plain HTTP on 127.0.0.1, a random port written to
PORT_FILE): it answers every request the same way, as a wrong VAULT_ADDR, an echo service or a gateway might.

usage: hostile_http.py PORT_FILE MODE

  echo STATUS  answers STATUS with the whole request quoted as JSON (request line, headers, body), as
               `{"errors":["permission denied: <request>"]}`: a server quoting the token, the plaintext, the
               login secret
  big403       answers 403 with a body of 2 MiB (an error page too large to read whole)
  drip         sends its answer's headers one byte every half second, for ever
The server ends when the process that started it does.
"""
import http.server
import json
import socketserver
import sys
import time

from serve_helpers import announce_port, exit_with_parent


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        mode = sys.argv[2]
        if mode == "echo":
            quoted = f"{self.requestline}\n{self.headers}\n{body.decode('utf-8', 'replace')}"
            answer = json.dumps({"errors": [f"permission denied: {quoted}"]}).encode()
            return self.answer(int(sys.argv[3]), answer)
        if mode == "big403":
            return self.answer(403, b'{"errors":["permission denied"]}' + b" " * (2 * 1024 * 1024))
        if mode == "drip":
            try:
                for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"x" * 100000:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.5)
            except OSError:
                pass
            self.close_connection = True

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = do_LIST = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    exit_with_parent()
    server = Server(("127.0.0.1", 0), Handler)
    announce_port(sys.argv[1], server.server_address[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
