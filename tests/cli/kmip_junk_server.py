"""A TLS server that answers every KMIP request with a bad answer, for tests/cli/kmip.rs.

    kmip_junk_server.py CERT KEY PORTFILE [LOG]

Each connection reads one request, then sends the answer named by the request's first Unique Identifier text
(so the test picks the case): `truncated` (a header announcing 4 KiB, 40 bytes, then close), `huge` (a header
announcing 100 MB, then 100 MB of nothing sent: only the header), `deep` (a structure nested 200 deep),
`garbage` (random bytes), `slow-huge` (the 100 MB header, then 1 MiB chunks for as long as the client reads).
`echo-SPELLING` answers a Permission Denied failure whose Result Message quotes the whole request (its bytes
as text: credentials, the data of an Encrypt or Register) in one of echo_encoder.py's spellings, for the
redaction test (tests/cli/redaction.rs). Discover Versions is answered properly (KMIP 1.4), so the client reaches
the operation. With LOG, every request's bytes are appended to it (the test checks what the client sent).
"""
import json
import os
import socket
import ssl
import struct
import sys
import threading


def item(tag, typ, body):
    pad = (8 - len(body) % 8) % 8
    return struct.pack(">I", tag)[1:] + bytes([typ]) + struct.pack(">I", len(body)) + body + b"\0" * pad


def structure(tag, *children):
    return item(tag, 1, b"".join(children))


def version_answer():
    version = structure(0x420069, item(0x42006A, 2, struct.pack(">i", 1)), item(0x42006B, 2, struct.pack(">i", 4)))
    header = structure(0x42007A, version, item(0x420092, 9, struct.pack(">q", 0)), item(0x42000D, 2, struct.pack(">i", 1)))
    batch = structure(0x42000F, item(0x42005C, 5, struct.pack(">I", 30)), item(0x42007F, 5, struct.pack(">I", 0)),
                      structure(0x42007C, version))
    return structure(0x42007B, header, batch)


def echo_answer(spelling, request):
    """A failure (Permission Denied) whose Result Message quotes `request` in `spelling`."""
    from echo_encoder import spell

    quote, _ = spell(spelling, request.decode("utf-8", "replace"))
    if spelling == "json-slash":
        quote = json.dumps(quote, ensure_ascii=False)[1:-1].replace("/", "\\/")
    version = structure(0x420069, item(0x42006A, 2, struct.pack(">i", 1)), item(0x42006B, 2, struct.pack(">i", 4)))
    header = structure(0x42007A, version, item(0x420092, 9, struct.pack(">q", 0)), item(0x42000D, 2, struct.pack(">i", 1)))
    batch = structure(0x42000F, item(0x42007F, 5, struct.pack(">I", 1)), item(0x42007E, 5, struct.pack(">I", 0x0C)),
                      item(0x42007D, 7, quote.encode()))
    return structure(0x42007B, header, batch)


def read_request(conn):
    header = b""
    while len(header) < 8:
        chunk = conn.recv(8 - len(header))
        if not chunk:
            return None
        header += chunk
    length = struct.unpack(">I", header[4:8])[0]
    body = b""
    while len(body) < length:
        chunk = conn.recv(length - len(body))
        if not chunk:
            return None
        body += chunk
    return header + body


def case_of(request):
    at = request.find(bytes.fromhex("42009407"))
    if at < 0:
        return None
    length = struct.unpack(">I", request[at + 4:at + 8])[0]
    return request[at + 8:at + 8 + length].decode()


def serve(conn, log):
    try:
        while True:
            request = read_request(conn)
            if request is None:
                return
            if log:
                with LOG_LOCK, open(log, "ab") as f:
                    f.write(request)
            case = case_of(request)
            if case is None:
                conn.sendall(version_answer())
                continue
            if case.startswith("echo-"):
                conn.sendall(echo_answer(case[len("echo-"):], request))
            elif case == "truncated":
                conn.sendall(bytes.fromhex("42007b01") + struct.pack(">I", 4096) + b"\0" * 40)
            elif case == "huge":
                conn.sendall(bytes.fromhex("42007b01") + struct.pack(">I", 100 << 20))
            elif case == "slow-huge":
                conn.sendall(bytes.fromhex("42007b01") + struct.pack(">I", 100 << 20))
                for _ in range(100):
                    conn.sendall(b"\0" * (1 << 20))
            elif case == "deep":
                body = item(0x420020, 2, struct.pack(">i", 1))
                for _ in range(200):
                    body = structure(0x420020, body)
                conn.sendall(structure(0x42007B, body))
            else:
                conn.sendall(os.urandom(64))
            return
    except OSError:
        pass
    finally:
        conn.close()


LOG_LOCK = threading.Lock()


def main():
    cert, key, portfile = sys.argv[1:4]
    log = sys.argv[4] if len(sys.argv) > 4 else None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(listener.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    while True:
        raw, _ = listener.accept()
        try:
            conn = context.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            raw.close()
            continue
        threading.Thread(target=serve, args=(conn, log), daemon=True).start()


if __name__ == "__main__":
    main()
