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
from inspector.formats import adk, adk_writer, load
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
