"""Run several scripts as `python SCRIPT ARGS...` would, one after another in this one interpreter, and print each
one's exit code, stdout and stderr as JSON: the heavy imports they share (torch, transformers) are paid once.

    python tests/_run_scripts.py '[["workflow/scripts/soup.py", "--help"], ...]'

Each runs as __main__ with its own sys.argv and a fresh copy of sys.path; a script's SystemExit is its exit code.
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys
import traceback


def run(script: str, args: list[str]) -> dict:
    out, err = io.StringIO(), io.StringIO()
    argv, path = sys.argv, list(sys.path)
    sys.argv, sys.path[:0] = [script, *args], [str(__import__("pathlib").Path(script).parent)]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
                if not isinstance(stop.code, int | None):
                    print(stop.code, file=sys.stderr)
            except BaseException:  # what the interpreter would print, and its exit code
                traceback.print_exc()
                code = 1
    finally:
        sys.argv, sys.path[:] = argv, path
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


if __name__ == "__main__":
    print(json.dumps([run(script, args) for script, *args in json.loads(sys.argv[1])]))
