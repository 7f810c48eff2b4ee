"""adk-go's index-first load (issue 15: "speed must not cost a diagnostic"): a store row or an export
event becomes its event from a msgspec head (`adk_go._row_head`, `adk_go._export_head`), its message
read again through the whole parse on demand. Where a head is taken it must give exactly what the
whole parse (`adk_go._row_event`, `adk_go.make_event`) gives, with no diagnostic lost: the same
event fields, the same message, and a head only where the whole parse finds nothing to say. Checked
for every field of the event, its content, parts, calls, responses, usage and actions (both
casings) set to every JSON type, removed, beside an unknown key, or spelled in another case (adk-go
matches keys case-insensitively); and the two loads of whole files compared report for report."""

from __future__ import annotations

import json
import sqlite3
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson
import pytest

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import adk, adk_go
from inspector.ledger.model import Diagnostic
from tests.field_mutations import mutated

sys.path.insert(0, str(Path(__file__).parent))
from adk_go_store import actions, ev, export, rfc, store, t, text

VALUES: list[Any] = [
    None, True, False, 0, -1, 7, 1.5, -0.0, 2**70, "", "x", "user", "model", "STOP", "adk_request_credential",
    "2026-08-20T10:00:01.5Z", "2026-08-20 10:00:01.500000+00:00", "c1", [], [1], ["c1"], {}, {"a": 1}, {"text": "x"},
]  # fmt: skip
CALL = {"id": "c1", "name": "ls", "args": {"dir": ".", "n": 3}}
RESP = {"id": "c1", "name": "ls", "response": {"out": "a.py", "size": 12}}
CONTENT = {
    "role": "model",
    "parts": [
        {"text": "thinking", "thought": True, "thoughtSignature": "c2ln"},
        {"text": "a"},
        {"functionCall": CALL},
        {"functionResponse": RESP},
    ],
}
USAGE = {"promptTokenCount": 812, "candidatesTokenCount": 12, "cachedContentTokenCount": 4, "thoughtsTokenCount": 2, "totalTokenCount": 830}
EVENT: dict[str, Any] = {
    "id": "e1", "timestamp": "2026-08-20T10:00:01.5Z", "invocationId": "inv-1", "author": "coder", "branch": "root",
    "isolationScope": "", "content": CONTENT, "usageMetadata": USAGE, "finishReason": "STOP", "errorCode": None,
    "errorMessage": "oops", "actions": json.loads(actions("camel", transfer="helper")), "longRunningToolIds": ["c1"],
    "partial": False, "turnComplete": True, "interrupted": False,
}  # fmt: skip
PASCAL = json.loads(actions("pascal", transfer="helper"))


def _dumps(v: Any) -> bytes:
    return json.dumps(v).encode()  # (orjson refuses the integer past 64 bits)


