"""A loopback TCP proxy that adds latency, for scripts/bench/registry_latency.sh (the kernel here has no netem).

  latency_proxy.py TARGET_PORT DELAY_MS

Listens on a free loopback port (printed on the first line of stdout) and forwards every connection to
127.0.0.1:TARGET_PORT, both ways, holding each forwarded read (up to 64 KiB) for DELAY_MS before passing it on.
One connection then moves about one read per DELAY_MS, as a connection to a registry tens of milliseconds away
moves one window per round trip: a client that moves layers one at a time pays it once per layer in series,
one that moves them in parallel pays it concurrently. Standard library only; exits when its stdin ends.
"""
import asyncio
import sys

target = int(sys.argv[1])
delay = float(sys.argv[2]) / 1000


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
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
    await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))
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
