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
from inspector.formats import fields, load, nextclaw
from tests.field_mutations import mutated
from tests.nextclaw_store import SID, Journal, checkpoint, message, timeline, ts

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
        m.setattr(nextclaw, "_LAZY", False)  # (every event applied as it comes: `_Segment` below)
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


# The bytes of a line where msgspec's decode and orjson's parse part ways (`nextclaw._RawLine`):
# orjson refuses invalid UTF-8, a lone surrogate or an infinite number even where msgspec skips a
# value, and reads an integer past 64 bits as a float where msgspec keeps an int. Each put in the
# message, the content, an unknown key of each level, and the fields read as any value.
ODD_VALUES = [b'"\xff"', b'"\\ud800"', b'"\xed\xa0\x80"', b"1e400", b"18446744073709551617", b"-9223372036854775809",
              b"123456789012345678901234567890", b'{"n": 18446744073709551617}', b"[1e999]", b'"\\ud83d\\ude00"']  # fmt: skip


def _odd_lines() -> list[bytes]:
    out: list[bytes] = []
    for etype, payload in EVENTS:
        line = _line(etype, payload)
        ev, pl = line["event"], line["event"]["payload"]
        places: list[tuple[dict[str, Any], str]] = [(line, "version"), (line, "odd"), (ev, "odd"), (pl, "odd")]
        places += [(pl, k) for k in ("content", "final", "interrupted")]
        if isinstance(pl.get("message"), dict):
            msg = pl["message"]
            places += [(msg, "odd"), (msg, "metadata"), (msg["parts"][0], "odd")]
            places += [(part, k) for part in msg["parts"] if part.get("type") == "tool-invocation" for k in ("args", "result")]
            if isinstance(msg.get("metadata"), dict) and isinstance(msg["metadata"].get("checkpoint"), dict):
                places += [(msg["metadata"]["checkpoint"], k) for k in ("originalEstimatedTokens", "coveredMessageCount")]
        for obj, key in places:
            was = obj.get(key, _ABSENT)
            obj[key] = "@V"
            # (a result is sent, hence read, in a call's part in state "result")
            marked = orjson.dumps(line if key != "result" else {**line, "event": {**ev, "payload": {**pl, "message": {
                **pl["message"], "parts": [{**q, "state": "result"} if q is obj else q for q in pl["message"]["parts"]]}}}})
            out += [marked.replace(b'"@V"', v, 1) for v in ODD_VALUES]
            if was is _ABSENT:
                del obj[key]
            else:
                obj[key] = was
    return out


_ABSENT = object()


def test_lines_msgspec_and_orjson_read_apart_load_as_the_check_path_loads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal of each such line among the others loads the same whichever path reads its lines
    (the raw decode, or orjson and the check: `_TRY_FAST` off)."""
    odd = _odd_lines()
    assert len(odd) > 500
    meta = orjson.dumps({"_type": "metadata", "version": 1, "created_at": ts(0), "agent_id": "main", "metadata": {}})
    normal = [orjson.dumps(_line(t, p, seq=i + 1)) for i, (t, p) in enumerate(EVENTS)]
    rng = random.Random(SEED)
    for i in range(0, len(odd), 40):
        lines = [*normal]
        for o in odd[i : i + 40]:
            lines.insert(rng.randrange(len(lines) + 1), o)
        path = tmp_path / f"odd-{i}.jsonl"
        path.write_bytes(b"\n".join([meta, *lines]) + b"\n")
        _same_both_ways(path, monkeypatch)
    # A result no tool-call-result event stands for: the message's own, sent.
    part = {"type": "tool-invocation", "toolCallId": "c9", "toolName": "ls", "state": "result", "args": "@V", "result": "@V"}
    done = _line("message.completed", {"message": message("a9", "assistant", None, ts(0, 4), parts=[part])})
    for v in ODD_VALUES:
        path = tmp_path / "result.jsonl"
        path.write_bytes(b"\n".join([meta, normal[0], orjson.dumps(done).replace(b'"@V"', v)]) + b"\n")
        _same_both_ways(path, monkeypatch)


def test_every_event_line_nextclaw_writes_takes_the_raw_decode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The raw decode is what reads NextClaw's own lines, those with a message too: only the metadata
    line and a tool result whose content is no string (`_RawPayload.content`) go the way of `_line` (a `message: Raw | None` field read every message as null in
    msgspec 0.23, so every message line took the slow path unseen: its output is the same)."""
    meta = orjson.dumps({"_type": "metadata", "version": 1, "created_at": ts(0), "agent_id": "main", "metadata": {}})
    normal = [orjson.dumps(_line(t, p, seq=i + 1)) for i, (t, p) in enumerate(EVENTS)]
    assert sum(b'"message":{' in n for n in normal) >= 4
    path = tmp_path / "all.jsonl"
    path.write_bytes(b"\n".join([meta, *normal]) + b"\n")
    slow: list[int] = []
    line = nextclaw._Reader._line

    def counted(self: Any, n: int, raw: bytes) -> Any:
        slow.append(n)
        return line(self, n, raw)

    monkeypatch.setattr(nextclaw._Reader, "_line", counted)
    nextclaw.load(str(path), None, None)
    assert slow == [1, 2 + [t for t, _ in EVENTS].index("message.tool-call-result")]

