"""Helpers for the repair-engine tests: small pi / native session builders, a scripted summarizer
(the core's input, not a transport mock) and hypothesis strategies for generated sessions."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from inspector.analysis import Report, analyze
from inspector.analysis.protocol import ESSENTIAL_MARKER, ESSENTIAL_SECTIONS
from inspector.compaction.types import SummaryRequest, SummaryResult
from inspector.formats import load_bytes
from inspector.ledger.model import Route, Usage

VOCAB = ["export", "nightly", "writer", "stream", "batch", "invoice", "ledger", "retry", "backoff", "header", "config", "settings", "parse", "module", "test", "fixture", "assert", "value", "error", "path", "file", "read", "write", "edit", "commit", "branch", "merge", "token", "window", "summary", "context", "request", "reply", "tool", "call", "result", "model", "route", "provider", "budget", "chunk"]


def words(n: int, seed: int = 0) -> str:
    return " ".join(VOCAB[(seed * 31 + i * 7) % len(VOCAB)] for i in range(max(n, 1)))


def ts(n: int) -> str:
    return f"2026-03-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


# ---------------------------------------------------------------------------------------- builders


class Builder:
    """Appends messages; `.pi()` / `.native()` render the same story in either format."""

    def __init__(self, model: str = "model-a", connection: str = "conn-a", settings: dict[str, int] | None = None) -> None:
        self.items: list[dict[str, Any]] = []
        self.model = model
        self.connection = connection
        self.settings = settings
        self.n = 0

    def _add(self, **kw: Any) -> str:
        self.n += 1
        kw.setdefault("id", f"{self.n:08x}")
        self.items.append(kw)
        return kw["id"]

    def user(self, text: str) -> str:
        return self._add(kind="user", text=text)

    def assistant(
        self,
        text: str = "",
        calls: list[tuple[str, dict[str, Any]]] | None = None,
        stop: str | None = None,
        route: tuple[str, str] | None = None,
        usage: tuple[int, int] | None = None,
    ) -> tuple[str, list[str]]:
        ids = [f"call_{self.n + 1}_{k}" for k in range(len(calls or []))]
        stop = stop or ("tool_use" if calls else "stop")
        i = self._add(kind="assistant", text=text, calls=list(zip(ids, calls or [], strict=True)), stop=stop,
                      route=route or (self.model, self.connection), usage=usage)
        return i, ids

    def tool(self, call_id: str, text: str, name: str = "read", is_error: bool = False) -> str:
        return self._add(kind="tool", call_id=call_id, text=text, name=name, is_error=is_error)

    def turn(self, user: str, steps: list[list[tuple[str, dict[str, Any], str]]], final: str | None) -> None:
        """A user message, tool steps (each a list of (tool, args, result text)), a final answer."""
        self.user(user)
        for step in steps:
            _, ids = self.assistant(words(4, len(self.items)), [(n, a) for n, a, _ in step])
            for cid, (name, _, out) in zip(ids, step, strict=True):
                self.tool(cid, out, name)
        if final is not None:
            self.assistant(final)

    def pi_compaction(self, summary: str, first_kept: str | None, **extra: Any) -> str:
        return self._add(kind="pi_compaction", summary=summary, first_kept=first_kept, extra=extra)

    def native_checkpoint(self, summary: str, boundary: str | None, represents: list[list[str]], retains: list[str], **extra: Any) -> str:
        return self._add(kind="native_checkpoint", summary=summary, boundary=boundary, represents=represents, retains=retains, extra=extra)

    # ------------------------------------------------------------------------------ render

    def pi(self) -> bytes:
        lines = [{"type": "session", "version": 3, "id": "0190a000-0000-7000-8000-000000000000", "timestamp": ts(0), "cwd": "/w"}]
        prev: str | None = None
        stop_map = {"tool_use": "toolUse", "stop": "stop", "error": "error", "aborted": "aborted", "length": "length"}
        for k, it in enumerate(self.items, 1):
            base = {"id": it["id"], "parentId": prev, "timestamp": ts(k)}
            if it["kind"] == "user":
                o = {"type": "message", **base, "message": {"role": "user", "content": [{"type": "text", "text": it["text"]}], "timestamp": k}}
            elif it["kind"] == "assistant":
                content: list[dict[str, Any]] = [{"type": "text", "text": it["text"]}] if it["text"] else []
                content += [{"type": "toolCall", "id": cid, "name": n, "arguments": a} for cid, (n, a) in it["calls"]]
                m: dict[str, Any] = {"role": "assistant", "content": content, "api": "openai-completions",
                                     "provider": it["route"][1], "model": it["route"][0], "stopReason": stop_map[it["stop"]], "timestamp": k}
                if it["usage"]:
                    m["usage"] = {"input": it["usage"][0], "output": it["usage"][1], "cacheRead": 0, "cacheWrite": 0, "totalTokens": sum(it["usage"])}
                if it["stop"] == "error":
                    m["errorMessage"] = "500 upstream"
                o = {"type": "message", **base, "message": m}
            elif it["kind"] == "tool":
                o = {"type": "message", **base, "message": {"role": "toolResult", "toolCallId": it["call_id"], "toolName": it["name"],
                                                            "content": [{"type": "text", "text": it["text"]}], "isError": it["is_error"], "timestamp": k}}
            elif it["kind"] == "pi_compaction":
                o = {"type": "compaction", **base, "summary": it["summary"], "firstKeptEntryId": it["first_kept"], "tokensBefore": 1000, **it["extra"]}
            else:
                continue
            lines.append(o)
            prev = it["id"]
        return "".join(json.dumps(o) + "\n" for o in lines).encode()

    def native(self) -> bytes:
        header: dict[str, Any] = {"type": "ledger", "format": "inspector-ledger", "version": 1, "id": "s-1", "created": ts(0)}
        if self.settings:
            header["settings"] = self.settings
        lines: list[dict[str, Any]] = [header]
        runs: dict[tuple[str, str], str] = {}
        for it in self.items:
            if it["kind"] == "assistant" and tuple(it["route"]) not in runs:
                runs[tuple(it["route"])] = f"run-{len(runs) + 1}"
        for (model, conn), rid in runs.items():
            lines.append({"type": "run", "id": rid, "ts": ts(0), "model": model, "connection": conn})
        for k, it in enumerate(self.items, 1):
            base = {"id": it["id"], "ts": ts(k)}
            if it["kind"] == "user":
                o = {"type": "message", **base, "role": "user", "content": it["text"]}
            elif it["kind"] == "assistant":
                content = [{"type": "text", "text": it["text"]}] if it["text"] else []
                content += [{"type": "tool_call", "id": cid, "name": n, "args": a} for cid, (n, a) in it["calls"]]
                o = {"type": "message", **base, "run": runs[tuple(it["route"])], "role": "assistant", "content": content, "stop_reason": it["stop"]}
                if it["usage"]:
                    o["usage"] = {"input": it["usage"][0], "output": it["usage"][1], "cache_read": 0, "cache_write": 0}
            elif it["kind"] == "tool":
                o = {"type": "message", **base, "role": "tool",
                     "content": [{"type": "tool_result", "call_id": it["call_id"], "text": it["text"], "is_error": it["is_error"]}]}
            elif it["kind"] == "native_checkpoint":
                o = {"type": "checkpoint", **base, "boundary": it["boundary"], "represents": it["represents"], "retains": it["retains"],
                     "summary": it["summary"], **it["extra"]}
            else:
                continue
            lines.append(o)
        return "".join(json.dumps(o) + "\n" for o in lines).encode()

    def render(self, fmt: str) -> bytes:
        return self.pi() if fmt == "pi" else self.native()


def report_of(data: bytes, name: str = "session.jsonl", **kw: Any) -> Report:
    return analyze(load_bytes(data, name), **kw)


# ---------------------------------------------------------------------------------------- summarizers


def protocol_summary(req: SummaryRequest, body: str = "") -> str:
    """A protocol-complete summary naming the newest user line of the request."""
    users = re.findall(r"^\[User\]: (.*)$", req.prompt, re.M)
    active = users[-1][:200] if users else "(carried)"
    parts = [f"## {ESSENTIAL_SECTIONS[0]}\n{active}", f"## {ESSENTIAL_SECTIONS[1]}\n- {body or 'work summarized'}",
             f"## {ESSENTIAL_SECTIONS[2]}\n- none stated", f"## {ESSENTIAL_SECTIONS[3]}\n- continue the active request"]
    return "\n\n".join(parts) + f"\n\n{ESSENTIAL_MARKER}\n"


def ok(text: str, usage: tuple[int, int] = (100, 20)) -> SummaryResult:
    return SummaryResult("ok", text, Usage(*usage))


@dataclass
class Scripted:
    """Returns scripted results in order, then `default(req)` (a complete protocol summary)."""

    results: list[SummaryResult | Callable[[SummaryRequest], SummaryResult]] = field(default_factory=list)
    route: Route | None = None
    name: str = "scripted"
    requests: list[SummaryRequest] = field(default_factory=list)
    default: Callable[[SummaryRequest], SummaryResult] | None = None

    def summarize(self, req: SummaryRequest) -> SummaryResult:
        self.requests.append(req)
        if self.results:
            r = self.results.pop(0)
            return r(req) if callable(r) else r
        if self.default is not None:
            return self.default(req)
        text = protocol_summary(req)
        return SummaryResult("ok", text, Usage(len(req.prompt) // 4, len(text) // 4))


class Forbidden:
    """A summarizer that must not be called (plans call nothing)."""

    name = "forbidden"
    route = Route("model-a", "conn-a")

    def summarize(self, req: SummaryRequest) -> SummaryResult:  # pragma: no cover - the assertion
        raise AssertionError("plan called the summarizer")


# ---------------------------------------------------------------------------------------- hypothesis


@st.composite
def sessions(draw: Any, fmt: str | None = None, active: bool | None = None, with_errors: bool = True) -> tuple[str, bytes, Builder]:
    """(format, file bytes, builder) of a generated session: turns of tool steps with results of
    varied sizes, occasional failed replies, the last turn maybe still running."""
    f = fmt or draw(st.sampled_from(["pi", "native"]))
    b = Builder()
    n_turns = draw(st.integers(1, 6))
    for t in range(n_turns):
        b.user(words(draw(st.integers(3, 60)), t))
        for s in range(draw(st.integers(0, 4))):
            if with_errors and draw(st.integers(0, 9)) == 0:
                b.assistant("", stop=draw(st.sampled_from(["error", "aborted"])))
            n_calls = draw(st.integers(1, 3))
            calls = [(draw(st.sampled_from(["read", "bash", "edit"])), {"path": f"src/m{t}_{s}_{k}.py"}) for k in range(n_calls)]
            _, ids = b.assistant(words(draw(st.integers(0, 30)), s), calls)
            for k, cid in enumerate(ids):
                b.tool(cid, words(draw(st.integers(0, 400)), t * 10 + s + k), calls[k][0])
        last = t == n_turns - 1
        if not (last and (active if active is not None else draw(st.booleans()))):
            b.assistant(words(draw(st.integers(2, 40)), t))
    return f, b.render(f), b


budgets_st = st.builds(
    dict,
    window=st.sampled_from([3_000, 6_000, 20_000, 200_000]),
    reserve=st.integers(256, 1_024),
    keep_recent=st.integers(100, 4_000),
)
