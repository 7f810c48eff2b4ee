"""ADK's index-first row load (issue 15: "speed must not cost a diagnostic"): a clean event row becomes
its record from a head decode (`adk_heads.head`), its message, extra and content read again from the
row's bytes on demand. It must give exactly what the whole parse of the same rows gives (the same
load with no head taken, the reference): the same records, messages, extra fields, diagnostics,
header, analysis and next request, for every field of an event, of its content, parts, calls,
usage and actions, set to every JSON type, removed, or joined by an unknown key, and for the byte
level cases the head decoder must leave to the whole parse (invalid UTF-8, lone surrogates, keys
spelled with escapes, repeated keys, deep nesting, a row large enough to be cut)."""

from __future__ import annotations

import json
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import LoadError, adk, adk_heads, bounded, fields, load
from inspector.formats import adk_compaction as rules
from inspector.ledger.model import Ledger
from tests.conftest import SHARED, need_shared
from tests.field_mutations import mutated

CORPUS = SHARED / "peers" / "adk" / "corpus"
# One value of every JSON type, and the edges the head decoder must judge as the guard and the
# record builder do (64-bit bounds, framework call names, ADK's own words).
VALUES: list[Any] = [
    None, True, False, 0, -1, 7, 1.5, -0.0, 2**63 - 1, 2**63, -(2**63) - 1, 2**64, 2**70, "", "x", "user", "model",
    "STOP", "MAX_TOKENS", "c1", "adk_framework", "INVOCATION_ABORTED", [], [1], ["c1"], {}, {"a": 1},
    {"a": {"b": 1}}, {"a": [1]}, "@1e400@", "@-1e400@", "@1e-400@", "@past-max@", "@max@", "@digits@",
    "@u64@", "@e@", "@xff@", "@surrogate@", "@utf8@",
]  # fmt: skip
# Values JSON has but Python's json.dumps does not write (a number past a double's range either way,
# or one that underflows, 400 digits, invalid UTF-8, a surrogate's bytes): written as these
# strings, then replaced in the row's bytes (`_raw_values`). orjson refuses most of them; msgspec
# skips or leaves raw what orjson refuses, so the strict decode must refuse them or check them.
RAW_VALUES: dict[bytes, bytes] = {
    b'"@1e400@"': b"1e400",
    b'"@-1e400@"': b"-1e400",
    b'"@1e-400@"': b"1e-400",
    b'"@past-max@"': b"1.7976931348623159e308",
    b'"@max@"': b"1.7976931348623157e308",
    b'"@digits@"': b"9" * 400,
    b'"@u64@"': b"18446744073709551615",
    b'"@e@"': b"12E+2",
    b'"@xff@"': b'"d\xffne"',
    b'"@surrogate@"': b'"\xed\xa0\x80"',
    b'"@utf8@"': b'"d\xc3\xa9ne"',
}
_EMPTY_ACTIONS = {
    "state_delta": {},
    "artifact_delta": {},
    "requested_auth_configs": {},
    "requested_tool_confirmations": {},
}
EVENTS: list[dict[str, Any]] = [
    {"id": "u", "invocation_id": "i1", "author": "user", "content": {"role": "user", "parts": [{"text": "q"}]},
     "actions": dict(_EMPTY_ACTIONS), "timestamp": 1.0},
    {"id": "m", "invocation_id": "i1", "author": "helper", "branch": "root.helper", "finish_reason": "STOP",
     "content": {"role": "model", "parts": [
         {"text": "t", "thought": True, "thought_signature": "c2ln"},
         {"function_call": {"id": "c1", "name": "add", "args": {"a": 1}}},
     ]},
     "usage_metadata": {"prompt_token_count": 9, "candidates_token_count": 3, "cached_content_token_count": 1,
                        "thoughts_token_count": 2, "total_token_count": 15},
     "long_running_tool_ids": ["c1"], "isolation_scope": None, "error_code": None, "error_message": None,
     "actions": {**_EMPTY_ACTIONS, "transfer_to_agent": "x", "agent_state": None, "end_of_agent": None},
     "model_version": "v", "timestamp": 2.0},
    {"id": "r", "invocation_id": "i1", "author": "helper", "content": {"role": "user", "parts": [
        {"function_response": {"id": "c1", "name": "add", "response": {"sum": 2}}},
        {"function_response": {"id": "c2", "name": "adk_framework", "response": {"result": "ok"}}},
    ]}, "timestamp": 3.0},
    {"id": "a", "invocation_id": "i1", "author": "helper", "content": {"role": "model", "parts": [{"text": "done"}, {"inline_data": {}}]},
     "turn_complete": True, "node_info": {"path": "helper@1"}, "timestamp": 4.0},
    {"id": "t", "invocation_id": "i2", "author": "helper", "error_code": "E", "content": {"role": "model", "parts": [
        {"text": "t", "thought": True, "thought_signature": "c2ln"}, {"text": ""},
    ]}, "timestamp": 5.0},
    {"id": "g", "invocation_id": "i1", "author": "helper", "model_version": "gemini", "partial": False,
     "interrupted": False, "avg_logprobs": -0.5, "interaction_id": "x", "custom_metadata": {"k": "v"},
     "node_info": {"path": "helper@1", "n": 1}, "turn_complete": True,
     "content": {"role": "model", "parts": [{"text": "hi", "thought_signature": "c2ln", "thought": False}]},
     "usage_metadata": {"prompt_token_count": 9, "total_token_count": 15, "tool_use_prompt_token_count": 1,
                        "traffic_type": "ON_DEMAND", "prompt_tokens_details": [{"modality": "TEXT", "token_count": 9}]},
     "actions": {"state_delta": {"s": 1}, "artifact_delta": {"f.txt": 0}, "requested_auth_configs": {},
                 "requested_tool_confirmations": {}, "skip_summarization": False, "escalate": False,
                 "agent_state": {"step": 1}, "end_of_agent": False},
     "timestamp": 2.5},
    # Two calls and two responses in one event, and one part holding a call and a response (the
    # strict decode's head counts and keeps every one of them as the ordinary one does).
    {"id": "p", "invocation_id": "i1", "author": "helper", "content": {"role": "model", "parts": [
        {"function_call": {"id": "c3", "name": "add", "args": {"a": 1}}},
        {"function_call": {"id": "c4", "name": "mul", "args": {"b": 2}}},
        {"function_response": {"id": "c3", "name": "add", "response": {"sum": 2}}},
        {"function_response": {"id": "c5", "name": "mul", "response": {"p": 2}}},
    ]}, "actions": dict(_EMPTY_ACTIONS), "timestamp": 3.5},
    {"id": "b", "invocation_id": "i1", "author": "helper", "content": {"role": "model", "parts": [
        {"function_call": {"id": "c6", "name": "add"}, "function_response": {"id": "c6", "name": "add", "response": {"s": 1}}},
        {"text": "x"},
    ]}, "timestamp": 3.6},
]  # fmt: skip


