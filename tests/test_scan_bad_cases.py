"""Bad cases of a scan (issue 18 point 6) not covered in tests/test_scan.py: a session written while
the scan reads it, and the progress a long scan reports."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inspector.store import scan
from inspector.store.index import SessionIndex
from inspector.store.scan import Scanner
from tests.conftest import SAMPLES
from tests.test_scan_stores import two_session_store

PI = SAMPLES / "pi" / "healthy_chained.jsonl"


def test_a_session_written_during_the_scan_is_read_again_next_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent appends (half a line, then the rest) while the scan reads the file: the row is
    the file as read, never an error, and the next scan reads the file again (the index keeps
    the identity taken before the read, so a write during it is never mistaken for unchanged)."""
    root = tmp_path / "s"
    root.mkdir()
    live = root / "live.jsonl"
    shutil.copyfile(PI, live)
    lines = PI.read_text().splitlines(keepends=True)
    real = scan.read_session

    def reading_while_written(path: str, parent: str | None = None, size: int | None = None) -> scan.ReadSession:
        with open(path, "a") as f:  # the agent writes while the scan has the file
            f.write(lines[-1][: len(lines[-1]) // 2])
        return real(path, parent, size)

    monkeypatch.setattr(scan, "read_session", reading_while_written)
    with SessionIndex() as index:
        first = Scanner(index, workers=1)
        (row,) = list(first.rows([str(root)]))
    assert row.error is None and row.records is not None
    monkeypatch.setattr(scan, "read_session", real)
    with SessionIndex() as index:  # nothing written since: still read again, it changed during the read
        again = Scanner(index, workers=1)
        (row2,) = list(again.rows([str(root)]))
        assert again.stats.read == 1 and again.stats.from_index == 0
        assert row2.error is None and row2.size == live.stat().st_size
        third = Scanner(index, workers=1)
        list(third.rows([str(root)]))
        assert third.stats.read == 0  # settled: from the index


def test_progress_counts_files_up_to_the_total_stores_included(tmp_path: Path) -> None:
    """The progress bar moves: one call per file, done rising by one to the total, a store of
    two sessions counted once (after its last session)."""
    db = two_session_store(tmp_path)
    for i in range(12):
        shutil.copyfile(PI, db.parent / f"p{i:02}.jsonl")
    calls: list[tuple[int, int]] = []
    found: list[int] = []
    with SessionIndex() as index:
        s = Scanner(index, workers=2, progress=lambda d, t: calls.append((d, t)), found=found.append)
        rows = list(s.rows([str(db.parent)]))
    assert len(rows) == 14 and found == [13]
    assert [d for d, _t in calls] == list(range(1, 14)) and {t for _d, t in calls} == {13}
    assert s.most_in_flight <= s.workers * scan.IN_FLIGHT_PER_WORKER  # bounded, however big the tree


def test_a_database_whose_schema_names_a_table_in_bytes_that_are_not_utf8_is_passed_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by `python -m tests.fuzz_scan` (seed 2, cases 150 and 344: a flipped byte in an ADK
    store's schema): the walk asked whether the file is an ADK store, SQLite's message quoted the
    damaged name, Python could not decode it, and the scan died with a traceback. The file is no
    store anyone can read (SQLite refuses its schema): no row; the other sessions have theirs."""
    import sqlite3

    from inspector.cli.main import main

    root = tmp_path / "s"
    root.mkdir()
    shutil.copyfile(PI, root / "a.jsonl")
    db = root / "b.db"
    con = sqlite3.connect(db)
    for table in ("sessions", "events", "other"):
        con.execute(f"CREATE TABLE {table} (id)")
    con.commit()
    con.execute("PRAGMA writable_schema=ON")
    con.execute("UPDATE sqlite_master SET name=CAST(X'6F74A068' AS TEXT) WHERE name='other'")
    con.commit()
    con.close()
    assert main(["scan", str(root), "--json", "--no-progress", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert [line.count('"path"') for line in out.splitlines()] == [1] and "a.jsonl" in out


def _store_source(kind: str, tmp_path: Path) -> Path:
    """A store of each kind whose detection reads its schema: ADK's peer corpus, OpenClaw's, maka's
    (built by the test helper from maka's own DDL)."""
    from tests.conftest import SHARED, need_shared

    if kind == "adk":
        return need_shared(SHARED / "peers" / "adk" / "corpus" / "token_threshold.db")
    if kind == "openclaw":
        return Path(__file__).parent / "peers" / "openclaw" / "corpus" / "s1.sqlite"
    from tests.maka_store import write
    from tests.test_maka import two_turns

    session, path = two_turns(tmp_path)
    return Path(write(path, session))


@pytest.mark.parametrize("kind", ["adk", "openclaw", "maka"])
def test_a_store_whose_tables_lie_in_its_write_ahead_log_has_its_row(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by `python -m tests.fuzz_scan` (seed 7, case 340: an ADK store's file cut short beside
    its -wal). The walk looked at the file alone (immutable), which `analyze` does not: it reads the
    file and its log together. Here the whole store is in the log, not yet checkpointed (its app
    still running): `analyze` reads it, so the scan must list it, and neither file changes."""
    import sqlite3

    from inspector.cli.main import main
    from inspector.formats import openclaw_writer

    src = _store_source(kind, tmp_path)
    live = tmp_path / "live" / "s.db"
    live.parent.mkdir()
    con = sqlite3.connect(live)
    openclaw_writer.provide_octet_length(con)  # (OpenClaw's CHECKs call it)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("ATTACH ? AS c", (str(src),))
    tables = con.execute("SELECT name, sql FROM c.sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'").fetchall()
    virtual = [name for name, sql in tables if sql.upper().startswith("CREATE VIRTUAL")]
    for name, sql in tables:  # (a full-text index and its shadow tables left out: no reader needs them)
        if not any(name == v or name.startswith(v + "_") for v in virtual):
            con.execute(sql)
            con.execute(f'INSERT INTO main."{name}" SELECT * FROM c."{name}"')
    con.commit()
    root = tmp_path / "s"
    root.mkdir()
    shutil.copyfile(live, root / "s.db")  # (copied while the app holds it: the log not checkpointed)
    shutil.copyfile(f"{live}-wal", root / "s.db-wal")
    con.close()
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    assert main(["analyze", str(root / "s.db")]) in (0, 1)
    capsys.readouterr()
    assert main(["scan", str(root), "--json", "--no-progress", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert f'"format":"{kind}"' in out and '"error":null' in out, out
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before
