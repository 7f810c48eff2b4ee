"""Seed files for the runtimes that cannot be run here (adk-go, maka, NextClaw): no store of theirs
is on disk, so the fuzzer builds its seeds from each runtime's own types, with the builders the
adapters' tests use (tests/adk_go_store.py, tests/maka_store.py, tests/nextclaw_store.py; the
types and the commits read are cited there and in docs/runtimes/adk-go.md, maka.md, nextclaw.md).

Each seed is small but walks the adapter's main paths:
- adk-go: GORM's SQLite layout with a compaction record (excludedEvents, a function call and its
  response, usage) in PascalCase and camelCase `actions`, a second session (the store's session
  choice), a long-running call re-injected, a foreign agent's events; and the same events as
  adk-go's JSON export (session.Event MarshalJSON);
- maka: `runtime.sqlite` with a v2 checkpoint (a summary), a v3 one (opaque provider state on its
  own route), a mid-turn one with a head anchor, routes from the run headers;
- NextClaw: NCP journals (deltas, tool-call events, a checkpoint as a `service` timeline message,
  seed 004's deterministic recovery, a failed compaction), one with its `<id>.metadata.json`
  sidecar naming another checkpoint;
- NextClaw's legacy `sessions/<key>.jsonl` store (core's SessionStore): answered and interrupted
  tool-call blocks, a result answering no open call, a message line from before events, events
  out of seq order, more than getHistory's 50 messages.

`build_seeds(folder)` writes them (the same bytes every time) and returns (kind, path) pairs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests import adk_go_store as go
from tests import maka_store as mk
from tests import nextclaw_store as nc

# ---------------------------------------------------------------------------------------- adk-go


def _go_turn(n: int, sec: float, casing: str) -> list[dict[str, object]]:
    return [
        go.ev(f"u{n}", f"inv-{n}", "user", go.t(sec), go.text("user", f"question {n}"), casing=casing),
        go.ev(f"a{n}", f"inv-{n}", "coder", go.t(sec + 0.5), go.text("model", f"answer {n}"), casing=casing,
              usage={"promptTokenCount": 400 + n, "candidatesTokenCount": 20, "totalTokenCount": 420 + n}),
    ]  # fmt: skip


def go_events(casing: str) -> list[dict[str, object]]:
    """A compaction with an excluded event, a tail retained after it, a long-running call, a helper agent."""
    return [
        go.ev("e1", "inv-1", "user", go.t(0.000001), go.text("user", "List the files"), casing=casing),
        go.ev("e2", "inv-1", "coder", go.t(1), go.call("c1", "ls", {"dir": "."}), casing=casing,
              usage={"promptTokenCount": 812, "candidatesTokenCount": 12}),
        go.ev("e3", "inv-1", "coder", go.t(1.5), go.response("c1", "ls", {"out": "a.py"}), casing=casing),
        *_go_turn(2, 2, casing),
        go.ev("h1", "inv-2", "helper", go.t(2.7), go.text("model", "I looked too"), casing=casing),
        go.ev("k1", "inv-3", "coder", go.t(3), go.call("lr", "deploy", {}), casing=casing, long_running=["lr"]),
        go.ev("p1", "inv-3", "coder", go.t(3.2), go.response("lr", "deploy", {"status": "pending"}), casing=casing),
        go.ev("cmp", "inv-9", "user", go.t(30), None, casing=casing,
              comp=go.compaction(go.rfc(0.000001), go.rfc(2.5), "Summary: listed the files.", [("inv-1", go.rfc(1, 123))])),
        *_go_turn(4, 31, casing),
        go.ev("p2", "inv-5", "user", go.t(40), go.response("lr", "deploy", {"status": "done"}), casing=casing),
    ]  # fmt: skip


def _adk_go_db(folder: Path) -> list[Path]:
    pascal = Path(go.store(str(folder / "adk-go-pascal.db"), {"s1": go_events("pascal")}))
    other = [go.ev("o1", "inv-o", "user", go.t(2), go.text("user", "other session"), casing="camel")]
    camel = Path(go.store(str(folder / "adk-go-camel.db"), {"s2": other, "s1": go_events("camel")}))
    return [pascal, camel]


def _adk_go_json(folder: Path) -> list[Path]:
    p = folder / "adk-go-export.json"
    p.write_bytes(go.export(go_events("camel")))
    return [p]


# ---------------------------------------------------------------------------------------- maka


def _maka_two_turns(version: int) -> mk.Session:
    s = mk.Session()
    s.run("run1", "turn1", model="model-a", connection="conn-a")
    s.user("u1", "run1", "Rename foo")
    s.call("c1", "run1", "call_1")
    s.result("r1", "run1", "call_1")
    s.reply("a1", "run1", "Renamed")
    s.run("run2", "turn2")
    s.checkpoint("cp1", "run2", 4, version=version)
    s.user("u2", "run2", "Now bar")
    s.call("c2", "run2", "call_2", name="grep", args={"q": "bar"})
    s.result("r2", "run2", "call_2", name="grep", result={"hits": 3})
    s.reply("a2", "run2", "Done")
    return s


def _maka_mid_turn() -> mk.Session:
    s = mk.Session(sid="s2", projection="cp2")
    s.run("run3", "turn3")
    s.user("m-u1", "run3", "Rename foo")
    s.call("m-c1", "run3", "call_1")
    s.result("m-r1", "run3", "call_1")
    s.checkpoint("cp2", "run3", 3, phase="mid_turn", anchor="m-u1")
    s.call("m-c2", "run3", "call_2")
    s.result("m-r2", "run3", "call_2")
    return s


def _maka_db(folder: Path) -> list[Path]:
    for sub in ("maka-v2", "maka-v3"):
        (folder / sub).mkdir()
    v2 = Path(mk.write(str(folder / "maka-v2" / "runtime.sqlite"), _maka_two_turns(2)))
    v3 = Path(mk.write(str(folder / "maka-v3" / "runtime.sqlite"), _maka_two_turns(3), _maka_mid_turn()))
    return [v2, v3]


# ---------------------------------------------------------------------------------------- NextClaw

SEED_004_DIAGNOSTICS = {
    "attemptCount": 3, "degraded": True, "finishReason": "length", "installedSummaryTokens": 180,
    "providerInputTokens": 7600, "providerMaxOutputTokens": 600,
    "providerUsage": {"inputTokens": 22000, "outputTokens": 1800}, "rawSummaryTokens": 600,
    "recovery": "deterministic-recent-context", "targetSummaryTokens": 550,
}  # fmt: skip


def _streamed_turn(j: nc.Journal) -> nc.Journal:
    j.sent(nc.message("u1", "user", "Summarise the report", nc.ts(0, 1)))
    j.event("session.request.accepted", nc.ts(0, 1), requestId="q1")
    j.event("run.started", nc.ts(0, 2), runId="r1", messageId="a1")
    j.event("message.reasoning-start", nc.ts(0, 2), messageId="a1")
    j.event("message.reasoning-delta", nc.ts(0, 2), messageId="a1", delta="Look at it first.")
    j.event("message.text-start", nc.ts(0, 3), messageId="a1")
    j.event("message.text-delta", nc.ts(0, 3), messageId="a1", delta="Reading it. ")
    j.event("message.tool-call-start", nc.ts(0, 4), messageId="a1", toolCallId="c1", toolName="read_file")
    j.event("message.tool-call-args", nc.ts(0, 4), toolCallId="c1", args='{"path": "report.txt"}')
    j.event("message.tool-call-end", nc.ts(0, 4), toolCallId="c1")
    j.event("message.tool-call-result", nc.ts(0, 5), toolCallId="c1", content="The report says X.")
    j.event("message.tool-call-start", nc.ts(0, 6), messageId="a1", toolCallId="c2", toolName="grep")
    j.event("message.text-delta", nc.ts(0, 7), messageId="a1", delta="It says X.")
    j.event("run.finished", nc.ts(0, 8), runId="r1", messageId="a1", endedAt=nc.ts(0, 8))
    return j


def _compacted(j: nc.Journal, **cp_fields: object) -> dict[str, object]:
    j.sent(nc.message("u2", "user", "And the appendix?", nc.ts(1)))
    j.completed(nc.message("a2", "assistant", "The appendix says Y.", nc.ts(1, 5),
                           parts=[{"type": "text", "text": "The appendix says Y."},
                                  nc.tool_part("c9", "ls", {"dir": "."}, result={"out": "a"})]))  # fmt: skip
    j.sent(nc.message("u3", "user", "Now the conclusion", nc.ts(29)))
    fields: dict[str, object] = {"retainedMessageIds": ["u3"], "preservedUserMessageIds": ["u1"]}
    fields.update(cp_fields)
    summary = str(fields.pop("summary", "## Active Request\nReport summary.\n"))
    cp = nc.checkpoint("ctx-20260820093000-4", summary, nc.ts(1, 5), nc.ts(30), **fields)
    j.sent(nc.timeline(cp))
    j.completed(nc.message("a3", "assistant", "The conclusion is Z.", nc.ts(31)))
    return cp


def _nextclaw(folder: Path) -> list[Path]:
    provider = _streamed_turn(nc.Journal())
    _compacted(provider, summaryDiagnostics=SEED_004_DIAGNOSTICS | {"recovery": "provider-summary", "degraded": False, "attemptCount": 1, "finishReason": "stop"})
    failed = nc.checkpoint("ctx-f", "", nc.ts(40), nc.ts(41)) | {"status": "failed"}
    provider.sent(nc.timeline(failed))
    p1 = provider.write(folder / "nextclaw-provider", "agent_main_s1")

    emergency = (
        "## Current Work State\n\nModel-based compaction did not produce a safe summary. Exact retained recent source:\n\n"
        "> The appendix says Y.\n"
    )
    seed004 = _streamed_turn(nc.Journal(metadata={"label": "seed 004"}))
    cp = _compacted(seed004, summary=emergency, summaryDiagnostics=SEED_004_DIAGNOSTICS, preservedUserMessageIds=[], phase="mid-run")
    p2 = seed004.write(folder / "nextclaw-seed004", "agent_main_s1")
    # The sidecar (journal store .ts:369) names another checkpoint than the journal's latest.
    side = {"_type": "metadata", "version": 1, "created_at": nc.ts(0), "agent_id": "main",
            "metadata": {"last_context_compaction": {"id": "ctx-other", "status": cp["status"]}}}  # fmt: skip
    (p2.parent / "agent_main_s1.metadata.json").write_text(json.dumps(side) + "\n", encoding="utf-8")

    return [p1, p2]


def _nextclaw_legacy(folder: Path) -> list[Path]:
    """core's SessionStore files (nc.LegacyStore, session.store.ts at 001fb682)."""
    s = nc.LegacyStore()
    s.add("user", "Summarise the report")
    s.call("c1", "read_file", {"path": "report.md"})
    s.result("c1", "read_file", "X")
    s.call("c2", "grep", {"q": "Y"})
    s.add("user", "never mind")  # interrupts c2's block: getHistory drops it
    s.result("c2", "grep", "late")  # answers no open call
    for i in range(48):
        s.add("assistant" if i % 2 else "user", f"turn {i}", **({"reasoning_content": "why"} if i == 7 else {}))
    s.call("c3", "ls", {})  # still open at the end
    p1 = s.write(folder / "nextclaw-legacy")
    lines = [*s.lines()[:3], json.dumps({"role": "user", "content": [{"type": "text", "text": "old line"}]})]
    lines.append(json.dumps({"_type": "event", "seq": 2, "type": "message.assistant", "timestamp": nc.ts(0, 30),
                             "data": {"message": {"role": "assistant", "content": "same seq, later"}}}))  # fmt: skip
    p2 = folder / "nextclaw-legacy-mixed" / "agent_main_s2.jsonl"
    p2.parent.mkdir(parents=True, exist_ok=True)
    p2.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [p1, p2]


BUILDERS: dict[str, Callable[[Path], list[Path]]] = {
    "adk_go_db": _adk_go_db,
    "adk_go_json": _adk_go_json,
    "maka_db": _maka_db,
    "nextclaw": _nextclaw,
    "nextclaw_legacy": _nextclaw_legacy,
}


def build_seeds(folder: Path) -> list[tuple[str, Path]]:
    """Write every built seed under folder (emptied first) and return (kind, path) pairs."""
    out: list[tuple[str, Path]] = []
    for kind, build in BUILDERS.items():
        sub = folder / kind
        if sub.exists():
            for p in sorted(sub.rglob("*"), reverse=True):
                p.rmdir() if p.is_dir() else p.unlink()
        sub.mkdir(parents=True, exist_ok=True)
        out += [(kind, p) for p in build(sub)]
    return out
