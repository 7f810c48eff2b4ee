"""The take-back and undo window (issue 11, point 7): an appender that ignores the lock never loses
a byte to inspector's truncation.

A real second process appends to the session in a loop, starting at a random moment inside the
critical section of `undo` (from taking the lock to the truncation) or of the take-back after a
failed verification (from the verdict to the truncation). Whatever it appended must be in the
file afterwards: either inspector saw it and refused to cut (the file left intact), or the cut came
first and the appender's bytes landed after it.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.compaction.entries import WriteError
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.formats import load
from inspector.store.writeback import BACKUP_SCHEMA, backup_dir, install, undo
from tests.conftest import SAMPLES

ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"
PADDING = 16 << 20  # a big session: reading and hashing it takes milliseconds, a window worth racing
TRIALS = 16
MORE_TRIALS = 48

# Appends pi `custom` lines from its own process, ignoring the lock: told "TRIAL DELAY_US" on stdin,
# it waits that long, appends for 50 ms (a line every 0.5 ms), then says how many lines it wrote.
APPENDER = r"""
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
print("ready", flush=True)
for cmd in sys.stdin:
    trial, delay = cmd.split()
    time.sleep(int(delay) / 1e6)
    k, end = 0, time.monotonic() + 0.05
    while time.monotonic() < end:
        os.write(fd, ('{"type":"custom","customType":"agent","id":"agent-%s-%d","parentId":null}\n' % (trial, k)).encode())
        k += 1
        time.sleep(0.0005)
    print(k, flush=True)
"""


class Appender:
    def __init__(self, session: Path) -> None:
        self.p = subprocess.Popen([sys.executable, "-c", APPENDER, str(session)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        assert self.p.stdout is not None and self.p.stdout.readline().strip() == "ready"

    def go(self, trial: int, delay_s: float) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(f"{trial} {int(delay_s * 1e6)}\n")
        self.p.stdin.flush()

    def done(self, trial: int) -> list[bytes]:
        """The ids it appended in this trial (it has stopped appending when this returns)."""
        assert self.p.stdout is not None
        n = int(self.p.stdout.readline())
        return [f'"id":"agent-{trial}-{k}"'.encode() for k in range(n)]

    def close(self) -> None:
        if self.p.stdin is not None:
            self.p.stdin.close()
        self.p.wait(timeout=30)


@pytest.fixture
def place(tmp_path: Path) -> Iterator[Path]:
    """Where the race runs: memory when the machine has it (an fsync of 16 MB on a slow disk would
    make each trial take a second, and the window is about reading and hashing, not the disk)."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    d = Path(tempfile.mkdtemp(prefix="inspector-race-", dir=shm))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(autouse=True)
def data_dir(place: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = place / "data"
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(d))
    return d


@pytest.fixture
def padded(place: Path) -> Path:
    """A pi session with a 16 MB custom entry after its header (not on the active path)."""
    lines = ADR.read_bytes().split(b"\n")
    pad = (b'{"type":"custom","customType":"padding","id":"0000pad0","parentId":null,'
           b'"timestamp":"2026-09-14T08:03:45.000Z","data":"' + b"x" * PADDING + b'"}')
    f = place / "padded.jsonl"
    f.write_bytes(b"\n".join([lines[0], pad, *lines[1:]]))
    return f


@pytest.fixture
def appender(padded: Path) -> Iterator[Appender]:
    a = Appender(padded)
    yield a
    a.close()


def _reset(f: Path, data: bytes) -> None:
    with open(f, "r+b") as out:  # in place: the appender keeps its descriptor on this file
        out.truncate(0)
        out.write(data)


def _race(
    trials: int, run: Callable[[Callable[[], None]], None], appender: Appender, f: Path, start: int,
    both_ways: Callable[[], bool] = lambda: True,
) -> list[str]:
    """Run `run(signal)` `trials` times; `signal()` is called inside the critical section and starts
    the appender after a random delay within it (its length measured by an unraced run). Returns
    what went missing from the file (past `start`: appended lines are never before it). Until
    `both_ways()` (the race went the other way at least once), up to `MORE_TRIALS` more: on a busy
    machine the appender may start late every time."""
    rng = random.Random(11)
    t0 = 0.0

    def mark() -> None:
        nonlocal t0
        t0 = time.perf_counter()

    run(mark)
    window = time.perf_counter() - t0
    lost: list[str] = []
    for trial in range(trials + MORE_TRIALS):
        if trial >= trials and both_ways():
            break
        run(lambda trial=trial: appender.go(trial, rng.uniform(0, window)))
        ids = appender.done(trial)
        with open(f, "rb") as g:
            g.seek(start)
            now = g.read()
        lost += [i.decode() for i in ids if i not in now]
        if lost:
            break
    return lost


def test_undo_never_cuts_what_an_appender_wrote_meanwhile(padded: Path, appender: Appender) -> None:
    before = padded.read_bytes()
    written = before + b'{"type":"custom","customType":"ours","id":"c0ffee00","parentId":null}\n'
    d = backup_dir(str(padded))
    d.mkdir(parents=True)
    saved = d / "20260101T000000.000Z-c0ffee00.jsonl"
    saved.write_bytes(before)
    meta = {"schema": BACKUP_SCHEMA, "path": str(saved), "session": str(padded.resolve()),
            "created": "2026-01-01T00:00:00.000Z", "size": len(before), "sha256": hashlib.sha256(before).hexdigest(),
            "written_size": len(written), "written_sha256": hashlib.sha256(written).hexdigest(),
            "entry_id": "c0ffee00", "what": "race test", "undone": None}
    refusals: list[str] = []

    def run(signal: Callable[[], None]) -> None:
        _reset(padded, written)
        Path(str(saved) + ".json").write_text(json.dumps(meta))
        try:
            undo(str(padded), step=lambda name: signal() if name == "locked" else None)
        except WriteError as e:
            refusals.append(str(e))

    lost = _race(TRIALS, run, appender, padded, len(before), lambda: bool(refusals))
    assert lost == [], f"undo cut {len(lost)} lines another process appended ({lost[:3]} ...)"
    assert refusals, "some appends came before the cut: undo saw them and refused"
    for e in refusals:
        assert "appended after inspector's record" in e and "nothing restored" in e, e


def test_the_take_back_never_cuts_what_an_appender_wrote_meanwhile(padded: Path, appender: Appender, data_dir: Path) -> None:
    original = padded.read_bytes()
    report = analyze(load(str(padded)))
    entry = repair(plan(report, "recover", Budgets()), entry_id="c0ffee00", timestamp="2026-01-01T00:00:00.000Z").entry
    assert entry is not None

    kept: list[str] = []

    def run(signal: Callable[[], None]) -> None:
        _reset(padded, original)
        shutil.rmtree(data_dir, ignore_errors=True)

        def broken(rep: object) -> list[str]:  # the verification's verdict, right before the take-back
            signal()
            return ["holes: 3, promised 0"]

        with pytest.raises(WriteError) as e:
            install(report, entry, expect=broken)
        if "removed again" not in str(e.value):
            kept.append(str(e.value))

    lost = _race(TRIALS, run, appender, padded, len(original), lambda: bool(kept))
    assert lost == [], f"the take-back cut {len(lost)} lines another process appended ({lost[:3]} ...)"
    assert kept, "some appends came before the cut: the take-back saw them and left the record in place"
    for e in kept:
        assert "appended after inspector's record" in e and "left in place" in e, e
