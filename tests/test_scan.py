"""`inspector scan` and the index behind it (issue 18 points 1, 2, 6)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from inspector.analysis.sessions import scan_row_schema
from inspector.cli.main import main
from inspector.store import scan as scan_mod
from inspector.store.index import SessionIndex
from inspector.store.places import session_files
from inspector.store.scan import Scanner
from tests.conftest import REPO, SAMPLES, SHARED, need_shared

SCHEMA_FILE = REPO / "inspector" / "schemas" / "scan-row.schema.json"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(d))
    return d


def tree(tmp_path: Path) -> Path:
    """A few sessions of two formats, a sub-agent transcript, and a file that is no session."""
    root = tmp_path / "sessions"
    (root / "pi").mkdir(parents=True)
    for name in ("adr0302_amnesiac_fallback.jsonl", "healthy_chained.jsonl"):
        shutil.copy(SAMPLES / "pi" / name, root / "pi" / name)
    cc = need_shared(SHARED / "real_sessions" / "claude_code")
    proj = root / "claude" / "proj"
    (proj / "sess" / "subagents").mkdir(parents=True)
    shutil.copy(cc / "spotter__tool_heavy.jsonl", proj / "sess.jsonl")
    shutil.copy(cc / "spotter__8463c716__agent-acompact-f46190.jsonl", proj / "sess" / "subagents" / "agent-acompact-1.jsonl")
    (root / "broken.jsonl").write_text('{"not": "a session"}\n')
    return root


def scan_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict]]:
    code = main(["scan", *argv, "--json", "--no-progress"])
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines()]


def test_scan_rows_match_the_schema_and_name_the_unreadable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tree(tmp_path)
    code, rows = scan_json(capsys, str(root))
    assert code == 0
    by_name = {os.path.basename(r["path"]): r for r in rows}
    assert set(by_name) == {"adr0302_amnesiac_fallback.jsonl", "healthy_chained.jsonl", "sess.jsonl",
                            "agent-acompact-1.jsonl", "broken.jsonl"}
    for r in rows:
        jsonschema.validate(r, scan_row_schema())
    amnesia = by_name["adr0302_amnesiac_fallback.jsonl"]
    assert (amnesia["format"], amnesia["holes"], amnesia["worst_code"], amnesia["checkpoints"]) == ("pi", 168, "hole", 3)
    assert amnesia["project"] == "/home/dana/src/invoicer"
    assert amnesia["first_activity"] == "2026-09-14T08:02:11.417Z"  # the session's own times, not mtime
    assert by_name["agent-acompact-1.jsonl"]["parent"] == str(root / "claude" / "proj" / "sess.jsonl")
    assert by_name["broken.jsonl"]["error"].startswith("line 1: not a session ledger")
    assert by_name["broken.jsonl"]["format"] is None


def test_the_committed_schema_is_the_models() -> None:
    assert json.loads(SCHEMA_FILE.read_text()) == scan_row_schema()


def test_rescan_reads_nothing_unchanged_and_rereads_a_grown_session(tmp_path: Path) -> None:
    root = tree(tmp_path)
    with SessionIndex() as index:
        first = Scanner(index, workers=1)
        list(first.rows([str(root)]))
        assert first.stats.read == 5
        again = Scanner(index, workers=1)
        rows = list(again.rows([str(root)]))
        assert (again.stats.read, again.stats.from_index) == (0, 5)
        grown = root / "pi" / "healthy_chained.jsonl"
        with open(grown, "a") as f:
            f.write('{"type":"custom","id":"zz1","parentId":null,"timestamp":"2027-01-01T00:00:00.000Z"}\n')
        third = Scanner(index, workers=1)
        rows = list(third.rows([str(root)]))
        assert third.stats.read == 1
        row = next(r for r in rows if r.path == str(grown))
        assert row.last_activity == "2027-01-01T00:00:00.000Z"


def test_workers_give_the_same_rows_in_the_walks_order(tmp_path: Path) -> None:
    root = tree(tmp_path)
    for i in range(8):  # enough files for the worker pool
        shutil.copy(SAMPLES / "native" / "healthy_chained.jsonl", root / f"n{i}.jsonl")
    with SessionIndex(str(tmp_path / "a.sqlite")) as a, SessionIndex(str(tmp_path / "b.sqlite")) as b:
        pooled = Scanner(a, workers=2)
        rows_pooled = [r.model_dump() for r in pooled.rows([str(root)])]
        alone = [r.model_dump() for r in Scanner(b, workers=1).rows([str(root)])]
    assert rows_pooled == alone
    assert [r["path"] for r in alone] == [f.path for f in session_files([str(root)])]
    assert pooled.most_in_flight <= 2 * scan_mod.IN_FLIGHT_PER_WORKER  # bounded, however many files


def test_filters_stdin_and_fail_on(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root = tree(tmp_path)
    code, rows = scan_json(capsys, str(root), "--format", "pi", "--since", "2026-09-01")
    names = sorted(os.path.basename(r["path"]) for r in rows)
    # healthy_chained (October) and the amnesia (September) are pi; broken.jsonl stays: never hidden
    assert names == ["adr0302_amnesiac_fallback.jsonl", "broken.jsonl", "healthy_chained.jsonl"]
    code, rows = scan_json(capsys, str(root), "--project", "spotter", "--until", "2026-02-10T23:00")
    assert sorted(os.path.basename(r["path"]) for r in rows) == ["broken.jsonl", "sess.jsonl"]
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{root / 'pi' / 'healthy_chained.jsonl'}\n\n"))
    code, rows = scan_json(capsys, "-", "--fail-on", "warning")
    assert code == 0 and len(rows) == 1
    code, rows = scan_json(capsys, str(root / "pi"), "--fail-on", "error")
    assert code == 1  # the amnesia has error findings


def test_csv_and_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tree(tmp_path)
    assert main(["scan", str(root), "--csv", "--no-progress"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 5 and {r["format"] for r in rows} == {"pi", "claude_code", ""}
    assert main(["scan", str(root), "--no-progress"]) == 0
    out = capsys.readouterr()
    assert "hole" in out.out and "unreadable" in out.out and "5 of 5 sessions shown" in out.err


def test_a_missing_path_is_a_row_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, rows = scan_json(capsys, str(tmp_path / "nope"))
    assert code == 2 and rows[0]["error"] == "no such file or directory"


def test_symlink_loops_end_the_branch_not_the_walk(tmp_path: Path) -> None:
    root = tree(tmp_path)
    (root / "pi" / "loop").symlink_to(root, target_is_directory=True)
    (root / "again").symlink_to(root / "pi", target_is_directory=True)
    found = [f.path for f in session_files([str(root)])]
    assert len(found) == 5 and len({os.path.realpath(p) for p in found}) == 5


def test_unreadable_files_are_rows_with_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tree(tmp_path)
    (root / "binary.jsonl").write_bytes(b"\x00\x01\x02" * 100)
    (root / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    code, rows = scan_json(capsys, str(root))
    assert code == 0 and len(rows) == 7
    errors = {os.path.basename(r["path"]): r["error"] for r in rows if r["error"]}
    assert "binary data" in errors["binary.jsonl"]
    assert errors["dangling.jsonl"] == "cannot read (No such file or directory)"


@pytest.mark.parametrize("bad", [b"this is not a database at all" * 100, b"", "foreign", "old schema"])
def test_a_damaged_or_foreign_index_is_rebuilt(tmp_path: Path, _cache: Path, bad: object, capsys: pytest.CaptureFixture[str]) -> None:
    root = tree(tmp_path)
    _cache.mkdir(parents=True)
    path = _cache / "index.sqlite"
    if isinstance(bad, bytes):
        path.write_bytes(bad if bad else b"SQLite format 3\x00" + b"\xff" * 200)
    else:
        db = sqlite3.connect(path)
        if bad == "foreign":
            db.execute("CREATE TABLE sessions (id INTEGER PRIMARY KEY, row TEXT)")
            db.execute("INSERT INTO sessions(row) VALUES ('{\"trust\": \"me\"}')")
        else:
            db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            db.executemany("INSERT INTO meta VALUES (?, ?)", [("app", "inspector-index"), ("schema", "0")])
        db.commit()
        db.close()
    code, rows = scan_json(capsys, str(root))
    assert code == 0 and len(rows) == 5
    with SessionIndex() as index:
        assert index.rebuilt_because is None  # the rebuilt index is trusted from now on
        assert index.db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 5
    assert any(p.name.startswith("index.sqlite.bad-") for p in _cache.iterdir())  # kept aside


def test_a_rebuild_says_why(tmp_path: Path, _cache: Path) -> None:
    _cache.mkdir(parents=True)
    (_cache / "index.sqlite").write_bytes(b"garbage" * 1000)
    with SessionIndex() as index:
        assert index.rebuilt_because is not None and "not a readable SQLite database" in index.rebuilt_because


def test_two_scans_at_once_share_the_index(tmp_path: Path, _cache: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(40):
        shutil.copy(SAMPLES / ("pi" if i % 2 else "native") / "healthy_chained.jsonl", root / f"s{i:02}.jsonl")
    env = {**os.environ, "INSPECTOR_CACHE_DIR": str(_cache)}
    cmd = [sys.executable, "-m", "inspector", "scan", str(root), "--json", "--no-progress", "--workers", "1"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err.decode()
        rows = [json.loads(line) for line in out.decode().splitlines()]
        assert len(rows) == 40 and all(r["error"] is None for r in rows)
    with SessionIndex() as index:
        assert index.db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 40
        again = Scanner(index, workers=1)
        list(again.rows([str(root)]))
        assert again.stats.read == 0


def test_a_bad_time_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for cmd in (["scan"], ["search", "x"], ["usage"]):
        assert main([*cmd, str(tmp_path), "--since", "yesterday-ish", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert "argument --since: expected a date" in err and "Traceback" not in err
