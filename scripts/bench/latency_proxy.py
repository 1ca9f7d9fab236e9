"""A loopback TCP proxy that adds latency, for scripts/bench/registry_latency.sh (the kernel here has no netem).

  latency_proxy.py TARGET_PORT DELAY_MS [TIMELINE_FILE]

Listens on a free loopback port (printed on the first line of stdout) and forwards every connection to
127.0.0.1:TARGET_PORT, both ways, holding each forwarded read (up to 64 KiB) for DELAY_MS before passing it on.
One connection then moves about one read per DELAY_MS, as a connection to a registry tens of milliseconds away
moves one window per round trip: a client that moves layers one at a time pays it once per layer in series,
one that moves them in parallel pays it concurrently. Standard library only; exits when its stdin ends.

With TIMELINE_FILE, one line per request line and per status line that passes, with the seconds since the
proxy started and the connection's number ("0.532 c7 > PATCH /v2/...", "0.611 c7 < HTTP/1.1 202 Accepted"): when
each GET/POST/PATCH/PUT started and was answered.
"""
import asyncio
import itertools
import sys
import time

target = int(sys.argv[1])
delay = float(sys.argv[2]) / 1000
timeline = open(sys.argv[3], "a", buffering=1) if len(sys.argv) > 3 else None
started = time.monotonic()
connections = itertools.count(1)
METHODS = (b"GET ", b"HEAD ", b"POST ", b"PUT ", b"PATCH ", b"DELETE ", b"HTTP/1.")


def note(number, way, data):
    """Logs the request or status lines that begin in `data` (a line may start anywhere in a read; enough for a
    timeline: bodies of layers are random bytes)."""
    if timeline is None:
        return
    for line in data.split(b"\r\n"):
        if line.startswith(METHODS):
            text = line[:120].decode("latin-1").split("?")[0]
            timeline.write(f"{time.monotonic() - started:.3f} c{number} {way} {text}\n")


async def pipe(reader, writer, number, way):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            note(number, way, data)
            if delay:
                await asyncio.sleep(delay)
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    try:
        writer.write_eof()
    except (OSError, RuntimeError):
        pass


async def handle(client_reader, client_writer):
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", target)
    except OSError:
        client_writer.close()
        return
    number = next(connections)
    await asyncio.gather(pipe(client_reader, upstream_writer, number, ">"),
                         pipe(upstream_reader, client_writer, number, "<"))
    for writer in (upstream_writer, client_writer):
        writer.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    # Ends with stdin: the script that started it holds the pipe.
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


asyncio.run(main())