def _places(e: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    places: list[tuple[tuple[Any, ...], str]] = [((), k) for k in [*e, "unknown", "Author", "ID", "compaction"]]
    places += [(("content",), k) for k in ["role", "parts", "Role", "extra"]]
    for i in range(len(CONTENT["parts"])):
        places += [(("content", "parts", i), k) for k in [*PART_KEYS, "FunctionCall", "functioncall", "Text", "inlineData"]]
    places += [(("content", "parts", 2, "functionCall"), k) for k in ["id", "name", "args", "ID", "partialArgs"]]
    places += [(("content", "parts", 3, "functionResponse"), k) for k in ["id", "name", "response", "Name", "willContinue"]]
    places += [(("content", "parts", 2, "functionCall", "args"), k) for k in ["dir", "n"]]
    places += [(("content", "parts", 3, "functionResponse", "response"), k) for k in ["out", "size"]]
    places += [(("usageMetadata",), k) for k in [*USAGE, "PromptTokenCount", "trafficType"]]
    places += [(("actions",), k) for k in [*e["actions"], "TransferToAgent", "compaction", "Compaction", "stateDelta", "requestedAuthConfigs"]]
    return places


PART_KEYS = ("text", "thought", "thoughtSignature", "functionCall", "functionResponse")
# Parts alone, for what makes a part zero-valued, a call, a response or a message's role.
PARTS: list[dict[str, Any]] = [
    {}, {"text": ""}, {"text": "", "thought": False}, {"thought": True}, {"thoughtSignature": "c2ln"}, {"thoughtSignature": ""},
    {"functionCall": {}}, {"functionResponse": {}}, {"functionCall": {"id": None}}, {"functionCall": CALL, "functionResponse": RESP},
    {"functionResponse": RESP, "functionCall": {}}, {"functionCall": {"name": "adk_request_confirmation"}},
    {"functionResponse": {"id": "", "name": "adk_request_credential"}}, {"text": None, "functionCall": None},
    {"functionCall": {"ID": "c1"}}, {"functionResponse": {"Name": "ls"}}, {"text": "", "thoughtSignature": "c2ln"},
]  # fmt: skip


def _respelled(o: dict[str, Any], places: list[tuple[tuple[Any, ...], str]]) -> list[dict[str, Any]]:
    """For each present key: renamed to its upper case, and preceded by its capitalized spelling
    holding another value (Go's decoder, and `adk_go._lower`, keep the one written first)."""
    out: list[dict[str, Any]] = []
    for path, key in places:
        for how in ("rename", "before"):
            c = json.loads(json.dumps(o))
            target = c
            for p in path:
                target = target[p]
            if key not in target:
                continue
            items = list(target.items())
            target.clear()
            for k, v in items:
                if k == key and how == "before":
                    target[k[:1].upper() + k[1:] if k[:1].islower() else k.lower()] = "other"
                target[k.upper() if k == key and how == "rename" else k] = v
            out.append(c)
    return out


def _events() -> list[dict[str, Any]]:
    places = _places(EVENT)
    out = mutated(EVENT, places, VALUES)
    out += _respelled(EVENT, places)
    for part in PARTS:
        for role in ("model", "user", None):
            for author in ("user", "coder"):
                out.append({**EVENT, "author": author, "content": {"role": role, "parts": [part]}})
                out.append({**EVENT, "author": author, "content": {"role": role, "parts": [part, *CONTENT["parts"][3:]]}})
    pascal = {**EVENT, "actions": PASCAL}
    out += mutated(pascal, [(("actions",), k) for k in [*PASCAL, "transferToAgent"]], VALUES)
    # Keys spelled in another case, in either order beside the declared one.
    for k in ("author", "invocationId", "timestamp", "content", "actions", "usageMetadata", "id"):
        out.append({k.upper(): EVENT[k], **EVENT})
        out.append({**EVENT, k.capitalize(): "other"})
        renamed = {(k.upper() if key == k else key): v for key, v in EVENT.items()}
        out.append(renamed)
    out.append({**EVENT, "content": {**CONTENT, "parts": [{"FunctionCall": CALL, "functionCall": {"id": "c2"}}]}})
    out.append({**EVENT, "content": {"parts": CONTENT["parts"], "role": "user", "ROLE": "model"}})
    return out


# Everything `build` reads of an event (its object aside: a head's is read again on demand).
FIELDS = ("index", "rowid", "id", "invocation_id", "author", "branch", "scope", "ts", "long_running", "compaction",
          "transfer_to", "line", "role", "has_content", "calls", "responses", "excluded_call", "zero", "head")  # fmt: skip


def _same(head: adk_go.GoEvent, whole: adk_go.GoEvent | None, diags: list[Diagnostic]) -> None:
    assert whole is not None and not diags, [d.message for d in diags]
    assert {f: getattr(head, f) for f in FIELDS} == {f: getattr(whole, f) for f in FIELDS}
    again = adk_go._obj(head.raw)
    assert again == whole.obj
    assert adk.event_message(again) == adk.event_message(whole.obj)


def test_export_heads_equal_the_whole_parse() -> None:
    events = _events()
    taken = 0
    for i, o in enumerate(events):
        data = _dumps([o])
        head = adk_go._export_head(i, adk_go.H.LIST.decode(data)[0])
        parsed = orjson.loads(data)[0]  # the whole parse reads the bytes (a 70-bit integer as a float)
        diags: list[Diagnostic] = []
        whole = adk_go.make_event(i, None, parsed, "x", diags)
        if head is None:
            continue
        taken += 1
        _same(head, whole, diags)
    assert len(events) > 1500 and taken > 300, (len(events), taken)


def _row(o: dict[str, Any]) -> dict[str, Any]:
    """The export event as a store row: its JSON columns as text (`actions` as bytes)."""
    row: dict[str, Any] = {"rowid": 1, "id": o.get("id"), "invocation_id": o.get("invocationId"), "author": o.get("author"),
                           "branch": o.get("branch"), "isolation_scope": o.get("isolationScope"), "error_code": o.get("errorCode"),
                           "error_message": o.get("errorMessage")}  # fmt: skip
    ts = o.get("timestamp")
    row["timestamp"] = ts.replace("T", " ").replace("Z", "+00:00") if isinstance(ts, str) else ts
    for col, key in (("content", "content"), ("usage_metadata", "usageMetadata"), ("long_running_tool_ids_json", "longRunningToolIds")):
        row[col] = _dumps(o[key]).decode() if key in o else None
    row["actions"] = _dumps(o["actions"]) if "actions" in o else None
    return row


def _sql_value(v: Any) -> Any:
    """A value as SQLite hands it back (a column holds a scalar: other JSON values are stored as text)."""
    if isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**63:
        return str(v)
    return v if v is None or (isinstance(v, str | int | float | bytes) and not isinstance(v, bool)) else _dumps(v).decode()


def test_row_heads_equal_the_whole_parse() -> None:
    taken = 0
    for n, o in enumerate(_events(), start=1):
        row = {k: _sql_value(v) for k, v in _row(o).items()}
        cols = tuple(row[c] for c in adk_go._HEAD_COLUMNS)
        blobs = tuple(v.encode() if isinstance(v, str) and c in ("content", "usage_metadata", "actions", "long_running_tool_ids_json") else v
                      for c, v in zip(adk_go._HEAD_COLUMNS, cols, strict=True))  # fmt: skip
        head = adk_go._row_head(n, adk_go._head_row(1, blobs))
        diags: list[Diagnostic] = []
        whole = adk_go._row_event(n, row, "x", diags)
        if head is None:
            continue
        taken += 1
        _same(head, whole, diags)
    assert taken > 300


def _reports(path: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """analyze --json and context --json of the file by heads, and read whole (no head taken)."""
    fast = _outputs(adk_go.load(path, None, None))
    with monkeypatch.context() as m:
        m.setattr(adk_go, "_row_head", lambda n, row, ts=None: None)
        m.setattr(adk_go, "_export_head", lambda i, raw: None)
        slow = _outputs(adk_go.load(path, None, None))
    return fast, slow


def _outputs(led: Any) -> str:
    r = analyze(led)
    records = [(repr(x), x.never_sent, x.call_ids, x.result_id, x.stop_reason, x.source_role, x.extra, repr(x.message)) for x in led.records]
    return json.dumps([analyze_json(r), context_json(r), [asdict(d) for d in led.diagnostics], records], default=str)


def _stream(n: int) -> list[dict[str, Any]]:
    """Mutated events as one session: each a second later than the one before."""
    out = []
    for k, o in enumerate(_events()[:n]):
        o = dict(o)
        if "timestamp" in o and isinstance(o["timestamp"], str):
            o["timestamp"] = rfc(1 + k * 0.01)
        o["id"] = o.get("id") if not isinstance(o.get("id"), str) else f"e{k}"
        out.append(o)
    return out


def test_whole_files_by_heads_equal_the_whole_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = _stream(600)
    f = tmp_path / "export.json"
    f.write_bytes(_dumps(events))
    fast, slow = _reports(str(f), monkeypatch)
    assert fast == slow
    p = store(str(tmp_path / "s.db"), {"s1": [ev("u1", "inv-1", "user", t(0.5), {"role": "user", "parts": [{"text": "hi"}]})]})
    con = sqlite3.connect(p)
    for k, o in enumerate(events):
        row = {c: _sql_value(v) for c, v in _row(o).items() if c != "rowid"}
        if isinstance(row["timestamp"], str):
            row["timestamp"] = t(1 + k * 0.01)
        row["id"] = f"r{k}"
        cols = ["app_name", "user_id", "session_id", *row]
        con.execute(f"INSERT INTO events ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})", ("app", "u1", "s1", *row.values()))
    con.commit()
    con.close()
    fast, slow = _reports(p, monkeypatch)
    assert fast == slow


def test_the_notes_example_loads_by_heads(tmp_path: Path) -> None:
    """The test stores' clean events take heads (the index-first path is the one exercised)."""
    from tests.test_adk_go import notes_example

    rows = notes_example("camel")
    f = tmp_path / "export.json"
    f.write_bytes(export(rows))
    led = adk_go.load(str(f), None, None)
    assert [r._source is not None and r._message is None for r in led.records] == [True, True, True, False]
    assert led.records[1].message is not None and led.records[1].call_ids == ("c1",)


# Values msgspec skips unread but orjson refuses: a number past a double's range, bytes that are not UTF-8.
UNREADABLE = [b"1e400", b"-1e400", b"1" + b"0" * 400, b'"\xff"']


@pytest.mark.parametrize("bad", UNREADABLE)
def test_values_orjson_refuses_take_the_whole_parse(bad: bytes) -> None:
    """A head is never taken for an event the whole parse cannot read: in an export the whole
    document fails; in a store the column is read without (a `malformed_row` diagnostic)."""
    spots = [
        (("content", "parts", 2, "functionCall", "args"), "n"),
        (("content", "parts", 3, "functionResponse", "response"), "size"),
        (("usageMetadata",), "totalTokenCount"),
        (("actions",), "stateDelta"),
        ((), "partial"),
        ((), "errorCode"),
        (("content", "parts", 1), "text"),
    ]
    nested = [(path, key, True) for path, key in spots[:2]]
    for path, key, deep in [*((p, k, False) for p, k in spots), *nested]:
        o = json.loads(json.dumps(EVENT))
        target = o
        for p in path:
            target = target[p]
        if key == "stateDelta":
            target[key] = {"k": "MARK"}
        else:
            target[key] = [1, {"a": "MARK"}] if deep else "MARK"
        data = _dumps([o]).replace(b'"MARK"', bad)
        assert adk_go._export_head(0, adk_go.H.LIST.decode(data)[0]) is None, (path, key)
        with pytest.raises(adk_go.LoadError):
            adk_go.load_json(data, "x", None)
        row = {k: _sql_value(v) for k, v in _row(o).items()}
        blobs = tuple(
            (_dumps(o[{"content": "content", "usage_metadata": "usageMetadata", "actions": "actions"}[c]]).replace(b'"MARK"', bad) if v is not None else None)
            if c in ("content", "usage_metadata", "actions") else v
            for c, v in zip(adk_go._HEAD_COLUMNS, (row[c] for c in adk_go._HEAD_COLUMNS), strict=True)
        )  # fmt: skip
        if (path, key) in (((), "partial"), ((), "errorCode")):
            continue  # (a store has no such JSON)
        assert adk_go._row_head(1, adk_go._head_row(1, blobs)) is None, (path, key)


@pytest.mark.parametrize("seed", range(40))
def test_the_ordered_stream_equals_the_scan(seed: int) -> None:
    """`adk_go._stream_ordered` (bisection and runs, where timestamps do not decrease) gives what
    `adk_go._stream` (every event tested against every surviving record) gives: the same stream,
    summaries at the same places, the same covered events; with tied timestamps, records inside
    others' ranges, holes by record that name an event and ones that name none."""
    import random

    rng = random.Random(seed)
    flow: list[adk_go.GoEvent] = []
    ts = 1_000_000_000
    for i in range(rng.randrange(1, 80)):
        ts += rng.choice((0, 0, 1, 999, 1000, 250_000))
        inv = f"inv-{rng.randrange(4)}"
        e = adk_go.GoEvent(i, None, f"e{i}", inv, "coder", "", "", ts, None, [])
        if rng.random() < 0.15:
            lo = rng.randrange(1_000_000_000, ts + 1)
            hi = rng.randrange(lo - 10_000, ts + 2_000_000) if rng.random() < 0.9 else lo
            picks = [x for x in flow if rng.random() < 0.1]
            refs = [adk_go.Ref(x.invocation_id, x.ts + rng.choice((0, 1, 500))) for x in picks]
            refs += [adk_go.Ref("inv-none", ts)] if rng.random() < 0.2 else []
            e.compaction = adk_go.Compaction(lo, hi, {"role": "model", "parts": [{"text": "s"}]}, refs)
        flow.append(e)
    kept = [(i, e.compaction) for i, e in enumerate(flow) if e.compaction is not None and rng.random() < 0.8]

    def shown(s: adk_go._Stream) -> list[Any]:
        return [("summary", x[0].index) if isinstance(x, tuple) else x.index for x in s]

    want, want_covered = adk_go._stream(flow, kept)  # type: ignore[arg-type]
    got, got_covered = adk_go._stream_ordered(flow, kept)  # type: ignore[arg-type]
    assert shown(got) == shown(want) and got_covered == want_covered


def test_fast_time_reads_as_parse_time() -> None:
    """`adk_go.fast_time` (the minute looked up once; GORM's seconds and microseconds as one
    number) gives `parse_time`'s value, or None, for dates, times, digits, zones and separators
    right and wrong, Unicode digits and `int`'s spellings (`_`, spaces) included."""
    import itertools
    import random

    rng = random.Random(7)
    parts = [
        ["2026", "1970", "0001", "9999"], ["01", "02", "12", "13", "00"], ["01", "28", "29", "31", "00"], [" ", "T", "x"],
        ["00", "23", "24"], ["00", "59", "60"], ["00", "59", "60", "5x", "٤٤", " 5"],
        ["603000", "000000", "999999", "6030001", "60300", "٤٤٤٤٤٤", "12 456", "1_3456", "603", "999", "1_3", " 12", "٤٤٤"], ["+00:00", "Z", "+02:30", "-00:00", "+0000", ""],
    ]  # fmt: skip
    values: list[Any] = [f"{y}-{mo}-{d}{sep}{h}:{mi}:{s}.{f}{z}" for y, mo, d, sep, h, mi, s, f, z in itertools.product(*parts)]
    values = [*rng.sample(values, 4000), " 2026-01-05 09:00:04.603000+00:00", "2026-01-05 09:00:04.603000+00:00 +0000 UTC", 5, 1.5, None, True]
    for v in values:
        assert adk_go.fast_time(v) == adk_go.parse_time(v), v


@pytest.mark.parametrize("seed", range(12))
def test_head_rows_in_the_order_sqlite_sorts_them(tmp_path: Path, seed: int) -> None:
    """`adk_go._head_events` sorts the rows itself where every timestamp is a distinct text
    (`_by_text_time`), else SQLite does: the order is the service's (ORDER BY timestamp DESC,
    reversed) either way, for texts of every shape (zones, Unicode, prefixes of each other, upper
    and lower case), ties, numbers, NULLs and blobs among them."""
    import random

    rng = random.Random(seed)
    n = rng.randrange(2, 60)
    path = store(str(tmp_path / "s.db"), {"s1": [ev(f"e{i}", "inv", "coder", t(i % 50), text("model", f"m{i}")) for i in range(n)]})
    pool: list[Any] = [t(rng.randrange(60) + rng.random()) for _ in range(8)] + [
        "2026-08-20T10:00:01Z", "2026-08-20 10:00:01", "2026-08-20 10:00:01.5+00:00", "2026-08-20 10:00:01.500000+00:00",
        "2026-08-20 10:00:01.500000+02:00", "2026-08-20t10:00:01.5z", "é", "",
    ]  # fmt: skip
    if seed % 3 == 1:
        pool += [5, 1.5, None, b"\x00\x01", -3]  # other types: SQLite's own order across types
    con = sqlite3.connect(path)
    for rowid in range(1, n + 1):
        v = rng.choice(pool) if seed % 3 else t(rng.randrange(50) + rowid / 1000)  # seed % 3 == 0: no tie
        if seed % 6 == 0 and rng.random() < 0.25:  # no tie either, but numbers, a NULL, blobs among the texts
            v = rng.choice((rowid * 7, rowid + 0.5, None if rowid == 1 else f"x{rowid}".encode()))
        con.execute("UPDATE events SET timestamp=? WHERE rowid=?", (v, rowid))
    con.commit()
    want = [r[0] for r in con.execute("SELECT rowid FROM events ORDER BY timestamp DESC")][::-1]
    cols = adk_go._event_columns(con, path)
    got = adk_go._head_events(con, cols, ("app", "u1", "s1"), path, None, [])
    con.close()
    assert got is not None
    rowids = [e.rowid for e in got]
    assert rowids == [r for r in want if r in set(rowids)] and len(rowids) >= n // 2


def test_times_of_reads_as_fast_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """`adk_go.times_of` (a store's GORM UTC texts read by `datetime` in C, all at once) gives each
    value's `fast_time`: lists of valid GORM texts (read in C: `fast_time` is never called), and
    lists with one value of another shape, date, hour, digit or type among them (read one by one)."""
    import itertools
    import random

    rng = random.Random(11)
    parts = [
        ["2026", "1970", "0001", "9999", "0000"], ["01", "02", "12", "13", "00"], ["01", "28", "29", "30", "31", "00"],
        ["00", "09", "19", "23", "24", "29"], ["00", "07", "59", "60"], ["00", "31", "59", "60", "٤٤"],
        ["603000", "000000", "999999", "000001", "٤٤٤٤٤٤", "1_3456", " 12345"], ["+00:00", "+00:01", "Z", "-00:00"],
    ]  # fmt: skip
    every = [f"{y}-{mo}-{d} {h}:{mi}:{s}.{f}{z}" for y, mo, d, h, mi, s, f, z in itertools.product(*parts)]
    good = [v for v in every if adk_go._GORM_UTC(v) and adk_go.fast_time(v) is not None]
    assert len(good) > 1000
    lists = [rng.sample(good, 300) for _ in range(20)]
    # (ISO 8601 spellings `datetime` reads and `parse_time` may not: basic, week dates, no fraction)
    iso = ["20260105T090004.603000+00:00", "2026-W02-1 09:00:04+00:00", "2026-01-05T09:00:04.603000+00:00",
           "2026-01-05 09:00:04+00:00", "2026-01-05 09:00:04.603+00:00", "2026-01-05 09:00:04.603000", "2026-01-05"]  # fmt: skip
    odds = [*rng.sample(every, 300), *iso, 5, 1.5, None, b"x", "", good[0] + good[1], good[0] + "\n" + good[1]]
    lists += [[*rng.sample(good, 50), odd, *rng.sample(good, 50)] for odd in odds]
    for values in lists:
        assert adk_go.times_of(values) == [adk_go.fast_time(v) for v in values], values
    monkeypatch.setattr(adk_go, "fast_time", lambda v: pytest.fail("read one by one"))
    for values in lists[:20]:
        assert None not in adk_go.times_of(values)


def _answers(ids: list[Any]) -> dict[str, Any]:
    """A user turn answering several calls (parallel calls), one response per id (None: no id key)."""
    parts = [{"functionResponse": {"name": "ls", "response": {"n": k}} | ({} if i is None else {"id": i})} for k, i in enumerate(ids)]
    return {"role": "user", "parts": parts}


def test_a_heads_result_ids_are_its_messages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A head's record says every call its message answers (`_Source.result_ids`, which the
    request's pairing reads instead of the message): the same ids as the message read whole, for
    one response or several, a first one without an id, empty and repeated ids; and the reports
    equal to the whole parse's."""
    answered = [["c1"], ["c1", "c2"], ["c1", "c2", "c3"], [None, "c2"], ["", "c2"], ["c1", None], ["c1", "c1"], [None], [""], [None, None]]
    rows: list[dict[str, Any]] = []
    for k, ids in enumerate(answered):
        calls = {"role": "model", "parts": [{"functionCall": {"id": c, "name": "ls", "args": {}}} for c in ("c1", "c2", "c3")]}
        rows.append(ev(f"a{k}", f"inv-{k}", "coder", t(k + 0.1), calls, casing="camel"))
        rows.append(ev(f"r{k}", f"inv-{k}", "user", t(k + 0.2), _answers(ids), casing="camel"))
    rows.append(ev("z", "inv-z", "user", t(20), text("user", "next"), casing="camel"))
    f = tmp_path / "export.json"
    f.write_bytes(export(rows))
    for path in (store(str(tmp_path / "s.db"), {"s1": rows}), str(f)):
        led = adk_go.load(path, None, None)
        tools = [r for r in led.records if r.role == "tool"]
        assert len(tools) == len(answered) and all(r._message is None for r in tools)
        got = [r._source.result_ids(r) for r in tools]
        assert got == [r._source.message(r).tool_result_ids() for r in tools]
        assert got[2] == ["c1", "c2", "c3"] and got[3] == ["c2"]
        fast, slow = _reports(path, monkeypatch)
        assert fast == slow


def _orjson_reads(b: bytes) -> bool:
    try:
        orjson.loads(b)
    except orjson.JSONDecodeError:
        return False
    return True


def test_raw_ok_reads_numbers_as_orjson_does() -> None:
    """`adk_go_heads.raw_ok` (a value a head skips unread) says what orjson says of it; digits alone
    below 19 of them are taken without asking orjson (an integer below 2**63)."""
    import msgspec

    values = [b"9" * n for n in range(1, 400, 7)] + [b"1" + b"0" * n for n in (17, 18, 19, 308, 309, 400)]
    values += [b"-1", b"1.5", b"1e400", b"-1e400", b"0", b'"x"', b"true", b"null", b"[1]", b'{"a": 1e999}']
    for b in values:
        assert adk_go.H.raw_ok(msgspec.Raw(b)) == _orjson_reads(b), b[:40]


def test_rows_read_whole_keep_their_places(tmp_path: Path) -> None:
    """`_head_events` takes a head per row, then reads whole each row without one in its place: a
    compaction record (never a head), a row whose timestamp is no time (skipped, with its
    diagnostic), the events after them renumbered so that each one's index is its place."""
    from tests.test_adk_go import notes_example

    rows = notes_example()
    bad = {**rows[1], "id": "bad", "timestamp": rows[1]["timestamp"] + "x"}  # (no time; sorted right after rows[1])
    p = store(str(tmp_path / "s.db"), {"s1": [rows[0], bad, *rows[1:]]})
    led = adk_go.load(p, None, None)
    assert [r.seq for r in led.records] == list(range(len(rows)))
    assert [r.line for r in led.records] == [1, 2, *range(4, len(rows) + 2)]
    assert [r.kind for r in led.records].count("checkpoint") == 1
    assert [d.line for d in led.diagnostics if "event skipped" in d.message] == [3]
    fast = _outputs(led)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(adk_go, "_row_head", lambda n, row, ts=None: None)
        assert _outputs(adk_go.load(p, None, None)) == fast


def test_a_call_or_response_holding_only_its_arguments_is_not_zero() -> None:
    """A head's zero-valued test (`adk_go_heads.shape`: every part `{}`-like, dropped from the
    request) gives what the whole parse's does (`adk_go._zero`) for a call or response holding
    only its id, its name or its arguments, or nothing, beside an empty text or alone."""
    bodies = ({}, {"id": "c1"}, {"name": "ls"}, {"args": {"a": 1}}, {"response": {"a": 1}}, {"args": {}}, {"response": {}})
    seen = set()
    for key in ("functionCall", "functionResponse"):
        for body in bodies:
            if ("args" in body and key == "functionResponse") or ("response" in body and key == "functionCall"):
                continue
            for extra in ({}, {"text": ""}):
                content = orjson.dumps({"role": "model", "parts": [{key: body, **extra}]})
                got = adk_go.H.shape(adk_go.H.content(content), "a", False, None, frozenset(), str)[5]
                want = all(adk_go._zero(p) for p in adk._parts(adk_go._content(orjson.loads(content))))
                assert got == want, (key, body, extra)
                seen.add(got)
    assert seen == {True, False}


def test_a_row_with_one_rare_column_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The columns most rows leave NULL (branch, error code and message, isolation scope,
    long-running ids) are fetched only for a row that holds one (`adk_go._RARE_SQL`): each such row,
    one column set, still takes a head and gives what reading it whole gives."""
    reply = {"role": "model", "parts": [{"text": "ok"}]}
    rare = [{"branch": "root.a"}, {"error_code": "E1"}, {"error_message": "boom"}, {"isolation_scope": "s9"},
            {"long_running_tool_ids_json": '["c1"]'}, {}]  # fmt: skip
    rows = [ev("u0", "inv-1", "user", t(0.5), text("user", "hi"))]
    for k, cols in enumerate(rare):
        rows.append(ev(f"r{k}", "inv-1", "a", t(1 + k), reply) | cols)
    p = store(str(tmp_path / "s.db"), {"s1": rows})
    led = adk_go.load(p, None, None)
    assert all(r._source is not None for r in led.records)  # (every row by its head)
    got = {k: v for r in led.records for k, v in r.extra.items() if k != "author" and k != "invocation_id"}
    assert got == {"branch": "root.a", "isolation_scope": "s9", "long_running_tool_ids": ["c1"]}
    assert [r.stop_reason for r in led.records[1:]] == ["stop", "error", "stop", "stop", "stop", "stop"]
    fast, slow = _reports(p, monkeypatch)
    assert fast == slow


# The values a rare column (branch, error code and message, isolation scope, long-running ids) may
# hold: falsy ones too (an empty text, 0, an empty blob), which the head row's flag must count as set.
RARE_VALUES: list[Any] = [None, "", 0, 0.0, b"", "x", "[]", '["c1"]', "[", 5, b"\xff"]


@pytest.mark.parametrize("seed", range(6))
def test_rare_columns_falsy_or_not_are_fetched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The head query flags a row whose rare columns hold anything but NULL (the first such value,
    `coalesce`, falsy or not): its rare columns are fetched and its event is the whole parse's,
    diagnostics and all (an empty long-running ids text is no JSON: read whole, with its diagnostic)."""
    import random

    rng = random.Random(seed)
    rows = [ev(f"e{i}", "inv", "coder" if i % 2 else "user", t(i * 0.5), text("model" if i % 2 else "user", f"m{i}")) for i in range(40)]
    path = store(str(tmp_path / "s.db"), {"s1": rows})
    con = sqlite3.connect(path)
    cols = ("branch", "error_code", "error_message", "isolation_scope", "long_running_tool_ids_json")
    values = ["", b""] if seed % 2 else RARE_VALUES[1:]  # (odd seeds: empty texts and blobs alone, the flags all empty)
    for rowid in rng.sample(range(1, 41), 12):
        col = rng.choice(cols)
        con.execute(f"UPDATE events SET {col}=? WHERE rowid=?", (rng.choice(values), rowid))
    con.execute("UPDATE events SET long_running_tool_ids_json='' WHERE rowid=3")  # (an empty text, the others NULL)
    con.commit()
    con.close()
    fast, slow = _reports(path, monkeypatch)
    assert fast == slow
    assert "long_running_tool_ids_json is not valid JSON" in fast


def test_one_part_shape_is_the_part_by_part_shape() -> None:
    """`adk_go_heads.shape` reads a content of one part without its loop: for a part of every kind
    (text, thought, signature, call, response, both, nothing) with ids, names and bodies missing,
    null, empty or set, under every role, author, error code and finish reason, it gives what the
    part-by-part `parts_shape` gives."""
    import random

    H = adk_go.H
    unset = H.UNSET
    rng = random.Random(5)
    ids, names, bodies = [unset, None, "", "c1"], [unset, None, "ls", "adk_request_credential"], [unset, None, {}, {"a": 1}]
    calls = [None, *(H.FnCall(i, n, b) for i in ids for n in names for b in bodies)]
    resps = [None, *(H.FnResponse(i, n, b) for i in ids for n in names for b in bodies)]
    finish = {"STOP": "stop", "MAX_TOKENS": "length"}.get
    for _ in range(20000):
        part = H.Part(rng.choice([None, "", "x"]), rng.choice([None, False, True]), rng.choice([None, "", "s"]), rng.choice(calls), rng.choice(resps))
        c = H.Content(rng.choice([None, "", "user", "model", "tool"]), [part])
        args = (c, rng.choice(["user", "coder", ""]), rng.random() < 0.2, rng.choice([None, "STOP", "MAX_TOKENS"]), adk_go._EXCLUDED_CALLS, finish)
        assert H.shape(*args) == H.parts_shape(*args), part


def _damaged_pascal_store(tmp_path: Path, mutations: list[tuple[str, int]]) -> Path:
    """The fuzz corpus's built adk-go-pascal store, damaged by the fuzz campaign's mutations."""
    from tests.fuzz.corpus import load_corpus
    from tests.fuzz.mutations import Context, apply

    (seed,) = [s for s in load_corpus(tmp_path / "built", kinds=("adk_go_db",))["adk_go_db"] if s.name.endswith("adk-go-pascal.db")]
    db = tmp_path / "damaged.db"
    db.write_bytes(Path(seed.path).read_bytes())
    apply(db, mutations, Context())
    return db


def test_a_store_whose_rows_a_scan_finds_but_their_rowid_does_not_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Damaged pages where a scan of the table meets a row that a lookup by its rowid does not find
    (the fuzz campaign's mutations below): the store is read as the service's own query reads it,
    by heads as whole; a row without a head was looked up by its rowid, found nothing and crashed
    the load (TypeError; found by `python -m tests.fuzz_heads`, seed 34)."""
    db = _damaged_pascal_store(tmp_path, [("row_json", 657494902), ("wrong_column_type", 652717079), ("corrupt_pages", 86486310)])
    fast, slow = _reports(str(db), monkeypatch)
    assert fast == slow
    assert len(adk_go.load(str(db), None, None).records) > 0


def test_a_store_damaged_past_the_heads_columns_is_read_up_to_the_damage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store whose page is damaged where a row's later columns lie (the fuzz campaign's flip_bytes
    860591850 on the built adk-go-pascal store: the head's columns read, the last one does not, as
    the service's own `SELECT *` does not): read by heads as read whole, the rows before the damage
    and an error naming where it is. The heads read it clean and said nothing; the whole read
    refused the store (found by `python -m tests.fuzz_heads`, seed 31)."""
    db = _damaged_pascal_store(tmp_path, [("flip_bytes", 860591850)])
    fast, slow = _reports(str(db), monkeypatch)
    assert fast == slow
    led = adk_go.load(str(db), None, None)
    (d,) = [d for d in led.diagnostics if d.problem == "damaged_database"]
    assert d.severity == "error" and "the 9 rows before the damage are read" in d.message
    assert len(led.records) > 0


def test_a_store_whose_events_have_no_timestamp_column_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store damaged so that its events table has no timestamp column (which the service orders by):
    refused with SQLite's words, by heads as read whole, where the damaged-store read (1c32797) looked
    the column up first and crashed (ValueError; found by `python -m tests.fuzz_heads`, seed 48)."""
    from inspector.formats import LoadError

    p = store(str(tmp_path / "s.db"), {"s1": [ev("u1", "inv-1", "user", t(0.5), {"role": "user", "parts": [{"text": "hi"}]})]})
    con = sqlite3.connect(p)
    con.execute("ALTER TABLE events RENAME COLUMN timestamp TO written_at")
    con.commit()
    con.close()
    for whole in (False, True):
        with monkeypatch.context() as m:
            if whole:
                m.setattr(adk_go, "_row_head", lambda n, row, ts=None: None)
            with pytest.raises(LoadError, match="no such column: timestamp"):
                adk_go.load(p, None, None)
