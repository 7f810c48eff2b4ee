#!/usr/bin/env python3
"""A scripted OpenAI-style chat-completions server on 127.0.0.1 that records every request.

Stdlib only. `python3 fake_model.py --script S.json --log REQUESTS.jsonl --port-file PORT`.

Each request is classified from its own content (so OpenClaw's retries and compactions cannot
desynchronise the script) and appended to the log, one JSON object per line, before the answer:
`{"seq", "kind", "turn", "step", "body"}`.

- `summarizer`: the system message starts "You are a context summarization assistant" (OpenClaw's
  compaction). The answer is a summary with the five headings OpenClaw's quality guard requires
  (`## Decisions`, `## Open TODOs`, `## Constraints/Rules`, `## Pending user asks`, `## Exact
  identifiers`), naming the `[turn:NAME]` tags it was shown.
- `memory_flush`: the last user message starts "Pre-compaction memory flush" (OpenClaw's
  pre-compaction agent turn). The answer is `NO_REPLY`.
- `agent`: anything else. Its turn is the newest user message carrying a `[turn:NAME]` tag; its
  step is how many tool rounds of that turn came after it (a tool result whose id this server minted,
  `call<NAME>s<STEP>k<K>`: OpenClaw strips `_` from tool-call ids, so ids have none). The script's
  `turns[NAME]` is a list of steps: `{"tools": [[name, arguments], ...]}` asks for tool calls,
  `{"text": ...}` answers; past the end of the list the answer is a plain text.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUMMARIZER_PREFIX = "You are a context summarization assistant"
FLUSH_PREFIX = "Pre-compaction memory flush"
TAG = re.compile(r"\[turn:([A-Za-z0-9]+)\]")
CALL_ID = re.compile(r"^call([A-Za-z0-9]+?)s(\d+)k(\d+)$")


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def classify(messages: list[dict[str, Any]]) -> tuple[str, str | None, int]:
    """(kind, turn, step) of a request."""
    if (
        messages
        and messages[0].get("role") in ("system", "developer")
        and text_of(messages[0].get("content")).startswith(SUMMARIZER_PREFIX)
    ):
        return "summarizer", None, 0
    users = [m for m in messages if m.get("role") == "user"]
    if users and text_of(users[-1].get("content")).startswith(FLUSH_PREFIX):
        return "memory_flush", None, 0
    for m in reversed(messages):
        if m.get("role") == "tool":
            hit = CALL_ID.match(str(m.get("tool_call_id") or ""))
            if hit:
                return "agent", hit.group(1), int(hit.group(2)) + 1
        if m.get("role") == "user":
            tags = TAG.findall(text_of(m.get("content")))
            if tags:
                return "agent", tags[-1], 0
    return "agent", None, 0


def summary(messages: list[dict[str, Any]]) -> str:
    seen = sorted(set(TAG.findall(json.dumps(messages))))
    return (
        "## Decisions\n- keep the store in SQLite\n"
        "## Open TODOs\n- none\n"
        "## Constraints/Rules\n- offline only\n"
        "## Pending user asks\n- none\n"
        f"## Exact identifiers\n- FILE-42\n- turns seen: {', '.join(seen) or 'none'}\n"
    )


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: dict[str, Any], log: str) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script = script
        self.log = log
        self.seq = 0
        self.lock = threading.Lock()
        self.last = time.time()


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, obj: Any, status: int = 200) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._json({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            self._json({"error": {"message": "not JSON"}}, 400)
            return
        messages = body.get("messages") or []
        kind, turn, step = classify(messages)
        srv = self.server
        with srv.lock:
            srv.seq += 1
            seq = srv.seq
            srv.last = time.time()
            with open(srv.log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"seq": seq, "kind": kind, "turn": turn, "step": step, "body": body}) + "\n")
        text, calls = self._answer(kind, turn, step, messages)
        est = len(json.dumps(messages)) // 4
        usage = {"prompt_tokens": est, "completion_tokens": max(1, len(text) // 4), "total_tokens": est + len(text) // 4}
        self._stream(seq, text, calls, usage)

    def _answer(
        self, kind: str, turn: str | None, step: int, messages: list[dict[str, Any]]
    ) -> tuple[str, list[tuple[str, str, dict[str, Any]]]]:
        if kind == "summarizer":
            return summary(messages), []
        if kind == "memory_flush":
            return "NO_REPLY", []
        steps = self.server.script.get("turns", {}).get(turn or "", [])
        spec = steps[step] if step < len(steps) else {}
        if spec.get("tools"):
            calls = [(f"call{turn}s{step}k{k}", name, args) for k, (name, args) in enumerate(spec["tools"])]
            return spec.get("text", ""), calls
        return spec.get("text", f"done with turn {turn} step {step}."), []

    def _stream(self, seq: int, text: str, calls: list[tuple[str, str, dict[str, Any]]], usage: dict[str, int]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        base = {"id": f"chatcmpl-{seq}", "object": "chat.completion.chunk", "created": int(time.time()), "model": "fake-model"}

        def event(choices: list[dict[str, Any]], **extra: Any) -> None:
            self.wfile.write(b"data: " + json.dumps({**base, "choices": choices, **extra}).encode() + b"\n\n")

        delta: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            delta["tool_calls"] = [
                {"index": i, "id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (cid, name, args) in enumerate(calls)
            ]
        event([{"index": 0, "delta": delta, "finish_reason": None}])
        event([{"index": 0, "delta": {}, "finish_reason": "tool_calls" if calls else "stop"}])
        event([], usage=usage)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--idle-seconds", type=float, default=600)
    a = ap.parse_args()
    with open(a.script, encoding="utf-8") as f:
        script = json.load(f)
    srv = Server(script, a.log)
    with open(a.port_file, "w", encoding="utf-8") as f:
        f.write(str(srv.server_address[1]))

    def watchdog() -> None:
        while time.time() - srv.last < a.idle_seconds:
            time.sleep(1)
        srv.shutdown()

    threading.Thread(target=watchdog, daemon=True).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
