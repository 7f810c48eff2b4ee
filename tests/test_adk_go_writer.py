"""adk-go's write-back (inspector/formats/adk_go_writer.py) on stores built from adk-go's types
(tests/adk_go_store.py): the row adk-go's compactor writes, undone exactly, and the stores it
refuses. The real adk-go resuming such rows: tests/test_adk_go_repaired.py."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from inspector.formats import adk_go_writer, load
from inspector.formats.base import CheckpointDraft, Unwritable
from tests.adk_go_store import call, ev, export, response, store, t, text
from tests.peers import repair_campaign

ARGS = ["--strategy", "compact", "--keep-recent", "1", "--window", "8000", "--reserve", "1000"]


def _rows(casing: str = "pascal") -> list[dict[str, Any]]:
    return [
        ev("e1", "inv-1", "user", t(1), text("user", "List the files <now> & then stop"), casing=casing),
        ev("e2", "inv-1", "coder", t(2), call("c1", "ls", {"dir": "."}), casing=casing),
        ev("e3", "inv-1", "coder", t(3), response("c1", "ls", {"out": "a.py"}), casing=casing),
        ev("e4", "inv-1", "coder", t(4), text("model", "Found a.py."), casing=casing),
        ev("e5", "inv-2", "user", t(5), text("user", "Thanks"), casing=casing),
        ev("e6", "inv-2", "coder", t(6), text("model", "Welcome."), casing=casing),
    ]


def _all_rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    con = sqlite3.connect(db)
    try:
        return {tb: con.execute(f"SELECT rowid, * FROM {tb} ORDER BY rowid").fetchall() for tb in ("sessions", "events")}
    finally:
        con.close()


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


def test_a_repair_inserts_the_event_adk_gos_compactor_writes_and_undo_deletes_it(data: Path) -> None:
    db = Path(store(str(data / "s.db"), {"s1": _rows()}))
    before = _all_rows(db)
    code, _, err = repair_campaign.inspector(["repair", str(db), *ARGS, "--write"])
    assert code == 0, err
    after = _all_rows(db)
    assert after["sessions"] == before["sessions"]  # (inserted only: update_time is not moved)
    assert after["events"][:-1] == before["events"]
    con = sqlite3.connect(db)
    row = dict(zip([c[1] for c in con.execute("PRAGMA table_info(events)")], con.execute(
        "SELECT * FROM events ORDER BY rowid DESC LIMIT 1").fetchone(), strict=True))
    kinds = con.execute("SELECT typeof(actions), typeof(timestamp) FROM events ORDER BY rowid DESC LIMIT 1").fetchone()
    con.close()
    assert kinds == ("blob", "text")
    assert row["author"] == "user" and row["invocation_id"] == "e-" + row["id"] and row["content"] is None
    assert (row["partial"], row["turn_complete"], row["interrupted"], row["branch"]) == (0, 0, 0, None)
    raw = row["actions"].decode()
    assert raw.startswith('{"StateDelta":null,"ArtifactDelta":null,"RequestedToolConfirmations":null,"SkipSummarization":false')
    assert "<" not in raw and ">" not in raw and "&" not in raw  # (Go's encoder escapes them)
    comp = json.loads(raw)["compaction"]
    assert comp["startTimestamp"] == "2026-08-20T10:00:01Z"
    assert comp["compactedContent"]["role"] == "model" and comp["compactedContent"]["parts"][0]["text"]
    assert row["timestamp"] > max(r[15] for r in before["events"])  # (stream order is timestamp order)
    led = load(str(db))
    assert led.records[-1].kind == "checkpoint" and led.records[-1].id == row["id"]
    code, _, err = repair_campaign.inspector(["undo", str(db)])
    assert code == 0, err
    assert _all_rows(db) == before


def _draft(**kw: Any) -> CheckpointDraft:
    d = CheckpointDraft(
        entry_id="inspector-1", timestamp="2026-08-20T11:00:00Z", summary="[SUMMARY]", leaf_id=None,
        first_kept_id="e5", boundary_id="e4", keeps_ahead=False, represents=[["e1", "e4"]], retains=["e5", "e6"],
        shape="recent_window", failure_reason=None, tokens_before=0, budget_tokens=0, read_files=[],
        modified_files=[], usage=None, requests=1, truncated=False, essential_complete=True, producer="inspector",
    )  # fmt: skip
    return dataclasses.replace(d, **kw)


def test_events_kept_raw_inside_the_range_are_named_as_holes(tmp_path: Path) -> None:
    rows = _rows()
    rows[4]["timestamp"] = rows[3]["timestamp"]  # e5 (the tail's first) ties the last summarized event
    rows[1]["invocation_id"] = "inv-0"  # e2, kept raw ahead of the tail
    led = load(store(str(tmp_path / "s.db"), {"s1": rows}))
    ids = [r.id for r in led.records]  # (a tie has no defined order: the store's, as adk-go reads it)
    d = _draft(first_kept_id=ids[4], represents=[[ids[0], ids[3]]], retains=[ids[1], ids[4], ids[5]], keeps_ahead=True)
    (event,) = adk_go_writer.with_range(adk_go_writer.compaction_event(d), d, led)
    comp = event["actions"]["compaction"]
    assert (comp["startTimestamp"], comp["endTimestamp"]) == ("2026-08-20T10:00:01Z", "2026-08-20T10:00:04Z")
    tied = led.records[4].run_id
    assert comp["excludedEvents"] == [
        {"invocationId": "inv-0", "timestamp": "2026-08-20T10:00:02Z"},
        {"invocationId": tied, "timestamp": "2026-08-20T10:00:04Z"},
    ]
    assert event["timestamp"] == "2026-08-20T11:00:00Z"


def test_a_hole_that_would_name_a_summarized_event_too_is_refused(tmp_path: Path) -> None:
    rows = _rows()
    rows[4]["timestamp"], rows[4]["invocation_id"] = rows[3]["timestamp"], "inv-1"  # e5 = e4's reference
    led = load(store(str(tmp_path / "s.db"), {"s1": rows}))
    ids = [r.id for r in led.records]
    d = _draft(first_kept_id=ids[4], represents=[[ids[0], ids[3]]], retains=[ids[4], ids[5]])
    with pytest.raises(Unwritable, match="shares its invocation and time"):
        adk_go_writer.with_range(adk_go_writer.compaction_event(d), d, led)


def test_the_event_comes_after_every_event_of_the_session(tmp_path: Path) -> None:
    led = load(store(str(tmp_path / "s.db"), {"s1": _rows()}))
    d = _draft(timestamp="2026-08-20T09:00:00Z")  # (a clock behind the store's)
    (event,) = adk_go_writer.with_range(adk_go_writer.compaction_event(d), d, led)
    assert event["timestamp"] == "2026-08-20T10:00:06.000001Z"


def test_a_store_written_by_adk_go_main_is_refused(data: Path) -> None:
    db = Path(store(str(data / "s.db"), {"s1": _rows("camel")}))
    before = _all_rows(db)
    for how in (["--write"], ["--out", str(data / "copy.db")]):
        code, _, err = repair_campaign.inspector(["repair", str(db), *ARGS, *how])
        assert code != 0 and "camelCase" in err and "no compaction field" in err, err
    assert _all_rows(db) == before and not (data / "copy.db").exists()
    code, out, err = repair_campaign.inspector(["plan", str(db), *ARGS])  # (the plan says so too)
    assert code == 0 and "cannot be written" in out + err and "camelCase" in out + err, out + err


def test_the_json_export_is_refused(data: Path) -> None:
    f = data / "s.json"
    f.write_bytes(export(_rows()))
    for how in (["--write"], ["--out", str(data / "copy.json")]):
        code, _, err = repair_campaign.inspector(["repair", str(f), *ARGS, *how])
        assert code != 0 and "never reads an export back" in err, err
    assert f.read_bytes() == export(_rows()) and not (data / "copy.json").exists()


def test_out_writes_a_repaired_copy_and_leaves_the_store(data: Path) -> None:
    db = Path(store(str(data / "s.db"), {"s1": _rows()}))
    before = _all_rows(db)
    code, _, err = repair_campaign.inspector(["repair", str(db), *ARGS, "--out", str(data / "copy.db")])
    assert code == 0, err
    assert _all_rows(db) == before
    assert _all_rows(data / "copy.db")["events"][:-1] == before["events"]


def test_read_only_commands_take_no_digest_of_the_rows(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows' digest is what a repair compares before it writes (a second read of every row: a
    third of the load of a 100 MB store): analyze, context and plan do not take it; a load for a
    repair does, and it changes with the rows."""
    from inspector.cli.main import main
    from inspector.formats import adk_writer

    db = Path(store(str(data / "s.db"), {"s1": _rows()}))
    digested: list[Any] = []
    real = adk_writer.state_of
    monkeypatch.setattr(adk_writer, "state_of", lambda *a: (digested.append(a[1:]), real(*a))[1])
    assert load(str(db), fingerprint=False).store_state is None
    for argv in (["analyze", str(db)], ["analyze", str(db), "--json"], ["context", str(db), "--json"], ["plan", str(db), *ARGS]):
        main(argv)
    assert digested == []
    led = load(str(db))
    assert led.store_state is not None and digested
    con = sqlite3.connect(db)
    con.execute("UPDATE events SET author = 'someone' WHERE id = 'e6'")
    con.commit()
    con.close()
    assert adk_writer.state_of(sqlite3.connect(db), *digested[0]) != led.store_state
