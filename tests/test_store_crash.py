"""Crash safety (issue 5, point 5).

A process writing a repair into a session (or undoing one) is SIGKILLed at every step of the
store's write, and at random moments: the session file is always either byte-identical to before
or the complete new version, and it loads cleanly. And a second process appending to the session
while a repair runs (an agent still at work) makes the repair refuse: nothing is lost.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from inspector.formats import load
from inspector.store.writeback import list_backups
from tests.conftest import REPO, SAMPLES
from tests.fake_provider import FakeProvider, Reply

ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"


def _child(action: str, session: Path, kill_at: int, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.store_child", action, str(session), str(kill_at), *extra],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "INSPECTOR_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(REPO)}


@pytest.fixture
def versions(tmp_path: Path, env: dict[str, str]) -> tuple[bytes, bytes, int, int]:
    """(the session before, the complete new version, steps of a write, steps of an undo), from
    an uninterrupted run (the child's repair is deterministic: fixed id and timestamp)."""
    f = tmp_path / "reference.jsonl"
    shutil.copyfile(ADR, f)
    before = f.read_bytes()
    w = _child("write", f, 0, env)
    assert w.returncode == 0, w.stderr
    after = f.read_bytes()
    assert after != before and after.startswith(before)
    u = _child("undo", f, 0, env)
    assert u.returncode == 0, u.stderr
    assert f.read_bytes() == before
    return before, after, int(w.stdout.split()[-1]), int(u.stdout.split()[-1])


def _loads_cleanly(f: Path) -> None:
    led = load(str(f))
    assert not [d for d in led.diagnostics if d.severity == "error"], led.diagnostics


def test_killed_at_every_step_of_a_write_leaves_before_or_complete(
    tmp_path: Path, env: dict[str, str], versions: tuple[bytes, bytes, int, int]
) -> None:
    before, after, steps, _ = versions
    assert steps >= 9  # start, locked, backup halves, sidecar halves, backed up, appended, verified
    outcomes: set[str] = set()
    for k in range(1, steps + 1):
        f = tmp_path / f"write-{k}.jsonl"
        shutil.copyfile(ADR, f)
        r = _child("write", f, k, env)
        assert r.returncode == -signal.SIGKILL, (k, r.stderr)
        now = f.read_bytes()
        assert now in (before, after), f"killed at step {k}: the file is neither the old nor the new version"
        outcomes.add("before" if now == before else "after")
        _loads_cleanly(f)
        # Whatever the backup folder holds, a listed backup is complete.
        for b in list_backups(str(f)):
            assert Path(b.path).read_bytes() == before
    assert outcomes == {"before", "after"}


def test_killed_at_every_step_of_an_undo_leaves_written_or_restored(
    tmp_path: Path, env: dict[str, str], versions: tuple[bytes, bytes, int, int]
) -> None:
    before, after, _, steps = versions
    outcomes: set[str] = set()
    for k in range(1, steps + 1):
        f = tmp_path / f"undo-{k}.jsonl"
        shutil.copyfile(ADR, f)
        assert _child("write", f, 0, env).returncode == 0
        r = _child("undo", f, k, env)
        assert r.returncode == -signal.SIGKILL, (k, r.stderr)
        now = f.read_bytes()
        assert now in (before, after), f"killed at undo step {k}"
        outcomes.add("before" if now == before else "after")
        _loads_cleanly(f)
    assert outcomes == {"before", "after"}


def test_killed_at_random_moments_leaves_before_or_complete(
    tmp_path: Path, env: dict[str, str], versions: tuple[bytes, bytes, int, int]
) -> None:
    before, after, _, _ = versions
    rng = random.Random(5)
    for k in range(8):
        f = tmp_path / f"random-{k}.jsonl"
        shutil.copyfile(ADR, f)
        p = subprocess.Popen(
            [sys.executable, "-m", "tests.store_child", "write", str(f), "0"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.2, 1.5))  # imports and analysis first, then the write itself
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        assert f.read_bytes() in (before, after), f"random kill {k}"
        _loads_cleanly(f)


AGENT_LINE = (
    b'{"type":"message","id":"a9e7f001","parentId":null,"timestamp":"2026-11-30T12:00:00.000Z",'
    b'"message":{"role":"user","content":[{"type":"text","text":"still here"}],"timestamp":1}}\n'
)


def _append_from_another_process(f: Path) -> None:
    subprocess.run(
        [sys.executable, "-c", f"open({str(f)!r}, 'ab').write({AGENT_LINE!r})"], check=True, timeout=30
    )


def test_an_agent_appending_while_the_summarizer_runs_makes_the_repair_refuse(
    tmp_path: Path, env: dict[str, str]
) -> None:
    f = tmp_path / "busy.jsonl"
    shutil.copyfile(ADR, f)
    original = f.read_bytes()
    summary = (
        "## Active request\nfinish it\n## Current work state\nhalfway\n## Safety and user constraints\nnone\n"
        "## Continuation contract\ngo on\n<!-- essential-complete -->\n"
    )
    reply = Reply(200, {"choices": [{"message": {"content": summary}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 10}}, delay=2.0)
    with FakeProvider([reply]) as fake:
        p = subprocess.Popen(
            [sys.executable, "-m", "inspector", "repair", str(f), "--strategy", "resummarize", "--write",
             "--provider", "openai", "--model", "m", "--base-url", f"{fake.url}/v1", "--window", "16000", "--reserve", "2000"],
            cwd=REPO, env={**env, "OPENAI_API_KEY": "sk-test"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        deadline = time.monotonic() + 60
        while not fake.requests and p.poll() is None and time.monotonic() < deadline:  # the call is in flight
            time.sleep(0.05)
        assert fake.requests, f"the repair never called the summarizer: {p.communicate()}"
        _append_from_another_process(f)
        out, err = p.communicate(timeout=120)
    assert p.returncode == 2, (out, err)
    assert "changed since it was analysed" in err and "nothing written" in err
    assert f.read_bytes() == original + AGENT_LINE, "the agent's line is kept, nothing of ours is written"
    assert list_backups(str(f)) == []


def test_an_agent_appending_just_before_the_lock_makes_the_write_refuse(tmp_path: Path, env: dict[str, str]) -> None:
    f = tmp_path / "race.jsonl"
    shutil.copyfile(ADR, f)
    original = f.read_bytes()
    p = subprocess.Popen(
        [sys.executable, "-m", "tests.store_child", "write", str(f), "0", "--hold", "1.5"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert p.stdout is not None
    ready = threading.Event()
    threading.Thread(target=lambda: (p.stdout.readline(), ready.set()), daemon=True).start()
    assert ready.wait(60), "the writer never reached its first step"
    _append_from_another_process(f)
    _, err = p.communicate(timeout=60)
    assert p.returncode != 0 and "changed since it was analysed" in err
    assert f.read_bytes() == original + AGENT_LINE
