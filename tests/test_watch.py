"""`inspector watch` (issue 17 point 3): a real appender process grows a session into a hole; the
watcher reports it (line, --json, --exec), and says when the file is deleted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector.live.sessions import DELETED, changes, refresh
from tests.conftest import REPO

SAMPLE = REPO / "sample_sessions" / "pi" / "adr0302_amnesiac_fallback.jsonl"
APPENDER = """
import sys, time
src, dst = sys.argv[1], sys.argv[2]
lines = open(src, "rb").read().splitlines(keepends=True)
with open(dst, "ab") as f:
    for line in lines[200:]:  # the agent goes on writing, the last line its fallback compaction
        f.write(line)
        f.flush()
        time.sleep(0.02)
"""


def _read_events(proc: subprocess.Popen[bytes], want: set[str], timeout: float) -> list[dict[str, object]]:
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), False)
    events: list[dict[str, object]] = []
    buf = b""
    end = time.monotonic() + timeout
    while time.monotonic() < end and not want <= {str(e["event"]) + ":" + str(e.get("code", "")) for e in events}:
        chunk = proc.stdout.read() or b""
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            events.append(json.loads(line))
        time.sleep(0.05)
    return events


@pytest.mark.parametrize("poll", [False, True], ids=["file-events", "polling"])
def test_an_appending_agent_that_makes_a_hole_is_reported_and_exec_runs(tmp_path: Path, poll: bool) -> None:
    session = tmp_path / "sessions" / "s.jsonl"
    session.parent.mkdir()
    session.write_bytes(b"".join(SAMPLE.read_bytes().splitlines(keepends=True)[:200]))
    exec_out = tmp_path / "exec.jsonl"
    cmd = [sys.executable, "-m", "inspector", "watch", str(session.parent), "--json", "--interval", "0.2",
           "--exec", f"cat >> {exec_out}; echo >> {exec_out}"] + (["--poll"] if poll else [])  # fmt: skip
    watcher = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(1.5)  # the baseline: the healthy start is not reported
        appender = subprocess.run([sys.executable, "-c", APPENDER, str(SAMPLE), str(session)], timeout=60)
        assert appender.returncode == 0
        events = _read_events(watcher, {"finding:hole"}, timeout=20)
        session.unlink()
        events += _read_events(watcher, {"deleted:"}, timeout=20)
    finally:
        watcher.terminate()
        _out, err = watcher.communicate(timeout=20)
    kinds = [(e["event"], e.get("code")) for e in events]
    assert ("finding", "hole") in kinds and ("deleted", None) in kinds, (kinds, err)
    hole = next(e for e in events if e.get("code") == "hole")
    assert hole["line"] == 59 and "168 messages" in str(hole["message"]) and hole["file"] == str(session)
    assert kinds.count(("finding", "hole")) == 1  # reported once, not at every growth
    ran = [json.loads(line) for line in exec_out.read_text().splitlines() if line.strip()]
    assert any(e.get("code") == "hole" for e in ran)
    assert b"Traceback" not in err


def test_refresh_keeps_the_last_summary_of_a_deleted_file(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(SAMPLE.read_bytes())
    first = refresh(None, str(p))
    assert any(f.key.code == "hole" for f in first.findings)
    p.unlink()
    gone = refresh(first, str(p))
    assert gone.status == DELETED and gone.findings == first.findings and gone.records == first.records
    (ev,) = changes(first, gone, "warning")
    assert ev["event"] == "deleted" and "last report is kept" in str(ev["message"])


def test_a_finding_below_fail_on_is_not_an_event(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(SAMPLE.read_bytes())
    s = refresh(None, str(p))
    assert {e["code"] for e in changes(None, s, "error")} == {"hole", "amnesiac_fallback"}
    assert "usage_missing" in {e["code"] for e in changes(None, s, "warning")}


def test_no_existing_path_is_a_usage_error(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "inspector", "watch", str(tmp_path / "nope")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "no such file or directory" in out.stderr


def test_a_finding_already_known_is_not_reported_again(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(SAMPLE.read_bytes())
    s = refresh(None, str(p))
    with p.open("ab") as f:  # the agent goes on: a new line, the same hole
        f.write(b"\n")
    again = refresh(s, str(p))
    assert again is not s and changes(s, again, "info") == []