# ---------------------------------------------------------------------------------------- segments
# `nextclaw._Segment`: the events of a freshly bootstrapped streaming message are kept, not applied,
# and dropped when its whole copy (message.completed) comes next, only what outlives them applied;
# any other event replays them first. Held against replaying every event as it comes (`_LAZY` off):
# the records, their messages, the diagnostics and every map the replay keeps for later events.

A1_PARTS = [
    {"type": "reasoning", "text": "why"},
    {"type": "text", "text": "Reading. "},
    {"type": "tool-invocation", "toolCallId": "c1", "toolName": "ls", "state": "call", "args": "{}"},
    {"type": "tool-invocation", "toolCallId": "c2", "toolName": "cat", "state": "call", "args": "{}"},
]
SEGMENT: list[tuple[str, dict[str, Any]]] = [
    ("message.sent", {"message": message("u1", "user", "hi", ts(0, 1))}),
    ("run.started", {"runId": "r1", "messageId": "a1"}),
    ("message.reasoning-start", {"messageId": "a1"}),
    ("message.reasoning-delta", {"messageId": "a1", "delta": "why"}),
    ("message.text-start", {"messageId": "a1"}),
    ("message.text-delta", {"messageId": "a1", "delta": "Reading. "}),
    ("message.text-end", {"messageId": "a1"}),
    ("message.tool-call-start", {"messageId": "a1", "toolCallId": "c1", "toolName": "ls"}),
    ("message.tool-call-args-delta", {"messageId": "a1", "toolCallId": "c1", "delta": "{"}),
    ("message.tool-call-args-delta", {"toolCallId": "c1", "delta": "}"}),
    ("message.tool-call-args", {"toolCallId": "c1", "args": "{}"}),
    ("message.tool-call-end", {"toolCallId": "c1"}),
    ("message.tool-execution-started", {"messageId": "a1", "toolCallId": "c1"}),
    ("message.tool-call-result", {"toolCallId": "c1", "content": {"out": [1, 2]}, "final": False}),
    ("message.tool-call-result", {"toolCallId": "c1", "content": "done"}),
    ("message.tool-call-start", {"messageId": "a1", "toolCallId": "c2", "toolName": "cat"}),
    ("message.completed", {"message": message("a1", "assistant", None, ts(0, 4), parts=copy.deepcopy(A1_PARTS), status="pending")}),
    ("message.tool-call-result", {"toolCallId": "c2", "content": "late"}),
    ("message.text-delta", {"messageId": "a2", "delta": "next"}),
    ("message.tool-call-start", {"messageId": "a2", "toolCallId": "c1", "toolName": "ls"}),
    ("message.tool-call-args", {"toolCallId": "c1", "args": "{\"a\": 1}"}),
    ("run.finished", {"runId": "r1", "endedAt": ts(0, 8)}),
    ("message.text-delta", {"messageId": "a1", "delta": "again"}),
    ("message.tool-call-start", {"messageId": "a3", "toolCallId": "c3", "toolName": "ls"}),
    ("message.tool-call-result", {"toolCallId": "c3", "content": "x"}),
]  # fmt: skip
TYPES = sorted({t for t, _ in [*EVENTS, *SEGMENT]} | {"message.reasoning-end", "session.request.accepted"})


