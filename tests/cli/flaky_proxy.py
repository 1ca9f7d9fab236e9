"""A TCP proxy for the registry tests that breaks the first download that passes CUT bytes.

  flaky_proxy.py TARGET_PORT CUT

Listens on a free loopback port (printed on the first line of stdout), forwards every connection to
127.0.0.1:TARGET_PORT, and closes the first connection whose server-to-client stream passes CUT bytes in the middle
of the response, printing "cut" when it does. Later connections are forwarded untouched.
"""
import socket
import sys
import threading

target, cut = int(sys.argv[1]), int(sys.argv[2])
state = {"cut": False}
lock = threading.Lock()


def close(*sockets):
    for s in sockets:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


def pipe(source, sink, watch):
    sent = 0
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            if watch:
                sent += len(data)
                with lock:
                    if not state["cut"] and sent > cut:
                        state["cut"] = True
                        print("cut", flush=True)
                        break
            sink.sendall(data)
    except OSError:
        pass
    close(source, sink)


def handle(client):
    upstream = socket.create_connection(("127.0.0.1", target))
    threading.Thread(target=pipe, args=(client, upstream, False), daemon=True).start()
    threading.Thread(target=pipe, args=(upstream, client, True), daemon=True).start()


server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0))
server.listen(64)
print(server.getsockname()[1], flush=True)
while True:
    connection, _ = server.accept()
    threading.Thread(target=handle, args=(connection,), daemon=True).start()
