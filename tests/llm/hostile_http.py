"""A real HTTP server on 127.0.0.1 that answers chat-completion requests with hostile replies.

The bundled mock server answers like an OpenAI endpoint (with injected, well-formed
faults); this one answers like the broken things between a client and a model: a
proxy's HTML page with status 200, a body cut short, JSON of the wrong shape, empty
choices, a body sent a byte at a time, a connection that never answers, a Retry-After
of a day, a body that echoes the bearer token back JSON-escaped. Every request is
counted; ``mode`` may be changed between runs.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = (
    "html",
    "truncated",
    "bad_shape",
    "not_object",
    "empty_choices",
    "null_content",
    "drip",
    "hang",
    "retry_after_day",
    "echo_key_escaped",
    "ok",
)


def _completion(content: str) -> dict:
    return {
        "id": "chatcmpl-hostile",
        "object": "chat.completion",
        "created": 0,
        "model": "hostile",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class HostileServer:
    """``with HostileServer("html") as srv:`` then point a judge at ``srv.base_url``."""

    def __init__(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        self.requests = 0
        self.auth: list[str] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # /v1/models and /props: not found, so the probe learns nothing
                self._send(404, b'{"error": {"message": "no such path"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                with owner._lock:
                    owner.requests += 1
                    owner.auth.append(self.headers.get("authorization", ""))
                owner.answer(self)

            def _send(self, status: int, body: bytes, ctype: str = "application/json", headers=()) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in headers:
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

        self._handler = Handler
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def answer(self, h) -> None:
        mode = self.mode
        if mode == "html":
            h._send(200, b"<html><body><h1>502 Bad Gateway</h1>nginx</body></html>", "text/html")
        elif mode == "truncated":
            h._send(200, json.dumps(_completion("{}")).encode()[:40])
        elif mode == "bad_shape":
            h._send(200, b'{"choices": "nope"}')
        elif mode == "not_object":
            h._send(200, b"[1, 2, 3]")
        elif mode == "empty_choices":
            h._send(200, b'{"id": "x", "object": "chat.completion", "choices": []}')
        elif mode == "null_content":
            body = _completion("")
            body["choices"][0]["message"]["content"] = None
            h._send(200, json.dumps(body).encode())
        elif mode == "drip":  # a valid body, one byte every 0.4 s: never finishes within a short deadline
            body = json.dumps(_completion('{"labels": []}')).encode()
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            for i in range(len(body)):
                if self._stop.wait(0.4):
                    return
                try:
                    h.wfile.write(body[i : i + 1])
                    h.wfile.flush()
                except OSError:
                    return
        elif mode == "hang":
            self._stop.wait(120)
        elif mode == "retry_after_day":
            h._send(429, b'{"error": {"message": "slow down"}}', headers=[("Retry-After", "86400")])
        elif mode == "echo_key_escaped":
            token = h.headers.get("authorization", "").removeprefix("Bearer ")
            escaped = "".join(f"\\u{ord(c):04x}" for c in token)
            content = "not json, but it quotes the key: " + token
            raw = json.dumps(_completion(content)).replace(json.dumps(token)[1:-1], escaped)
            h._send(200, raw.encode())
        else:
            h._send(200, json.dumps(_completion("{}")).encode())

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        time.sleep(0.05)
