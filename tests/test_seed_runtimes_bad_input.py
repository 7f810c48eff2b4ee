"""What the fuzz campaign over the seeds' runtimes (tests/fuzz/seeds.py) found, one test per root
cause: every diagnostic names the line, row or event it is about (issue 11's contract)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from inspector.formats import load
from tests.adk_go_store import export
from tests.fuzz.seeds import go_events


def _named(message: str, line: int) -> bool:
    return re.search(rf"\b(line|row|event)s? {line}\b", message) is not None


def test_adk_go_export_diagnostics_name_the_event_and_its_line(tmp_path: Path) -> None:
    events = json.loads(export(go_events("camel")))
    events.insert(1, 7)  # a non-object: every later event is one further on
    events[3]["timestamp"] = [1, "a"]  # not a time: skipped
    events[5]["content"]["parts"][0]["text"] = 12  # a wrong type: read without it
    p = tmp_path / "export.json"
    p.write_text(json.dumps(events, indent=1))
    led = load(str(p))
    diags = [d for d in led.diagnostics if d.line]
    assert {2, 4, 6} <= {d.line for d in diags}, [d.message for d in diags]
    for d in diags:
        assert _named(d.message, d.line), d.message
    text_lines = p.read_text().splitlines()
    bad_time = next(d for d in diags if d.line == 4)
    line = int(re.search(r"\(line (\d+)\)", bad_time.message).group(1))
    assert text_lines[line - 1].strip() == "{", (line, bad_time.message)  # where event 4 starts
    assert '"timestamp": [' in "\n".join(text_lines[line - 1 : line + 12])
    # The records keep their place in the export (what `--at N` counts), not their place among
    # the events read: the one after the skipped event 4 is event 5.
    assert [r.line for r in led.records][:3] == [1, 3, 5], [r.line for r in led.records]


def test_adk_go_refused_request_names_the_last_event(tmp_path: Path) -> None:
    from tests.adk_go_store import ev, response, store, t, text

    rows = [
        ev("u1", "inv-1", "user", t(1), text("user", "x")),
        ev("bad", "inv-1", "coder", t(1.5), None, raw_actions=b"\x80pickle"),  # its row stays, its actions not
        ev("r1", "inv-1", "coder", t(3), response("zz", "ls", {})),
    ]
    led = load(store(str(tmp_path / "s.db"), {"s1": rows}))
    refused = next(d for d in led.diagnostics if d.problem == "request_refused")
    assert refused.line == 3 and _named(refused.message, 3), refused.message


def test_maka_checkpoint_row_with_a_text_sequence_is_read(tmp_path: Path) -> None:
    import sqlite3

    from inspector.analysis import analyze
    from tests.fuzz.seeds import _maka_two_turns
    from tests.maka_store import write

    p = write(str(tmp_path / "runtime.sqlite"), _maka_two_turns(2))
    con = sqlite3.connect(p)
    con.execute("UPDATE core_agent_run_events SET sequence = '{}'")  # the CHECK (sequence >= 0) lets text in
    con.commit()
    con.close()
    led = load(p)
    assert any(d.problem == "malformed_row" and "sequence is a string" in d.message for d in led.diagnostics)
    assert analyze(led).checkpoints  # the checkpoint is still read


def test_maka_event_rows_without_a_text_session_id_are_named_and_skipped(tmp_path: Path) -> None:
    import sqlite3

    from tests.fuzz.seeds import _maka_two_turns
    from tests.maka_store import write

    p = write(str(tmp_path / "runtime.sqlite"), _maka_two_turns(2))
    con = sqlite3.connect(p)
    con.execute("PRAGMA ignore_check_constraints = 1")
    con.execute("PRAGMA writable_schema = 1")  # NOT NULL holds in a healthy store; a damaged page does not
    con.execute("UPDATE sqlite_master SET sql = replace(sql, 'session_id TEXT NOT NULL', 'session_id TEXT') WHERE name = 'runtime_events'")
    con.commit()
    con.close()
    con = sqlite3.connect(p)
    con.execute("UPDATE runtime_events SET session_id = NULL WHERE event_id = 'u2'")
    con.execute("UPDATE runtime_events SET session_id = 7 WHERE event_id = 'a2'")
    con.commit()
    con.close()
    led = load(p)
    bad = next(d for d in led.diagnostics if d.problem == "malformed_row")
    assert "have no text session_id" in bad.message and "rowid" in bad.message, bad.message
    assert "u1" in {r.id for r in led.records} and not {"u2", "a2"} & {r.id for r in led.records}


def test_a_record_type_that_is_an_object_names_no_format(tmp_path: Path) -> None:
    """NextClaw's legacy store line with `type` an object went to Codex's damaged-line test (a set
    lookup of a dict); it is refused as an unknown format, naming the line."""
    import pytest

    from inspector.formats import LoadError

    p = tmp_path / "legacy.jsonl"
    p.write_text('{"_type": "event", "seq": 2, "type": {"type": "x"}, "timestamp": "2026-08-20T09:00:02.000Z", "data": {}}\n')
    with pytest.raises(LoadError, match=r"line 1: not a session ledger"):
        load(str(p))


def test_maka_stale_session_index_is_named_not_a_crash(tmp_path: Path) -> None:
    """The session index says NULL where the table says 's1' (a damaged store, as a flipped byte
    left one): the session choice reads only text ids and says so."""
    import sqlite3

    from tests.fuzz.seeds import _maka_two_turns
    from tests.maka_store import write

    p = write(str(tmp_path / "runtime.sqlite"), _maka_two_turns(2))
    con = sqlite3.connect(p)
    con.execute("PRAGMA writable_schema = 1")
    con.execute("UPDATE sqlite_master SET sql = replace(sql, 'session_id TEXT NOT NULL', 'session_id TEXT') WHERE name = 'runtime_events'")
    con.commit()
    con.close()
    con = sqlite3.connect(p)
    con.execute("UPDATE runtime_events SET session_id = NULL WHERE event_id = 'u2'")  # the index holds NULL
    con.commit()
    index = con.execute("SELECT * FROM sqlite_master WHERE name = 'runtime_events_by_session'").fetchone()
    con.execute("PRAGMA writable_schema = 1")
    con.execute("DELETE FROM sqlite_master WHERE name = 'runtime_events_by_session'")  # hidden: not updated
    con.commit()
    con.close()
    con = sqlite3.connect(p)
    con.execute("UPDATE runtime_events SET session_id = 's1' WHERE event_id = 'u2'")
    con.execute("PRAGMA writable_schema = 1")
    con.execute("INSERT INTO sqlite_master VALUES (?,?,?,?,?)", index)
    con.commit()
    con.close()
    led = load(p)
    assert any(d.problem == "malformed_row" and "no text session_id" in d.message for d in led.diagnostics)


# ---------------------------------------------------------------------------------------- fuzz seed 10


def _legacy_lines(n: int, name: object = "ls") -> list[str]:
    from tests.nextclaw_store import LegacyStore

    s = LegacyStore()
    s.call("c1", name, {})  # type: ignore[arg-type]
    s.result("c1", "ls", "a b")
    for i in range(n):
        s.add("assistant" if i % 2 else "user", f"turn {i}")
    return s.lines()


def test_a_legacy_tool_call_whose_name_is_not_text_is_no_crash(tmp_path: Path) -> None:
    """A NextClaw legacy store's tool call named by a number crashed `simulate` (len of a float)."""
    from inspector.cli.main import main

    f = tmp_path / "agent_main_s1.jsonl"
    f.write_text("\n".join(_legacy_lines(4, name=3.5)) + "\n")
    led = load(str(f))
    calls = [b for r in led.records if r.message for b in r.message.blocks if b.type == "tool_call"]
    assert calls and calls[0].name is None
    assert main(["simulate", "--policy", "recorded", "--json", str(f)]) == 2  # no policy recorded, said so
    assert main(["simulate", "--policy", "pi", "--json", str(f)]) in (0, 1, 2)


