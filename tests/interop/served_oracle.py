"""The `--serve` loop of the Python oracles (tests/cli/support.rs, `ServedOracle`): one interpreter, and one import
of its SDK, for a whole test binary.

Reads one request per line on stdin, a JSON list of a one-shot run's arguments, calls `run(argv)` with them, and
answers with one JSON line: {"ok": true|false, "out": STDOUT, "err": STDERR}. `run` returns an exit code (None is
0) or exits with one or with a message. While it runs its stdin is /dev/null: the requests' pipe is not its to read.
"""
import contextlib
import io
import json
import os
import sys
import traceback


def serve(run):
    requests = sys.stdin
    for line in requests:
        out, err = io.StringIO(), io.StringIO()
        with open(os.devnull) as nothing:
            sys.stdin = nothing
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
            finally:
                sys.stdin = requests
        answer = {"ok": code in (None, 0), "out": out.getvalue(), "err": err.getvalue()}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
