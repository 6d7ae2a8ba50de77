"""A process that imports seekbench once, then forks a child per command and SIGKILLs it on request.

Used by ``test_sigkill.py``: Python and pandas/matplotlib/openai take over a
second to import, longer than the work of a small ``seekbench convert``; a
fresh interpreter per kill would spend most kill points inside imports. Each
child here is a real process running ``seekbench.cli.main(argv)`` (or a named
function) with its own stdout/stderr files; the parent kills it with SIGKILL
after the delay asked for, if it is still running. Only this process's own,
not yet reaped children are ever signalled, so a pid is never reused under it.

Protocol, one JSON object per line: in ``{"argv": [...] | "call": "module:function", "args": [...],
"cwd": dir, "out": file, "err": file, "kill_after": seconds or null}``; out
``{"status": exit code or -9, "killed": bool, "elapsed": seconds}``.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parent)]


def _warm() -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot  # noqa: F401
    import openai  # noqa: F401

    import seekbench.annotate  # noqa: F401
    import seekbench.report  # noqa: F401
    from seekbench.cli import _main  # noqa: F401


def _child(req: dict) -> None:
    os.chdir(req["cwd"])
    for fd, name in ((1, req["out"]), (2, req["err"])):
        target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    code = 1
    try:
        if "argv" in req:
            from seekbench.cli import main

            code = int(main(req["argv"]) or 0)
        else:
            module, func = req["call"].split(":")
            getattr(importlib.import_module(module), func)(*req.get("args", []))
            code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _run(req: dict) -> dict:
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(req)
    deadline = None if req.get("kill_after") is None else start + req["kill_after"]
    killed = False
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if deadline is not None and time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)  # our own unreaped child: the pid cannot have been reused
            killed = True
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.0005)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return {"status": code, "killed": killed and code == -signal.SIGKILL, "elapsed": time.monotonic() - start}


def main() -> int:
    _warm()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(_run(json.loads(line))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
