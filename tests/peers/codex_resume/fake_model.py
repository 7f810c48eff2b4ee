"""A fake OpenAI Responses API on 127.0.0.1 (Python stdlib only) that records what the real Codex
CLI sends: every POST .../responses body is kept, and answered with one streamed assistant text
message (so a resumed turn ends after one request). Written for the Codex acceptance test
(tests/test_codex_accepts.py); modelled on ../shared/peers/codex/fake_responses.py, which scripts
tool calls as well.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY_TEXT = "Resumed (fake model): carrying on from the checkpoint."


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeModel

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _json(self, code: int, obj: dict[str, Any]) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [], "models": []})
        else:
            self._json(404, {"error": {"message": "fake model", "type": "not_found"}})

    def do_POST(self) -> None:
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not self.path.split("?")[0].endswith("/responses"):
            self._json(404, {"error": {"message": "fake model", "type": "not_found"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        with self.server.lock:
            self.server.bodies.append(body)
        self._stream_text(REPLY_TEXT)

    def _stream_text(self, text: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

        def event(name: str, data: dict[str, Any]) -> None:
            data["type"] = name
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        rid = "resp_fake_" + uuid.uuid4().hex[:16]
        mid = "msg_fake_" + uuid.uuid4().hex[:12]
        item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
        event("response.created", {"response": {"id": rid, "object": "response", "status": "in_progress", "output": []}})
        event("response.output_item.added", {"output_index": 0, "item": {**item, "status": "in_progress", "content": []}})
        event("response.output_text.delta", {"item_id": mid, "output_index": 0, "content_index": 0, "delta": text})
        event("response.output_item.done", {"output_index": 0, "item": item})
        usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}
        event("response.completed", {"response": {"id": rid, "object": "response", "status": "completed",
                                                  "output": [item], "usage": usage}})


class FakeModel(ThreadingHTTPServer):
    """Serves on 127.0.0.1 (a free port) until `close()`; `bodies` holds every request body."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.bodies: list[dict[str, Any]] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()
