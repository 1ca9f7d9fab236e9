#!/usr/bin/env python3
"""A hostile server that quotes every request it gets (request line, headers, body) back in its error answer,
in one of the spellings a real server may use, for the redaction tests (tests/cli/redaction.rs). Plain HTTP on
127.0.0.1: one port per spelling, written to PORT_FILE as `SPELLING PORT` lines; each request is also appended
to LOG_FILE (the test reads the signature a signer computed from it).

usage: echo_encoder.py PORT_FILE LOG_FILE SHAPE [KNOWN_FILE]

KNOWN_FILE: text the server quotes after the request, read at each request (a secret it learned elsewhere: the
worst case for a command whose requests carry none, such as Tang's, whose own secrets must still never show).

SHAPE is the error document the client expects from the service it plays:
  vault     403 {"errors": [Q]}
  aws-json  400 {"__type": "AccessDeniedException", "message": Q}    (KMS, Secrets Manager, SSM)
  aws-xml   400 <ErrorResponse><Error><Code>InvalidIdentityToken</Code><Message>Q</Message>…  (STS, S3)
  keystone  401 {"error": {"code": 401, "title": "Unauthorized", "message": Q}}
  registry  401 + WWW-Authenticate: Basic to a request without credentials; else 403 with an OCI error
            envelope {"errors": [{"code": "DENIED", "message": Q, "detail": Q}]}

Spellings of the quote Q: raw, json-slash (`/` written `\\/`, PHP's default), json-unicode (every character a
`\\uXXXX` escape, surrogate pairs beyond the BMP), percent, form (`+` for a space), base64, base64url (no
padding), html (numeric and named entities).
"""
import base64
import html
import http.server
import json
import socketserver
import sys
import threading
import urllib.parse

from serve_helpers import announce_port, exit_with_parent

SPELLINGS = ["raw", "json-slash", "json-unicode", "percent", "form", "base64", "base64url", "html"]


def unicode_escaped(text):
    data = text.encode("utf-16-be")
    return "".join("\\u%02x%02x" % (data[i], data[i + 1]) for i in range(0, len(data), 2))


def spell(spelling, text):
    """Q: the request as the server quotes it, and whether it is already a JSON string literal's inside."""
    if spelling == "percent":
        return urllib.parse.quote(text, safe=""), False
    if spelling == "form":
        return urllib.parse.quote_plus(text, safe=""), False
    if spelling == "base64":
        return base64.b64encode(text.encode()).decode(), False
    if spelling == "base64url":
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("="), False
    if spelling == "html":
        named = {"/": "&sol;", "+": "&plus;", "=": "&equals;"}
        return "".join(named.get(c) or (c if c.isalnum() else "&#%d;" % ord(c)) for c in text), False
    if spelling == "json-unicode":
        return unicode_escaped(text), True
    return text, False


def json_body(spelling, document, quote, literal):
    """`document` with every "Q" replaced by the quote, as JSON text."""
    marker = "\u0000QUOTE\u0000"
    text = json.dumps(document, ensure_ascii=False).replace(json.dumps(marker)[1:-1], "\u0001")
    inner = quote if literal else json.dumps(quote, ensure_ascii=False)[1:-1]
    if spelling == "json-slash":
        text = text.replace("/", "\\/")
        inner = inner.replace("/", "\\/")
    return text.replace("\u0001", inner).encode()


def answer_for(shape, spelling, request):
    quote, literal = spell(spelling, request)
    marker = "\u0000QUOTE\u0000"
    if shape == "vault":
        return 403, "application/json", json_body(spelling, {"errors": [marker]}, quote, literal)
    if shape == "aws-json":
        document = {"__type": "AccessDeniedException", "message": marker}
        return 400, "application/x-amz-json-1.1", json_body(spelling, document, quote, literal)
    if shape == "keystone":
        document = {"error": {"code": 401, "title": "Unauthorized", "message": marker}}
        return 401, "application/json", json_body(spelling, document, quote, literal)
    if shape == "registry":
        document = {"errors": [{"code": "DENIED", "message": marker, "detail": marker}]}
        return 403, "application/json", json_body(spelling, document, quote, literal)
    if shape == "aws-xml":
        if spelling == "json-slash":
            quote = json.dumps(quote, ensure_ascii=False)[1:-1].replace("/", "\\/")
        body = (
            "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>"
            f"<Message>{html.escape(quote, quote=False)}</Message></Error><RequestId>1</RequestId></ErrorResponse>"
        )
        return 400, "text/xml", body.encode()
    raise SystemExit(f"unknown shape {shape}")


def handler_for(shape, spelling, log, known):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            request = f"{self.requestline}\n{self.headers}\n{body.decode('utf-8', 'replace')}"
            if known:
                with open(known, encoding="utf-8") as f:
                    request += "\n" + f.read()
            with LOG_LOCK, open(log, "a", encoding="utf-8") as f:
                f.write(request + "\n")
            if shape == "registry" and "Authorization" not in self.headers:
                return self.answer(401, "application/json", b'{"errors":[{"code":"UNAUTHORIZED","message":"x"}]}',
                                   [("WWW-Authenticate", 'Basic realm="echo"')])
            status, kind, answer = answer_for(shape, spelling, request)
            self.answer(status, kind, answer)

        def answer(self, status, kind, body, extra=()):
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for name, value in extra:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_LIST = handle_any

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


LOG_LOCK = threading.Lock()


def main():
    port_file, log, shape = sys.argv[1], sys.argv[2], sys.argv[3]
    known = sys.argv[4] if len(sys.argv) > 4 else None
    exit_with_parent()
    lines = []
    for spelling in SPELLINGS:
        server = Server(("127.0.0.1", 0), handler_for(shape, spelling, log, known))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        lines.append(f"{spelling} {server.server_address[1]}")
    with open(port_file + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    import os
    os.replace(port_file + ".tmp", port_file)
    threading.Event().wait()


if __name__ == "__main__":
    main()
