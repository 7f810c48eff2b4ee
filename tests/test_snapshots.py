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
from tests.conftest import REPO, app_reaches

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
    await app_reaches(pilot, lambda: getattr(app.screen, "report", None) is not None)
    await pilot.pause(0.3)


def _app(*targets: str):  # type: ignore[no-untyped-def]
    return create_app(list(targets), show_timings=False)


def test_session_view_adr0302(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot: Pilot) -> None:  # type: ignore[type-arg]
        await _analysed(pilot)
        await pilot.press("n")  # the first hole: the detail pane explains it
        await pilot.pause(0.3)

    assert snap_compare(_app(ADR), terminal_size=SIZE, run_before=before)


def test_session_view_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """The smallest usual terminal: rows keep some message text, the footer shows r and s."""

    async def before(pilot: Pilot) -> None:  # type: ignore[type-arg]
        await _analysed(pilot)
        await pilot.press("n")
        await pilot.pause(0.3)

    assert snap_compare(_app(ADR), terminal_size=(80, 24), run_before=before)


def test_load_error_screen(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot: Pilot) -> None:  # type: ignore[type-arg]
        await app_reaches(pilot, lambda: pilot.app.screen.query("#load-error"))
        await pilot.pause(0.2)

    assert snap_compare(_app("README.md"), terminal_size=(100, 20), run_before=before)


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
        await app_reaches(pilot, lambda: getattr(pilot.app.screen, "finished", False))
        await pilot.pause(0.5)

    assert snap_compare(_app(str(folder)), terminal_size=SIZE, run_before=before)


# The repair screen shows absolute paths (the file, its backup folder): a fixed copy and a fixed
# data dir keep them the same on every machine; a fixed id keeps the record the same on every run.
REPAIR_DIR = Path("/tmp/inspector-snapshot-repair")


def _repair_app(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    import shutil

    shutil.rmtree(REPAIR_DIR, ignore_errors=True)
    REPAIR_DIR.mkdir(parents=True)
    dst = REPAIR_DIR / "adr0302_amnesiac_fallback.jsonl"
    shutil.copyfile(REPO / ADR, dst)
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(REPAIR_DIR / "data"))
    monkeypatch.setattr("inspector.compaction.execute.fresh_id", lambda led, rng=None: "5eed0302")
    monkeypatch.setattr("inspector.compaction.execute.now_iso", lambda: "2026-01-01T00:00:00.000Z")
    return create_app([str(dst)], show_timings=False, window=32_000)


async def _repair_planned(pilot: Pilot) -> None:  # type: ignore[type-arg]
    await _analysed(pilot)
    await pilot.press("r")
    await pilot.pause(0.1)
    screen = pilot.app.screen
    screen.query_one("#request").value = "2500"  # small requests: the plan has several chunks
    for _ in range(400):
        await pilot.pause(0.025)
        p = getattr(screen, "plan", None)
        if p is not None and p.budgets.request == 2500:
            break
    await pilot.pause(0.3)


def test_repair_plan_screen(snap_compare, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(_repair_app(monkeypatch), terminal_size=SIZE, run_before=_repair_planned)


def test_repair_confirm_modal(snap_compare, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot: Pilot) -> None:  # type: ignore[type-arg]
        await _repair_planned(pilot)
        screen = pilot.app.screen
        await pilot.press("r")
        for _ in range(400):
            await pilot.pause(0.025)
            if screen.result is not None and not screen.running:
                break
        await pilot.press("w")
        await pilot.pause(0.3)

    assert snap_compare(_repair_app(monkeypatch), terminal_size=SIZE, run_before=before)