def _replay_state(text: str) -> tuple[Any, ...]:
    """What the replay leaves: the messages (with their lines), the records and diagnostics built
    from them, and the bookkeeping a later event would read."""
    data = text.encode()
    rp = nextclaw._Replay()
    reader = nextclaw._Reader("x.jsonl", [], rp)
    reader.read(nextclaw._lines(data), None)
    reader.finish()
    msgs = rp.result()
    assert rp.seg is None
    state = (
        orjson.dumps([(m.id, m.line, m.obj) for m in msgs], default=repr),
        _records(data),
        [(d.line, d.problem, d.message) for d in reader.diags],
        sorted(rp.known), sorted(rp.terminal), list(rp.call_message.items()),
        [(c, a if a is not nextclaw._ABORTED else "ABORTED") for c, a in rp.call_args.items()],
        orjson.dumps(list(rp.results.items()), default=repr), rp.active_run, rp.settled_run,
        sorted(rp.pending_compactions), list(rp.ended_compactions.items()),
    )  # fmt: skip
    return state


def _records(data: bytes) -> Any:
    try:
        led = nextclaw.build(data, "x.jsonl", None)
    except nextclaw.LoadError as e:
        return str(e)
    return [(r.id, r.line, r.kind, r.type, repr(r.message), repr(r.checkpoint)) for r in led.records]


