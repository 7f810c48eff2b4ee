"""Pilot tests of the session view's navigation (issue 3, points 1, 2, 6, 8)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.formats import load
from inspector.tui import session as session_mod
from inspector.tui.app import create_app
from inspector.tui.minimap import Minimap
from inspector.tui.model import build_rows, hole_ranges
from inspector.tui.timeline import Timeline
from tests.conftest import SAMPLES, app_reaches

pytestmark = pytest.mark.anyio

ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"


async def _ready(app, pilot) -> None:  # type: ignore[no-untyped-def]
    await app_reaches(pilot, lambda: getattr(app.screen, "report", None) is not None, "the analysis landed")


def _cursor(app) -> int:  # type: ignore[no-untyped-def]
    return app.screen.query_one(Timeline).current_seq


async def test_n_jumps_between_hole_ranges_and_brackets_step_within_one() -> None:
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        report = app.screen.report
        holes = [s for s in range(len(report.states)) if report.states[s] == "hole"]
        assert len(holes) == 168  # one range: a checkpoint row inside it does not split it
        await pilot.press("n")
        assert _cursor(app) == holes[0]
        await pilot.press("n")  # the next range is this one again, not the next message
        assert _cursor(app) == holes[0]
        await pilot.press("right_square_bracket")
        assert _cursor(app) == holes[1]
        await pilot.press("right_square_bracket")
        assert _cursor(app) == holes[2]
        await pilot.press("left_square_bracket")
        assert _cursor(app) == holes[1]
        await pilot.press("N")  # back to the start of the range it is in
        assert _cursor(app) == holes[0]


def test_hole_ranges_are_ended_by_messages_only() -> None:
    report = analyze(load(str(ADR)))
    rows = build_rows(report.ledger, report)
    states = list(report.states)
    holes = [s for s in rows if states[s] == "hole"]
    states[holes[10]] = "live"  # a message in another state splits the range
    assert hole_ranges(report.ledger, rows, states) == [(holes[0], holes[9]), (holes[11], holes[-1])]


async def test_follow_tool_cycles_through_every_result_of_a_reply() -> None:
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        led = app.screen.ledger
        call = next(r for r in led.records if len(r.call_ids) == 4)
        results = [next(r.seq for r in led.records if r.result_id == cid) for cid in call.call_ids]
        app.screen.query_one(Timeline).go_to(call.seq)
        await pilot.pause()
        seen = []
        for _ in range(5):
            await pilot.press("t")
            seen.append(_cursor(app))
        assert seen == [*sorted(results), call.seq]
        app.screen.query_one(Timeline).go_to(results[2])
        await pilot.press("t")  # from a result: on to the next one
        assert _cursor(app) == sorted(results)[3]


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


async def test_a_landing_keeps_the_rows_only_when_they_are_every_record(tmp_path: Path) -> None:
    """The analysis landing on the ledger shown keeps the timeline's rows when inactive branches
    are shown (every record, whatever the report); with them hidden the rows are the report's."""
    app = create_app([str(_branching(tmp_path))])
    async with app.run_test(size=(120, 30)) as pilot:
        await _ready(app, pilot)
        tl = app.screen.query_one(Timeline)
        report = app.screen.report
        rows = tl.rows
        tl.set_report(report)
        assert tl.rows is rows and rows == [1, 2, 3]
        await pilot.press("i")
        tl.set_report(None)  # (before an analysis: every record)
        assert tl.rows == [1, 2, 3]
        tl.set_report(report)
        assert tl.rows == [1, 3]
        await pilot.press("i")
        tl.rows = [1, 2]  # (rows of fewer records: as if the ledger grew in place)
        tl.set_report(report)
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


