"""The `--serve` loop of the Python oracles (tests/cli/support.rs, `ServedOracle`): one interpreter, and one import
of its SDK, for a whole test binary.

Reads one request per line on stdin, a JSON list of a one-shot run's arguments, calls `run(argv)` with them, and
answers with one JSON line: {"ok": true|false, "out": STDOUT, "err": STDERR}. `run` returns an exit code (None is
0) or exits with one or with a message.

The requests and the answers travel on private copies of descriptors 0 and 1. Descriptor 0 itself reads /dev/null
and descriptor 1 goes to stderr, so that nothing a run does below Python's `sys.stdin`/`sys.stdout` (a child
process, a C library, a handler that kept the original stream) can read a request or write into an answer.
"""
import contextlib
import io
import json
import os
import sys
import traceback


def _private_channels():
    requests = os.fdopen(os.dup(0), "r")
    answers = os.fdopen(os.dup(1), "w")
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull)
    return requests, answers


def serve(run):
    requests, answers = _private_channels()
    for line in requests:
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = run(json.loads(line))
        except SystemExit as stop:
            code = stop.code
            if code is not None and not isinstance(code, int):
                err.write(f"{code}\n")
                code = 1
        except Exception:  # noqa: BLE001 - the test that asked prints it
            code = 1
            err.write(traceback.format_exc())
        answer = {"ok": code in (None, 0), "out": out.getvalue(), "err": err.getvalue()}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()
