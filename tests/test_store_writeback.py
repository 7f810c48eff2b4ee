"""Repair for real (issue 5, points 1-3): `inspector repair --write`, `inspector backups`, `inspector undo`.

The session file is appended to, never rewritten; refused when it changed since it was analysed
or another process holds the lock; backed up first; verified after and taken back when it is not
what the plan promised; `undo` restores the backup only when the file is exactly what we wrote.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.compaction.entries import WriteError
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.formats import load
from inspector.store.writeback import VerifyError, backup_dir, install, list_backups, undo
from tests.conftest import SAMPLES

ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(d))
    return d


def _copy(src: Path, tmp_path: Path, name: str | None = None) -> Path:
    f = tmp_path / (name or src.name)
    shutil.copyfile(src, f)
    return f


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _recover_entry(session: Path) -> tuple:
    report = analyze(load(str(session)))
    res = repair(plan(report, "recover", Budgets()))
    assert res.entry is not None
    return report, res


def test_write_appends_one_compaction_pi_accepts_then_undo_restores_every_byte(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = _copy(ADR, tmp_path)
    original = f.read_bytes()
    before = analyze(load(str(f)))
    assert main(["repair", str(f), "--strategy", "resummarize", "--write", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["status"] == "built" and res["out"] == str(f)

    now = f.read_bytes()
    assert now.startswith(original) and now.count(b"\n") == original.count(b"\n") + 1
    entry = json.loads(now[len(original):])
    assert entry == res["entry"]
    # What pi needs (peers/pi/README.md, point 11) and what this tool adds in details.
    assert entry["type"] == "compaction" and entry["fromHook"] is True
    assert len(entry["id"]) == 8 and int(entry["id"], 16) >= 0 and entry["id"] not in original.decode()
    assert entry["parentId"] == before.ledger.records[before.ledger.leaf_seq].id
    kept = before.ledger.by_id()[entry["firstKeptEntryId"]]
    assert before.on_path[kept] and before.ledger.records[kept].role != "tool"
    assert isinstance(entry["tokensBefore"], int) and entry["summary"]
    for key in ("readFiles", "modifiedFiles", "retainedTailShape", "failureReason", "usage", "requests"):
        assert key in entry["details"], key

    # Backed up first, in the data dir, and the report says where.
    backups = list_backups(str(f))
    assert len(backups) == 1 and res["backup"] == backups[0].path
    assert Path(backups[0].path).read_bytes() == original
    assert Path(backups[0].path).parent == backup_dir(str(f)) and str(data_dir) in backups[0].path
    assert backups[0].written_sha256 == _sha(f) and backups[0].undone is None

    # Healed, as promised.
    assert main(["analyze", str(f), "--fail-on", "error"]) == 0
    capsys.readouterr()

    assert main(["backups", str(f)]) == 0
    listing = capsys.readouterr().out
    assert backups[0].path in listing.replace("\n", "") and "applied" in listing
    # The backup names what was installed, not the run's status (issue 12, point 7).
    assert backups[0].what == "repair resummarize: carried-summary checkpoint"
    assert "repair resummarize: carried-summary checkpoint" in listing and "(installed)" not in listing

    assert main(["undo", str(f)]) == 0
    assert "Restored" in capsys.readouterr().out
    assert f.read_bytes() == original
    assert list_backups(str(f))[0].undone is not None
    assert Path(backups[0].path).exists(), "a backup is never deleted"

    assert main(["undo", str(f)]) == 2
    assert "no backup to restore" in capsys.readouterr().err
    assert f.read_bytes() == original


def test_write_adds_the_missing_newline_before_the_record(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(ADR.read_bytes().rstrip(b"\n"))
    original = f.read_bytes()
    report, res = _recover_entry(f)
    inst = install(report, res.entry)
    now = f.read_bytes()
    assert now[: len(original)] == original and now[len(original):len(original) + 1] == b"\n"
    assert json.loads(now[len(original) + 1:])["id"] == inst.entry_id
    assert not [d for d in load(str(f)).diagnostics if d.severity == "error"]


def test_native_session_takes_a_checkpoint_record(tmp_path: Path) -> None:
    f = _copy(SAMPLES / "native" / "adr0302_amnesiac_fallback.jsonl", tmp_path)
    original = f.read_bytes()
    report, res = _recover_entry(f)
    inst = install(report, res.entry)
    entry = json.loads(f.read_bytes()[len(original):])
    assert entry["type"] == "checkpoint" and entry["id"] == inst.entry_id
    assert inst.report.checkpoints[-1].record.id == entry["id"]
    undo(str(f))
    assert f.read_bytes() == original


def test_refused_when_an_agent_appended_since_the_analysis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _copy(ADR, tmp_path)
    report, res = _recover_entry(f)
    line = b'{"type":"message","id":"feed0001","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"more"}}\n'
    with open(f, "ab") as out:
        out.write(line)
    grown = f.read_bytes()
    with pytest.raises(WriteError, match=r"changed since it was analysed.*appended"):
        install(report, res.entry)
    assert f.read_bytes() == grown, "nothing written, nothing lost"
    assert not backup_dir(str(f)).exists(), "refused before any backup was taken"


def test_refused_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    f = _copy(ADR, tmp_path)
    original = f.read_bytes()
    report, res = _recover_entry(f)
    fd = os.open(f, os.O_RDONLY)  # another open file description: flock conflicts like another process's
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(WriteError, match="holds a lock"):
            install(report, res.entry)
    finally:
        os.close(fd)
    assert f.read_bytes() == original
    install(report, res.entry)  # once the lock is gone it goes through
    assert f.read_bytes() != original


def test_a_write_that_is_not_what_the_plan_promised_is_taken_back(tmp_path: Path) -> None:
    f = _copy(ADR, tmp_path)
    original = f.read_bytes()
    report, res = _recover_entry(f)
    with pytest.raises(VerifyError, match=r"not what the plan promised.*holes: 3, promised 0.*as before"):
        install(report, res.entry, expect=lambda rep: ["holes: 3, promised 0"])
    assert f.read_bytes() == original
    (b,) = list_backups(str(f))
    assert Path(b.path).read_bytes() == original and b.undone is not None  # taken back: no write to undo
    with pytest.raises(WriteError, match="no backup to restore"):
        undo(str(f))


def test_a_write_taken_back_leaves_the_write_before_it_undoable(tmp_path: Path) -> None:
    """Found by `python -m tests.fuzz_write` (seed 7, cases 460 and 478: a damaged ADK store whose
    new checkpoint did not land last). The taken-back write's backup stayed open, the newest, so
    `undo` stopped at it ("already matches the backup") and never reached the write before."""
    f = _copy(ADR, tmp_path)
    original = f.read_bytes()
    report, res = _recover_entry(f)
    install(report, res.entry)
    report, res = _recover_entry(f)
    with pytest.raises(VerifyError, match="not what the plan promised"):
        install(report, res.entry, expect=lambda rep: ["forced for the test"])
    undo(str(f))
    assert f.read_bytes() == original


def test_a_write_left_open_that_never_landed_is_marked_and_passed_over(tmp_path: Path) -> None:
    """A sidecar an older inspector left open for a write that is not in the file: `undo` says so,
    marks it, and the next `undo` takes back the write before it."""
    f = _copy(ADR, tmp_path)
    original = f.read_bytes()
    report, res = _recover_entry(f)
    install(report, res.entry)
    report, res = _recover_entry(f)
    with pytest.raises(VerifyError):
        install(report, res.entry, expect=lambda rep: ["forced for the test"])
    _, second = list_backups(str(f))
    Path(second.meta_path).write_text(Path(second.meta_path).read_text().replace(f'"{second.undone}"', "null"))
    assert list_backups(str(f))[1].undone is None
    with pytest.raises(WriteError, match=r"already matches the backup.*marked so now"):
        undo(str(f))
    undo(str(f))
    assert f.read_bytes() == original


def test_a_checkpoint_that_does_not_land_on_the_path_is_taken_back(tmp_path: Path) -> None:
    f = _copy(ADR, tmp_path)
    original = f.read_bytes()
    report, res = _recover_entry(f)
    entry = dict(res.entry, parentId="00000000")  # hung under no entry: pi would send only the summary
    entry["type"] = "custom"  # and not a compaction at all: the verification must notice
    with pytest.raises(VerifyError, match="not the latest on the active path"):
        install(report, entry)
    assert f.read_bytes() == original


def test_undo_refused_when_the_session_grew_after_our_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _copy(ADR, tmp_path)
    report, res = _recover_entry(f)
    install(report, res.entry)
    with open(f, "ab") as out:
        out.write(b'{"type":"custom","id":"feed0002","parentId":null,"timestamp":"2026-01-01T00:00:00Z"}\n')
    grown = f.read_bytes()
    assert main(["undo", str(f)]) == 2
    err = capsys.readouterr().err
    assert "changed since it was written by inspector" in err and "nothing written" in err
    assert f.read_bytes() == grown


def test_write_refuses_what_the_session_cannot_take(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _copy(ADR, tmp_path)
    original = f.read_bytes()
    assert main(["repair", str(f), "--strategy", "recover", "--write", "--at", "50"]) == 2
    assert "--at" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["repair", str(f), "--strategy", "recover", "--write", "--out", str(tmp_path / "x.jsonl")])
    assert e.value.code == 2 and "not allowed with" in capsys.readouterr().err
    assert f.read_bytes() == original and list_backups(str(f)) == []


def test_backups_of_a_session_never_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _copy(ADR, tmp_path)
    assert main(["backups", str(f), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["backups"] == []
    assert main(["undo", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("fmt", "why"),
    # (adk-go's seed store is main's, camelCase: main reads no compaction record, formats/adk_go_writer.py)
    [("adk_go", "camelCase"), ("maka", "read only"), ("nextclaw", "read only")],
)
def test_read_only_formats_are_never_written(fmt: str, why: str, tmp_path: Path) -> None:
    """A native-shaped checkpoint appended to another runtime's file would be junk to it: the
    store itself refuses, whoever calls it."""
    from tests.test_seed_runtimes import BUILDERS

    (tmp_path / "src").mkdir()
    f = BUILDERS[fmt](tmp_path / "src")
    original = f.read_bytes()
    report = analyze(load(str(f)))
    assert report.ledger.format == fmt
    entry = {"type": "checkpoint", "id": "cp-00000001", "summary": "x"}
    with pytest.raises(WriteError, match=why):
        install(report, entry)
    assert f.read_bytes() == original and not backup_dir(str(f)).exists()


def test_undo_through_another_name_of_the_same_file(tmp_path: Path) -> None:
    f = _copy(ADR, tmp_path)
    original = f.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(f)
    report, res = _recover_entry(link)
    install(report, res.entry)
    assert list_backups(str(f)) and list_backups(str(link)) == list_backups(str(f))
    undo(str(f))
    assert f.read_bytes() == original
