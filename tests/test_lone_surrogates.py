"""A lone surrogate in a session, or a byte that is not UTF-8 in its file's name, crashes nothing.

JSON's `"\\ud800"` is a lone surrogate: JSON.parse reads it into a string as it is, so Claude Code,
pi and OpenClaw keep it (the real Claude Code sends it back to the model: `python -m
tests.peers.claude_code_resume.type_probe`, "lone surrogate in the text"), and so does inspector.
No UTF-8 holds it: every place such a string leaves the process (a terminal, a `--json` document,
an exported report, a sidecar, the scan index's SQLite) writes it as its `\\udXXX` escape. A file
name's byte that is not UTF-8 is a lone surrogate in Python (`os.fsdecode`): the same. Each command
runs as a user runs it (`python -m inspector`, a fresh process).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SHARED

BASE = SHARED / "peers" / "claude_code" / "corpus" / "manual_compact.jsonl"
SESSION_ID = "5ee0d25d-3277-4e8a-b7c2-0edf870ca89e"


def _damaged(where: str) -> bytes:
    """The peer corpus's /compact session with a lone surrogate escape in one place."""
    data = BASE.read_bytes()
    if where == "text":  # a user line under the leaf, its text starting with one
        leaf = json.loads(data.splitlines()[83])
        line = {
            "parentUuid": leaf["uuid"], "isSidechain": False, "type": "user", "sessionId": SESSION_ID,
            "message": {"role": "user", "content": [{"type": "text", "text": "SURROGATE"}]},
            "uuid": "0e4d1a9e-0000-4000-8000-000000000001", "timestamp": "2026-11-30T14:00:00.000Z",
        }  # fmt: skip
        return data + json.dumps(line).encode().replace(b"SURROGATE", b"\\ud800 marked") + b"\n"
    if where == "session_id":
        return data.replace(SESSION_ID.encode(), SESSION_ID[:-4].encode() + b"\\udc00")
    if where == "model":
        return data.replace(b'"model":"claude-opus-5-5"', b'"model":"claude\\udfff-opus"')
    raise ValueError(where)


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, cwd=REPO, env=env, timeout=120, check=False)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "INSPECTOR_DATA_DIR": str(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache")}


@pytest.mark.parametrize("where", ["text", "session_id", "model"])
def test_every_command_shows_a_lone_surrogate_as_its_escape(tmp_path: Path, env: dict[str, str], where: str) -> None:
    f = tmp_path / "session.jsonl"
    f.write_bytes(_damaged(where))
    before = f.read_bytes()
    escape = {"text": b"\\ud800", "session_id": b"\\udc00", "model": b"\\udfff"}[where]
    for args in (["analyze"], ["context"], ["analyze", "--json"], ["context", "--json"], ["plan", "--strategy", "recover", "--window", "20000", "--json"]):
        got = _run([*args, str(f)], env)
        assert got.returncode == 0, (args, got.stderr.decode(errors="replace")[-600:])
        if "--json" in args:
            doc = json.loads(got.stdout)  # valid JSON: the escape reads back as the surrogate
            assert doc
    shown = _run(["context" if where == "text" else "analyze", "--json", str(f)], env).stdout
    if where != "model":  # (the model is not in these documents)
        assert escape in shown, where
    for kind in ("--html", "--markdown"):
        out = tmp_path / f"report{kind}"
        got = _run(["export", kind, str(out), str(f)], env)
        assert got.returncode == 0, (kind, got.stderr.decode(errors="replace")[-600:])
        out.read_bytes().decode("utf-8")  # UTF-8 throughout
    # The repair writes the session's own fields back (a sessionId with a surrogate: as its escape,
    # which Claude Code reads back as the same string), keeps a sidecar, and undoes byte for byte.
    got = _run(["repair", "--strategy", "recover", "--window", "20000", "--write", str(f)], env)
    assert got.returncode == 0, got.stderr.decode(errors="replace")[-600:]
    if where == "session_id":
        assert b"\\udc00" in f.read_bytes()[len(before) :]
    assert _run(["backups", str(f)], env).returncode == 0
    got = _run(["undo", str(f)], env)
    assert got.returncode == 0, got.stderr.decode(errors="replace")[-600:]
    assert f.read_bytes() == before
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copyfile(f, folder / "s.jsonl")
    for args in (["scan", str(folder)], ["scan", str(folder), "--json"], ["search", "orphan", str(folder)], ["usage", str(folder), "--json"]):
        got = _run(args, env)
        assert got.returncode == 0, (args, got.stderr.decode(errors="replace")[-600:])
    if where == "text":
        assert b"\\ud800 marked" in _run(["search", "marked", str(folder)], env).stdout
    if where == "model":
        assert b"claude\\udfff-opus" in _run(["usage", str(folder), "--by", "model"], env).stderr


def test_a_file_name_that_is_not_utf8_is_scanned_repaired_and_undone(tmp_path: Path, env: dict[str, str]) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    name = os.fsdecode(b"bad\xffname.jsonl")  # (a lone surrogate in Python: '\udcff')
    f = folder / name
    shutil.copyfile(BASE, f)
    for args in (["scan", str(folder)], ["scan", str(folder), "--json"], ["search", "window", str(folder)], ["usage", str(folder)]):
        for _ in range(2):  # read, then from the index
            got = _run(args, env)
            assert got.returncode == 0, (args, got.stderr.decode(errors="replace")[-600:])
    rows = [json.loads(x) for x in _run(["scan", str(folder), "--json"], env).stdout.splitlines()]
    assert [r["path"] for r in rows] == [str(folder / "bad\\udcffname.jsonl")]
    got = _run(["repair", "--strategy", "recover", "--window", "20000", "--write", str(f)], env)
    assert got.returncode == 0, got.stderr.decode(errors="replace")[-600:]
    assert _run(["backups", str(f)], env).returncode == 0
    got = _run(["undo", str(f)], env)
    assert got.returncode == 0, got.stderr.decode(errors="replace")[-600:]
    assert f.read_bytes() == BASE.read_bytes()


FOUND = REPO / "tests" / "fuzz" / "found" / "native-lone-surrogate-in-a-summary.jsonl"  # (fuzz seed 121)


@pytest.mark.parametrize("args", [["plan", "--strategy", "compact"], ["plan", "--strategy", "resummarize"], ["analyze"], ["context"]])
def test_main_called_by_a_program_prints_a_lone_surrogate_as_its_escape(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`inspector.cli.main.main`, called in-process (as the fuzz campaign and any program call it),
    onto a strict UTF-8 stdout: the native sample whose summary holds a lone surrogate printed
    without a crash (fuzz seed 121 found `plan` crashing there)."""
    import io
    import sys

    from inspector.cli.main import main

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", out)
    assert main([*args, str(FOUND)]) == 0
    out.flush()
    if args[0] == "plan":  # (the plan shows the summary that holds it)
        assert b"\\udc00" in out.buffer.getvalue()  # type: ignore[attr-defined]
