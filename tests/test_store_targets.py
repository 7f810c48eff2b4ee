"""Writing on a hostile file system (issue 11, point 6 and the unclear `--out` diagnostic).

`repair --out` and `repair --write` refuse anything that is not a regular file (or a new path in an
existing writable folder) with a message naming the path the user gave and the cause, exit 2, and
leave every file as it was: a device node stays a device node, a link stays a link, a read-only
file is not replaced, a disk that fills up midway leaves the session as before.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.compaction.entries import WriteError
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.formats import load
from inspector.store.writeback import backup_dir, install, list_backups
from tests.conftest import SAMPLES

ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(d))
    return d


@pytest.fixture
def session(tmp_path: Path) -> Path:
    f = tmp_path / "s.jsonl"
    shutil.copyfile(ADR, f)
    return f


def _out(session: Path, out: str | Path, capsys: pytest.CaptureFixture[str]) -> str:
    """`repair --out`: refused with exit 2; the session untouched; stderr returned."""
    original = session.read_bytes()
    assert main(["repair", str(session), "--strategy", "recover", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert session.read_bytes() == original
    assert "Traceback" not in err and ".inspector-" not in err, err
    return err


def _no_temp_left(folder: Path) -> None:
    assert not [p for p in folder.iterdir() if p.name.startswith(".inspector-")]


def _device(tmp_path: Path) -> tuple[Path, str]:
    """A node like /dev/full (character device 1,7) where the system lets us make one, else a named pipe."""
    p = tmp_path / "full"
    try:
        os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        return p, "a character device"
    except OSError:
        os.mkfifo(p)
        return p, "a named pipe"


def test_out_onto_a_device_is_refused_and_the_node_stays(tmp_path: Path, session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dev, kind = _device(tmp_path)
    mode = os.lstat(dev).st_mode
    err = _out(session, dev, capsys)
    assert f"--out {dev} is {kind}, not a regular file" in err and "nothing written" in err
    assert os.lstat(dev).st_mode == mode, "the device node was replaced"
    _no_temp_left(tmp_path)


def test_out_onto_a_named_pipe_or_a_folder_is_refused(tmp_path: Path, session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert "is a named pipe, not a regular file" in _out(session, fifo, capsys)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    folder = tmp_path / "folder"
    folder.mkdir()
    assert f"--out {folder} is a folder, not a regular file" in _out(session, folder, capsys)
    assert folder.is_dir() and list(folder.iterdir()) == []
    assert "names a folder, not a file" in _out(session, f"{tmp_path}/new/", capsys)
    assert not (tmp_path / "new").exists()
    assert "names a folder, not a file" in _out(session, "", capsys)
    _no_temp_left(tmp_path)


def test_out_through_a_symbolic_link_is_refused_naming_where_it_points(
    tmp_path: Path, session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "elsewhere" / "kept.jsonl"
    target.parent.mkdir()
    target.write_bytes(b"precious\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    err = _out(session, link, capsys)
    assert f"--out {link} is a symbolic link to {target}" in err and "nothing written" in err
    assert link.is_symlink() and target.read_bytes() == b"precious\n"
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "nowhere.jsonl")
    assert "is a symbolic link" in _out(session, dangling, capsys)
    assert dangling.is_symlink() and not (tmp_path / "nowhere.jsonl").exists()
    # A link to the session itself is the session itself.
    to_session = tmp_path / "again.jsonl"
    to_session.symlink_to(session)
    assert "is the session file itself" in _out(session, to_session, capsys)


def test_out_onto_a_read_only_file_is_refused(tmp_path: Path, session: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ro = tmp_path / "ro.jsonl"
    ro.write_bytes(b"keep me\n")
    ro.chmod(0o444)
    err = _out(session, ro, capsys)
    assert f"--out {ro} is read-only" in err
    assert ro.read_bytes() == b"keep me\n"


def test_out_into_a_missing_folder_names_the_path_given_and_the_cause(
    tmp_path: Path, session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "no" / "such" / "fixed.jsonl"
    err = _out(session, out, capsys)
    assert f"--out {out}: the folder {out.parent} does not exist; nothing written" in err
    plain = tmp_path / "plain"
    plain.write_text("")
    err = _out(session, plain / "fixed.jsonl", capsys)
    assert f"{plain} is a regular file, not a folder" in err


@pytest.mark.parametrize(
    ("where", "code", "cause"),
    [
        ("create", errno.EACCES, "permission denied"),
        ("create", errno.EROFS, "read-only file system"),
        ("fsync", errno.ENOSPC, "disk full"),
        ("rename", errno.EACCES, "permission denied"),
    ],
)
def test_a_failing_copy_names_the_path_given_and_the_cause_never_the_temp_file(
    where: str, code: int, cause: str, tmp_path: Path, session: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "fixed.jsonl"

    def fail(*a: object, **k: object) -> None:
        raise OSError(code, os.strerror(code), str(tmp_path / ".inspector-abcd1234.tmp"))

    if where == "create":
        monkeypatch.setattr(tempfile, "mkstemp", fail)
    elif where == "fsync":
        monkeypatch.setattr(os, "fsync", fail)
    else:
        monkeypatch.setattr(os, "replace", fail)
    err = _out(session, out, capsys)
    assert f"--out {out}" in err and cause in err and "nothing written" in err, err
    assert not out.exists()
    _no_temp_left(tmp_path)


# ---------------------------------------------------------------------------------------- --write


def _recover(session: Path) -> tuple:
    report = analyze(load(str(session)))
    res = repair(plan(report, "recover", Budgets()))
    assert res.entry is not None
    return report, res.entry


def test_write_into_a_read_only_session_is_refused_before_anything_runs(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = session.read_bytes()
    session.chmod(0o444)
    assert main(["repair", str(session), "--strategy", "recover", "--write"]) == 2
    err = capsys.readouterr().err
    assert f"{session} is read-only" in err and "nothing written" in err
    assert session.read_bytes() == original and list_backups(str(session)) == []


def test_write_through_a_symlinked_session_names_the_file_it_wrote(
    tmp_path: Path, session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(session)
    assert main(["repair", str(link), "--strategy", "recover", "--write", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["out"] == str(session.resolve()), "the file written is named, not the link"
    assert link.is_symlink() and session.read_bytes().startswith(ADR.read_bytes())
    shutil.copyfile(ADR, session)
    assert main(["repair", str(link), "--strategy", "recover", "--write"]) == 0
    # Rich folds a path longer than the console's width across lines: compare without whitespace
    # (xdist's and CI's temporary folders are longer than a laptop's).
    out = "".join(capsys.readouterr().out.split())
    assert "".join(f"to {session.resolve()} ({link} leads there through a symbolic link)".split()) in out


def test_write_refuses_a_session_swapped_for_a_named_pipe(tmp_path: Path, session: Path) -> None:
    report, entry = _recover(session)
    session.unlink()
    os.mkfifo(session)
    with pytest.raises(WriteError, match="is a named pipe, not a regular file"):
        install(report, entry)
    assert stat.S_ISFIFO(os.lstat(session).st_mode) and not backup_dir(str(session)).exists()


def test_a_disk_full_while_appending_leaves_the_session_as_before(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = session.read_bytes()
    report, entry = _recover(session)
    real_write = os.write
    target = os.stat(session).st_ino

    def full(fd: int, data: bytes) -> int:  # the first half lands, then the disk is full
        if os.fstat(fd).st_ino != target:
            return real_write(fd, data)
        if os.fstat(fd).st_size == len(original):
            return real_write(fd, bytes(data)[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(WriteError, match=r"cannot append the record \(disk full.*removed again, the file is as before"):
        install(report, entry)
    monkeypatch.undo()
    assert session.read_bytes() == original


def test_a_write_the_disk_refused_leaves_no_backup_and_the_earlier_write_undoable(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that landed nothing keeps no backup: kept, it was the newest, the one `undo`
    restores, and `undo` refused it (the file is not what it would have written), so the write
    before it could not be undone either."""
    original = session.read_bytes()
    report, entry = _recover(session)
    install(report, entry)
    first = session.read_bytes()
    report, entry = _recover(session)
    real_write = os.write
    target = os.stat(session).st_ino

    def full(fd: int, data: bytes) -> int:
        if os.fstat(fd).st_ino == target:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(WriteError, match=r"cannot append the record \(disk full.*; nothing written, the file is as before"):
        install(report, entry)
    monkeypatch.setattr(os, "write", real_write)  # (not undo(): that would drop the data dir set too)
    assert session.read_bytes() == first and len(list_backups(str(session))) == 1
    assert main(["undo", str(session)]) == 0
    assert session.read_bytes() == original


def test_a_backup_folder_that_cannot_be_made_refuses_the_write(
    tmp_path: Path, session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(blocker))
    original = session.read_bytes()
    report, entry = _recover(session)
    with pytest.raises(WriteError, match=r"backup folder .*: cannot create it \(.*\); nothing written"):
        install(report, entry)
    assert session.read_bytes() == original
