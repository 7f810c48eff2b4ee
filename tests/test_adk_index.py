"""ADK loads index first (issue 15): what only some readers need is worked out when first asked for,
and is then exactly what the eager load made."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from inspector.analysis import analyze
from inspector.formats import adk, adk_writer, bounded, load
from tests.conftest import SHARED, need_shared

CORPUS = SHARED / "peers" / "adk" / "corpus"


def _dump_events(path: Path) -> list[dict[str, Any]]:
    return [e for e in json.loads(path.read_text())["events"] if isinstance(e, dict)]


@pytest.mark.parametrize("scenario", ["multi_agent", "token_threshold", "sliding_window"])
def test_sizes_are_counted_only_when_the_extra_is_read(scenario: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading and analysing counts no content size; reading a record's extra then gives what the
    eager count gives, key for key and in the same order."""
    need_shared(CORPUS)
    path = CORPUS / f"{scenario}.json"
    counted: list[int] = []
    real = adk._serialized_chars
    monkeypatch.setattr(adk, "_serialized_chars", lambda c: counted.append(1) or real(c))
    led = load(str(path))
    analyze(led)
    assert counted == [], "the load or the analysis counted a content size"
    events = _dump_events(path)
    assert len(events) == len(led.records)
    for rec, o in zip(led.records, events, strict=True):
        c = (o.get("actions") or {}).get("compaction")
        summary = c.get("compacted_content") if isinstance(c, dict) else None
        want = adk._record_extra(o, summary)
        assert list((rec.extra or {}).items()) == list(want.items()), rec
    assert counted, "no record had content to count"
    assert any("counted_chars_as_context" in (r.extra or {}) for r in led.records)


def test_event_fields_leave_the_sizes_uncounted() -> None:
    need_shared(CORPUS)
    led = load(str(CORPUS / "multi_agent.db"))
    rec = next(r for r in led.records if r.kind == "message")
    fields = adk.event_fields(rec)
    assert "content_chars" not in fields and fields["author"]
    assert rec.extra is not None and rec.extra["content_chars"] > 0
    assert adk.event_fields(rec) is rec.extra  # once read, the extra itself
    # The sizes sit where the eager load put them: after the event's own fields, before its actions.
    acted = next(r for r in led.records if "actions" in adk.event_fields(r) and r.kind == "message")
    keys = list(acted.extra or {})
    assert keys[-4:] == ["content_chars", "counted_chars", "counted_chars_as_context", "actions"]


def test_store_digest_tells_a_changed_row_and_not_a_reread(tmp_path: Path) -> None:
    """The digest a repair compares: the same rows give the same digest however often they are
    read; one byte changed in one row's event_data gives another."""
    need_shared(CORPUS)
    db = tmp_path / "s.db"
    db.write_bytes((CORPUS / "multi_agent.db").read_bytes())
    led = load(str(db))
    key = ((led.header or {})["app_name"], (led.header or {})["user_id"], led.session_id)
    con = sqlite3.connect(db)
    try:
        assert adk_writer.state_of(con, *key) == led.store_state == adk_writer.state_of(con, *key)
        rowid, data = con.execute("SELECT rowid, event_data FROM events ORDER BY rowid DESC LIMIT 1").fetchone()
        o = orjson.loads(data)
        o["author"] = o["author"] + "x"
        con.execute("UPDATE events SET event_data=? WHERE rowid=?", (orjson.dumps(o).decode(), rowid))
        con.commit()
        assert adk_writer.state_of(con, *key) != led.store_state
    finally:
        con.close()



def test_only_repair_digests_the_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows' digest is what a repair compares (issue 15: it cost as much as reading the rows):
    a read-only command (analyze, context, plan) does not take it, `repair` does and still
    refuses a store whose rows changed since."""
    from inspector.cli.main import main

    need_shared(CORPUS)
    db = tmp_path / "s.db"
    db.write_bytes((CORPUS / "multi_agent.db").read_bytes())
    digested: list[Any] = []
    real = adk_writer.state_of
    monkeypatch.setattr(adk_writer, "state_of", lambda *a: (digested.append(a[1:]), real(*a))[1])
    assert load(str(db), fingerprint=False).store_state is None
    for argv in (["analyze", str(db)], ["analyze", str(db), "--json"], ["context", str(db), "--json"]):
        main(argv)
    main(["plan", str(db), "--strategy", "recover"])
    assert digested == []
    led = load(str(db))
    assert led.store_state is not None and len(digested) == 1
    con = sqlite3.connect(db)
    try:
        assert adk_writer.state_of(con, *digested[0]) == led.store_state
    finally:
        con.close()

def _big_dump(tmp_path: Path, extra_event: dict[str, Any] | None = None) -> Path:
    """The multi_agent dump with its events repeated past `bounded.LARGE_LINE_BYTES`."""
    dump = json.loads((CORPUS / "multi_agent.json").read_text())
    events = dump["events"]
    size = len(orjson.dumps(events))
    dump["events"] = [dict(e, id=f"{e.get('id')}-{n}") for n in range(bounded.LARGE_LINE_BYTES // size + 1) for e in events]
    if extra_event is not None:
        dump["events"].append(extra_event)
    path = tmp_path / "big.json"
    path.write_bytes(orjson.dumps(dump, option=orjson.OPT_INDENT_2))
    assert bounded.is_large(path.read_bytes())
    return path


def test_a_big_dump_nothing_would_cut_is_read_in_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dump over the large-line size whose events are all small is what bounding would read, read
    without bounding's passes (which found nothing to cut)."""
    need_shared(CORPUS)
    path = _big_dump(tmp_path)
    data = path.read_bytes()
    assert adk._dump_loads(data) == bounded.loads(data)

    def no_bounding(raw: Any) -> Any:
        raise AssertionError("bounded read")

    monkeypatch.setattr(bounded, "loads_bounded", no_bounding)
    led = load(str(path))
    assert len(led.records) == len(json.loads(data)["events"])


def test_a_big_dump_with_a_list_to_cut_is_still_cut(tmp_path: Path) -> None:
    need_shared(CORPUS)
    many = {"id": "many", "author": "user", "timestamp": 1e9, "content": {"role": "user", "parts": [{"text": "x"}] * (bounded.MAX_ITEMS + 5)}}
    path = _big_dump(tmp_path, many)
    data = path.read_bytes()
    got, cuts = adk._dump_loads(data)
    assert (got, cuts) == bounded.loads(data) and cuts
    led = load(str(path))
    assert any(d.problem == "large_value" for d in led.diagnostics)


def test_a_dump_finds_an_events_line_only_for_a_diagnostic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where each event of a dump starts is looked for only when a diagnostic names one, and then
    the line is the event's own."""
    need_shared(CORPUS)
    looked: list[int] = []
    real = adk.event_lines
    monkeypatch.setattr(adk, "event_lines", lambda data, n: looked.append(n) or real(data, n))
    dump = json.loads((CORPUS / "multi_agent.json").read_text())
    path = tmp_path / "clean.json"
    path.write_text(json.dumps(dump, indent=1))
    load(str(path))
    assert looked == []
    dump["events"][3]["author"] = 7
    dump["events"].insert(5, "not an event")
    path.write_text(json.dumps(dump, indent=1))
    led = load(str(path))
    assert looked == [len(dump["events"])]
    lines = path.read_text().splitlines()
    for d in led.diagnostics:
        line = int(d.message.split("(line ", 1)[1].split(")", 1)[0])
        assert lines[line - 1].strip() in ("{", '"not an event",'), d.message
    assert {d.problem for d in led.diagnostics} >= {"malformed_event", "wrong_type"}
