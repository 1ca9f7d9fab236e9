"""An HTTP proxy for the registry tests: it breaks blob transfers as registries and networks do.

  registry_fault_proxy.py TARGET_PORT MODE [BYTES]

Listens on a free loopback port (printed on the first line of stdout) and forwards each request to
127.0.0.1:TARGET_PORT, one request per connection (it tells both sides to close after it), the Host header
untouched so that the registry's Locations name the proxy. It prints "request METHOD PATH RANGE" for every
request (RANGE is the Content-Range header, else the Range header, or "-"), and one line for each fault it
makes. MODE:
  pass            no faults;
  refuse-stream   answers every PATCH without Content-Range with 411 Length Required, never forwarding it
                  ("refused");
  break BYTES     reads the first streaming PATCH's body (no Content-Range) up to BYTES, forwards none of it and
                  closes the connection ("broke"): the registry never sees that request;
  hold BYTES      forwards the first streaming PATCH until BYTES of its body have passed, then stops reading
                  ("holding");
  cut BYTES       closes the first response that passes BYTES, in the middle of it ("cut");
  resume BYTES    makes docker's registry resumable, as other registries are: the first streaming PATCH's first
                  BYTES go to the registry as a complete request, then the client's connection is closed
                  ("resumable-broke"); later requests with the upload's old state get the state the registry gave
                  for those BYTES, so that asking where the upload stands answers BYTES and the upload goes on;
  slow BYTES      forwards the first streaming PATCH's body at BYTES a second ("slow"), so that it lasts;
  stall SECONDS   holds the first streaming PATCH for SECONDS ("stalled") before forwarding any of it;
  deny BYTES      reads the first streaming PATCH's body up to BYTES, forwards none of it and, 2 s later, answers
                  403 with a DENIED error ("denied"); every other streaming PATCH is forwarded at 1 MiB a second,
                  so that the uploads started meanwhile are still in flight then;
  no-ranges       drops the Range header of every GET (the registry answers 200 with the whole blob, as a
                  server without range support does) ("range-ignored" for each);
  corrupt-range   the first GET asking for a range that does not start at byte 0 gets the registry's answer
                  with its last byte flipped, headers unchanged ("corrupted").
"""
import socket
import sys
import threading
import time

target = int(sys.argv[1])
mode = sys.argv[2]
limit = int(sys.argv[3]) if len(sys.argv) > 3 else 0
state = {"faulted": False, "stale": None, "fresh": None}
lock = threading.Lock()


def say(line):
    with lock:
        print(line, flush=True)


def close(*sockets):
    for s in sockets:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


def read_head(client):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(65536)
        # Nothing, or a TLS handshake (clients try TLS first): plain HTTP only, as the registry behind.
        if not chunk or (not data and chunk[:1] == b"\x16"):
            return None, None, b""
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = [tuple(part.strip() for part in line.split(":", 1)) for line in lines[1:]]
    return lines[0], headers, rest


def first_fault():
    with lock:
        if state["faulted"]:
            return False
        state["faulted"] = True
        return True


def pipe(source, sink, cut=None, rate=None):
    """Copies until the source ends; with `cut`, stops once more than `cut` bytes have passed (the first time);
    with `rate`, passes at most `rate` bytes a second."""
    started = time.monotonic()
    passed = 0
    try:
        while True:
            data = source.recv(min(65536, rate) if rate else 65536)
            if not data:
                break
            passed += len(data)
            if cut is not None and passed > cut and first_fault():
                say("cut")
                close(source, sink)
                return
            sink.sendall(data)
            ahead = passed / rate - (time.monotonic() - started) if rate else 0
            if ahead > 0:
                time.sleep(ahead)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def drain(client, body, until):
    """Reads the request body until `until` bytes have come (or the client stops sending)."""
    received = len(body)
    try:
        while received < until:
            data = client.recv(65536)
            if not data:
                break
            received += len(data)
    except OSError:
        pass


class Chunked:
    """Reads a chunked request body (what a streaming PATCH sends)."""

    def __init__(self, client, buffered):
        self.client, self.buffer = client, buffered

    def _fill(self, needed):
        while len(self.buffer) < needed:
            data = self.client.recv(65536)
            if not data:
                raise EOFError
            self.buffer += data

    def _line(self):
        while b"\r\n" not in self.buffer:
            self._fill(len(self.buffer) + 1)
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def read(self, wanted):
        """Up to `wanted` bytes of payload (fewer when the body ends first)."""
        payload = b""
        while len(payload) < wanted:
            size = int(self._line().split(b";")[0], 16)
            if size == 0:
                break
            self._fill(size + 2)
            payload += self.buffer[:size]
            self.buffer = self.buffer[size + 2:]
        return payload  # may run past `wanted` by the rest of a chunk; the caller cuts


