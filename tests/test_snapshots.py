"""Snapshot tests of the app (issue 3, point 9): fixed terminal size, deterministic content.

Regenerate after an intended change with `pytest tests/test_snapshots.py --snapshot-update`, then
look at the report (snapshot_report.html) before committing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot

from inspector.tui.app import create_app
from tests.conftest import REPO

ADR = "sample_sessions/pi/adr0302_amnesiac_fallback.jsonl"
SIZE = (140, 40)


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    # Paths shown on screen are relative to the repository, whatever the caller's directory;
    # times are shown in UTC.
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


async def _analysed(pilot: Pilot) -> None:  # type: ignore[type-arg]
    app = pilot.app
    for _ in range(300):
        await pilot.pause(0.02)
        if getattr(app.screen, "report", None) is not None:
            break
    await pilot.pause(0.3)


def _app(*targets: str):  # type: ignore[no-untyped-def]
    return create_app(list(targets), show_timings=False)


def test_session_view_adr0302(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot: Pilot) -> None:  # type: ignore[type-arg]
        await _analysed(pilot)
        await pilot.press("n")  # the first hole: the detail pane explains it
        await pilot.pause(0.3)

    assert snap_compare(_app(ADR), terminal_size=SIZE, run_before=before)


def test_next_request_view(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot: Pilot) -> None:  # type: ignore[type-arg]
        await _analysed(pilot)
        await pilot.press("3")
        await pilot.pause(0.3)

    assert snap_compare(
        create_app([ADR], show_timings=False, window=8000, reserve=1000), terminal_size=SIZE, run_before=before
    )


def test_help_screen(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot: Pilot) -> None:  # type: ignore[type-arg]
        await _analysed(pilot)
        await pilot.press("f1")
        await pilot.pause(0.3)

    assert snap_compare(_app(ADR), terminal_size=SIZE, run_before=before)


def test_snapshots_are_checked_in() -> None:
    snaps = Path(__file__).parent / "__snapshots__" / "test_snapshots"
    assert snaps.is_dir() and len(list(snaps.glob("*.svg"))) >= 3, f"missing snapshots in {snaps}"
    assert os.environ.get("INSPECTOR_FORCE_OFFLINE_TOKENIZER") == "1"


def test_triage_browser(snap_compare) -> None:  # type: ignore[no-untyped-def]
    import shutil

    # A fixed place and fixed modification times (older than a month: shown as dates), so the
    # screen is the same on every machine and every day.
    folder = Path("/tmp/inspector-snapshot/sessions")
    shutil.rmtree(folder.parent, ignore_errors=True)
    folder.mkdir(parents=True)
    base = 1767225600  # 2026-01-01T00:00:00Z
    for i, f in enumerate(sorted((REPO / "sample_sessions" / "pi").glob("*.jsonl"))):
        dst = folder / f.name
        shutil.copyfile(f, dst)
        os.utime(dst, (base + 3600 * i, base + 3600 * i))
    (folder / "notes.jsonl").write_text("this is not a session\n")
    os.utime(folder / "notes.jsonl", (base, base))

    async def before(pilot: Pilot) -> None:  # type: ignore[type-arg]
        for _ in range(500):
            await pilot.pause(0.02)
            if getattr(pilot.app.screen, "finished", False):
                break
        await pilot.pause(0.5)

    assert snap_compare(_app(str(folder)), terminal_size=SIZE, run_before=before)
