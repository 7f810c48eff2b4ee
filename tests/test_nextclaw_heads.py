"""NextClaw's journal lines are checked by one `msgspec.convert` into typed structs (`nextclaw._Line`,
issue 15), the Python field check (`fields.checker(nextclaw.SPEC)`) run only on a line that does not
convert. Speed must not cost a diagnostic: a line converts exactly when the check would remove
nothing, and a journal loads the same (records, messages, diagnostics) as when every line takes the
check's path. For every field of the envelope, the event, the payload, the message and its parts, set
to every JSON type, removed, or beside an unknown key, on one event of each type the replay reads."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import fields, nextclaw
from tests.field_mutations import mutated
from tests.nextclaw_store import SID, checkpoint, message, timeline, ts

VALUES: list[Any] = [
    None, True, False, 0, -1, 7, 1.5, -0.0, 2**63 - 1, 2**63, 2**64 + 1, 1e300, "", "x", " a1 ", "a1", "c1", "user",
    "assistant", "final", "streaming", "result", "tool-invocation", "text", "2026-08-20T09:00:03.000Z", [], [1],
    [{"type": 1}], {}, {"a": 1},
]  # fmt: skip
SEED = 20261202

PARTS = [
    {"type": "text", "text": "t"},
    {"type": "reasoning", "text": "r"},
    {"type": "tool-invocation", "toolCallId": "c1", "toolName": "ls", "state": "call", "args": "{}"},
]
CP = checkpoint("ctx-1", "## Summary\n", ts(0, 1), ts(0, 9))
EVENTS: list[tuple[str, dict[str, Any]]] = [
    ("message.sent", {"message": message("u1", "user", "hi", ts(0, 1))}),
    ("run.started", {"runId": "r1", "messageId": "a1"}),
    ("message.text-start", {"messageId": "a1"}),
    ("message.text-delta", {"messageId": "a1", "delta": "Reading. "}),
    ("message.reasoning-delta", {"messageId": "a1", "delta": "why"}),
    ("message.tool-call-start", {"messageId": "a1", "toolCallId": "c1", "toolName": "ls"}),
    ("message.tool-call-args-delta", {"messageId": "a1", "toolCallId": "c1", "delta": "{"}),
    ("message.tool-call-args", {"toolCallId": "c1", "args": "{}"}),
    ("message.tool-call-end", {"toolCallId": "c1"}),
    ("message.tool-execution-started", {"messageId": "a1", "toolCallId": "c1"}),
    ("message.tool-call-result", {"toolCallId": "c1", "content": {"out": [1, 2]}, "final": True}),
    ("message.completed", {"message": message("a1", "assistant", None, ts(0, 4), parts=copy.deepcopy(PARTS), status="pending")}),
    ("session.snapshot.message", {"message": message("a2", "assistant", "snap", ts(0, 5))}),
    ("message.failed", {"messageId": "a1"}),
    ("message.abort", {"messageId": "a1"}),
    ("run.error", {"runId": "r1", "messageId": "a1", "interrupted": True}),
    ("run.finished", {"runId": "r1", "messageId": "a1", "endedAt": ts(0, 8)}),
    ("message.sent", {"message": timeline(CP)}),
]  # fmt: skip


def _line(etype: str, payload: dict[str, Any], seq: int = 1) -> dict[str, Any]:
    return {
        "_type": "event",
        "version": 1,
        "seq": seq,
        "timestamp": ts(0, 2),
        "event": {"type": etype, "occurredAt": ts(0, 2), "payload": {"sessionId": SID, **copy.deepcopy(payload)}},
    }


def _places(line: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    """Every field SPEC types or the line holds, at every level, and an unknown key beside them."""
    out: list[tuple[tuple[Any, ...], str]] = []

    def visit(path: tuple[Any, ...], obj: dict[str, Any], spec: dict[str, fields.Field] | None) -> None:
        for k in [*dict.fromkeys([*obj, *(spec or {})]), "unknown_key"]:
            out.append((path, k))
            v, f = obj.get(k), (spec or {}).get(k)
            if isinstance(v, dict):
                visit((*path, k), v, f.fields if f is not None else None)
            elif isinstance(v, list) and f is not None and f.items:
                for i, x in enumerate(v):
                    if isinstance(x, dict):
                        visit((*path, k, i), x, f.items)

    visit((), line, nextclaw.SPEC)
    return out


def _mutants() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for etype, payload in EVENTS:
        line = _line(etype, payload)
        out += mutated(line, _places(line), VALUES)
    return out


def test_a_line_converts_exactly_when_the_check_removes_nothing() -> None:
    muts = _mutants()
    assert len(muts) > 10_000
    converted = refused = 0
    for o in muts:
        parsed = orjson.loads(json.dumps(o))  # (as the reader has it: orjson's numbers)
        wrong = fields.check_fields(copy.deepcopy(parsed), nextclaw.SPEC)
        try:
            nextclaw._line_head(copy.deepcopy(parsed))
        except msgspec.ValidationError:
            assert wrong, o
            refused += 1
            checked = copy.deepcopy(parsed)
            fields.check_fields(checked, nextclaw.SPEC)
            nextclaw._line_head(checked)  # once checked, every line converts
        else:
            assert not wrong, (o, wrong)
            converted += 1
    assert converted > 1000 and refused > 1000


def _ledger(path: Path) -> tuple[Any, ...]:
    led = nextclaw.load(str(path), None, None)
    rep = analyze(led)
    return (
        [(r.seq, r.line, r.kind, r.type, r.id, r.timestamp, r.role, r.stop_reason, r.source_role, tuple(r.call_ids),
          r.result_id, r.never_sent, r.message, r.checkpoint, r.extra) for r in led.records],
        [(d.line, d.problem, d.message, d.severity, d.recovered, list(d.seqs)) for d in led.diagnostics],
        json.dumps(analyze_json(rep), sort_keys=True, default=repr),
        json.dumps(context_json(rep), sort_keys=True, default=repr),
    )  # fmt: skip


def _same_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _ledger(path)
    with monkeypatch.context() as m:
        m.setattr(nextclaw, "_TRY_FAST", False)
        slow = _ledger(path)
    assert fast == slow, path.read_text()[:3000]


def _journal(path: Path, lines: list[dict[str, Any]]) -> Path:
    meta = {"_type": "metadata", "version": 1, "created_at": ts(0), "agent_id": "main", "metadata": {}}
    path.write_text("\n".join(json.dumps(o) for o in [meta, *lines]) + "\n")
    return path


@pytest.mark.parametrize("k", range(len(EVENTS)))
def test_every_mutation_of_an_event_loads_as_the_check_path_loads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    """Each mutant of event k after the other (unmutated) events before it, in one journal per
    seeded sample, and all of them in one journal."""
    etype, payload = EVENTS[k]
    line = _line(etype, payload, seq=k + 1)
    muts = mutated(line, _places(line), VALUES)
    before = [_line(t, p, seq=i + 1) for i, (t, p) in enumerate(EVENTS[:k])]
    _same_both_ways(_journal(tmp_path / "all.jsonl", [*before, *muts]), monkeypatch)
    for i, o in enumerate(random.Random(SEED + k).sample(muts, min(30, len(muts)))):
        after = [_line(t, p, seq=k + 2 + j) for j, (t, p) in enumerate(EVENTS[k + 1 :])]
        _same_both_ways(_journal(tmp_path / f"one-{i}.jsonl", [*before, o, *after]), monkeypatch)