def _places(event: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    """Every field of the event (those it has, those the guard types, those the head reads), of
    its content, each part, each call and response, its usage and actions, and an unknown key."""
    spec = fields.ADK
    strict = {
        "event": adk_heads._SEvent.__struct_fields__,
        "usage_metadata": adk_heads._SUsage.__struct_fields__,
        "actions": adk_heads._SActions.__struct_fields__,
        "dicts": {"args", "response", "state_delta", "artifact_delta", "requested_auth_configs", "requested_tool_confirmations",
                  "agent_state", "node_info", "custom_metadata"},
        "lists": {"prompt_tokens_details", "candidates_tokens_details", "cache_tokens_details", "tool_use_prompt_tokens_details"},
    }  # fmt: skip
    out: list[tuple[tuple[Any, ...], str]] = []

    def visit(path: tuple[Any, ...], obj: dict[str, Any], extra_keys: set[str]) -> None:
        for k in [*sorted(set(obj) | extra_keys), "unknown_key"]:
            out.append((path, k))
            v = obj.get(k)
            if k == "content" and isinstance(v, dict):
                visit((*path, k), v, {"role", "parts"})
            elif k == "parts" and isinstance(v, list):
                for i, p in enumerate(v):
                    visit((*path, k, i), p, set(adk_heads._SPart.__struct_fields__))
            elif k in ("function_call", "function_response") and isinstance(v, dict):
                call = adk_heads._SCall if k == "function_call" else adk_heads._SResponse
                visit((*path, k), v, set(call.__struct_fields__))
            elif k == "usage_metadata" and isinstance(v, dict):
                visit((*path, k), v, set(spec["usage_metadata"].fields or {}) | set(strict["usage_metadata"]))
            elif k == "actions" and isinstance(v, dict):
                visit((*path, k), v, set(strict["actions"]))
            elif k in strict["dicts"] and isinstance(v, dict):  # call arguments, deltas, metadata
                visit((*path, k), v, set())
            elif k in strict["lists"] and isinstance(v, list):
                for i, d in enumerate(v):
                    visit((*path, k, i), d, {"modality", "token_count"})

    visit((), event, set(spec) | set(strict["event"]))
    return out


def _byte_cases() -> list[bytes]:
    """Rows the head must leave to the whole parse, or read exactly as it does: each from an event
    the strict decode refuses (it holds an `inline_data` part) and from one it reads."""
    big = dict(
        EVENTS[3], content={"role": "model", "parts": [{"text": "y" * (bounded.LARGE_LINE_BYTES + 10)}]}
    )
    out = [b"[1, 2]", b"", json.dumps(big).encode()]
    for event, word in ((EVENTS[3], '"done"'), (EVENTS[5], '"hi"')):
        text = json.dumps(event)
        ts = f'"timestamp": {event["timestamp"]}'
        out += [
            text.replace(word, '"\\ud800"').encode(),  # a lone surrogate: orjson refuses it
            text.replace(word, '"\\ud83d\\ude00"').encode(),  # a pair: read by both
            text.replace(word, '"\\uD7FF \\u00e9"').encode(),
            text.replace(word, '"d\xffne"').encode("latin-1"),  # invalid UTF-8
            text.replace(word, '"d\xe9ne"').encode(),  # valid UTF-8, not ASCII
            text.replace('"node_info"', '"bad": "\xed\xa0\x80", "node_info"').encode(
                "latin-1"
            ),  # a surrogate's bytes, skipped field
            text.replace('"node_info": {', '"node_info": {"bad": "\xed\xa0\x80", ').encode("latin-1"),
            text.replace('"author"', '"au\\u0074hor"').encode(),  # a key spelled with an escape
            text.replace('"author": "helper"', '"author": "helper", "author": 5').encode(),  # repeated keys
            text.replace('"author": "helper"', '"author": 5, "author": "helper"').encode(),
            text.replace('"author": "helper"', '"author": "a", "author": "b"').encode(),
            text.replace(ts, f"{ts}, {ts.replace(': ', ': 1')}").encode(),
            text.replace(
                '"turn_complete": true', '"turn_complete": ' + "[" * 1010 + "]" * 1010
            ).encode(),  # deep, skipped
            text.replace('"turn_complete": true', '"turn_complete": ' + "[" * 1030 + "]" * 1030).encode(),
            text.replace('"turn_complete": true', '"turn_complete": 1e400').encode(),
            text.replace('"turn_complete": true', '"turn_complete": 123456789012345678901234567890').encode(),
            text.replace(ts, '"timestamp": "4"').encode(),  # the column's timestamp is read
            text.replace(ts, '"timestamp": 1e20').encode(),
            text.replace(ts, '"timestamp": 100000000000000000000').encode(),
            text.replace(ts, '"timestamp": 18446744073709551615').encode(),
            text.replace(ts, '"timestamp": 0.30000000000000004441').encode(),
            (" " + text + "\n").encode(),
            text.encode() + b"x",
        ]
    return out


def _store(tmp_path: Path, rows: list[bytes]) -> Path:
    """The corpus's SqliteSessionService store with its session's events replaced by `rows`."""
    need_shared(CORPUS)
    db = tmp_path / "heads.db"
    db.write_bytes((CORPUS / "multi_agent.db").read_bytes())
    con = sqlite3.connect(db)
    try:
        app, user, sid = con.execute("SELECT app_name, user_id, id FROM sessions").fetchone()
        con.execute("DELETE FROM events")
        for n, data in enumerate(rows):
            con.execute(
                "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (f"row{n}", app, user, sid, "i", 1000.0 + n, data),
            )
        con.commit()
    finally:
        con.close()
    return db


# For the tests of a path after the head (the rows fetched again, a dump's events): a value of each
# JSON type and each kind of raw value the heads refuse (the whole product is the per-field tests').
SOME_VALUES: list[Any] = [None, True, 0, 2**64, 1.5, "", "x", "model", [], ["c1"], {}, {"a": {"b": 1}}, "@1e400@", "@digits@", "@xff@", "@surrogate@", "@utf8@"]


def _events_rows(values: list[Any] = VALUES) -> list[bytes]:
    rows: list[bytes] = []
    for base in EVENTS:
        for o in mutated(base, _places(base), values):
            rows.append(_raw_values(json.dumps(o).encode()))
    return rows


def _raw_values(row: bytes) -> bytes:
    if b'"@' in row:
        for mark, raw in RAW_VALUES.items():
            row = row.replace(mark, raw)
    return row


def _compaction(end: float, prompt: int) -> bytes:
    return json.dumps(
        {"id": f"cmp{end}", "invocation_id": "ic", "author": "user", "timestamp": 5000.0 + end,
         "usage_metadata": {"prompt_token_count": prompt},
         "actions": {"compaction": {"start_timestamp": 0.0, "end_timestamp": end,
                                    "compacted_content": {"role": "model", "parts": [{"text": "s"}]}}}}
    ).encode()  # fmt: skip


def _record_state(led: Ledger) -> list[Any]:
    out = []
    for r in led.records:
        own = {f: getattr(r, f) for f in r.__struct_fields__ if f not in ("_source", "_message", "_extra")}
        # What the analysis reads before anything else (from the head where there is one).
        head = adk.event_head(r)
        seen = {k: head.get(k) for k in ("author", "branch", "isolation_scope", "long_running_tool_ids")}
        out.append((own, seen, adk.response_ids(r), r.message, r.extra, adk.event_fields(r)))
    return out


def _both(db: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Ledger, Ledger]:
    """The store loaded index first, and read the ordinary way (every row's columns fetched in
    one query, no head taken: `adk._indexed_events` not used)."""
    fast = load(str(db))
    with monkeypatch.context() as m:
        m.setattr(adk_heads, "head", lambda data: None)
        m.setattr(adk_heads, "heads", lambda datas: [None] * len(datas))
        m.setattr(adk, "_indexed_events", lambda *a: None)
        whole = load(str(db))
    return fast, whole


def _assert_same(fast: Ledger, whole: Ledger) -> None:
    assert [(d.line, d.problem, d.message, d.recovered, d.severity, d.seqs) for d in fast.diagnostics] == [
        (d.line, d.problem, d.message, d.recovered, d.severity, d.seqs) for d in whole.diagnostics
    ]
    assert fast.header == whole.header
    assert fast.store_state == whole.store_state
    a, b = _record_state(fast), _record_state(whole)
    assert len(a) == len(b)
    depth = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # (a nested case's extra is deeper than the default to compare)
    try:
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert x == y, f"record {i} differs"
    finally:
        sys.setrecursionlimit(depth)


def test_every_field_mutation_reads_as_the_whole_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _events_rows()
    rows += [_compaction(1000.0 + len(rows) // 2, 4000), _compaction(1000.0 + len(rows) // 3, 100)]
    db = _store(tmp_path, rows)
    typed: list[int] = []
    real = adk_heads._typed_head
    monkeypatch.setattr(adk_heads, "_typed_head", lambda s: typed.append(1) or real(s))
    fast, whole = _both(db, monkeypatch)
    heads = sum(type(r._source).__name__ == "_RowLater" for r in fast.records)
    assert heads > len(rows) // 3, f"only {heads} of {len(rows)} events read from their head"
    # Both ways taken: the strict decode's (`_typed_head`), and the ordinary one's for the rest
    # (which takes every value ADK's own model refuses, a null id or author among them: `adk_model`).
    assert len(rows) // 8 < len(typed) < heads, f"{len(typed)} of {heads} heads by the strict decode"
    assert analyze_json(analyze(fast)) == analyze_json(analyze(whole))
    assert context_json(analyze(fast)) == context_json(analyze(whole))
    fast, whole = _both(db, monkeypatch)  # every record's message and extra, read after the analysis
    _assert_same(fast, whole)


def test_rows_without_a_head_fetched_again_read_as_the_whole_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`adk._indexed_events` fetches each row's rowid and JSON only, then every row without a head
    (a compaction, a mutated field) again whole by rowid: the same ledger as the ordinary read."""
    rows = _events_rows(SOME_VALUES)
    rows += [_compaction(1000.0 + len(rows) // 2, 4000), b"[1]", _compaction(1000.0 + len(rows) // 3, 100)]
    db = _store(tmp_path, rows)
    fetched: list[int] = []
    real = adk._rows_by_rowid

    def counted(con: sqlite3.Connection, rowids: list[int]) -> list[tuple[Any, ...]]:
        fetched.extend(rowids)
        return real(con, rowids)

    monkeypatch.setattr(adk, "_MOST_READ_WHOLE", len(rows))
    monkeypatch.setattr(adk, "_rows_by_rowid", counted)
    fast, whole = _both(db, monkeypatch)
    # (b"[1]" is not an event: that row's diagnostic sends the load the ordinary way)
    assert not fetched or whole.diagnostics
    _assert_same(fast, whole)
    rows.remove(b"[1]")
    db = _store(tmp_path, rows)
    fetched.clear()
    fast, whole = _both(db, monkeypatch)
    assert len(fetched) > len(rows) // 4, "the rows without a head were not fetched again"
    assert analyze_json(analyze(fast)) == analyze_json(analyze(whole))
    assert context_json(analyze(fast)) == context_json(analyze(whole))
    fast, whole = _both(db, monkeypatch)
    _assert_same(fast, whole)


@pytest.mark.parametrize("case", range(len(_byte_cases())))
def test_byte_level_cases_read_as_the_whole_parse(
    case: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = (
        [json.dumps(e).encode() for e in EVENTS[:3]]
        + [_byte_cases()[case]]
        + [json.dumps(EVENTS[3]).encode()]
    )
    db = _store(tmp_path, rows)
    fast, whole = _both(db, monkeypatch)
    assert analyze_json(analyze(fast)) == analyze_json(analyze(whole))
    assert context_json(analyze(fast)) == context_json(analyze(whole))
    fast, whole = _both(db, monkeypatch)
    _assert_same(fast, whole)


def test_a_message_is_read_once_its_index_is_not_enough(tmp_path: Path) -> None:
    """Loading builds no message: the analysis reads only the ones the next request sends."""
    db = _store(tmp_path, [json.dumps(e).encode() for e in EVENTS])
    led = load(str(db), fingerprint=False)
    assert all(r._message is None for r in led.records)
    report = analyze(led)
    sent = {it.seq for it in report.context}
    assert {r.seq for r in led.records if r._message is not None} <= sent


def test_many_messages_read_in_one_pass_are_each_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Ledger.load_messages` (the token count's one pass) gives each record its own row's message."""
    db = _store(tmp_path, [json.dumps(e).encode() for e in EVENTS])
    fast, whole = _both(db, monkeypatch)
    fast.load_messages([r.seq for r in fast.records if r.kind == "message"])
    assert [r._message for r in fast.records] == [r.message for r in whole.records]


def _dump(tmp_path: Path, events: list[str]) -> Path:
    """A `session.model_dump()` file of these events (JSON texts), padded past the size at which a
    dump is read event by event (`bounded.LARGE_LINE_BYTES`) by events of long text."""
    pad = json.dumps(
        {
            "id": "pad",
            "author": "helper",
            "timestamp": 9.0,
            "content": {"role": "model", "parts": [{"text": "p" * 400_000}]},
        }
    )
    body = ",\n".join(
        [
            *events,
            *[pad.replace('"pad"', f'"pad{n}"') for n in range(bounded.LARGE_LINE_BYTES // 400_000 + 1)],
        ]
    )
    path = tmp_path / "dump.json"
    path.write_text(
        '{"app_name": "a", "events": [\n'
        + body
        + '\n], "id": "s", "last_update_time": 9.5, "state": {}, "user_id": "u"}'
    )
    assert bounded.is_large(path.read_bytes())
    return path


def test_rows_without_a_head_are_put_back_in_their_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compactions (no head) among events, none with a diagnostic: the index-first read keeps its
    rows, fetches the compactions again by rowid and puts each back in its own place (the read
    above goes the ordinary way as soon as a row has a diagnostic)."""
    events = [json.dumps(e).encode() for e in EVENTS]
    rows = [*events[:3], _compaction(2.5, 40), *events[3:6], _compaction(4.0, 4000), *events[6:], _compaction(5.0, 90)]
    db = _store(tmp_path, rows)
    fetched: list[int] = []
    indexed: list[bool] = []
    real_fetch, real_indexed = adk._rows_by_rowid, adk._indexed_events

    def counted(con: sqlite3.Connection, rowids: list[int]) -> list[tuple[Any, ...]]:
        fetched.extend(rowids)
        return real_fetch(con, rowids)

    def seen(*a: Any) -> Any:
        got = real_indexed(*a)
        indexed.append(got is not None)
        return got

    monkeypatch.setattr(adk, "_rows_by_rowid", counted)
    monkeypatch.setattr(adk, "_indexed_events", seen)
    fast, whole = _both(db, monkeypatch)
    assert indexed == [True] and len(fetched) == 3, (indexed, fetched)
    assert not whole.diagnostics
    assert analyze_json(analyze(fast)) == analyze_json(analyze(whole))
    fast, whole = _both(db, monkeypatch)
    _assert_same(fast, whole)


def test_a_big_dumps_events_read_as_the_whole_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for a dump's events (sliced from the dump), ties of timestamps reordered where a
    response comes before its call (`append_order`), events of calls and responses both among them."""
    texts = [r.decode() for r in _events_rows(SOME_VALUES) if _is_json(r)]  # (one orjson refuses fails the whole dump)
    texts += [c.decode() for c in _byte_cases() if _is_json(c)]  # (one that is not would fail the whole dump)
    both = {"id": "both", "invocation_id": "i1", "author": "helper", "timestamp": 3.0, "content": {"role": "model", "parts": [
        {"function_response": {"id": "c7", "name": "f", "response": {}}}, {"function_call": {"id": "c7", "name": "f", "args": {}}},
    ]}}  # fmt: skip
    texts.insert(0, json.dumps(both))
    path = _dump(tmp_path, texts)
    fast, whole = _both(path, monkeypatch)
    heads = sum(type(r._source).__name__ == "_RowLater" for r in fast.records)
    assert heads > len(texts) // 3, f"only {heads} of {len(texts)} events read from their head"
    assert fast.header is not None and fast.header["append_ranks"] != sorted(fast.header["append_ranks"])
    assert analyze_json(analyze(fast)) == analyze_json(analyze(whole))
    assert context_json(analyze(fast)) == context_json(analyze(whole))
    fast, whole = _both(path, monkeypatch)
    _assert_same(fast, whole)


def _is_json(data: bytes) -> bool:
    """An object orjson reads, small enough not to be cut, not nested deeper than a dump can hold."""
    if b"[" * 100 in data:
        return False
    try:
        return isinstance(orjson.loads(data), dict) and not bounded.is_large(data)
    except orjson.JSONDecodeError:
        return False


def test_a_response_before_its_call_in_one_event_reorders_a_dumps_ties(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within one event only its parts tell whether a response came before its call: such an event
    is read whole for the dump's append order."""
    both = {"id": "both", "invocation_id": "i1", "author": "helper", "timestamp": 3.0, "content": {"role": "model", "parts": [
        {"function_response": {"id": "c7", "name": "f", "response": {}}}, {"function_call": {"id": "c7", "name": "f", "args": {}}},
    ]}}  # fmt: skip
    user = dict(EVENTS[0], timestamp=3.0)
    path = _dump(tmp_path, [json.dumps(both), json.dumps(user)])
    fast, whole = _both(path, monkeypatch)
    assert fast.header is not None and whole.header is not None
    assert fast.header["append_ranks"][:2] == whole.header["append_ranks"][:2] == [1, 0]


def test_holes_are_split_by_intervals_as_position_by_position() -> None:
    """`AdkCheckpointView.split_unrepresented` (intervals) against its definition, one position at a time."""
    import random

    from inspector.analysis.adk import AdkCheckpointView
    from inspector.analysis.intervals import contains, merge

    rng = random.Random(15)

    class View:
        pass

    for _ in range(2000):
        n = rng.randrange(1, 60)
        v = View()
        v.removed = merge(
            [(a, a + rng.randrange(0, 12)) for a in rng.sample(range(n), rng.randrange(0, min(n, 5) + 1))]
        )  # type: ignore[attr-defined]
        v.rep = merge(
            [(a, a + rng.randrange(0, 12)) for a in rng.sample(range(n), rng.randrange(0, min(n, 5) + 1))]
        )  # type: ignore[attr-defined]
        positions = sorted(rng.sample(range(n + 5), rng.randrange(0, n)))
        want = [i for i in positions if contains(v.removed, i) and not contains(v.rep, i)]  # type: ignore[attr-defined]
        got = AdkCheckpointView.split_unrepresented(v, positions)  # type: ignore[arg-type]
        assert got == (want, [i for i in positions if i not in want])


def _deep_rows() -> list[bytes]:
    """Values nested near orjson's limit (1024) and msgspec's (the recursion limit) in the places
    the strict decode leaves raw (a delta's value) or types (a call's arguments, a flag)."""
    text = json.dumps(EVENTS[5])  # (one the strict decode reads)
    call = json.dumps(EVENTS[1])
    out = []
    for depth in (990, 1005, 1019, 1020, 1021, 1022, 1023, 1030):
        deep = "[" * depth + "]" * depth
        out.append(text.replace('"state_delta": {', f'"state_delta": {{"k": {deep}, ').encode())
        out.append(call.replace('"args": {"a": 1}', f'"args": {{"a": {deep}}}').encode())
        out.append(text.replace('"turn_complete": true', f'"turn_complete": {deep}').encode())
    return out


def test_no_head_where_orjson_refuses_the_row() -> None:
    """The strict decode's guarantee, row by row: wherever orjson refuses a row (a number past a
    double's range, invalid UTF-8, nesting past its limit), no head is taken, whatever the
    recursion limit (msgspec's depth follows it, orjson's does not)."""
    rows = _events_rows() + _byte_cases() + _deep_rows()
    for limit in (sys.getrecursionlimit(), 5000):
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(limit)
        try:
            for row in rows:
                try:
                    orjson.loads(row)
                except orjson.JSONDecodeError:
                    assert adk_heads.head(row) is None, row[:200]
        finally:
            sys.setrecursionlimit(old)


def test_the_strict_decodes_head_is_the_ordinary_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the strict decode takes a head, the ordinary decode (raw values, orjson's check) takes
    the same one: every field of it, its stored timestamp of the same type."""
    rows = _events_rows() + _byte_cases() + _deep_rows()
    strict = [adk_heads.head(r) for r in rows]
    heads = 0

    def refuse(data: Any) -> Any:
        raise msgspec.DecodeError("strict decode off")

    monkeypatch.setattr(adk_heads, "_STRICT", refuse)
    for row, h in zip(rows, strict, strict=True):
        ordinary = adk_heads.head(row)
        assert h == ordinary, row[:200]
        if h is not None:
            assert ordinary is not None and type(h.raw_ts) is type(ordinary.raw_ts)
            assert list(h.fields) == list(ordinary.fields)
            heads += 1
    assert heads > len(rows) // 3


def _with_null(rows: list[bytes], key: str) -> list[bytes]:
    """Each row that is a JSON object, `key` written null in it (as ADK's JSON dumps write it)."""
    out = []
    for r in rows:
        try:
            o = orjson.loads(r)
        except orjson.JSONDecodeError:
            continue
        if isinstance(o, dict):
            out.append(json.dumps({**o, key: None}).encode())
    return out


def test_the_lean_decodes_head_is_the_strict_ones() -> None:
    """Where the lean decode (`adk_heads._LEAN`: the strict structs less their fields only null is
    taken for) takes a row, its head is the strict decode's; a row writing one of those fields
    null is the strict decode's. A store whose rows write nulls is read the strict way only."""
    rows = _events_rows() + _byte_cases() + _deep_rows() + _prompt_rows()
    rows += _with_null(_events_rows()[:40], "grounding_metadata")
    for row in rows:
        assert adk_heads._lean_head(row) == adk_heads.head(row), row[:200]
    lean = sum(map(adk_heads._leans, rows))
    assert 1000 < lean < len(rows), lean  # (most mutations are of a type neither decode takes)
    nulls = _with_null(_events_rows()[:64], "cache_metadata")
    assert len(nulls) > 32 and not any(map(adk_heads._leans, nulls))
    assert adk_heads.heads(nulls) == [adk_heads.head(r) for r in nulls]
    assert adk_heads.heads(rows) == [adk_heads.head(r) for r in rows]
    odd: list[Any] = [None, "{}", memoryview(rows[0]), 7]  # (a NULL column, text: no head, as `head` says)
    assert adk_heads.heads(odd * 20) == [adk_heads.head(r) for r in odd * 20]
    assert adk_heads.heads([*rows[:40], *odd]) == [adk_heads.head(r) for r in [*rows[:40], *odd]]


def _prompt_rows() -> list[bytes]:
    """Rows whose summarizer lines are of every kind: each event's every mutation, the byte cases,
    and calls and responses whose arguments print past the summarizer's truncation, with floats,
    escapes, authors absent or empty, thoughts with and without text."""
    long = {"k": "x" * 2500, "f": 0.1, "n": -(2**63), "t": True, "u": None, "q": "a'\"\\\n\u00e9"}
    extra = {"id": "x", "invocation_id": "i1", "timestamp": 7.0, "content": {"role": "model", "parts": [
        {"function_call": {"id": "c8", "name": "big", "args": long}}, {"function_call": {"id": "c9"}},
        {"function_response": {"id": "c8", "name": "big", "response": long}}, {"function_response": {"id": "c9"}},
        {"text": "t", "thought": True}, {"thought": True}, {"text": "", "thought": True}, {"text": "\u00e9" * 3000},
    ]}}  # fmt: skip
    variants = [dict(extra), dict(extra, author=""), dict(extra, author="agent \u00e9"), dict(extra, author=None)]
    return _events_rows() + _byte_cases() + [json.dumps(v).encode() for v in variants]


@pytest.mark.parametrize("decode", ["strict", "ordinary"])
def test_a_heads_prompt_size_is_the_whole_events(decode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The summarizer prompt's size counted in the head decode (`Head.prompt`, which the compaction
    rules add up instead of reading every summarized event's content again) is what
    `adk_compaction.lines_size` counts from the whole parse of the event, by either decode."""
    if decode == "ordinary":

        def refuse(data: Any) -> Any:
            raise msgspec.DecodeError("strict decode off")

        monkeypatch.setattr(adk_heads, "_STRICT", refuse)
    rows = _prompt_rows()
    counted = 0
    for row in rows:
        h = adk_heads.head(row)
        if h is None:
            continue
        whole = orjson.loads(row)
        assert h.prompt == rules.lines_size(str(whole.get("author") or ""), whole.get("content")), row[:300]
        counted += h.prompt > 0
    assert counted > len(rows) // 4, counted


def test_the_compaction_rules_size_prompts_without_reading_events_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading a store whose compactions summarized events read from their heads reads no event's
    content again (but the last event's, which the router reads): each summarizer prompt is sized
    from the heads (`Ev.lines_size`), to the same estimate as the whole parse's."""
    rows = [json.dumps(e).encode() for e in EVENTS] + [_compaction(3.5, 40), _compaction(5.0, 4000)]
    db = _store(tmp_path, rows)
    _, whole = _both(db, monkeypatch)
    reads: set[str | None] = set()
    real = adk._RowLater.whole
    monkeypatch.setattr(adk._RowLater, "whole", lambda self: reads.add(self.head.id) or real(self))
    fast = load(str(db), fingerprint=False)
    assert len(reads) <= 1, reads

    def estimates(led: Ledger) -> list[Any]:
        return [r.checkpoint.details["estimated_prompt_tokens"] for r in led.records if r.checkpoint is not None]

    assert estimates(fast) == estimates(whole) and all(estimates(fast)), estimates(fast)


def test_plain_events_share_their_authors_fields() -> None:
    """An event holding its author and empty actions only shares one fields dict (and author
    string) with every such event of that author; the shared dicts are kept for a bounded
    number of authors (issue 15: a dict per event was a quarter of the heads' memory)."""
    import orjson

    from inspector.formats import adk_heads

    def ev(i: int, author: str, **more: object) -> bytes:
        return orjson.dumps({"id": f"e{i}", "author": author, "timestamp": 1.0 + i, "actions": {}, **more})

    a, b = adk_heads.head(ev(1, "bot")), adk_heads.head(ev(2, "bot"))
    assert a is not None and b is not None
    assert a.fields == {"author": "bot", "actions": {}} and a.fields is b.fields and a.author is b.author
    c = adk_heads.head(ev(3, "bot", branch="x"))
    assert c is not None and c.fields == {"author": "bot", "branch": "x", "actions": {}} and c.fields is not a.fields
    for i in range(adk_heads._PLAIN_MAX + 10):
        adk_heads.head(ev(i, f"agent{i}"))
    assert len(adk_heads._PLAIN) <= adk_heads._PLAIN_MAX


@pytest.mark.parametrize("depth", [5000, 900])
def test_a_big_dump_nested_too_deep_is_refused_naming_its_line(tmp_path: Path, depth: int) -> None:
    """A dump read event by event whose third event nests too deep: the refusal names the line and
    column where it does (orjson's place past 1,024 levels, as a small dump's; below that, where a
    lower recursion limit stopped the bounded read, the deepest point), not the file alone."""
    deep = {"id": "deep", "author": "helper", "timestamp": 2.0, "content": {"role": "model", "parts": [{"text": "x"}]}}
    text = json.dumps(deep).replace('"x"', "[" * depth + "]" * depth)
    path = _dump(tmp_path, [json.dumps(EVENTS[0]), json.dumps(EVENTS[1]), text])
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(min(old, 600))  # (below `depth`: the bounded read stops at it)
    try:
        with pytest.raises(LoadError) as err:
            load(str(path))
    finally:
        sys.setrecursionlimit(old)
    # (the brackets open at six levels in: the dump, its events, the event, content, parts, part;
    # orjson stops at its 1,020th, the bounded read's deepest point is the last)
    col = text.index("[[") + 1 + (1019 if depth > 1024 else depth - 1)
    assert f"dump.json: line 4, column {col}: " in str(err.value), str(err.value)
    assert ("JSON nested deeper than 1024 levels" if depth > 1024 else f"JSON nested {depth + 6} levels deep") in str(err.value)


def test_one_tool_part_heads_are_the_walks_over_the_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_tool_head` (an event whose one part is a call or a response, no text) takes the head the
    walk over the parts (`_parts_head`) and the ordinary decode take: framework calls, ids absent
    or empty, arguments printed past the summarizer's truncation, each role and author, error
    codes of each kind."""
    rng = random.Random(7)
    rows = []
    for k in range(800):
        body: dict[str, Any] = {"id": rng.choice(["c1", "", None]), "name": rng.choice(["f", "adk_framework", "adk_request_credential", None])}  # fmt: skip
        payload = {"k": "x" * rng.choice([0, 7, 1990, 2500]), "n": rng.randint(-5, 5), "q": "a'\"\\\n\u00e9"}
        kind, key = rng.choice([("function_call", "args"), ("function_response", "response")])
        kept = {k: v for k, v in body.items() if v is not None or rng.random() < 0.5}
        part = {kind: {**kept, key: payload}}
        e: dict[str, Any] = {"id": f"e{k}", "invocation_id": "i", "timestamp": 1.0 + k, "actions": {},
             "author": rng.choice(["user", "agent", None, ""]), "content": {"role": rng.choice(["model", "user", None]), "parts": [part]}}  # fmt: skip
        if rng.random() < 0.4:
            e["error_code"] = rng.choice(["E", "", 0, 3, None])
        rows.append(json.dumps(e).encode())
    fast = [adk_heads.head(r) for r in rows]
    assert sum(h is not None for h in fast) > 700
    monkeypatch.setattr(adk_heads, "_tool_head", lambda s, ts, a, out, content, p, fc, fr: adk_heads._parts_head(s, ts, a, out, content, [p]))  # fmt: skip
    assert [adk_heads.head(r) for r in rows] == fast

    def refuse(data: Any) -> Any:
        raise msgspec.DecodeError("strict decode off")

    monkeypatch.setattr(adk_heads, "_STRICT", refuse)
    assert [adk_heads.head(r) for r in rows] == fast


def test_an_event_whose_row_a_damaged_store_does_not_find_is_still_placed(tmp_path: Path) -> None:
    """An event's place is worded when a diagnostic names it, its id read then by its rowid: a
    damaged store that does not find the row there (or fails) words it without the id, where the
    lookup's None was indexed (TypeError). (Read through the session's key, as its query reads it.)"""
    import sqlite3

    db = tmp_path / "s.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE events (id TEXT, app_name TEXT, user_id TEXT, session_id TEXT)")
    con.execute("INSERT INTO events (rowid, id, app_name, user_id, session_id) VALUES (4, 'e4', 'a', 'u', 's')")
    places = adk._RowPlaces(con, ("a", "u", "s"))
    places.where = [(1, 4, adk._UNFETCHED), (2, 999, adk._UNFETCHED)]
    assert places[0] == "event 1 (row 1 (rowid 4, event id 'e4'))"
    assert places[1] == "event 2 (row 2 (rowid 999))"
    con.close()
    assert places[0] == "event 1 (row 1 (rowid 4))"  # (closed: nothing to read it from)
