"""The HTTP layer of the mock server: a ThreadingHTTPServer on 127.0.0.1 in a background thread."""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ._engine import DEFAULT_MODELS, Engine, Reply
from ._faults import FaultSpec
from ._profile import ServerProfile
from ._protocol import Policy

HOST = "127.0.0.1"
MAX_BODY_BYTES = 200 * 1024 * 1024


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "seekbench-mock/1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        # Without TCP_NODELAY, Nagle's algorithm and delayed ACKs add ~40 ms per kept-alive request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, add=False)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def _serve(self, method: str) -> None:
        owner = self.server.owner
        body = self._read_body()
        if body is None:
            self.send_error(413, "request body too large or unreadable")
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = owner.engine.handle(method, self.path, headers, body)
        if owner.latency_ms > 0 and owner.stopping.wait(owner.latency_ms / 1000):
            reply.action = "drop"
        if reply.action == "hold" and owner.stopping.wait(owner.timeout_s):
            reply.action = "drop"
        if owner.verbose:
            print(
                f"{method} {self.path} -> {reply.status if reply.action != 'drop' else 'dropped'}",
                file=sys.stderr,
                flush=True,
            )
        if reply.action == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self._send(reply)

    def _read_body(self) -> bytes | None:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            total = 0
            while True:
                try:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                except ValueError:
                    return None
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                total += size
                if total > MAX_BODY_BYTES:
                    return None
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        if length < 0 or length > MAX_BODY_BYTES:
            return None
        return self.rfile.read(length) if length else b""

    def _send(self, reply: Reply) -> None:
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. its timeout fired)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log (it would also show paths to every test)."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: OpenAIServer, port: int) -> None:
        self.owner = owner
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__((HOST, port), _Handler)

    def handle_error(self, request, client_address) -> None:
        """A client that vanished mid-request (killed, timed out) is normal here; anything else is printed."""
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)):
            return
        super().handle_error(request, client_address)

    def track(self, conn: socket.socket, *, add: bool) -> None:
        with self._connections_lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def close_connections(self) -> None:
        with self._connections_lock:
            conns = list(self._connections)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class OpenAIServer:
    """A local OpenAI-compatible HTTP server, for tests and for trying the judge pipeline without a key.

    Serves on 127.0.0.1 only: ``POST /v1/chat/completions``, ``GET /v1/models``,
    the Files API and the Batch API. Answers come from ``policy``; faults are
    injected per ``faults`` or per request with the ``X-Seekbench-Fault`` header.

    Parameters
    ----------
    port : int, default 0
        0 picks a free port.
    faults : str, FaultSpec, mapping or None
        Fault spec such as ``"429:0.2,drop:0.1,inject:1"`` (see ``FaultSpec``).
    latency_ms : int, default 0
        Delay added to every response.
    seed : int, default 0
        Seeds the fault draws and the file and batch ids.
    policy : callable(request_json) -> str, optional
        The labeling policy; default :data:`default_policy` (answers every shipped prompt).
    request_log : path, optional
        JSONL file to append one line per request to (flushed at once).
    api_key : str, optional
        When given, requests must send ``Authorization: Bearer <api_key>``
        (else 401); otherwise any bearer token is accepted. Never logged.
    timeout_s : float, default 5.0
        How long the ``timeout`` fault holds a request before answering.
    retry_after_s : int, default 0
        ``Retry-After`` seconds sent with a 429.
    models : tuple of str
        Ids listed by ``GET /v1/models``; chat completions accept any model.
    verbose : bool, default False
        Print one line per request (method, path, status) to stderr.
    profile : ServerProfile, optional
        The kind of server to play: the response formats it accepts, its context
        window (over-long prompts refused with a 400), slots and model metadata
        (``GET /props``, ``/v1/models`` fields). Default: accepts everything, reports nothing.

    Examples
    --------
    >>> import openai
    >>> with OpenAIServer() as srv:  # doctest: +SKIP
    ...     client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test")
    ...     client.models.list().data[0].id
    'seekbench-mock'
    """

    def __init__(
        self,
        *,
        port: int = 0,
        faults: str | FaultSpec | Mapping[str, float] | None = None,
        latency_ms: int = 0,
        seed: int = 0,
        policy: Policy | None = None,
        request_log: str | Path | None = None,
        api_key: str | None = None,
        timeout_s: float = 5.0,
        retry_after_s: int = 0,
        models: tuple[str, ...] = DEFAULT_MODELS,
        verbose: bool = False,
        profile: ServerProfile | None = None,
    ) -> None:
        if latency_ms < 0 or timeout_s < 0 or retry_after_s < 0:
            raise ValueError("latency_ms, timeout_s and retry_after_s must be >= 0")
        self._port = port
        self.latency_ms = latency_ms
        self.timeout_s = timeout_s
        self.verbose = verbose
        self.engine = Engine(
            policy=policy,
            faults=faults,
            seed=seed,
            api_key=api_key,
            request_log=request_log,
            retry_after_s=retry_after_s,
            models=models,
            profile=profile,
        )
        self.stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        state = f"port={self.port}" if self._httpd is not None else "stopped"
        return f"OpenAIServer({state}, faults={str(self.engine.faults)!r})"

    # -- lifecycle --------------------------------------------------------------

    def start(self) -> OpenAIServer:
        """Bind and serve in a daemon thread; return self."""
        if self._httpd is not None:
            raise RuntimeError("the server is already running")
        self.stopping.clear()
        self._httpd = _HTTPServer(self, self._port)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"seekbench-openai-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake held requests, close open connections and the request log."""
        if self._httpd is None:
            return
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.close_connections()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None
        self.engine.close()

    close = stop

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Start unless running, then block until KeyboardInterrupt (for the command line)."""
        if self._httpd is None:
            self.start()
        try:
            while self._thread is not None and self._thread.is_alive():
                self._thread.join(timeout=0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    # -- inspection ---------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running; use it as a context manager or call start()")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no ``/v1``)."""
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: pass it as the openai client's ``base_url``."""
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A copy of the request log, oldest first (one dict per request or batch line)."""
        return self.engine.log_snapshot()

    @property
    def faults(self) -> FaultSpec:
        return self.engine.faults

    @faults.setter
    def faults(self, spec: str | FaultSpec | Mapping[str, float] | None) -> None:
        self.engine.faults = FaultSpec.parse(spec)

    def reset(self) -> None:
        """Forget logged requests, attempt counters, files and batches (the log file is kept)."""
        self.engine.reset()
