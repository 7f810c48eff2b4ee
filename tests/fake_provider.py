"""A tiny scripted HTTP server on 127.0.0.1 for the provider tests: a real socket, a real HTTP
exchange, no transport mocks.

    with FakeProvider([Reply(429, {...}, headers={"Retry-After": "2"}), Reply(200, {...})]) as fake:
        ... base_url=fake.url ...
        fake.requests  # what the client sent: method, path, headers (lower-cased), json

Each request takes the next reply of the script (the last one repeats). A reply can also `delay`
(bounded, and cut short when the server stops), `close` the connection without answering, or
`reset` it (RST). Leaving the block stops the server and joins every thread it started.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_DELAY = 5.0


@dataclass(frozen=True)
class Reply:
    status: int = 200
    json: Any = None  # body as JSON (ignored when `body` is set)
    body: str | bytes | None = None  # raw body
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering
    action: str | None = None  # "close": hang up without answering; "reset": send a TCP RST


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    json: Any


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # handler threads are joined on close (block_on_close)
    block_on_close = True

    def __init__(self, script: list[Reply]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = list(script)
        self.served = 0
        self.requests: list[Seen] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()

    def next_reply(self, seen: Seen) -> Reply:
        with self.lock:
            self.requests.append(seen)
            reply = self.script[min(self.served, len(self.script) - 1)]
            self.served += 1
            return reply


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = self.server.next_reply(Seen(self.command, self.path, headers, body))

        if reply.delay:
            self.server.stopping.wait(min(reply.delay, MAX_DELAY))
        if reply.action in ("close", "reset"):
            if reply.action == "reset":
                # Linger 0: close() sends RST instead of FIN.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            self.close_connection = True
            return

        if reply.body is not None:
            payload = reply.body.encode() if isinstance(reply.body, str) else reply.body
            ctype = "text/plain; charset=utf-8"
        else:
            payload = json.dumps(reply.json).encode()
            ctype = "application/json"
        try:
            self.send_response(reply.status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(payload)))
            for k, v in reply.headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:  # the client gave up (timeout) before we answered
            self.close_connection = True

    do_GET = do_POST


class FakeProvider:
    def __init__(self, script: list[Reply]) -> None:
        if not script:
            raise ValueError("a script needs at least one reply")
        self._server = _Server(script)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01})

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[Seen]:
        with self._server.lock:
            return list(self._server.requests)

    def __enter__(self) -> FakeProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stopping.set()  # wake any handler still sleeping on a `delay`
        self._server.shutdown()
        self._server.server_close()  # joins the handler threads
        self._thread.join(timeout=5)
        assert not self._thread.is_alive()

    def threads_alive(self) -> int:
        """Handler threads still running (0 after the block)."""
        threads = getattr(self._server, "_threads", None) or []
        return sum(1 for t in list(threads) if t.is_alive())