async def test_the_full_index_is_read_once_the_preview_is_painted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole file is read after the preview's first paint, not beside the main thread's mount
    and paint of the view (the two threads took turns at the GIL)."""
    monkeypatch.setattr(session_mod, "PREVIEW_ABOVE_BYTES", 1000)
    monkeypatch.setattr(session_mod, "PREVIEW_LINES", 20)
    # (the wait's bound, 1 s, is for a paint that never comes; a loaded machine's paint may take longer)
    monkeypatch.setattr(session_mod, "FIRST_PAINT_WAIT_S", 120.0)
    painted_then: list[bool] = []
    original = session_mod.load

    def spy(path: str, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("upto_line") is None:
            painted_then.append(app.screen.first_paint is not None)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(session_mod, "load", spy)
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        assert painted_then == [True]


async def test_unreadable_file_says_why(tmp_path: Path) -> None:
    f = tmp_path / "x.jsonl"
    f.write_bytes(b"\x00\x01binary")
    app = create_app([str(f)])
    async with app.run_test(size=(120, 30)) as pilot:
        await app_reaches(pilot, lambda: "binary" in str(app.screen.query_one("#status").render()), "the status names the binary file")


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
        await app_reaches(pilot, lambda: pane.seq == repair.seq, "the detail pane shows the repair")
        assert words in pane.plain and "fallback" not in pane.plain.split("Ranges")[0]
        assert "written by inspector's repair" in pane.plain
        status = pane._cp_status(report, repair, None, True)
        assert status.plain == words and TONE_COLORS["ok"] in str(status.style)
# ------------------------------------------------------------------------------------ issue 11.4, 12.1: load errors


async def _settle(pilot, cond) -> None:  # type: ignore[no-untyped-def]
    await app_reaches(pilot, cond)


def _status(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one("#status").render())


async def test_a_file_that_is_no_session_leaves_a_screen_where_the_keys_work() -> None:
    readme = Path(__file__).parent.parent / "README.md"
    app = create_app([str(readme)])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: bool(app.screen.query("#load-error")))
        panel = str(app.screen.query_one("#load-error").render())
        assert "Could not open this file" in panel and "not a session ledger" in panel
        assert "o open another file" in panel and "q quit" in panel
        assert app.focused is None  # not the hidden search box, which swallowed q
        await pilot.press("n", "f", "t", "slash", "ctrl+g", "y", "m")  # keys that need a session: no effect
        shown = {b.binding.key for b in app.screen.active_bindings.values() if b.binding.show}
        assert "n" not in shown
        assert isinstance(app.screen, session_mod.SessionScreen)
        await pilot.press("escape", "q")
        await pilot.pause(0.1)
        assert not app.is_running


async def test_any_loader_exception_is_shown_and_the_app_stays_usable(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*a, **k):  # type: ignore[no-untyped-def]
        raise RuntimeError("a loader bug")

    monkeypatch.setattr(session_mod, "load", broken)
    app = create_app([str(ADR)])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: "a loader bug" in _status(app))
        assert "indexing" not in _status(app) and "RuntimeError" in _status(app)
        assert app.screen.query("#load-error")
        monkeypatch.undo()
        await pilot.press("o")  # open another file: the prompt starts in the file's folder
        box = app.screen.query_one("#prompt-input")
        assert box.value.endswith("pi/")
        box.value = str(ADR)
        await pilot.press("enter")
        await _settle(pilot, lambda: getattr(app.screen, "report", None) is not None)
        await pilot.press("escape")  # back to the failed screen, then quit
        await pilot.press("q")
        await pilot.pause(0.1)
        assert not app.is_running


async def test_an_analysis_exception_is_shown_on_the_status_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*a, **k):  # type: ignore[no-untyped-def]
        raise ValueError("an analysis bug")

    monkeypatch.setattr(session_mod, "analyze", broken)
    app = create_app([str(ADR)])
    async with app.run_test(size=(100, 30)) as pilot:
        await _settle(pilot, lambda: "an analysis bug" in _status(app))
        assert "the analysis failed" in _status(app)
        assert app.screen.query(Timeline)  # the timeline stays
        await pilot.press("j", "q")
        await pilot.pause(0.1)
        assert not app.is_running


# ------------------------------------------------------------------------------------ issue 12.5: footer, palette


async def test_footer_shows_repair_and_simulate_and_the_palette_lists_the_apps_commands_first() -> None:
    from textual.command import CommandList

    app = create_app([str(ADR)])
    async with app.run_test(size=(160, 40)) as pilot:
        await _ready(app, pilot)
        shown = {b.binding.key for b in app.screen.active_bindings.values() if b.binding.show}
        assert {"r", "s"} <= shown
        await pilot.press("ctrl+p")
        await _settle(pilot, lambda: bool(app.screen.query(CommandList)) and app.screen.query_one(CommandList).option_count > 0)
        await pilot.pause(0.2)
        commands = app.screen.query_one(CommandList)
        first = [str(commands.get_option_at_index(i).hit.text) for i in range(3)]
        assert first == [desc for _k, _a, desc in session_mod.SESSION_KEYS[:3]]


# ------------------------------------------------------------------------------------ issue 12.9, 12.18: the header


async def test_header_names_the_worst_finding_and_the_status_the_time_waited(monkeypatch: pytest.MonkeyPatch) -> None:
    def slowly(real):  # type: ignore[no-untyped-def]
        def slow(*a, **k):  # type: ignore[no-untyped-def]
            time.sleep(0.3)
            return real(*a, **k)

        return slow

    monkeypatch.setattr(session_mod, "load", slowly(session_mod.load))
    monkeypatch.setattr(session_mod, "analyze", slowly(session_mod.analyze))
    orphan = SAMPLES / "pi" / "orphan_tool_result_after_cut.jsonl"
    app = create_app([str(orphan)])
    async with app.run_test(size=(160, 40)) as pilot:
        await _ready(app, pilot)
        summary = str(app.screen.query_one("#summary").render())
        assert "1 error" in summary and "worst: orphan_tool_result: The tool result on line 26" in summary
        await _settle(pilot, lambda: "ready in" in _status(app))  # said once the analysis is painted
        status = _status(app)
        waited = float(status.split("ready in ")[1].split(" s")[0])
        index = float(status.split("(index ")[1].split(" s")[0])
        analysis = float(status.split("analysis ")[1].split(" s")[0])
        assert index >= 0.3 and analysis >= 0.3 and waited >= index + analysis - 0.02


async def test_header_leaves_holes_to_the_verdict() -> None:
    app = create_app([str(ADR)])
    async with app.run_test(size=(160, 40)) as pilot:
        await _ready(app, pilot)
        summary = str(app.screen.query_one("#summary").render())
        assert "fell into holes" in summary and "worst:" not in summary


# ------------------------------------------------------------------------------------ issue 12.17: f


async def test_f_raises_no_toast_where_the_detail_pane_shows_the_finding() -> None:
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        await pilot.press("f")
        await pilot.pause(0.2)
        assert not list(app._notifications)
        pane = app.screen.query_one("DetailPane")
        await _settle(pilot, lambda: pane.seq == _cursor(app))
        assert app.screen.report.findings[0].code in pane.plain
        await pilot.press("3", "f")  # the next-request tab hides the detail: then a toast says it
        await pilot.pause(0.2)
        assert len(list(app._notifications)) == 1


# ------------------------------------------------------------------------------------ issue 12.19, 12.20, 12.21


async def test_copy_the_record_the_summary_and_the_next_request(monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.command import CommandList

    app = create_app([str(ADR)])
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        rec = next(r for r in app.screen.ledger.records if r.kind == "message")
        app.screen.go_to(rec.seq)
        await pilot.press("y")
        assert json.loads(copied[-1]) == rec.raw()
        await pilot.press("Y")
        assert copied[-1].splitlines()[1] == str(app.screen.query_one("#summary").render()).split("  (tokenizer")[0]
        assert "- error hole: 168 messages" in copied[-1]
        await pilot.press("J")
        request = json.loads(copied[-1])
        assert len(request["messages"]) == len(app.screen.report.context)
        copied.clear()
        await pilot.press("ctrl+p")
        await pilot.press(*"copy the next request")
        await _settle(pilot, lambda: app.screen.query_one(CommandList).option_count > 0)
        await pilot.press("enter")
        await _settle(pilot, lambda: bool(copied))
        assert json.loads(copied[0])["messages"] == request["messages"]


async def test_view_in_full_a_record_and_an_item_of_the_next_request() -> None:
    from inspector.tui.dialogs import FullTextScreen

    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        led = app.screen.ledger
        long = next(r for r in led.records if r.message and len(r.message.text()) > 1000)
        app.screen.go_to(long.seq)
        await pilot.press("v")
        assert isinstance(app.screen, FullTextScreen)
        assert long.message.text() in app.screen.text  # uncut, where the timeline shows one line
        await pilot.press("q")  # closes the view, not the app
        assert isinstance(app.screen, session_mod.SessionScreen)
        await pilot.press("3")
        summary = app.screen.report.context[0]
        assert summary.kind == "summary" and len(summary.text) > 200
        await pilot.press("v")
        assert isinstance(app.screen, FullTextScreen) and app.screen.text == summary.text
        await pilot.press("escape")
        assert app.is_running


async def test_go_to_line() -> None:
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        await pilot.press("ctrl+g", *"100", "enter")
        await pilot.pause()
        assert app.screen.ledger.records[_cursor(app)].line == 100
        await pilot.press("ctrl+g", *"99999", "enter")
        await pilot.pause()
        assert _cursor(app) == len(app.screen.ledger.records) - 1
        await pilot.press("ctrl+g", *"abc", "enter")  # refused with a word, no move
        await pilot.pause()
        assert _cursor(app) == len(app.screen.ledger.records) - 1


# ------------------------------------------------------------------------------------ issue 12.22: reload


async def test_a_change_on_disk_is_announced_and_ctrl_r_reloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_mod, "WATCH_SECONDS", 0.05)
    f = tmp_path / "s.jsonl"
    f.write_bytes(ADR.read_bytes())
    app = create_app([str(f)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        await pilot.press("F")  # follow off (the copy is fresh, so it was on): a change is announced, not read
        n = len(app.screen.ledger.records)
        last = json.loads(ADR.read_text().splitlines()[-1])
        extra = {"type": "message", "id": "appended1", "parentId": last["id"], "timestamp": "2026-01-01T00:00:00Z",
                 "message": {"role": "user", "content": "one more"}}
        with f.open("a") as out:
            out.write(json.dumps(extra) + "\n")
        await _settle(pilot, lambda: "changed on disk" in _status(app))
        real = session_mod.load

        def slow(*a, **k):  # type: ignore[no-untyped-def]
            time.sleep(0.3)  # the watch runs meanwhile: it must not take the file being read for a change
            return real(*a, **k)

        monkeypatch.setattr(session_mod, "load", slow)
        await pilot.press("ctrl+r")
        await _settle(pilot, lambda: app.screen.report is not None and len(app.screen.ledger.records) == n + 1)
        assert "changed on disk" not in _status(app)


# ------------------------------------------------------------------------------------ issue 12.25: 80x24


async def test_at_80x24_rows_keep_text_the_cursor_stays_in_view_and_m_maximizes() -> None:
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        tl = app.screen.query_one(Timeline)
        tl.go_to(60)
        tl.action_cursor(15)  # the cursor near the bottom of a 40-line screen
        await pilot.pause()
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.2)
        row = tl.cursor
        assert tl.scroll_offset.y <= row < tl.scroll_offset.y + tl.scrollable_content_region.height
        rec = app.screen.ledger.records[tl.current_seq]
        text = tl.render_line(row - int(tl.scroll_offset.y)).text
        assert rec.message.first_line()[:12] in text
        await pilot.press("m")
        assert app.screen.maximized is tl
        await pilot.press("m")
        assert app.screen.maximized is None
        await pilot.press("2", "m")  # the focus is in the side pane: that one fills the screen
        assert app.screen.maximized is app.screen.query_one("#side")
        await pilot.press("escape")
        assert app.screen.maximized is None


def test_help_and_readme_list_every_key_of_the_session_view() -> None:
    from inspector.tui.help import HelpScreen

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    app_part = readme.split("## The app", 1)[1].split("\n## ", 1)[0]
    spelled = {"slash": "`/`", "escape": "Escape", "f1": "F1", "ctrl+g": "ctrl+g", "ctrl+r": "ctrl+r",
               "right_square_bracket": "`]`", "left_square_bracket": "`[`"}
    for key, _action, _desc in session_mod.SESSION_KEYS:
        assert spelled.get(key, f"`{key}`") in app_part, key
    table = HelpScreen(session_mod.SESSION_KEYS)._keys_table()
    described = {str(c) for col in table.columns for c in col.cells}
    assert all(desc in described for _k, _a, desc in session_mod.SESSION_KEYS)


# ------------------------------------------------------------------------------------ issue 11.5: a huge field


async def test_a_huge_id_is_cut_in_the_detail_pane_and_the_app_stays_usable(tmp_path: Path) -> None:
    """A record whose id is 2 MB (the fuzzer's `huge_line` made one 14 MB, and laying it out froze
    the app for minutes): the detail pane shows its first characters and says how many are left."""
    from inspector.tui.detail import FIELD_CHARS, DetailPane

    src = (SAMPLES / "native" / "live_question_summarized.jsonl").read_text().splitlines()
    run = json.loads(src[1])
    assert run["type"] == "run"
    run["id"] = "x" * 2_000_000
    path = tmp_path / "huge_id.jsonl"
    path.write_text("\n".join([src[0], json.dumps(run), *src[2:]]) + "\n")
    app = create_app([str(path)])
    async with app.run_test(size=(140, 40)) as pilot:
        await _ready(app, pilot)
        seq = next(r.seq for r in app.screen.report.ledger.records if r.line == 2)
        app.screen.query_one(Timeline).go_to(seq)
        pane = app.screen.query_one(DetailPane)
        await _settle(pilot, lambda: pane.seq == seq)
        row = next(ln for ln in pane.plain.splitlines() if "xxxx" in ln)
        assert len(row) < FIELD_CHARS + 60 and f"{2_000_000 - FIELD_CHARS:,} more characters" in pane.plain
        await pilot.press("q")


def test_a_huge_message_id_is_cut_in_the_next_request_and_the_repair_plan(tmp_path: Path) -> None:
    """A message whose id is 200 KB of words: the next-request table's cells and the repair screen's plan
    ("keeps from line N (id)") show it cut, so both lay out at once (a 3 MB one froze the app)."""
    from rich.console import Console

    from inspector.compaction.plan import Budgets, plan
    from inspector.tui.context_view import NextRequestView
    from inspector.tui.model import ROW_CHARS
    from inspector.tui.repair import plan_view

    src = (SAMPLES / "native" / "live_question_summarized.jsonl").read_text().splitlines()
    huge = "lorem ipsum " * 18_000  # words: the layout wraps it (one long word is cropped)
    lines = [json.loads(x) for x in src]
    old = lines[2]["id"]
    for o in lines:  # the id and every reference to it, so the session reads as before
        for k in ("id", "parent", "boundary"):
            if o.get(k) == old:
                o[k] = huge
    path = tmp_path / "huge_msg_id.jsonl"
    path.write_text("\n".join(json.dumps(o) for o in lines) + "\n")
    report = analyze(load(str(path)))
    console = Console(width=120, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    p = plan(report, "compact", Budgets(keep_recent=20_000))
    assert p.checkpoint is not None and report.ledger.records[p.index.rec(p.checkpoint.cut).seq].id == huge
    console.print(plan_view(p))
    assert len(console.export_text()) < ROW_CHARS * 10
    rows = [NextRequestView._row(None, report, it) for it in report.context]  # type: ignore[arg-type]
    assert max(len(c) for r in rows for c in r) <= ROW_CHARS