def _lazy_equals_eager(texts: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """Every journal replays the same with segments kept as applying every event; returns how many
    segments were dropped (their message written whole) and how many journals there were."""
    counts = [0]
    collapse = nextclaw._Replay._collapse

    def counted_collapse(self: Any, seg: Any) -> None:
        counts[0] += 1
        collapse(self, seg)

    with monkeypatch.context() as m:
        m.setattr(nextclaw._Replay, "_collapse", counted_collapse)
        lazy = [_replay_state(t) for t in texts]
    with monkeypatch.context() as m:
        m.setattr(nextclaw, "_LAZY", False)
        eager = [_replay_state(t) for t in texts]
    differ = [t for t, a, b in zip(texts, lazy, eager, strict=True) if a != b]
    assert not differ, differ[0]
    return counts[0], len(texts)


def _journal_text(lines: list[dict[str, Any]]) -> str:
    meta = {"_type": "metadata", "version": 1, "created_at": ts(0), "agent_id": "main", "metadata": {}}
    return "\n".join(json.dumps(o) for o in [meta, *lines]) + "\n"


def test_a_kept_segment_replays_as_every_event_applied_on_mutated_journals(monkeypatch: pytest.MonkeyPatch) -> None:
    """SEGMENT (a message streamed, then written whole; a late result; a second streamed message
    reusing a call; a terminal one; a third one never written whole) with one line changed at a
    time: each payload field (and the message's id, role and status) set to every JSON type,
    removed, or beside an unknown key, and each line's type swapped for every other type."""
    base = [_line(t, p, seq=i + 1) for i, (t, p) in enumerate(SEGMENT)]
    texts = [_journal_text(base)]
    for i, line in enumerate(base):
        payload = line["event"]["payload"]
        places: list[tuple[tuple[Any, ...], str]] = [(("event", "payload"), k) for k in [*payload, "messageId", "toolCallId", "message", "final", "content", "unknown_key"]]
        if "message" in payload:
            places += [(("event", "payload", "message"), k) for k in ("id", "role", "status")]
        for o in mutated(line, list(dict.fromkeys(places)), VALUES):
            texts.append(_journal_text([*base[:i], o, *base[i + 1 :]]))
        for t in TYPES:
            o = copy.deepcopy(line)
            o["event"]["type"] = t
            texts.append(_journal_text([*base[:i], o, *base[i + 1 :]]))
    dropped, n = _lazy_equals_eager(texts, monkeypatch)
    assert n > 5000 and dropped > n // 2


def _segment_journal(rng: random.Random) -> str:
    """Streamed messages, most written whole at the end, with now and then an event of another
    message, call or run among them, ids padded or missing, calls reused, results not final."""
    from tests.nextclaw_store import Journal

    mids = ["a1", "a2", "a3", " a2 ", "tool-c1", "u1"]
    calls = ["c1", "c2", "c3", "c4"]
    j = Journal()
    for b in range(rng.randrange(1, 8)):
        mid = f"m{b}" if rng.random() < 0.6 else rng.choice(mids)  # (mostly a message not met yet)
        at = ts(b, rng.randrange(0, 3))
        if rng.random() < 0.5:
            j.event("run.started", at, runId=rng.choice(["r1", "r2"]), messageId=mid)
        used: list[str] = []
        for _ in range(rng.randrange(0, 10)):
            m = {"messageId": rng.choice([*mids, "", "  "])} if rng.random() < 0.05 else {"messageId": mid}
            if rng.random() < 0.05:
                m = {}
            call = rng.choice(used) if used and rng.random() < 0.85 else rng.choice(calls)
            k = rng.randrange(11) if rng.random() > 0.06 else rng.randrange(11, 13)
            if k < 4:
                kind = rng.choice(["text-start", "text-delta", "reasoning-start", "reasoning-delta", "text-end", "reasoning-end"])
                j.event(f"message.{kind}", at, **m, **({"delta": rng.choice(["x", "", "yz"])} if "delta" in kind else {}))
            elif k < 6:
                used.append(call)
                j.event("message.tool-call-start", at, **m, toolCallId=call, toolName=rng.choice(["bash", "read"]))
            elif k == 6:
                j.event("message.tool-call-args-delta", at, **rng.choice([m, m, {}, {"messageId": " "}]), toolCallId=call, delta='{"a"')
            elif k == 7:
                j.event("message.tool-call-args", at, toolCallId=call, args=rng.choice(["{}", "{}", None]))
            elif k == 8:
                j.event("message.tool-call-end", at, toolCallId=call)
            elif k == 9:
                fin = rng.choice([{}, {}, {"final": False}, {"final": None}, {"final": True}])
                j.event("message.tool-call-result", at, toolCallId=call, content=rng.choice(["out", {"o": 1}, None]), **fin)
            elif k == 10:
                j.event("message.tool-execution-started", at, **m, toolCallId=call)
            elif k == 11:
                j.sent(message(rng.choice(["u1", "u2", mid.strip() or "u3"]), "user", "hi", at))
            else:
                j.event(rng.choice(["message.abort", "message.failed", "run.error", "run.finished"]), at, **m,
                        runId=rng.choice(["r1", "r2"]), **({"interrupted": True} if rng.random() < 0.3 else {}))  # fmt: skip
        end = rng.choice(["whole", "whole", "whole", "other", "finished", "none"])
        if end in ("whole", "other"):
            parts = [{"type": "text", "text": "done"}] + [
                {"type": "tool-invocation", "toolCallId": c, "toolName": "t", "state": "call", "args": "{}"}
                for c in dict.fromkeys([*used, rng.choice(calls)]) if rng.random() < 0.8
            ]  # fmt: skip
            wid = mid.strip() if end == "whole" else rng.choice(mids).strip()
            j.completed(message(wid or "a1", "assistant", None, at, parts=parts, status=rng.choice(["final", "pending", "error", "streaming"])))
        elif end == "finished":
            j.event("run.finished", at, runId=rng.choice(["r1", "r2"]))
    return j.text()


def test_a_kept_segment_replays_as_every_event_applied_on_random_journals(monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 journals of streamed messages (`_segment_journal`) and 2,000 of any NCP events
    (tests/test_nextclaw.py's `_random_journal`)."""
    from tests.test_nextclaw import _random_journal

    rng = random.Random(SEED)
    texts = [_segment_journal(rng) for _ in range(3000)] + [_random_journal(rng) for _ in range(2000)]
    dropped, _ = _lazy_equals_eager(texts, monkeypatch)
    assert dropped > 1000


def test_a_batch_of_times_checked_at_once_is_each_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader hands events to the replay `BATCH` at a time, their timestamps checked by one match
    when all are toISOString()s: each event gets its line's timestamp when it is a time, else the
    last one that was (a typeless event's too), as when each is checked on its own (the match never
    taken), whatever the batch size; on journals whose streamed messages each take their first
    event's time, with timestamps of every form near NextClaw's among them."""
    good = ["2026-08-20T09:00:01.120Z", "2026-08-20T09:00:02.000Z", "2026-12-31T23:59:59.999Z", "2024-02-28T00:00:00.000Z"]
    odd = ["2024-02-29T09:00:01.000Z", "2026-02-29T09:00:01.000Z", "2026-04-31T09:00:01.000Z", "0000-01-01T00:00:00.000Z",
           "2026-08-20T24:00:01.000Z", "2026-08-20T09:60:01.000Z", "2026-13-20T09:00:01.000Z", "2026-08-20T09:00:60.000Z", "2026-08-20T09:00:01.12xZ", "2026-08-20 09:00:01.120Z",
           "2026-08-20T09:00:01.120+02:00", "2026-08-20T09:00:01Z", "2026-08-2\u0661T09:00:01.120Z", "2026-08-20T09:00:01.120Z\n",
           "", "soon", None, 5]  # fmt: skip
    odd.append("2026-08-20T09:00:01.120Z\n2026-08-20T09:00:02.120Z")
    journals = []
    rng = random.Random(15)
    for k in range(len(odd) + 4):
        j = Journal()
        stamps = [*good * 3, odd[k % len(odd)], *rng.sample(odd, k % 3)] if k < len(odd) else good * 4
        rng.shuffle(stamps)
        for i, at in enumerate(stamps):
            j.event("message.text-delta", at, messageId=f"m{i}", delta=f"text {i}")  # type: ignore[arg-type]
            j.event("run.finished", at, runId=f"r{i}")  # type: ignore[arg-type]  # (settles it: a record)
            if i % 4 == 3:  # a typeless event: its time still counts (the next message has none of its own)
                j.raw(json.dumps({"_type": "event", "seq": 900 + i, "timestamp": f"2026-08-20T10:00:0{i % 10}.333Z", "event": {}}))
                j.event("message.text-delta", "soon", messageId=f"t{i}", delta="after").event("run.finished", "soon", runId=f"t{i}")
        journals.append(j.text())
    all_iso = nextclaw._all_iso
    for k, text in enumerate(journals):
        p = tmp_path / f"j{k}.jsonl"
        p.write_text(text)
        got = []
        for batch, iso in ((4096, all_iso), (3, all_iso), (1, all_iso), (4096, lambda stamps: False)):
            monkeypatch.setattr(nextclaw, "BATCH", batch)
            monkeypatch.setattr(nextclaw, "_all_iso", iso)
            led = load(str(p))
            got.append(([(r.seq, r.line, r.id, r.timestamp, r.role, repr(r.message)) for r in led.records],
                        [repr(d) for d in led.diagnostics]))  # fmt: skip
        assert got[0] == got[1] == got[2] == got[3], k
        assert len({r[3] for r in got[0][0]}) > 1
        after = [(r[2], r[3]) for r in got[0][0] if r[2].startswith("t")]
        assert after and all(at == f"2026-08-20T10:00:0{int(mid[1:]) % 10}.333Z" for mid, at in after), k
    monkeypatch.undo()
    # The batch check passes only stamps that are each a time (and NextClaw's own, all of them).
    assert all_iso(good * 2)
    for at in odd:
        for k in range(3):
            batch = [*good * 2]
            batch.insert(k * 3, at)  # type: ignore[arg-type]
            assert not all_iso(batch) or (isinstance(at, str) and nextclaw._is_time(at)), at
    assert all_iso([*good, "2024-02-29T09:00:01.000Z"])  # (a leap day, read as a time)
    stamps = ["2026-08-20T09:00:01.120Z"] * 5
    reader = nextclaw._Reader("x", [], nextclaw._Replay())
    assert reader._times(stamps) is stamps  # (the match taken)


def _ranges_record_by_record(path: list[Any]) -> list[tuple[str, str]]:
    """`nextclaw._ranges` as it read each record (before the runs were cut in C)."""
    out: list[tuple[str, str]] = []
    run: list[Any] = []
    for r in [*path, None]:
        if r is not None and r.id is not None:
            run.append(r)
            continue
        if run:
            out.append((run[0].id, run[-1].id))
        run = []
    return out


def test_ranges_cut_in_c_are_the_runs_read_record_by_record() -> None:
    """The runs of records with an id, cut where an id is None (`list.index`), are the runs the
    record-by-record loop made: random paths of ids and Nones (none, all, runs at either end)."""
    from types import SimpleNamespace

    rng = random.Random(SEED)
    for n in range(400):
        ids = [None if rng.random() < (n % 5) / 5 else f"m{i}" for i in range(rng.randint(0, 30))]
        path = [SimpleNamespace(id=i) for i in ids]
        assert nextclaw._ranges(path) == _ranges_record_by_record(path), ids  # type: ignore[arg-type]


def test_a_null_part_is_found_as_each_part_is_compared() -> None:
    """`_message_throws` finds a null part by `None in parts`: only a null equals None among JSON values."""
    for parts in ([None], [{"type": "text", "text": "t"}, None], [0, False, "", [], {}, 0.0], [[None], {"a": None}]):
        want = any(x is None for x in parts)
        got = nextclaw._message_throws({"id": "m", "role": "user", "parts": parts})
        assert (got == "message 'm': a null part") is want, parts