def test_messages_outside_the_history_window_are_placed_at_their_first_line(tmp_path: Path) -> None:
    """Events are sent in seq order, not file order: the diagnostic's line is the first line of
    the messages it names (it named the first by seq, outside the range its text gave)."""
    lines = _legacy_lines(60)
    f = tmp_path / "agent_main_s1.jsonl"
    f.write_text("\n".join([lines[0], *reversed(lines[1:])]) + "\n")
    d = next(d for d in load(str(f)).diagnostics if d.problem == "outside_history_window")
    assert _named(d.message, d.line) and f"(lines {d.line}–" in d.message


def test_a_journal_cut_before_its_first_event_names_one_line(tmp_path: Path) -> None:
    """`--at 2` on a journal whose events start later: "line 1: ... up to line 2" named two lines.
    (It reads as the empty session NextClaw starts there, its note naming line 2 alone.)"""
    from tests.nextclaw_store import Journal, message, ts

    f = Journal().sent(message("m1", "user", "question", ts(1))).write(tmp_path)
    lines = f.read_text().splitlines()
    f.write_text("\n".join([lines[0], '{"_type": "note"}', *lines[1:]]) + "\n")
    led = load(str(f), fmt="nextclaw", upto_line=2)
    said = [d.message for d in led.diagnostics if d.problem == "empty_session"]
    assert led.records == [] and len(said) == 1, led.diagnostics
    assert len(set(re.findall(r"\bline (\d+)", said[0]))) == 1 and "line 2" in said[0], said[0]