def exchange(request):
    """Sends one whole `Connection: close` request to the registry and returns its whole answer."""
    upstream = socket.create_connection(("127.0.0.1", target))
    upstream.sendall(request)
    response = b""
    while True:
        data = upstream.recv(65536)
        if not data:
            break
        response += data
    upstream.close()
    return response


def resumable_break(client, request_line, headers, body):
    method, path = request_line.split(" ")[:2]
    payload = Chunked(client, body).read(limit)[:limit]
    kept = [f"{n}: {v}" for n, v in headers if n.lower() not in ("connection", "transfer-encoding", "content-length")]
    head = "\r\n".join([request_line, *kept, f"Content-Length: {len(payload)}", "Connection: close", "", ""])
    response = exchange(head.encode("latin-1") + payload)
    for line in response.decode("latin-1").split("\r\n"):
        if line.lower().startswith("location:"):
            location = line.split(":", 1)[1].strip()
            state["stale"] = path
            state["fresh"] = location[location.index("/v2/"):]
    say("resumable-broke")
    close(client)


def corrupt(client, request_line, headers, body):
    kept = [f"{n}: {v}" for n, v in headers if n.lower() not in ("connection", "keep-alive")]
    response = exchange("\r\n".join([request_line, *kept, "Connection: close", "", ""]).encode("latin-1") + body)
    head, payload = response.split(b"\r\n\r\n", 1)
    if payload:
        payload = payload[:-1] + bytes([payload[-1] ^ 0xFF])
    say("corrupted")
    client.sendall(head + b"\r\n\r\n" + payload)
    close(client)


def handle(client):
    request_line, headers, body = read_head(client)
    if request_line is None:
        client.close()
        return
    method, path = request_line.split(" ")[:2]
    if state["stale"] is not None and path == state["stale"]:
        # The upload's state from before the break: the registry's own for the bytes it got instead.
        request_line = request_line.replace(path, state["fresh"], 1)
    names = {name.lower(): value for name, value in headers}
    content_range = names.get("content-range")
    say(f"request {method} {path.split('?')[0]} {content_range or names.get('range') or '-'}")
    if method == "GET" and mode == "no-ranges" and "range" in names:
        headers = [(n, v) for n, v in headers if n.lower() != "range"]
        say("range-ignored")
    wanted = names.get("range", "")
    if method == "GET" and mode == "corrupt-range" and wanted and not wanted.startswith("bytes=0-") \
            and first_fault():
        return corrupt(client, request_line, headers, body)

    if method == "PATCH" and content_range is None and mode == "refuse-stream":
        say("refused")
        client.sendall(b"HTTP/1.1 411 Length Required\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        client.shutdown(socket.SHUT_WR)
        client.settimeout(5)
        drain(client, body, float("inf"))
        client.close()
        return
    streaming = method == "PATCH" and content_range is None
    if streaming and mode == "resume" and first_fault():
        resumable_break(client, request_line, headers, body)
        return
    if streaming and mode == "break" and first_fault():
        drain(client, body, limit)
        say("broke")
        close(client)
        return

    if streaming and mode == "deny" and first_fault():
        drain(client, body, limit)
        time.sleep(2)
        say("denied")
        error = b'{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}'
        client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: "
                       + str(len(error)).encode() + b"\r\nConnection: close\r\n\r\n" + error)
        close(client)
        return

    if streaming and mode == "stall" and first_fault():
        say("stalled")
        time.sleep(limit)

    upstream = socket.create_connection(("127.0.0.1", target))
    kept = [f"{name}: {value}" for name, value in headers if name.lower() not in ("connection", "keep-alive")]
    head = "\r\n".join([request_line, *kept, "Connection: close", "", ""]).encode("latin-1")
    upstream.sendall(head + body)

    if streaming and mode == "hold" and first_fault():
        forwarded = len(body)
        while forwarded < limit:
            data = client.recv(65536)
            if not data:
                break
            upstream.sendall(data)
            forwarded += len(data)
        say("holding")
        threading.Event().wait()  # until the test kills the proxy

    if streaming and mode == "slow" and first_fault():
        say("slow")
        threading.Thread(target=pipe, args=(client, upstream, None, limit), daemon=True).start()
    elif streaming and mode == "deny":
        threading.Thread(target=pipe, args=(client, upstream, None, 1 << 20), daemon=True).start()
    else:
        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    pipe(upstream, client, limit if mode == "cut" else None)
    close(client, upstream)


server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0))
server.listen(64)
print(server.getsockname()[1], flush=True)
while True:
    connection, _ = server.accept()
    threading.Thread(target=handle, args=(connection,), daemon=True).start()
