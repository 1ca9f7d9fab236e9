#!/usr/bin/env python3
"""A logging HTTP proxy on 127.0.0.1 for the proxy tests: absolute-form requests (`GET http://host:port/path`) and
`CONNECT host:port` tunnels, as corporate proxies take them.

    logging_proxy.py LOG DIR [--forward HOST:PORT] [--auth USER:PASSWORD] [--hold-first-post SECONDS]

Each request is logged as one line to LOG: `HTTP host:port` (absolute form) or `CONNECT host:port`, followed by
` auth-ok`, ` auth-missing` or ` auth-wrong` when --auth is given (the credential itself is never logged).
Without a correct Proxy-Authorization under --auth the answer is 407.

Absolute-form requests are sent on to their origin. A CONNECT is answered 200; then, with --forward, the proxy
ends the TLS itself with a certificate for the asked host issued by its own CA (DIR/ca.pem, made at start; the
client trusts it through AWS_CA_BUNDLE) and pipes the decrypted bytes to HOST:PORT (moto, which takes the
request whatever its Host header): the partition tests see which AWS host a client asked for, and the request
still gets an answer. Without --forward a CONNECT is tunnelled to the host it names. With --hold-first-post,
the answer to the first absolute-form POST is held back SECONDS (a client's pause between two calls, on demand).
The port is printed on stdout's first line.
"""

import base64
import datetime
import os
import socket
import socketserver
import ssl
import sys
import threading

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

LOG, DIR = sys.argv[1], sys.argv[2]
OPTIONS = dict(zip(sys.argv[3::2], sys.argv[4::2]))
FORWARD = OPTIONS.get("--forward")
AUTH = OPTIONS.get("--auth")
HOLD = float(OPTIONS.get("--hold-first-post", "0"))
HELD = []
LOCK = threading.Lock()


def make_ca():
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "logging-proxy test CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    with open(os.path.join(DIR, "ca.pem"), "wb") as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
    return key, cert


CA_KEY, CA_CERT = make_ca()


def context_for(host):
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
            .issuer_name(CA_CERT.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(CA_KEY, hashes.SHA256()))
    path = os.path.join(DIR, f"leaf-{threading.get_ident()}.pem")
    with open(path, "wb") as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(path)
    os.unlink(path)
    return context


def note(line):
    with LOCK, open(LOG, "a") as log:
        log.write(line + "\n")


def pipe(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for s in (sink,):
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass


def join(a, b):
    other = threading.Thread(target=pipe, args=(b, a), daemon=True)
    other.start()
    pipe(a, b)
    other.join(timeout=60)


def host_port(text, default):
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        return text, default
    return host.strip("[]"), int(port)


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline(65537).decode("latin-1")
        if not line:
            return
        head = [line]
        while True:
            header = self.rfile.readline(65537).decode("latin-1")
            head.append(header)
            if header in ("\r\n", "\n", ""):
                break
        method, target, version = line.split(" ", 2)
        auth_state = ""
        if AUTH is not None:
            given = [h.split(":", 1)[1].strip() for h in head[1:] if h.lower().startswith("proxy-authorization:")]
            expected = "Basic " + base64.b64encode(AUTH.encode()).decode()
            auth_state = " auth-missing" if not given else (" auth-ok" if given[0] == expected else " auth-wrong")
        if method == "CONNECT":
            note(f"CONNECT {target}{auth_state}")
            if auth_state not in ("", " auth-ok"):
                self.wfile.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
                return
            host, port = host_port(target, 443)
            upstream = socket.create_connection(host_port(FORWARD, 80) if FORWARD else (host, port), timeout=60)
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
            client = self.connection
            if FORWARD:
                client = context_for(host).wrap_socket(client, server_side=True)
            join(client, upstream)
            return
        if not target.startswith("http://"):
            self.wfile.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        rest = target[len("http://"):]
        authority, _, path = rest.partition("/")
        note(f"HTTP {authority}{auth_state}")
        if auth_state not in ("", " auth-ok"):
            self.wfile.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n"
                             b"Connection: close\r\n\r\n")
            return
        upstream = socket.create_connection(host_port(authority, 80), timeout=60)
        headers = [h for h in head[1:-1] if not h.lower().startswith(("proxy-authorization:", "proxy-connection:",
                                                                        "connection:"))]
        length = sum(int(h.split(":", 1)[1]) for h in headers if h.lower().startswith("content-length:"))
        body = self.rfile.read(length) if length else b""
        request = f"{method} /{path} {version}" + "".join(headers) + "Connection: close\r\n\r\n"
        upstream.sendall(request.encode("latin-1") + body)
        # One request per connection: the answer is passed on with `Connection: close`, and the connection closed.
        answer = upstream.makefile("rb")
        status = answer.readline(65537)
        out = [status]
        while True:
            header = answer.readline(65537)
            if header in (b"\r\n", b"\n", b""):
                break
            if not header.lower().startswith(b"connection:"):
                out.append(header)
        out.append(b"Connection: close\r\n\r\n")
        with LOCK:
            hold = HOLD if method == "POST" and not HELD else 0
            if hold:
                HELD.append(target)
        if hold:
            import time
            time.sleep(hold)
        self.wfile.write(b"".join(out))
        while True:
            data = answer.read1(65536)
            if not data:
                break
            self.wfile.write(data)
        self.wfile.flush()
        upstream.close()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
