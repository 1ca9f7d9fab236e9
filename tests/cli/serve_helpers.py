"""What the test servers written in Python share: ending with the test process that started them, and saying
their port through a file written whole (renamed into place), which the Rust fixture polls."""
import os
import threading
import time


def exit_with_parent():
    """Ends this server once the test process that started it is gone (its fixture lives in a static, which is
    never dropped)."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def announce_port(port_file, port):
    """Writes `port` to `port_file` atomically."""
    with open(port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.replace(port_file + ".tmp", port_file)
