"""A damaged backup sidecar (issue 11's unclear diagnostics): `undo` says the sidecar is damaged,
names it and says what the user can do; `inspector backups` lists the backup as damaged, never
crashes on it nor hides it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.formats import load
from inspector.store.writeback import install, list_backups
from tests.conftest import SAMPLES

ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(d))
    return d


def _written(tmp_path: Path) -> tuple[Path, bytes, Path]:
    """A session inspector wrote into: (the session, its bytes before, the backup's sidecar)."""
    f = tmp_path / "s.jsonl"
    shutil.copyfile(ADR, f)
    before = f.read_bytes()
    assert main(["repair", str(f), "--strategy", "recover", "--write", "--json"]) == 0
    (b,) = list_backups(str(f))
    return f, before, Path(b.meta_path)


def _sidecar(meta: Path) -> dict:
    return json.loads(meta.read_text())


DAMAGE = {
    "not JSON": lambda m: m.write_bytes(b'{"schema": "inspector-backup/1", "size": 12'),
    "not an object": lambda m: m.write_text("[1, 2]"),
    "wrong schema": lambda m: m.write_text(json.dumps({**_sidecar(m), "schema": "something/9"})),
    "a field missing": lambda m: m.write_text(json.dumps({k: v for k, v in _sidecar(m).items() if k != "written_sha256"})),
    "a field of the wrong type": lambda m: m.write_text(json.dumps({**_sidecar(m), "created": 20260101, "size": "190453"})),
    "sizes that make no sense": lambda m: m.write_text(json.dumps({**_sidecar(m), "size": -5})),
    "the backup file gone": lambda m: Path(str(m)[: -len(".json")]).unlink(),
    "empty": lambda m: m.write_bytes(b""),
    "nested too deep": lambda m: m.write_text("[" * 100_000 + "]" * 100_000),
}


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_damaged_sidecar_is_named_by_undo_and_listed_by_backups(
    damage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f, before, meta = _written(tmp_path)
    capsys.readouterr()
    DAMAGE[damage](meta)
    written = f.read_bytes()

    assert main(["undo", str(f)]) == 2
    err = capsys.readouterr().err
    assert "has not written to it" not in err, err
    assert f"the sidecar of its newest backup is damaged ({meta}:" in err and "nothing was restored" in err, err
    if damage != "the backup file gone":
        assert f"truncate -s {len(before)} {f}" in err, "what the user can do"
    assert f.read_bytes() == written, "nothing touched"

    assert main(["backups", str(f)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "damaged" in out and str(meta) in out
    assert main(["backups", str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["backups"] == [] and [d["sidecar"] for d in doc["damaged"]] == [str(meta)]
    assert doc["damaged"][0]["problem"]


def test_an_older_write_is_not_undone_over_a_newer_damaged_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f, _, _ = _written(tmp_path)
    middle = f.read_bytes()
    report = analyze(load(str(f)))
    install(report, repair(plan(report, "recover", Budgets()), entry_id="0000beef").entry)  # a second write
    newer = max(Path(b.meta_path) for b in list_backups(str(f)))
    newer.write_text("{")
    now = f.read_bytes()
    assert now != middle
    assert main(["undo", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(newer) in err and "damaged" in err
    assert f.read_bytes() == now
    assert main(["backups", str(f)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "applied" in out and "damaged" in out  # both listed, oldest first
    assert out.index("applied") < out.index("damaged")


def test_sidecars_with_mixed_field_types_do_not_crash_the_listing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f, _, meta = _written(tmp_path)
    twin = meta.with_name("00000000T000000.000Z-00000000.jsonl.json")
    shutil.copyfile(Path(str(meta)[: -len(".json")]), Path(str(twin)[: -len(".json")]))
    twin.write_text(json.dumps({**_sidecar(meta), "created": 5, "path": 7}))
    capsys.readouterr()
    assert main(["backups", str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["backups"]) == 1 and len(doc["damaged"]) == 1
    assert "'created' is not a string" in doc["damaged"][0]["problem"]


def test_an_undo_whose_sidecar_cannot_be_updated_says_the_session_was_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    f, before, meta = _written(tmp_path)
    meta.chmod(0o444)  # the sidecar is read-only: it is not replaced
    assert main(["undo", str(f)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{f} was restored to the backup of" in err and "could not be marked undone" in err, err
    assert f.read_bytes() == before
    meta.chmod(0o644)
    assert main(["undo", str(f)]) == 2
    assert "already matches the backup" in capsys.readouterr().err


@pytest.mark.parametrize("which", ["sidecar", "backup"])
def test_a_named_pipe_in_the_backup_folder_is_never_waited_on(which: str, tmp_path: Path, data_dir: Path) -> None:
    """`backups` and `undo` read every sidecar of the folder and the newest backup's bytes: a named
    pipe in their place is a damaged backup, said so at once (each command in a subprocess with a
    deadline: a plain open() of a pipe with no writer blocks forever)."""
    import os
    import subprocess
    import sys

    f, _, meta = _written(tmp_path)
    written = f.read_bytes()
    pipe = meta if which == "sidecar" else Path(str(meta)[: -len(".json")])
    pipe.unlink()
    os.mkfifo(pipe)
    env = {**os.environ, "INSPECTOR_DATA_DIR": str(data_dir)}
    for cmd in (["backups", str(f)], ["undo", str(f)]):
        try:
            run = subprocess.run([sys.executable, "-m", "inspector", *cmd], capture_output=True, text=True, env=env, timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`inspector {cmd[0]}` blocked on a named pipe in the backup folder")
        said = " ".join((run.stdout + run.stderr).split())
        assert "Traceback" not in said and run.returncode == (0 if cmd[0] == "backups" else 2), (cmd, said)
        if cmd[0] == "undo":
            assert "nothing was restored" in said and "a named pipe" in said, said
        elif which == "sidecar":  # (the listing reads the sidecars, not the backups)
            assert "damaged the sidecar cannot be read (a named pipe)" in said, said
    assert f.read_bytes() == written and pipe.is_fifo()
