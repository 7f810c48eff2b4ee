"""Damaged ADK stores (issue 11): a bad row is a diagnostic naming the row and event id with its
bytes escaped, the other rows load; a corrupt page, a dropped table, wrong column types, a
locked database and a write-ahead log are a clear LoadError or diagnostic, never a traceback;
reading never changes the database, its -wal or its -shm. And a dump's events are named by line."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.formats import LoadError, load
from tests.bad_input_seeds import SEEDS
from tests.conftest import need_shared

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "peers" / "adk" / "corpus"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    src = need_shared(CORPUS / "token_threshold.db")
    out = tmp_path / "session.db"
    shutil.copyfile(src, out)
    out.chmod(0o644)
    return out


def _events(path: Path) -> int:
    with sqlite3.connect(path) as con:
        return con.execute("SELECT count(*) FROM events").fetchone()[0]


def _cli(path: Path) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([sys.executable, "-m", "inspector", "analyze", str(path)], capture_output=True, text=True, check=False)
    assert "Traceback" not in p.stderr + p.stdout, p.stderr
    assert p.returncode in (0, 1, 2)
    return p


def _no_raw_bytes(text: str) -> None:
    assert not any(c in text for c in "\x00\x1b\x07\x08") and "\ufffd" not in text, text


def test_a_row_of_invalid_utf8_is_that_rows_diagnostic(db: Path) -> None:
    n = _events(db)
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT rowid, id, event_data FROM events ORDER BY timestamp LIMIT 2 OFFSET 2").fetchall()
        (rowid, eid, data), (rowid2, _, data2) = rows
        bad = data.encode().replace(b'"author"', b'"auth\xffor"', 1)  # a bad byte in a string: read
        worse = data2.encode().replace(b'"author"', b'"auth\xff\x1b[31m\x00or"', 1)  # raw controls: not JSON
        con.execute("UPDATE events SET event_data = CAST(? AS TEXT) WHERE rowid = ?", (bad, rowid))
        con.execute("UPDATE events SET event_data = CAST(? AS TEXT) WHERE rowid = ?", (worse, rowid2))
    led = load(str(db))
    assert len(led.records) == n - 1  # only the row that is not JSON is skipped
    read, skipped = [d for d in led.diagnostics if d.problem == "malformed_row"]
    assert f"row 3 (rowid {rowid}, event id {eid!r})" in read.message and "invalid UTF-8" in read.message
    assert "row 4 (rowid" in skipped.message and skipped.message.endswith("event skipped")
    for d in (read, skipped):
        _no_raw_bytes(d.message)
    p = _cli(db)
    _no_raw_bytes(p.stdout + p.stderr)


def test_wrong_column_types_are_row_diagnostics(db: Path) -> None:
    n = _events(db)
    with sqlite3.connect(db) as con:
        rows = [r[0] for r in con.execute("SELECT rowid FROM events ORDER BY timestamp")]
        con.execute("UPDATE events SET event_data = 42 WHERE rowid = ?", (rows[1],))
        con.execute("UPDATE events SET event_data = x'00ff1b' WHERE rowid = ?", (rows[2],))
    led = load(str(db))
    assert len(led.records) == n - 2
    bad = [d for d in led.diagnostics if d.problem == "malformed_row"]
    assert [d.line for d in bad] == [2, 3] and "not a JSON object" in bad[0].message
    for d in bad:
        _no_raw_bytes(d.message)
    _cli(db)


def test_a_later_diagnostic_names_the_event_by_its_number_row_rowid_and_id(db: Path) -> None:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT rowid, id, event_data FROM events ORDER BY timestamp").fetchall()
        con.execute("UPDATE events SET event_data = 42 WHERE rowid = ?", (rows[1][0],))  # skipped: not an event
        for (rowid, _, data), change in ((rows[3], {"author": 5}), (rows[4], {"timestamp": True})):
            con.execute("UPDATE events SET event_data = ? WHERE rowid = ?", (json.dumps({**json.loads(data), **change}), rowid))
    msgs = [d.message for d in load(str(db)).diagnostics if d.problem != "malformed_row"]
    for event, (rowid, eid, _), what in ((3, rows[3], "author"), (4, rows[4], "timestamp")):
        place = f"event {event} (row {event + 1} (rowid {rowid}, event id {eid!r}))"
        assert any(place in m and what in m for m in msgs), (place, msgs)


def test_a_corrupt_page_keeps_what_comes_before_it_or_says_why(db: Path) -> None:
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    for at in range(len(data) // page - 2, len(data) // page):  # the last pages: events rows
        data[at * page : (at + 1) * page] = bytes([0xA5]) * page
    db.write_bytes(bytes(data))
    try:
        led = load(str(db))
    except LoadError as e:
        assert str(db) in str(e) and ("malformed" in str(e) or "damaged" in str(e) or "not a database" in str(e))
    else:
        assert any(d.problem in ("damaged_database", "malformed_row") for d in led.diagnostics)
    _cli(db)


def test_a_dropped_table_is_a_load_error(db: Path) -> None:
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE events")
    with pytest.raises(LoadError, match="no sessions/events tables"):
        load(str(db))
    assert _cli(db).returncode == 2


def _snapshot(db: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in db.parent.iterdir() if p.name.startswith(db.name)}


def test_a_locked_database_is_read_and_said_locked_and_not_changed(db: Path) -> None:
    n = _events(db)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("DELETE FROM events")  # uncommitted: a hot -journal beside the file
        before = _snapshot(db)
        led = load(str(db))
        assert len(led.records) >= 1
        assert any(d.problem == "sqlite_locked" and "locked" in d.message for d in led.diagnostics)
        assert _snapshot(db) == before
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert _events(db) == n


def test_a_write_ahead_log_is_read_and_nothing_is_changed(db: Path) -> None:
    n = _events(db)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("DELETE FROM events WHERE rowid = (SELECT max(rowid) FROM events)")  # only in the -wal
        before = _snapshot(db)
        assert (db.parent / (db.name + "-wal")).stat().st_size > 0
        led = load(str(db))
        assert len(led.records) == n - 1  # the log's commit is seen
        assert any(d.problem == "sqlite_wal" for d in led.diagnostics)
        assert _snapshot(db) == before  # database, -wal and -shm byte for byte
    finally:
        writer.close()


def test_a_dump_names_each_bad_event_by_its_line(tmp_path: Path) -> None:
    dump = json.loads(json.dumps(SEEDS["adk"]))
    dump["events"][2]["author"] = {"\x1b[2J": 1}
    dump["events"][3]["timestamp"] = "\x1b[31mnot a time"
    f = tmp_path / "s.json"
    text = json.dumps(dump, indent=1)
    f.write_text(text)
    led = load(str(f))
    assert len(led.records) == len(SEEDS["adk"]["events"])  # the bad events are kept, the rest loads
    lines = text.splitlines()
    starts = [i + 1 for i, ln in enumerate(lines) if ln == "  {"]  # each event's opening line
    by_problem = {d.problem: d.message for d in led.diagnostics}
    assert f"event 3 (line {starts[2]})" in by_problem["wrong_type"]
    assert f"event 4 (line {starts[3]})" in by_problem["invalid_field"]
    for m in by_problem.values():
        _no_raw_bytes(m)


def test_a_schema_python_cannot_decode_is_a_load_error(tmp_path: Path) -> None:
    """Found by the fuzzer (seed 7): SQLite's message quotes a damaged schema that is not UTF-8,
    and Python raised UnicodeDecodeError instead of a database error."""
    from tests.fuzz import mutations

    src = need_shared(CORPUS / "retention_zero.v1.db")
    db = tmp_path / "retention_zero.v1.db"
    shutil.copyfile(src, db)
    db.chmod(0o644)
    mutations.apply(db, [("corrupt_pages", 714015450)], mutations.Context())
    with pytest.raises(LoadError, match="could not be read"):
        load(str(db))
    _cli(db)


@pytest.mark.parametrize("store", ["token_threshold.db", "tie_token.v1.db", "retention_zero.db"])
def test_long_running_ids_that_are_not_strings_name_no_call(store: str, tmp_path: Path) -> None:
    """`long_running_tool_ids` members that are not strings (a list, an object, a number, null) name
    no call: the analysis reads the strings beside them, as if those were all (it raised
    `TypeError: unhashable type: 'list'` in the next request's pass). (google-adk's SqliteSessionService
    refuses such a session whole, its Event model taking strings only, events/event.py:119: each
    row says so, and the rest is read as before.)"""
    from inspector.analysis import analyze
    from inspector.analysis.export import analyze_json, context_json

    def with_ids(extra: list) -> bytes:
        out = tmp_path / "session.db"  # (the same file each time: the outputs name it)
        shutil.copyfile(need_shared(CORPUS / store), out)
        with sqlite3.connect(out) as con:
            for rowid, data in con.execute("SELECT rowid, event_data FROM events").fetchall():
                o = json.loads(data)
                o["long_running_tool_ids"] = ["lr-none", *extra]
                con.execute("UPDATE events SET event_data = ? WHERE rowid = ?", (json.dumps(o), rowid))
        led = load(str(out))
        refused = [d for d in led.diagnostics if d.problem == "resume_refused"]
        assert len(refused) == (len(led.records) if extra and not store.endswith(".v1.db") else 0)
        led.diagnostics = [d for d in led.diagnostics if d.problem != "resume_refused"]
        rep = analyze(led)
        rep.ensure_tokens()
        assert _cli(out).returncode in (0, 1)
        return json.dumps([analyze_json(rep), context_json(rep)], sort_keys=True).encode()

    plain = with_ids([])
    assert with_ids([["c1"], {"a": 1}, 3, None, True]) == plain


def test_an_event_id_is_quoted_as_the_session_query_reads_it_where_the_index_holds_another() -> None:
    """A SqliteSessionService store whose primary-key index holds another copy of an event's id
    than its table does (`python -m tests.fuzz_heads`, seed 686 case 2298: a flipped byte; tests/
    data/adk/index_damaged_id.db is that store), and that event refused: the session's query reads
    the id from the index (a covering read), as ADK's does, and the read from the rows' heads
    quoted the table's copy. Both reads name the event alike now."""
    from tests.fuzz_heads import WHOLE

    f = Path(__file__).parent / "data" / "adk" / "index_damaged_id.db"
    heads, whole = load(str(f), fingerprint=False), WHOLE["adk_db"](f, None)
    assert [d.message for d in heads.diagnostics] == [d.message for d in whole.diagnostics]
    (refusal,) = [d.message for d in heads.diagnostics if d.problem == "resume_refused" and "row 3" in d.message]
    assert "event id '108fe494-aa88-4afd-9a40,b16a3d834976'" in refusal  # (the index's copy; the table has '-' for ',')


def test_a_damaged_index_page_of_the_keys_fails_the_read_from_the_heads_as_the_whole_read() -> None:
    """A DatabaseSessionService store whose session index is damaged where the ids are
    (`python -m tests.fuzz_heads`, seed 842 case 180: a flipped byte; tests/data/adk/
    index_damaged_key.v1.db is that store): the session's query, reading each row's timestamp and
    id from that index as ADK's does, fails after 25 rows; the read from the rows' heads fetched
    neither column and read all 44. It reads them now where the query does, and fails alike."""
    from tests.fuzz_heads import WHOLE

    f = Path(__file__).parent / "data" / "adk" / "index_damaged_key.v1.db"
    heads, whole = load(str(f), fingerprint=False), WHOLE["adk_db"](f, None)
    assert len(heads.records) == len(whole.records) == 25
    assert [(d.line, d.problem, d.message) for d in heads.diagnostics] == [(d.line, d.problem, d.message) for d in whole.diagnostics]
    assert [d.problem for d in heads.diagnostics] == ["damaged_database"]
