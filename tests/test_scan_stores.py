"""Multi-session stores (issue 18 point 3): an ADK SQLite database (and OpenClaw's, maka's) holding
several sessions is one `scan` / triage row per session, `FILE#SESSION`, not one per file."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from inspector.cli.main import main
from inspector.formats import load, store_sessions
from inspector.tui.app import InspectorApp
from inspector.tui.session import SessionScreen
from inspector.tui.triage import TriageScreen
from tests.conftest import SHARED, need_shared

FIRST, SECOND = "multi_agent-session", "second-session"


def two_session_store(tmp_path: Path) -> Path:
    """ADK's multi-agent peer store with its session copied under a second id, shorter (the
    first six events), so the two rows differ."""
    src = need_shared(SHARED / "peers" / "adk" / "corpus" / "multi_agent.db")
    root = tmp_path / "adk"
    root.mkdir()
    db = root / "sessions.db"
    shutil.copyfile(src, db)
    con = sqlite3.connect(db)
    con.execute("INSERT INTO sessions SELECT app_name, user_id, ?, state, create_time, update_time + 1 FROM sessions", (SECOND,))
    con.execute(
        "INSERT INTO events SELECT id, app_name, user_id, ?, invocation_id, timestamp, event_data FROM events"
        " WHERE session_id = ? ORDER BY timestamp LIMIT 6",
        (SECOND, FIRST),
    )
    con.commit()
    con.close()
    return db


def test_a_store_of_two_sessions_is_two_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = two_session_store(tmp_path)
    assert store_sessions(str(db)) == [FIRST, SECOND]
    assert main(["scan", str(db.parent), "--json", "--no-progress"]) in (0, 1)
    rows = {r["path"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert set(rows) == {f"{db}#{FIRST}", f"{db}#{SECOND}"}
    for sid in (FIRST, SECOND):
        row = rows[f"{db}#{sid}"]
        assert row["session_id"] == sid and row["error"] is None
        assert row["records"] == len(load(f"{db}#{sid}").records)
    assert rows[f"{db}#{SECOND}"]["records"] < rows[f"{db}#{FIRST}"]["records"]
    # a re-scan takes both from the index (one file identity, two keys)
    assert main(["scan", str(db), "--json", "--no-progress"]) in (0, 1)
    assert len(capsys.readouterr().out.splitlines()) == 2
    # usage and search see each session on its own
    assert main(["usage", str(db), "--json", "--no-progress"]) == 0
    keys = {g["key"] for g in json.loads(capsys.readouterr().out)["groups"]}
    assert keys == {f"{db}#{FIRST}", f"{db}#{SECOND}"}


def test_a_one_session_store_stays_one_row_named_by_its_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = need_shared(SHARED / "peers" / "adk" / "corpus" / "multi_agent.db")
    db = tmp_path / "one.db"
    shutil.copyfile(src, db)
    assert main(["scan", str(db), "--json", "--no-progress"]) in (0, 1)
    (row,) = map(json.loads, capsys.readouterr().out.splitlines())
    assert row["path"] == str(db)


def test_the_triage_browser_lists_and_opens_each_session_of_a_store(tmp_path: Path) -> None:
    db = two_session_store(tmp_path)

    async def body() -> None:
        app = InspectorApp([str(db.parent)])
        async with app.run_test(size=(160, 40)) as pilot:
            deadline = time.monotonic() + 30
            while not (isinstance(app.screen, TriageScreen) and app.screen.finished):
                assert time.monotonic() < deadline
                await pilot.pause(0.02)
            screen = app.screen
            assert isinstance(screen, TriageScreen)
            assert set(screen.rows) == {f"{db}#{FIRST}", f"{db}#{SECOND}"}
            assert all(r.error is None for r in screen.rows.values())
            screen._open(f"{db}#{SECOND}")
            while not (isinstance(app.screen, SessionScreen) and app.screen.report is not None):
                assert time.monotonic() < deadline
                await pilot.pause(0.02)
            await pilot.pause(0.2)
            view = app.screen
            assert view.ledger is not None and view.ledger.session_id == SECOND  # type: ignore[attr-defined]

    asyncio.run(body())


def test_openclaw_and_maka_stores_list_each_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.maka_store import Session, write
    from tests.test_maka import two_turns
    from tests.test_openclaw import _chat, _store

    (tmp_path / "claw").mkdir()
    claw = _store(tmp_path / "claw" / "openclaw-agent.sqlite", {"s1": _chat("s1"), "s2": _chat("s2", 3)})
    assert store_sessions(str(claw)) == ["s1", "s2"]
    (tmp_path / "maka").mkdir()
    a, p = two_turns(tmp_path / "maka")
    b = Session(sid="s2", t=a.t + 10_000)
    b.run("rb", "tb")
    b.user("ub", "rb", "other session")
    write(p, a, b)
    assert store_sessions(p) == ["s1", "s2"]
    assert main(["scan", str(claw), p, "--json", "--no-progress"]) in (0, 1)
    paths = [json.loads(line)["path"] for line in capsys.readouterr().out.splitlines()]
    assert paths == [f"{claw}#s1", f"{claw}#s2", f"{p}#s1", f"{p}#s2"]


def _indexed_keys() -> set[str]:
    from inspector.store.index import SessionIndex

    with SessionIndex() as index:
        return {k for (k,) in index.db.execute("SELECT real_path FROM sessions")}


def _orphans() -> int:
    """Usage and search rows whose session row is gone."""
    from inspector.store.index import SessionIndex

    with SessionIndex() as index:
        u = index.db.execute("SELECT count(*) FROM usage WHERE session NOT IN (SELECT id FROM sessions)").fetchone()[0]
        d = index.db.execute("SELECT count(*) FROM doc_meta WHERE session NOT IN (SELECT id FROM sessions)").fetchone()[0]
        return u + d


def test_sessions_deleted_from_a_store_leave_the_index_when_it_is_read_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    db = two_session_store(tmp_path)
    con = sqlite3.connect(db)
    con.execute("INSERT INTO sessions SELECT app_name, user_id, 'third', state, create_time, update_time + 2 FROM sessions"
                " WHERE id = ?", (SECOND,))
    con.execute("INSERT INTO events SELECT id, app_name, user_id, 'third', invocation_id, timestamp, event_data FROM events"
                " WHERE session_id = ?", (SECOND,))
    con.commit()
    assert main(["scan", str(db), "--json", "--no-progress"]) in (0, 1)
    capsys.readouterr()
    real = str(db.resolve())
    assert _indexed_keys() == {f"{real}#{FIRST}", f"{real}#{SECOND}", f"{real}#third"}

    con.execute("DELETE FROM events WHERE session_id = ?", (SECOND,))
    con.execute("DELETE FROM sessions WHERE id = ?", (SECOND,))
    con.commit()
    assert main(["scan", str(db), "--json", "--no-progress"]) in (0, 1)
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert _indexed_keys() == {f"{real}#{FIRST}", f"{real}#third"}  # the deleted session's row is gone
    assert _orphans() == 0  # and its usage and searchable text with it

    con.execute("DELETE FROM events WHERE session_id = 'third'")
    con.execute("DELETE FROM sessions WHERE id = 'third'")
    con.commit()
    con.close()
    assert main(["scan", str(db), "--json", "--no-progress"]) in (0, 1)
    (row,) = map(json.loads, capsys.readouterr().out.splitlines())
    assert row["path"] == str(db)  # one session left: the store is one row named by its file
    assert _indexed_keys() == {real}
    assert _orphans() == 0
