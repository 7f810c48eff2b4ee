"""maka's index-first load (issue 15: "speed must not cost a diagnostic"): each runtime event's record
is built from a head (`maka._head`, read from the payload as it is parsed), its message and extra
fields read again from the payload on demand, and the source digest of every stated prefix is found
while the rows are read (`maka.PrefixDigests`). They must give exactly what the whole parse gives:
the message `maka._message` builds from the guarded payload, the payload as stored for extra fields,
and `maka.source_digest` over the stored payloads, for every field of an event and of its content
set to every JSON type, removed, or joined by an unknown key. (The msgspec types `maka._EventTypes`
decide which payloads the guard looks at: one they take must be one it leaves whole.)"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import fields, maka
from inspector.ledger.model import Diagnostic, Record
from tests.field_mutations import mutated
from tests.maka_store import DDL, Session

VALUES: list[Any] = [
    None, True, False, 0, -1, 7, 1.5, -0.0, 2**70, "", "x", "user", "model", "tool", "system", "hidden",
    "failed", "aborted", "text", "thinking", "function_call", "function_response", "error", "call_1",
    [], [1], {}, {"a": 1}, {"stepId": "s1"}, -(2**63) - 1, -(2**63), 2**63 - 1, 2**63, 9.3e18, -9.3e18,
]  # fmt: skip


def _base() -> Session:
    s = Session()
    s.run("run1", "turn1")
    s.user("u1", "run1", "Rename foo")
    s.event("t1", "run1", "model", {"kind": "thinking", "text": "hm", "signature": "sig"})
    s.event("c1", "run1", "model", {"kind": "function_call", "id": "call_1", "name": "apply_patch", "args": {"p": 1.5}}, refs={"stepId": "s1"})
    s.result("r1", "run1", "call_1", result={"ok": True})
    s.event("e1", "run1", "model", {"kind": "error", "message": "boom", "code": "x", "reason": "y"}, status="failed")
    s.event("p1", "run1", "tool", {"kind": "function_response", "id": "call_2", "name": "n", "providerExecuted": True, "providerOutput": "o", "isError": True})
    s.event("f1", "run1", "system", None, status="completed", modelVisibility="hidden")
    s.reply("a1", "run1", "Renamed")
    return s


def _places(ev: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    places: list[tuple[tuple[Any, ...], str]] = [((), k) for k in [*sorted(set(maka.EVENT) | set(ev)), "unknown_key"]]
    content = ev.get("content")
    if isinstance(content, dict):
        keys = set(maka.EVENT["content"].fields or {}) | set(content) | {"args", "result", "providerOutput"}
        places += [(("content",), k) for k in [*sorted(keys), "unknown_key"]]
    if isinstance(ev.get("refs"), dict):
        places += [(("refs",), "stepId"), (("refs",), "unknown_key")]
    return places


def _mutated_events() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for ev in _base().events:
        out += mutated(ev, _places(ev), VALUES)
    return out


def _store(path: Path, payloads: list[dict[str, Any]], checkpoint_over: int = 0) -> str:
    """One session of these payloads (each row's columns its own, the payload's where it names
    them, so only a mutated identity differs), then a checkpoint over the first compactable ones."""
    con = sqlite3.connect(path)
    con.executescript(DDL)
    s = _base()
    h = s.runs["run1"]
    con.execute("INSERT INTO core_agent_runs VALUES (?,?,?,?,?)", (s.sid, "run1", h["createdAt"], json.dumps(h), None))
    for i, ev in enumerate(payloads):
        con.execute(
            "INSERT INTO runtime_events VALUES (?,?,?,?,?,?,?,?,?)",
            (f"row{i}", s.sid, h["invocationId"], "run1", h["turnId"], i + 1, "k", json.dumps(ev), 1_000 + i),
        )
    if checkpoint_over:  # over clean events that come first
        s.checkpoint("cp1", "run1", checkpoint_over)
        rid, rec = s.run_events[0]
        con.execute("INSERT INTO core_agent_run_events VALUES (?,?,?,?,?,?,?)", (s.sid, rid, 0, rec["id"], rec["type"], 10**9, json.dumps(rec)))
    con.commit()
    con.close()
    return str(path)


def _stored_rows(path: str) -> list[Any]:
    con = sqlite3.connect(path)
    rows = con.execute("SELECT event_id, payload_json FROM runtime_events ORDER BY committed_at, event_id").fetchall()
    con.close()
    return rows


def _whole(payload: str) -> tuple[Record, str | None, list[Diagnostic]]:
    """The record the whole parse builds from a payload (guarded, then `_message`), before the
    replay rules; why maka never sends it; the guard's diagnostics."""
    ev = orjson.loads(payload)
    wrong = fields.check_fields(ev, maka.EVENT)
    m, why = maka._message(ev)
    run_id = ev.get("runId") if isinstance(ev.get("runId"), str) else None
    kind, rtype = ("meta", "runtime_fact") if m is None else ("message", "runtime_event")
    rec = Record(0, 0, kind, rtype, timestamp=ev.get("ts"), message=m, run_id=run_id)
    if m is None:
        why = None
    return rec, why, fields.line_diagnostics(0, wrong)


