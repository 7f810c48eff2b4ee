"""The database write-back layer (inspector/store/dbwrite.py; DESIGN §5 for databases; issue 14 §5):
locked stores, unknown schemas, rows that changed since the analysis, backup, take-back and undo,
in rollback-journal and WAL stores. Exercised on copies of real ADK stores."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.compaction.entries import WriteError
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.formats import load
from inspector.providers import make_provider
from inspector.store import dbwrite
from inspector.store.writeback import DamagedBackup, VerifyError, backup_entries, install, undo
from tests.conftest import SHARED

CORPUS = SHARED / "peers" / "adk" / "corpus"
ARGS = ["--strategy", "compact", "--keep-recent", "400", "--window", "8000", "--reserve", "1000"]


@pytest.fixture(autouse=True)
def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture(params=["token_threshold.db", "token_threshold.v1.db"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    src = CORPUS / request.param
    assert src.exists(), f"the ADK peer corpus is missing {src}"
    f = tmp_path / request.param
    shutil.copyfile(src, f)
    os.chmod(f, 0o644)
    return f


def _rows(f: Path) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f)
    try:
        return con.execute("SELECT rowid, id, timestamp, event_data FROM events ORDER BY rowid").fetchall()
    finally:
        con.close()


def _built(f: Path) -> tuple[Any, Any]:
    report = analyze(load(str(f)), window=8000, reserve=1000)
    p = plan(report, "compact", Budgets(window=8000, reserve=1000, keep_recent=400))
    res = repair(p, make_provider("extractive", model=None, base_url=None))
    assert res.entry is not None
    return report, res


def _sql(f: Path, *statements: str) -> None:
    """Statements run on the store and committed (what another program does to it)."""
    con = sqlite3.connect(f)
    try:
        for stmt in statements:
            con.execute(stmt)
        con.commit()
    finally:
        con.close()


def _append_foreign_event(f: Path) -> None:
    """What the agent does: one more event row in the session."""
    con = sqlite3.connect(f)
    try:
        rid, app, user, sid, inv, ts, data = con.execute(
            "SELECT id, app_name, user_id, session_id, invocation_id, timestamp, event_data FROM events ORDER BY rowid DESC LIMIT 1"
        ).fetchone()
        con.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)", ("agent-" + rid, app, user, sid, inv, ts, data))
        con.commit()
    finally:
        con.close()


def test_install_backs_up_inserts_and_undo_deletes_exactly_our_rows(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _rows(store)
    assert main(["repair", str(store), *ARGS, "--write"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    after = _rows(store)
    assert after[: len(before)] == before and len(after) == len(before) + 1
    (b,) = backup_entries(str(store))
    assert isinstance(b, dbwrite.DbBackup) and [r.rowid for r in b.rows] == [after[-1][0]]
    assert _rows(Path(b.path)) == before  # SQLite's online backup: the store as it was
    assert main(["backups", str(store)]) == 0
    assert "inserted 1 row into events" in capsys.readouterr().out
    assert main(["undo", str(store)]) == 0
    assert "deleted the rows" in capsys.readouterr().out
    assert _rows(store) == before
    assert main(["undo", str(store)]) == 2  # nothing left to undo
    assert "no backup to restore" in capsys.readouterr().err


def test_wal_store(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    con = sqlite3.connect(store)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    con.close()
    before = _rows(store)
    assert main(["repair", str(store), *ARGS, "--write"]) == 0, capsys.readouterr().err
    assert len(_rows(store)) == len(before) + 1
    assert main(["undo", str(store)]) == 0
    assert _rows(store) == before


def test_locked_store_is_refused_with_the_reason(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _rows(store)
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the running app, mid-write
    try:
        assert main(["repair", str(store), *ARGS, "--write"]) == 2
        err = capsys.readouterr().err
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "another connection holds a write lock" in err and "database is locked" in err and "nothing written" in err
    assert _rows(store) == before and backup_entries(str(store)) == []


def test_rows_the_store_refuses_leave_no_backup(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by `python -m tests.fuzz_write` (seed 4, case 870: a damaged OpenClaw page): the store
    refused the rows, the transaction rolled back, and the backup taken just before stayed in the
    data dir without its sidecar. Here a trigger refuses them: nothing is written and no file of
    that write is left."""
    _sql(store, "CREATE TRIGGER no_more BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'store full'); END")
    before = _rows(store)
    assert main(["repair", str(store), *ARGS, "--write"]) == 2
    assert "the store refused the rows (store full); nothing written" in capsys.readouterr().err
    assert _rows(store) == before and backup_entries(str(store)) == []
    assert [p for p in (tmp_path / "data").rglob("*") if p.is_file()] == []


