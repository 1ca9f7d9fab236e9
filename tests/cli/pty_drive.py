"""Runs a command on a pseudo-terminal, types answers at its prompts, and prints {"exit": N, "output": "..."}.

Used by tests/cli/terminal.rs: cryptadm's prompts and its refusal to print plaintext only happen on a terminal.
Usage: pty_drive.py '["answer 1", "answer 2"]' COMMAND [ARG...]
"""
import json
import os
import pty
import select
import sys
import time


def main():
    answers = [a.encode() for a in json.loads(sys.argv[1])]
    argv = sys.argv[2:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    output = b""
    deadline = time.time() + 30
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            # A prompt waits for input when the screen ends with "…: ".
            if answers and output.rstrip(b"\r\n").endswith(b": "):
                os.write(fd, answers.pop(0) + b"\r")
                output += b"\n"
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"exit": os.waitstatus_to_exitcode(status), "output": output.decode(errors="replace")}))


main()