def _head(r: Record) -> tuple[Any, ...]:
    return (r.kind, r.type, r.timestamp, r.run_id, r.role, r.stop_reason, r.source_role, tuple(r.call_ids), r.result_id)


def _check_heads(path: str, built: str) -> int:
    led = maka.load(path, None, None)
    rows = dict(_stored_rows(path))
    wrong_type = {d.line: 0 for d in led.diagnostics}
    for d in led.diagnostics:
        if d.problem == "wrong_type":
            wrong_type[d.line] += 1
    n = 0
    for r in led.records:
        if r.type == maka.CHECKPOINT_EVENT:
            continue
        payload = rows[r.id]
        whole, why, diags = _whole(payload)
        assert _head(r) == _head(whole), payload
        assert r.never_sent >= (why is not None), payload  # the replay rules may drop more
        assert r.extra == orjson.loads(payload), payload
        assert wrong_type.get(r.line, 0) == len(diags), payload
        if r.kind == "message":
            assert (r._message is not None) == (built == "as read"), payload
            m, w = r.message, whole.message
            assert m is not None and w is not None
            assert m.never_sent == r.never_sent, payload
            w.never_sent = r.never_sent
            w.route = m.route  # the run header's, set the same way for every assistant message
            assert m == w, payload
        n += 1
    return n