def test_an_undo_the_store_fails_is_an_error_that_changes_nothing(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by `python -m tests.fuzz_write` (seed 7, case 2363: the rows to delete on a damaged
    OpenClaw page): a traceback. Here a trigger refuses the delete: a message, the rows as they were,
    and the write still open, so `undo` takes it back once the store lets it."""
    before = _rows(store)
    assert main(["repair", str(store), *ARGS, "--write"]) == 0, capsys.readouterr().err
    written = _rows(store)
    _sql(store, "CREATE TRIGGER keep BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'disk I/O'); END")
    capsys.readouterr()
    assert main(["undo", str(store)]) == 2
    err = capsys.readouterr().err
    assert "the store failed (disk I/O); its transaction was rolled back, nothing changed" in err, err
    assert _rows(store) == written
    _sql(store, "DROP TRIGGER keep")
    assert main(["undo", str(store)]) == 0, capsys.readouterr().err
    assert _rows(store) == before


def test_a_damaged_store_is_not_written_even_where_the_session_reads_clean(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by `python -m tests.fuzz_write` (seed 7, case 2363: an OpenClaw store with damaged pages
    outside the session: the write went in, and `undo` could not delete it again). Here a table of
    another program's, in the same file, has its page overwritten: the session reads as before, SQLite's
    own check fails, and nothing is written."""
    con = sqlite3.connect(store)
    con.execute("CREATE TABLE other (k TEXT)")
    con.executemany("INSERT INTO other VALUES (?)", [("x" * 50,) for _ in range(200)])
    con.commit()
    (root,) = con.execute("SELECT rootpage FROM sqlite_master WHERE name='other'").fetchone()
    (size,) = con.execute("PRAGMA page_size").fetchone()
    con.close()
    with store.open("r+b") as f:
        f.seek((root - 1) * size)
        f.write(b"\xff" * size)
    before = _rows(store)
    assert main(["analyze", str(store)]) in (0, 1)
    capsys.readouterr()
    assert main(["repair", str(store), *ARGS, "--write"]) == 2
    err = capsys.readouterr().err
    assert "the database is damaged (SQLite's quick_check:" in err and "nothing written" in err, err
    assert _rows(store) == before and backup_entries(str(store)) == []
    assert not (tmp_path / "data").exists() or not any(p.is_file() for p in (tmp_path / "data").rglob("*"))


def test_appended_while_the_summarizer_ran_is_refused(store: Path) -> None:
    report, res = _built(store)
    _append_foreign_event(store)  # the agent wrote after the analysis
    grown = _rows(store)
    with pytest.raises(WriteError, match="changed since it was analysed"):
        install(report, res.entry, lines=res.lines)
    assert _rows(store) == grown and backup_entries(str(store)) == []


def test_unknown_schema_version_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "v9.db"
    shutil.copyfile(CORPUS / "token_threshold.v1.db", f)
    os.chmod(f, 0o644)
    _sql(f, "UPDATE adk_internal_metadata SET value='9' WHERE key='schema_version'")
    before = _rows(f)
    assert main(["repair", str(f), *ARGS, "--write"]) == 2
    assert "schema version is '9'" in capsys.readouterr().err
    assert _rows(f) == before and backup_entries(str(f)) == []


def test_too_small_a_window_is_refused_before_anything_runs(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _rows(store)
    assert main(["repair", str(store), "--strategy", "compact", "--window", "300", "--reserve", "100", "--write"]) == 2
    assert "too little for a summary" in capsys.readouterr().err
    assert _rows(store) == before and backup_entries(str(store)) == []


def test_not_as_promised_is_taken_back(store: Path) -> None:
    report, res = _built(store)
    before = _rows(store)
    with pytest.raises(VerifyError, match="its rows were deleted again"):
        install(report, res.entry, lines=res.lines, expect=lambda _r: ["forced for the test"])
    assert _rows(store) == before
    (b,) = backup_entries(str(store))
    assert b.undone is not None  # taken back: `undo` passes over it (it stopped there, "already matches")
    with pytest.raises(WriteError, match="no backup to restore"):
        undo(str(store))


def test_take_back_never_deletes_over_someone_elses_row(store: Path) -> None:
    report, res = _built(store)

    def agent_writes(label: str) -> None:
        if label == "inserted":
            _append_foreign_event(store)

    before = _rows(store)
    with pytest.raises(WriteError, match="could not be deleted again") as e:
        install(report, res.entry, lines=res.lines, expect=lambda _r: ["forced"], step=agent_writes)
    assert ".restore" in str(e.value)
    now = _rows(store)
    assert now[: len(before)] == before and len(now) == len(before) + 2  # ours and the agent's, both kept


def test_undo_after_the_agent_wrote_says_how_to_restore(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repair", str(store), *ARGS, "--write"]) == 0, capsys.readouterr().err
    _append_foreign_event(store)
    grown = _rows(store)
    with pytest.raises(WriteError, match="changed since it was written") as e:
        undo(str(store))
    assert ".restore" in str(e.value) and _rows(store) == grown


def test_damaged_sidecar_is_listed_and_blocks_undo(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repair", str(store), *ARGS, "--write"]) == 0, capsys.readouterr().err
    (b,) = backup_entries(str(store))
    Path(b.meta_path).write_text("{not json")
    (d,) = backup_entries(str(store))
    assert isinstance(d, DamagedBackup) and "not valid JSON" in d.problem
    with pytest.raises(WriteError, match="damaged"):
        undo(str(store))


def test_a_database_is_not_hashed_whole_at_load_and_its_write_back_still_checks_rows(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store's state is its rows' digest: the load does not read the database's bytes a second
    time to hash them (issue 15: 0.03 s of a 20 MB ADK store's 0.6), and a row changed since the
    analysis is still refused."""
    import inspector.formats as formats

    def no_whole_hash(path: str, size: int) -> str:
        raise AssertionError(f"{path} was hashed whole")

    monkeypatch.setattr(formats, "hash_prefix", no_whole_hash)
    report, res = _built(store)
    assert report.ledger.sha256 is None and report.ledger.store_state is not None
    con = sqlite3.connect(store)
    con.execute("UPDATE events SET timestamp = timestamp + 1 WHERE rowid = (SELECT MAX(rowid) FROM events)")
    con.commit()
    con.close()
    with pytest.raises(WriteError, match="changed since it was analysed"):
        install(report, res.entry, lines=res.lines)
