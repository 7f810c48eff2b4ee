"""Pilot tests of the session view's navigation (issue 3, points 1, 2, 6, 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.tui import session as session_mod
from inspector.tui.app import create_app
from inspector.tui.minimap import Minimap
from inspector.tui.timeline import Timeline
from tests.conftest import SAMPLES

pytestmark = pytest.mark.anyio

ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"


async def _ready(app, pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(200):
        await pilot.pause(0.02)
        if getattr(app.screen, "report", None) is not None:
            return
    raise AssertionError("the analysis never landed")


def _cursor(app) -> int:  # type: ignore[no-untyped-def]
    return app.screen.query_one(Timeline).current_seq


async def test_next_and_previous_hole() -> None:
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        report = app.screen.report
        holes = [s for s in range(len(report.states)) if report.states[s] == "hole"]
        assert len(holes) == 168
        await pilot.press("n")
        assert _cursor(app) == holes[0]
        await pilot.press("n")
        assert _cursor(app) == holes[1]
        await pilot.press("N")
        assert _cursor(app) == holes[0]
        await pilot.press("N")  # wraps to the last hole
        assert _cursor(app) == holes[-1]


async def test_follow_tool_call_to_result_and_back() -> None:
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        led = app.screen.ledger
        call = next(r for r in led.records if r.call_ids)
        result = next(r for r in led.records if r.result_id == call.call_ids[0])
        app.screen.query_one(Timeline).go_to(call.seq)
        await pilot.pause()
        await pilot.press("t")
        assert _cursor(app) == result.seq
        await pilot.press("t")
        assert _cursor(app) == call.seq


async def test_next_checkpoint_and_minimap_click() -> None:
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        cps = [v.seq for v in app.screen.report.checkpoints]
        await pilot.press("c")
        assert _cursor(app) == cps[0]
        await pilot.press("c")
        assert _cursor(app) == cps[1]
        await pilot.press("C")
        assert _cursor(app) == cps[0]
        minimap = app.screen.query_one(Minimap)
        await pilot.click(Minimap, offset=(minimap.size.width - 1, 0))
        await pilot.pause()
        assert _cursor(app) >= len(app.screen.ledger.records) - len(app.screen.ledger.records) // minimap.size.width - 2


async def test_search_moves_to_a_match() -> None:
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        await pilot.press("slash")
        await pilot.press(*"timeout_s")
        await pilot.press("enter")
        await pilot.pause()
        rec = app.screen.ledger.records[_cursor(app)]
        assert "timeout_s" in rec.message.text().lower()


def _branching(tmp_path: Path) -> Path:
    objs = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "t", "message": {"role": "user", "content": "one"}},
        {"type": "message", "id": "b", "parentId": "a", "timestamp": "t", "message": {"role": "user", "content": "old branch"}},
        {"type": "message", "id": "c", "parentId": "a", "timestamp": "t", "message": {"role": "user", "content": "new branch"}},
    ]
    f = tmp_path / "branch.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return f


async def test_toggle_inactive_branches(tmp_path: Path) -> None:
    app = create_app([str(_branching(tmp_path))])
    async with app.run_test(size=(120, 30)) as pilot:
        await _ready(app, pilot)
        tl = app.screen.query_one(Timeline)
        assert tl.rows == [1, 2, 3]
        await pilot.press("i")
        assert tl.rows == [1, 3]
        await pilot.press("i")
        assert tl.rows == [1, 2, 3]


async def test_big_file_shows_a_preview_then_the_full_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_mod, "PREVIEW_ABOVE_BYTES", 1000)
    monkeypatch.setattr(session_mod, "PREVIEW_LINES", 20)
    seen: list[tuple[int, bool]] = []
    original = session_mod.SessionScreen.on_session_screen_loaded

    async def spy(self, msg):  # type: ignore[no-untyped-def]
        seen.append((len(msg.ledger.records), msg.preview))
        await original(self, msg)

    monkeypatch.setattr(session_mod.SessionScreen, "on_session_screen_loaded", spy)
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        assert seen == [(20, True), (229, False)]
        assert len(app.screen.query_one(Timeline).rows) == 228
        assert app.screen.first_paint is not None


async def test_unreadable_file_says_why(tmp_path: Path) -> None:
    f = tmp_path / "x.jsonl"
    f.write_bytes(b"\x00\x01binary")
    app = create_app([str(f)])
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(50):
            await pilot.pause(0.02)
        status = str(app.screen.query_one("#status").render())
        assert "binary" in status


async def test_a_repair_checkpoint_is_named_for_what_it_is_not_as_a_failure(tmp_path: Path) -> None:
    """After the default repair of the ADR 0302 sample, the new checkpoint carries the summary on
    purpose and leaves no hole: the timeline row and the detail pane name it as inspector's repair,
    in green, not with the words of the fallback it fixed (issue 12, point 6)."""
    from rich.style import Style

    from inspector.cli.main import main
    from inspector.tui.detail import TONE_COLORS, DetailPane

    fixed = tmp_path / "fixed.jsonl"
    assert main(["repair", str(ADR), "--strategy", "resummarize", "--out", str(fixed)]) == 0
    app = create_app([str(fixed)])
    async with app.run_test(size=(160, 45)) as pilot:
        await _ready(app, pilot)
        report = app.screen.report
        repair, fallback = report.checkpoints[-1], report.checkpoints[-2]
        words = "inspector repair: kept 223 messages raw, summary carried"
        timeline = app.screen.query_one(Timeline)
        row = "".join(s.text for s in timeline._separator(repair.record, 200, Style()))
        assert words in row and "carried previous summary" not in row
        assert "fallback: carried the previous summary forward" in "".join(
            s.text for s in timeline._separator(fallback.record, 200, Style())
        )
        timeline.go_to(repair.seq)
        pane = app.screen.query_one(DetailPane)
        for _ in range(100):
            await pilot.pause(0.02)
            if pane.seq == repair.seq:
                break
        assert words in pane.plain and "fallback" not in pane.plain.split("Ranges")[0]
        assert "written by inspector's repair" in pane.plain
        status = pane._cp_status(report, repair, None, True)
        assert status.plain == words and TONE_COLORS["ok"] in str(status.style)