@pytest.mark.parametrize("built", ["as read", "on demand"])
def test_every_mutation_of_an_event_gets_the_whole_parse_record(tmp_path: Path, built: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past every stated coverage (here: no checkpoint) a message is built as its row is read;
    before it (here: a coverage no store reaches), read again on demand."""
    if built == "on demand":
        monkeypatch.setattr(maka, "_stated_counts", lambda con, sid: {10**9})
    muts = _mutated_events()
    assert len(muts) > 1500
    # A mutation that names another id is a row whose payload does not name its own: said apart.
    assert _check_heads(_store(tmp_path / "all.sqlite", muts), built) == len(muts)
    for i in range(0, len(muts), 97):  # one mutated event beside the clean ones, where neighbours hide nothing
        assert _check_heads(_store(tmp_path / f"one{i}.sqlite", [*_base().events, muts[i]]), built) == len(_base().events) + 1


def test_prefix_digests_are_the_digests_of_the_stored_payloads(tmp_path: Path) -> None:
    muts = _mutated_events()
    path = _store(tmp_path / "d.sqlite", muts)
    con = sqlite3.connect(path)
    rows = con.execute(f"SELECT {maka._EVENT_COLUMNS} FROM runtime_events ORDER BY committed_at, event_id").fetchall()
    con.close()
    stored = [orjson.loads(r[5]) for r in rows]
    compactable = [o for o in stored if maka._compactable(o)]
    wanted = {1, 2, 3, 50, 333, len(compactable) - 1, len(compactable), len(compactable) + 5}
    digests = maka.PrefixDigests(wanted)
    maka._row_events(rows, "d", 1, [], digests)
    assert set(digests.found) == {n for n in wanted if n <= len(compactable)}
    for n, d in digests.found.items():
        assert d == maka.source_digest(compactable[:n]), n


def _outputs(path: str) -> tuple[str, str, list[Any], int]:
    led = maka.load(path, None, None)
    rep = analyze(led)
    applied = sum(r.kind == "checkpoint" for r in led.records)
    return json.dumps(analyze_json(rep)), json.dumps(context_json(rep)), [(d.problem, d.message) for d in led.diagnostics], applied


@pytest.mark.parametrize("over", [4, 7])
def test_a_checkpoint_reads_the_same_with_its_digest_found_ahead_or_hashed_after(tmp_path: Path, over: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint over clean events and then every mutation (its digest found while reading), and
    one whose digest is hashed when the prefix is matched: the same reading, the checkpoint applied."""
    s = _base()
    path = _store(tmp_path / "c.sqlite", [*s.events, *_mutated_events()[:400]], checkpoint_over=over)
    ahead = _outputs(path)
    assert ahead[3] == 1 and "checkpoint_unused" not in [p for p, _ in ahead[2]]
    monkeypatch.setattr(maka, "_stated_counts", lambda con, sid: set())
    assert _outputs(path) == ahead


def test_a_row_of_invalid_utf8_reads_every_row_again_leniently(tmp_path: Path) -> None:
    """Rows are read with SQLite's own UTF-8 decoding, one at a time; a row it refuses (here after
    a wrong-typed one was said and events were hashed) makes the whole read start again as every
    other query reads the store (U+FFFD for bad bytes): nothing said twice, the digests restarted."""
    from inspector.formats import sqlite_files

    s = _base()
    muts = _mutated_events()[:60]
    path = _store(tmp_path / "u.sqlite", [*s.events, *muts], checkpoint_over=5)
    con = sqlite3.connect(path)
    con.execute("UPDATE runtime_events SET payload_json = CAST(replace(payload_json, 'Rename', x'52ff65') AS TEXT) WHERE event_id='row8'")
    con.commit()
    con.close()
    wanted = {1, 3, 5, 20}
    with sqlite_files.read_only(path, path, []) as con:
        lenient_rows = con.execute(f"SELECT {maka._EVENT_COLUMNS} FROM runtime_events WHERE session_id='s1' ORDER BY committed_at, event_id").fetchall()
        assert "\ufffd" in lenient_rows[8][5]
        want_diags: list[Diagnostic] = []
        want = maka.PrefixDigests(wanted)
        want_events = maka._row_events(lenient_rows, "u", 1, want_diags, want)
        diags: list[Diagnostic] = [Diagnostic(0, "before", "said before")]
        got = maka.PrefixDigests(wanted)
        events = maka._events(con, "u", "s1", diags, got)
    assert [(e.event_id, e.raw, e.head, e.stored_id) for e in events] == [(e.event_id, e.raw, e.head, e.stored_id) for e in want_events]
    assert [d.message for d in diags] == ["said before", *(d.message for d in want_diags)]
    assert any(d.problem == "wrong_type" for d in want_diags)
    assert got.found == want.found and set(got.found) == wanted


@pytest.mark.parametrize("encoding", ["UTF-8", "UTF-16le"])
def test_text_payloads_read_as_bytes_read_as_the_text_query_reads_them(tmp_path: Path, encoding: str) -> None:
    """`_events` reads a text payload as its bytes (a UTF-8 database): the events, diagnostics and
    digests are the ones the rows read as text give, with BLOB payloads beside them (JSON, not
    UTF-8: the read starts again as text), and in a UTF-16 database (read as text)."""
    from inspector.formats import sqlite_files

    s = _base()
    path = tmp_path / "b.sqlite"
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA encoding='{encoding}'")
    con.execute("CREATE TABLE other (x)")  # (the encoding is fixed by the first write)
    con.commit()
    assert con.execute("PRAGMA encoding").fetchone()[0] == encoding
    con.close()
    _store(path, [*s.events, *_mutated_events()[:80], {"id": "é😀", "content": {"kind": "text", "text": "ü\n"}}], checkpoint_over=5)
    wanted = {1, 3, 5, 20}
    for blob in [None, b'{"id":"row3","content":{"kind":"text","text":"x"}}', b'{"id":"a\xffb"}', b"\xff"]:
        con = sqlite3.connect(path)
        if blob is not None:
            con.execute("UPDATE runtime_events SET payload_json = ? WHERE event_id='row3'", (blob,))
            con.commit()
        con.close()
        with sqlite_files.read_only(str(path), str(path), []) as con:
            text_rows = con.execute(f"SELECT {maka._EVENT_COLUMNS} FROM runtime_events WHERE session_id='s1' ORDER BY committed_at, event_id").fetchall()
            want_diags: list[Diagnostic] = []
            want = maka.PrefixDigests(wanted)
            want_events = maka._row_events(text_rows, "b", 1, want_diags, want)
            diags: list[Diagnostic] = []
            got = maka.PrefixDigests(wanted)
            events = maka._events(con, "b", "s1", diags, got)
        assert [msgspec.structs.astuple(e)[:2] + msgspec.structs.astuple(e)[3:] for e in events] == [
            msgspec.structs.astuple(e)[:2] + msgspec.structs.astuple(e)[3:] for e in want_events
        ], blob
        assert [orjson.loads(e.raw) if isinstance(e.raw, str | bytes) and e.raw[:1] in ("{", b"{") else e.raw for e in events] == [
            orjson.loads(e.raw) if isinstance(e.raw, str | bytes) and e.raw[:1] in ("{", b"{") else e.raw for e in want_events
        ], blob
        assert [d.message for d in diags] == [d.message for d in want_diags], blob
        assert got.found == want.found and set(got.found) == wanted, blob


# Values a payload's free-form parts may hold where msgspec's sorted output and maka's
# `stableStringify` part: floats (also an integer past 64 bits, which orjson reads as one),
# array-index keys, the arrays maka sorts, UTF-16 key order, nesting past what `_SafeEvent` walks;
# and ones where they agree (non-ASCII, a key with a digit, a lone index key, empty containers).
_NESTED: list[Any] = [
    1.5, -0.0, 1.0, 1e21, 2**64 - 1, 2**64, -(2**63) - 1, "é😀\u2028", {"b": 1, "a": 2, "B": 3, "_": 4, "~": 5},
    {"10": 1, "9": 2}, {"0": "x"}, {"1a": 1, "a1": 2}, {"12\n": 1, "a": 2}, {"required": ["b", "a"]}, {"enum": ["z", "y"]},
    {"required": "s"}, {"a\uffff": 1, "a😀": 2}, {"\ue000": 1}, {"é": 1, "e": 2}, [[[[1]]]], [[[[[1]]]]], {"a": {"b": {"c": {"d": 1}}}},
    {"a": {"b": {"c": {"d": {"e": 1}}}}}, [{"x": [2.0]}], [{"y": [1, {"z": 1.25}]}], {"k": [True, None, "s", -3]}, {}, [],
]  # fmt: skip


def _digest_places(ev: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    places = [*_places(ev), ((), "actions"), ((), "branch"), ((), "origin")]
    if isinstance(ev.get("content"), dict):
        places += [(("content",), k) for k in ("providerOptions", "details", "displayText", "attachments", "steering")]
    if isinstance(ev.get("refs"), dict):
        places += [(("refs",), k) for k in ("toolCallId", "sourceRuntimeEventHighWater")]
    return places


# Payload texts where a decoder may part from orjson: escapes, lone surrogates, duplicate keys,
# integers at and past 64 bits, floats written as integers are not, control characters, whitespace.
_TEXTS: list[str] = [
    '{"id":"\\ud800"}', '{"id":"\\ud83d\\ude00"}', '{"id":"a\x01b"}', '{"id":"a\x7fb\u2028"}', '\ufeff{"id":"x"}',
    '{"id":"x","id":"y"}', '{"content":{"args":{"b":1,"a":1,"b":2}}}', '{"content":{"kind":"text","kind":"error"}}', '{"id":"\\x"}',
    '{"ts":01}', '{"ts":-0}', '{"ts":1E2}', '{"ts":1.0}', '{"ts":9223372036854775807}', '{"ts":9223372036854775808}', '{"ts":-9223372036854775808}',
    '{"ts":-9223372036854775809}', '{"content":{"args":{"a":18446744073709551615}}}', '{"content":{"args":{"a":-9223372036854775809}}}',
    '{"content":{"args":[1e400]}}', '{"ts":1} ', ' \t\n\r{"ts":1}', '{"ts":1}\x00', '{"id":"\\u0000\\/"}', '{"content":{"args":{"":1,"\\u0031":2}}}',
    '{"content":{"args":{"\\u0031":2,"a":1}}}', '{"content":{"args":{"re\\u0071uired":[2,1]}}}', '{"refs":{"stepId":"s","stepId":null}}', '[]', '5',
    '{"content":null,"refs":null,"actions":null}', '{"content":{"kind":"text","text":"\\ud83d\\ude00","args":{"\\ud83d\\ude00":1,"\\uffff":2}}}',
]  # fmt: skip


# A tool result's JSON text as stored (half the bytes of maka's events): every escape written the
# short way, the long way, in upper case, needlessly; non-ASCII raw and escaped, a lone surrogate,
# a pair; other types; whitespace; a duplicate key; and as bytes that are not UTF-8.
_RESULTS: list[str] = [
    '"plain"', '""', '"a\\nb\\t\\"q\\"\\\\"', '"\\u0001\\u001f\\u000b\\u000e\\u0007"', '"\\u001F"', '"\\u000a"', '"\\u0008"',
    '"\\u0041"', '"\\/"', '"\\ud83d\\ude00"', '"\\ud800"', '"\\udc00x"', '"é€😀"', '"a\x7fb\u2028"', '"\\u00e9"', '"a\\\\u0041"',
    '"\\b\\f\\r"', '"\\u007f"', '{"x":1}', '{"x":"\\n"}', '[1,2]', '1', '1.5', 'null', 'true', ' "spaced" ', '"\ufeff"',
]  # fmt: skip
_RESULT_TEXTS: list[str] = [
    '{"content":{"kind":"function_response","id":"call_1","name":"n","result":' + r + '},"role":"tool"}' for r in _RESULTS
] + [
    '{"content":{"kind":"function_response","result":{"x":1.5},"result":"a"}}', '{"content":{"result":"a","result":{"x":1.5}}}',
    '{"content":{"result":"a","result":"\\u0041"}}', '{"content":{"result":"a"},"content":{"result":"\\/"}}',
]  # fmt: skip
_RESULT_BLOBS: list[bytes] = [
    b'{"content":{"kind":"function_response","result":"a\xffb"}}', b'{"content":{"result":"\xed\xa0\x80"}}',
    b'{"content":{"result":"\xc0\x80"}}', b'{"content":{"result":"\xc3\xa9\\n"}}', b'{"content":{"result":"\xc3"}}',
]  # fmt: skip


def _orjson_or_none(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def test_a_payload_safe_events_take_is_the_one_orjson_reads_and_digested_as_stable_stringify_writes_it() -> None:
    """A payload `_SafeEvent` takes (its text decoded straight into the Struct) is read as its record
    and digested without the dict orjson makes of it: for every field of an event, its content and
    refs set to every JSON type and to values nested where the serializers part, and for texts where
    decoders part, orjson reads that payload too, to the same values (UNSET: the field absent), the
    field guard leaves it whole, and msgspec's sorted output of the Struct (and `_STRUCT_JSON`'s, the
    digest's) is `stable_stringify`'s of the dict, byte for byte; every other payload is written
    exactly too."""
    taken = refused = 0
    events = _base().events
    events += [{**e, "content": {**e["content"], "args": {"p": "q"}}} for e in events if e.get("refs")]  # (c1's args hold a float)
    texts = [json.dumps(m) for ev in events for m in mutated(ev, _digest_places(ev), [*VALUES, *_NESTED])]
    blobs = [b'{"id":"a\xffb"}', b'{"content":{"args":{"k\xff":1}}}', b'{"id":"\xed\xa0\x80"}', b'{"id":"ok","ts":1}']  # (a BLOB row)
    for text in [*texts, *_TEXTS, *blobs, *_RESULT_TEXTS, *_RESULT_BLOBS]:
        obj = _orjson_or_none(text)
        if isinstance(obj, dict):
            assert maka.stable_json(obj) == maka.stable_stringify(obj).encode(), text
        try:
            st = maka._decode_safe(text)
        except maka._UNSAFE:
            refused += 1
            continue
        taken += 1
        assert isinstance(obj, dict), text
        assert msgspec.to_builtins(st) == obj, text  # (to_builtins leaves UNSET fields out)
        assert maka._SORTED_JSON(st) == maka.stable_stringify(obj).encode(), text
        assert maka._STRUCT_JSON(st) == maka._SORTED_JSON(st), text  # (what the digest writes)
        assert maka._orjson_agrees(obj), text
        msgspec.convert(obj, maka._EventTypes)
        assert fields.check_fields(obj, maka.EVENT) == [], text
    assert taken > 1000 and refused > 1000, (taken, refused)


def test_the_digest_writes_a_struct_with_every_field_set_as_stable_stringify_does() -> None:
    """`_STRUCT_JSON` keeps the Structs' declared field order: with every field of the event, its
    content and refs set at once, it writes `stable_stringify`'s bytes (a field declared out of order
    would move)."""

    def full(t: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in t.__struct_fields__:
            if f == "content":
                out[f] = full(maka._SafeContent)
            elif f == "refs":
                out[f] = full(maka._SafeRefs)
            elif f == "ts":
                out[f] = 7
            elif f in ("partial", "isError", "providerExecuted"):
                out[f] = True
            else:
                out[f] = {"b": [f, 1], "a": None} if f in ("args", "result", "actions") else f + "\u00e9"
        return out

    obj = full(maka._SafeEvent)
    text = json.dumps(dict(reversed(list(obj.items()))))  # (stored in another order)
    st = maka._decode_safe(text)
    assert maka._STRUCT_JSON(st) == maka._SORTED_JSON(st) == maka.stable_stringify(obj).encode()


def _refuse(text: Any) -> Any:
    raise msgspec.ValidationError("the dict path")


@pytest.mark.parametrize("past", [False, True])
def test_an_event_read_from_its_struct_is_the_one_read_as_a_dict(past: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every field of the event `_row_events` builds from a payload `_SafeEvent` takes (its head, the
    flags the replay rules read, its ids, its message built as read past every coverage), the
    diagnostics said and the digest fed: the same as when the payload is read as a dict; the
    payload as text and as the bytes the events query reads it as."""
    events = _base().events
    calls = [{**e, "content": {**e["content"], "args": {"p": "q"}}} for e in events if e.get("refs")]
    events += calls + [{k: v for k, v in e.items() if k != "refs"} for e in calls]  # (a call with no step id)
    texts = [json.dumps(m) for ev in events for m in mutated(ev, _digest_places(ev), [*VALUES, *_NESTED])]
    payloads: list[str | bytes] = [*texts, *_TEXTS, *_RESULT_TEXTS, *_RESULT_BLOBS[3:4]]
    payloads += [t.encode() for t in payloads if isinstance(t, str)]  # (as the events query reads text)
    rows = [(f"row{i}", "s1", "inv-run1", "run1", "turn1", t, 1000 + i) for i, t in enumerate(payloads)]

    def read() -> tuple[list[Any], list[str], dict[int, str]]:
        diags: list[Diagnostic] = []
        digests = maka.PrefixDigests({0} if past else {1, 2, 3, 10, 100, 10**9})
        out = maka._row_events(rows, "x", 1, diags, digests)
        return [msgspec.structs.astuple(e) for e in out], [d.message for d in diags], digests.found

    fast = read()
    monkeypatch.setattr(maka, "_decode_safe", _refuse)
    slow = read()
    assert len(fast[0]) == len(slow[0]) > 1000
    for a, b in zip(fast[0], slow[0], strict=True):
        assert a == b, rows[a[0] - 1][5]
    assert fast[1:] == slow[1:]


def test_a_run_header_run_types_take_is_one_the_guard_leaves_whole() -> None:
    """`_runs` calls the field guard only on a header `_RunTypes` refuses: every header it takes
    (every field set to every JSON type, removed, beside an unknown key) is one the guard leaves
    whole; every header it refuses is one the guard changes."""
    header = _base().runs["run1"] | {"llmConnectionId": "conn-1", "modelId": "m"}
    places = [((), k) for k in [*sorted(set(maka.RUN_HEADER) | set(header)), "unknown_key"]]
    taken = 0
    for h in mutated(header, places, VALUES):
        obj = orjson.loads(json.dumps(h))
        try:
            msgspec.convert(obj, maka._RunTypes)
        except msgspec.ValidationError:
            assert fields.check_fields(orjson.loads(json.dumps(h)), maka.RUN_HEADER) != [], h
            continue
        taken += 1
        assert fields.check_fields(obj, maka.RUN_HEADER) == [], h
    assert taken > 100
