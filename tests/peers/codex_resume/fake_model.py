"""A fake OpenAI Responses API on 127.0.0.1 (Python stdlib only) that records what the real Codex
CLI sends: every POST .../responses body is kept, and answered with one streamed assistant text
message (so a resumed turn ends after one request), or with what a script says (`Script`:
text messages and function calls, and the usage to report, which is how Codex is made to compact).
Written for the Codex acceptance test (tests/test_codex_accepts.py) and the incident generator
(tests/peers/codex_resume/incidents.py); modelled on ../shared/peers/codex/fake_responses.py.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY_TEXT = "Resumed (fake model): carrying on from the checkpoint."
COMPACTION_PROMPT = "CONTEXT CHECKPOINT COMPACTION"  # in the last user input of Codex's summarizer request

# A reply: output items ({"type": "message", "text"} or {"type": "function_call", "name",
# "arguments"}) and the total tokens to report for the request (None: a small count).
Reply = tuple[list[dict[str, Any]], int | None]
Script = Callable[[dict[str, Any]], Reply]


def input_text(item: dict[str, Any]) -> str:
    c = item.get("content")
    if isinstance(c, str):
        return c
    return "\n".join(x["text"] for x in c or [] if isinstance(x, dict) and isinstance(x.get("text"), str))


def last_user_text(body: dict[str, Any]) -> str:
    users = [it for it in body.get("input") or [] if it.get("type", "message") == "message" and it.get("role") == "user"]
    return input_text(users[-1]) if users else ""


def is_compaction(body: dict[str, Any]) -> bool:
    """Codex's summarizer request: the history, then its compaction prompt."""
    return COMPACTION_PROMPT in last_user_text(body)


def text_reply(body: dict[str, Any]) -> Reply:
    return [{"type": "message", "text": REPLY_TEXT}], None


def open_event_stream(handler: BaseHTTPRequestHandler) -> None:
    """Answer with a server-sent event stream, the connection closed after it (the events follow)."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("connection", "close")
    handler.end_headers()
    handler.close_connection = True


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
            out, total = self.server.script(body)
        self._stream(out, total)

    def _stream(self, out: list[dict[str, Any]], total: int | None) -> None:
        open_event_stream(self)

        def event(name: str, data: dict[str, Any]) -> None:
            data["type"] = name
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        rid = "resp_fake_" + uuid.uuid4().hex[:16]
        event("response.created", {"response": {"id": rid, "object": "response", "status": "in_progress", "output": []}})
        done = []
        for i, o in enumerate(out):
            if o["type"] == "message":
                mid = "msg_fake_" + uuid.uuid4().hex[:12]
                item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": o["text"], "annotations": []}]}
                event("response.output_item.added", {"output_index": i, "item": {**item, "status": "in_progress", "content": []}})
                if o["text"]:
                    event("response.output_text.delta", {"item_id": mid, "output_index": i, "content_index": 0, "delta": o["text"]})
            elif o["type"] == "reasoning":  # its summary texts and encrypted content, whole at its end
                item = {"type": "reasoning", "id": "rs_fake_" + uuid.uuid4().hex[:12],
                        "summary": [{"type": "summary_text", "text": t} for t in o["summary"]],
                        "encrypted_content": o.get("encrypted")}
                event("response.output_item.added", {"output_index": i, "item": {**item, "summary": []}})
            else:
                fid = "fc_fake_" + uuid.uuid4().hex[:12]
                cid = o.get("call_id") or "call_fake_" + uuid.uuid4().hex[:10]
                item = {"type": "function_call", "id": fid, "call_id": cid, "name": o["name"],
                        "arguments": o["arguments"], "status": "completed"}
                event("response.output_item.added", {"output_index": i, "item": {**item, "arguments": ""}})
                event("response.function_call_arguments.delta", {"item_id": fid, "output_index": i, "delta": o["arguments"]})
                event("response.function_call_arguments.done", {"item_id": fid, "output_index": i, "arguments": o["arguments"]})
            event("response.output_item.done", {"output_index": i, "item": item})
            done.append(item)
        out_tokens = 10
        in_tokens = max(1, (total or 110) - out_tokens)
        usage = {"input_tokens": in_tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": out_tokens,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": in_tokens + out_tokens}
        event("response.completed", {"response": {"id": rid, "object": "response", "status": "completed",
                                                  "output": done, "usage": usage}})


class FakeModel(ThreadingHTTPServer):
    """Serves on 127.0.0.1 (a free port) until `close()`; `bodies` holds every request body."""

    daemon_threads = True

    def __init__(self, script: Script = text_reply) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = script
        self.lock = threading.Lock()
        self.bodies: list[dict[str, Any]] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()
