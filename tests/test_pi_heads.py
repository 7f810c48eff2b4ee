"""pi's index-first load (issue 15: "speed must not cost a diagnostic"): a clean message line becomes
its record from a head decode (`pi._EntryHead`, in the loading process and in the helper's
`pi._line_head`), its content read again from the file on demand. It must give exactly what the
whole parse of the same bytes gives (`load_bytes(..., fmt="pi")`, the reference): the same records,
messages, extra fields and diagnostics, for every field of a message line of every role set to
every JSON type, removed, or joined by an unknown key, and for every field of its blocks and usage."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import fields, load, load_bytes, pi
from inspector.ledger.model import Ledger, Record
from tests.field_mutations import NUMBER_MARKERS, mutated, raw_numbers

# One value of every JSON type, and the edges the head decoder must judge as the builder does.
VALUES: list[Any] = [
    None, True, False, 0, -1, 7, 1.5, -0.0, 2**70, "", "x", "stop", "toolUse", "aborted", "user",
    "2026-03-01T10:00:00Z", "c1", [], [1], {}, {"a": 1}, *NUMBER_MARKERS,
]
SEED = 20261201
HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-03-01T10:00:00Z", "cwd": "/w"}
CALL = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}
USAGE = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0}
MESSAGES: dict[str, dict[str, Any]] = {
    "user": {"role": "user", "content": [{"type": "text", "text": "q"}, CALL], "timestamp": 1},
    "assistant": {
        "role": "assistant", "content": [{"type": "thinking", "thinking": "t"}, {"type": "text", "text": "a"}, CALL],
        "api": "x", "provider": "p", "model": "m", "usage": USAGE, "stopReason": "toolUse", "timestamp": 2,
        "responseId": "r", "errorMessage": "e",
    },
    "toolResult": {
        "role": "toolResult", "toolCallId": "c1", "toolName": "read", "isError": False, "timestamp": 3,
        "content": [{"type": "text", "text": "ok"}, {"type": "image", "mimeType": "image/png"}], "details": {},
    },
    "bashExecution": {
        "role": "bashExecution", "command": "ls", "output": "a", "exitCode": 0, "cancelled": False,
        "truncated": False, "fullOutputPath": "/tmp/o", "excludeFromContext": False, "timestamp": 4,
    },
    "custom": {"role": "custom", "customType": "c", "content": "note", "display": True, "details": {}, "timestamp": 5},
}  # fmt: skip


def _entry(msg: dict[str, Any], i: int = 0) -> dict[str, Any]:
    return {"type": "message", "id": f"e{i}", "parentId": None, "timestamp": "2026-03-01T10:00:01Z", "message": msg}


def _mutations(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """Every field of the entry and of its message (every one the role has, every one `fields.PI`
    types, and pi's `excludeFromContext`), of each of its blocks and of its usage, set to every
    value in VALUES, removed, or beside an unknown key."""
    places: list[tuple[tuple[Any, ...], str]] = []

    def visit(path: tuple[Any, ...], obj: dict[str, Any]) -> None:
        keys = set(obj)
        if path == ():
            keys |= set(fields.PI)
        elif path == ("message",):
            keys |= set(fields.PI["message"].fields or {}) | {"excludeFromContext", "stopReason"}
        elif path[-1] == "usage":
            keys |= set(fields.PI["message"].fields["usage"].fields or {})  # type: ignore[index]
        for k in [*sorted(keys), "unknown_key"]:
            places.append((path, k))
            v = obj.get(k)
            if isinstance(v, dict) and path in ((), ("message",)):
                visit((*path, k), v)
            elif isinstance(v, list):
                for i, b in enumerate(v):
                    if isinstance(b, dict):
                        visit((*path, k, i), b)

    visit((), entry)
    return mutated(entry, places, VALUES)


def _record(r: Record) -> tuple[Any, ...]:
    return (
        r.seq, r.line, r.kind, r.type, r.id, r.parent_id, r.timestamp, r.offset, r.length, r.role,
        r.stop_reason, r.source_role, tuple(r.call_ids), r.result_id, r.never_sent, r.runtime_visible,
        r.message, r.checkpoint, r.extra,
    )  # fmt: skip


def _ledger(led: Ledger) -> dict[str, Any]:
    return {
        "records": [_record(r) for r in led.records],
        "diagnostics": [(d.line, d.problem, d.message, d.severity, d.recovered, list(d.seqs)) for d in led.diagnostics],
        "leaf": led.leaf_seq,
        "by_id": led.by_id(),
    }


def _same_both_ways(path: Path) -> Ledger:
    data = path.read_bytes()
    lazy = load(str(path))
    whole = load_bytes(data, str(path), fmt="pi")
    assert _ledger(lazy) == _ledger(whole), data[:2000]
    return lazy


def _helper_heads_agree(path: Path) -> None:
    """What the helper decodes ahead (`pi._line_head`, per line) is the whole parse's record of a
    line it maps without a diagnostic, and None for every other line."""
    data = path.read_bytes()
    whole = load_bytes(data, str(path), fmt="pi")
    by_line = {r.line: r for r in whole.records}
    said = {d.line for d in whole.diagnostics}
    offset = 0
    for n, raw in enumerate(data.splitlines(keepends=True), 1):
        head = pi._line_head(raw, offset)
        offset += len(raw)
        if head is None:
            continue
        assert n not in said, raw
        r = by_line[n]
        assert head[2:] == (
            r.id, r.parent_id, r.timestamp, r.offset, r.length, r.role, r.stop_reason, r.source_role,
            tuple(r.call_ids), r.result_id,
        ), raw  # fmt: skip
        assert not r.never_sent and r.kind == "message", raw


def _file(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text(raw_numbers("\n".join(json.dumps(o) for o in [HEADER, *entries]) + "\n"))
    return path


@pytest.mark.parametrize("role", list(MESSAGES))
def test_every_mutation_of_a_message_line_loads_as_the_whole_parse_builds_it(tmp_path: Path, role: str) -> None:
    muts = _mutations(_entry(MESSAGES[role]))
    assert len(muts) > 400
    # Many mutated lines in one file (each its own id, so a duplicate id is not what differs), then
    # one line per file for a seeded sample (where the line's neighbours do not hide a difference).
    for i, e in enumerate(muts):
        if isinstance(e.get("id"), str) and e["id"]:
            e["id"] = f"{e['id']}-{i}"
    path = _file(tmp_path / "all.jsonl", muts)
    _same_both_ways(path)
    _helper_heads_agree(path)
    for i, e in enumerate(random.Random(SEED).sample(muts, 40)):
        one = _file(tmp_path / f"one-{i}.jsonl", [_entry(MESSAGES["user"], 99), e])
        _same_both_ways(one)


def test_clean_lines_load_from_their_heads_and_odd_ones_do_not(tmp_path: Path) -> None:
    """The clean examples are mapped from their heads (content left in the file until asked for); a
    line with a field `fields.PI` types of another type, on a role that does not read it, or with a
    top-level field a head does not read, is parsed whole and says so."""
    clean = [_entry(m, i) for i, m in enumerate(MESSAGES.values())]
    odd = [
        _entry({**MESSAGES["toolResult"], "errorMessage": 1.5}, 10),
        _entry({**MESSAGES["assistant"], "toolCallId": 1.5}, 11),
        _entry({**MESSAGES["user"], "toolName": True}, 12),
        _entry({**MESSAGES["custom"], "summary": []}, 13),
        _entry({**MESSAGES["bashExecution"], "usage": {"input": "1"}}, 14),
        {**_entry(MESSAGES["user"], 15), "summary": "a top-level field"},
        {**_entry(MESSAGES["user"], 16), "tokensBefore": 1.5},
    ]
    path = _file(tmp_path / "s.jsonl", [*clean, *odd])
    led = load(str(path))
    lazy = {r.id for r in led.records if r._message is None and r._source is not None}
    assert lazy == {e["id"] for e in clean}
    _same_both_ways(path)
    said = [d for d in led.diagnostics if d.problem == "wrong_type"]
    assert [d.line for d in said] == [7, 8, 9, 10, 11, 13]


def test_only_an_assistant_message_keeps_its_stop_reason(tmp_path: Path) -> None:
    entries = [_entry({**m, "stopReason": "aborted"}, i) for i, m in enumerate(MESSAGES.values())]
    led = _same_both_ways(_file(tmp_path / "s.jsonl", entries))
    assert [r.stop_reason for r in led.records[1:]] == [None, "aborted", None, None, None]
    # a call in a user's or a custom message's content is a call, as `_blocks_from_content` maps it
    assert [tuple(r.call_ids) for r in led.records[1:]] == [("c1",), ("c1",), (), (), ()]


def test_a_sample_session_analyzes_the_same_both_ways() -> None:
    path = Path(__file__).parent.parent / "sample_sessions" / "pi" / "adr0302_amnesiac_fallback.jsonl"
    whole = load_bytes(path.read_bytes(), str(path), fmt="pi")
    for doc in (analyze_json, context_json):
        assert doc(analyze(load(str(path)))) == doc(analyze(whole))


THINKING = {"type": "thinking_level_change", "id": "t0", "parentId": None, "timestamp": "2026-03-01T10:00:02Z", "thinkingLevel": "high"}


def test_every_mutation_of_a_thinking_level_line_loads_as_the_whole_parse_builds_it(tmp_path: Path) -> None:
    """A thinking-level change is mapped from its head too (`pi._MetaSource`: its extra fields read
    on demand): every field of it, and every field `fields.PI` types, set to every JSON type,
    removed, or beside an unknown key, loads as the whole parse builds it."""
    muts = _mutations(dict(THINKING))
    assert len(muts) > 300
    for i, e in enumerate(muts):
        if isinstance(e.get("id"), str) and e["id"]:
            e["id"] = f"{e['id']}-{i}"
    _same_both_ways(_file(tmp_path / "all.jsonl", muts))
    for i, e in enumerate(random.Random(SEED).sample(muts, 40)):
        _same_both_ways(_file(tmp_path / f"one-{i}.jsonl", [_entry(MESSAGES["user"], 99), e]))


def test_a_clean_thinking_level_line_is_mapped_from_its_head(tmp_path: Path) -> None:
    path = _file(tmp_path / "s.jsonl", [_entry(MESSAGES["user"], 1), {**THINKING, "parentId": "e1", "extra": [1]}])
    led = _same_both_ways(path)
    r = led.records[2]
    assert isinstance(r._source, pi._MetaSource) and r.kind == "meta"
    assert r.raw() is None  # shown as the general path's meta records are: by its fields
    assert r.extra == {"thinkingLevel": "high", "extra": [1]}


def test_a_load_up_to_a_line_is_the_whole_parse_of_the_lines_before_it(tmp_path: Path) -> None:
    """`--at` a line (`pi._read_own_lines`: its line count and cut kept by `enumerate` and
    `islice`): the ledger is the whole parse of the file's first lines, whatever line the cut
    falls on (a message, a line the general path reads, the last)."""
    entries = [
        _entry(MESSAGES["user"], 1), {**_entry(MESSAGES["assistant"], 2), "parentId": "e1"},
        {"type": "thinking_level_change", "id": "t3", "parentId": "e2", "timestamp": "2026-03-01T10:00:02Z", "thinkingLevel": "high"},
        {**_entry(MESSAGES["toolResult"], 4), "parentId": "t3", "unknown_key": 1}, {**_entry(MESSAGES["custom"], 5), "parentId": "e4"},
    ]  # fmt: skip
    path = _file(tmp_path / "s.jsonl", entries)
    lines = path.read_bytes().splitlines(keepends=True)
    for k in range(1, len(lines) + 2):
        assert _ledger(load(str(path), upto_line=k)) == _ledger(load_bytes(b"".join(lines[:k]), str(path), fmt="pi")), k


def test_seqs_stay_right_after_lines_that_make_no_record_or_two(tmp_path: Path) -> None:
    """`pi._read_own_lines` takes a head's seq from the line before's number while every line made
    one record: after a line that makes none (a JSON array, a blank line) or two (entries glued on
    one line), each record's seq is still its place in the ledger."""
    e = [{**_entry(MESSAGES["user"], i), "parentId": f"e{i - 1}" if i > 1 else None} for i in range(1, 9)]
    lines = [json.dumps(HEADER), json.dumps(e[0]), "[1]", json.dumps(e[1]), "", json.dumps(e[2]),
             json.dumps(e[3]) + json.dumps(e[4]), json.dumps(e[5]), "[]", "[]", json.dumps(e[6]), json.dumps(e[7])]  # fmt: skip
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    led = _same_both_ways(path)
    assert [r.seq for r in led.records] == list(range(len(led.records))) and len(led.records) == 9
