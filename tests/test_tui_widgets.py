"""Pilot tests of the session view's side widgets: findings list, next-request view, detail pane,
help screen. Each drives the real app on the ADR 0302 sample and checks what a person would see."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from inspector.tui.app import create_app
from inspector.tui.context_view import NextRequestView
from inspector.tui.detail import DetailPane, clip, summary_sections
from inspector.tui.findings_list import FindingsList
from inspector.tui.help import HelpScreen

from .conftest import SAMPLES, app_reaches

AMNESIAC = str(SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl")
TRUNCATED_NATIVE = str(SAMPLES / "native" / "truncated_summary_loop.jsonl")
ORPHAN_NATIVE = str(SAMPLES / "native" / "orphan_tool_result_after_cut.jsonl")


async def _until(pilot: Pilot[Any], cond: Callable[[], bool]) -> None:
    await app_reaches(pilot, cond)


def run_app(path: str, body: Callable[[Any, Pilot[Any]], Coroutine[Any, Any, None]], **kw: int) -> None:
    async def main() -> None:
        app = create_app([path], **kw)
        async with app.run_test(size=(140, 40)) as pilot:
            await _until(pilot, lambda: getattr(app.screen, "report", None) is not None)
            await pilot.pause(0.1)
            await body(app, pilot)

    asyncio.run(main())


async def _next_request(app: Any, pilot: Pilot[Any]) -> NextRequestView:
    """The next-request tab opened, its table filled: once the tab is on screen and the worker
    has counted the items' tokens (after the landing; the first count loads the tokenizer)."""
    app.screen.action_tab("next")
    view = app.screen.query_one(NextRequestView)
    await _until(pilot, lambda: view.report is app.screen.report)
    return view


async def _detail_of(app: Any, pilot: Pilot[Any], seq: int) -> DetailPane:
    app.screen.go_to(seq)
    pane = app.screen.query_one(DetailPane)
    await _until(pilot, lambda: pane.seq == seq and pane._pending is None)
    await pilot.pause(0.05)
    return pane


def test_findings_list_shows_the_hole_and_enter_jumps_to_its_first_record() -> None:
    async def body(app: Any, pilot: Pilot[Any]) -> None:
        fl = app.screen.query_one(FindingsList)
        hole = next(f for f in fl.findings if f.code == "hole")
        assert hole.by_role == {"user": 3, "assistant": 34, "tool": 131}
        # Worst first: the list starts with errors, the hole among them.
        assert [f.severity for f in fl.findings] == sorted(
            (f.severity for f in fl.findings), key=("error", "warning", "info").index
        )
        idx = next(i for i in range(fl.option_count) if fl.finding_at(i) is hole)
        prompt = fl.get_option_at_index(idx).prompt
        text = "\n".join(t.plain for t in prompt.renderables)
        assert "HOLE" not in text and "ERROR" in text and "hole" in text
        assert "3 user / 34 assistant / 131 tool" in text
        timeline = app.screen.query_one("Timeline")
        assert timeline.current_seq != hole.records[0]
        app.screen.action_tab("findings")
        fl.focus()
        fl.highlighted = idx
        await pilot.press("enter")
        await _until(pilot, lambda: timeline.current_seq == hole.records[0])
        assert app.screen.report.states[timeline.current_seq] == "hole"

    run_app(AMNESIAC, body)


def test_next_request_view_lists_the_summary_and_the_one_kept_message() -> None:
    async def body(app: Any, pilot: Pilot[Any]) -> None:
        view = await _next_request(app, pilot)
        assert len(view.items) == 2
        assert view.items[0].kind == "summary"
        table = view.table
        assert table.row_count == 2
        row0 = [c.plain for c in table.get_row_at(0)]
        assert row0[1] == "user" and row0[2] == "summary"
        assert all(it.tokens for it in view.items)
        # Window unknown for this session: the gauge says so rather than inventing a window.
        gauge = app.screen.query_one("#next-gauge")
        assert "window unknown" in gauge.render().plain
        # Enter on the second item goes to the user message the checkpoint kept.
        app.screen.action_tab("next")
        table.focus()
        await pilot.press("down", "enter")
        timeline = app.screen.query_one("Timeline")
        await _until(pilot, lambda: timeline.current_seq == view.items[1].seq)

    run_app(AMNESIAC, body)


def test_the_window_and_reserve_are_set_from_the_next_request_view() -> None:
    async def body(app: Any, pilot: Pilot[Any]) -> None:
        await _next_request(app, pilot)
        gauge = app.screen.query_one("#next-gauge")
        words = gauge.render().plain
        assert "window unknown" in words and "--window" not in words and "window field" in words
        await pilot.press("w")
        window = app.screen.query_one("#next-window")
        assert app.focused is window and window.placeholder.startswith("unknown")
        await pilot.press(*"0", "enter")  # no window: refused, the field says so
        await pilot.pause(0.1)
        assert window.has_class("-invalid") and app.screen.report.window is None
        window.value = "8,000"
        app.screen.query_one("#next-reserve").value = "1000"
        await pilot.press("enter")
        await _until(pilot, lambda: app.screen.report.window == 8000)
        assert app.screen.report.reserve == 1000 and not window.has_class("-invalid")
        await _until(pilot, lambda: "of 8,000 tokens" in gauge.render().plain)
        assert window.placeholder == "8,000"

    run_app(AMNESIAC, body)


def _repeated_ids(tmp: Path) -> str:
    objs: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"}]
    parent = None
    for i in range(5):
        for j in range(2):  # each id written twice
            objs.append({"type": "message", "id": f"m{i}", "parentId": parent, "timestamp": "2026-01-01T00:00:01Z",
                         "message": {"role": "user", "content": f"message {i}.{j}"}})
        parent = f"m{i}"
    f = tmp / "repeated.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return str(f)


def test_repeated_findings_of_one_code_are_one_row_that_unfolds(tmp_path: Path) -> None:
    async def body(app: Any, pilot: Pilot[Any]) -> None:
        fl = app.screen.query_one(FindingsList)
        dups = [f for f in fl.findings if f.code == "duplicate_id"]
        assert len(dups) == 5
        rows = [fl.get_option_at_index(i) for i in range(fl.option_count)]
        assert [o.id for o in rows if o.id and o.id.startswith("group-")] == ["group-warning:duplicate_id"]
        assert not any(o.id and o.id.startswith("finding-") and fl.finding_at(k) in dups for k, o in enumerate(rows))
        group = next(k for k, o in enumerate(rows) if o.id == "group-warning:duplicate_id")
        text = "\n".join(t.plain for t in rows[group].prompt.renderables)
        assert "duplicate_id ×5" in text and "Enter to show all 5" in text
        app.screen.action_tab("findings")
        fl.highlighted = group
        await pilot.press("enter")  # unfolds: the five, below the group's row
        assert [fl.finding_at(k) for k in range(group + 1, group + 6)] == dups
        await pilot.press("down", "enter")  # a finding of the group jumps to its record
        timeline = app.screen.query_one("Timeline")
        await _until(pilot, lambda: timeline.current_seq == dups[0].records[0])
        fl.focus()
        fl.highlighted = group
        await pilot.press("enter")  # folds again
        assert fl.option_count == len(rows)

    run_app(_repeated_ids(tmp_path), body)


def test_next_request_gauge_against_a_window_and_orphan_marked() -> None:
    async def body(app: Any, pilot: Pilot[Any]) -> None:
        view = await _next_request(app, pilot)
        gauge = app.screen.query_one("#next-gauge").render().plain
        assert "of 4,000 tokens" in gauge and "reserve 500" in gauge
        orphan = next(i for i, it in enumerate(view.items) if it.orphan)
        assert "orphan" in view.table.get_row_at(orphan)[-1].plain

    run_app(ORPHAN_NATIVE, body, window=4000, reserve=500)


def test_detail_of_the_third_checkpoint_shows_carried_ranges_and_sections() -> None:
    async def body(app: Any, pilot: Pilot[Any]) -> None:
        third = app.screen.report.checkpoints[2]
        pane = await _detail_of(app, pilot, third.seq)
        text = pane.plain
        assert "checkpoint 3" in text
        assert "carried the previous summary forward" in text
        assert "latest_user_message" in text
        # Ranges, as counts by role and lines.
        assert "222 messages" in text and "lines 4–227" in text  # removes
        assert "54 messages" in text  # represents
        assert "168 messages" in text and "3 user / 34 assistant / 131 tool" in text  # lost
        # pi's summary template, every section present.
        for section in (
            "Goal",
            "Constraints & Preferences",
            "Progress",
            "Key Decisions",
            "Next Steps",
            "Critical Context",
        ):
            assert f"✓ {section} present" in text

    run_app(AMNESIAC, body)


def test_detail_of_a_message_shows_tool_arguments_and_usage() -> None:
    async def body(app: Any, pilot: Pilot[Any]) -> None:
        pane = await _detail_of(app, pilot, 4)
        text = pane.plain
        assert '"path": "invoicer/jobs/nightly.py"' in text
        assert "tool_use" in text and "toolUse" in text  # normalized and raw stop reason
        assert "gpt-4.1 @ openai" in text
        assert "2,380" in text  # usage input
        assert "summarized by checkpoint 1" in text

    run_app(AMNESIAC, body)


def test_detail_marks_a_protocol_summary_cut_before_the_essential_marker() -> None:
    async def body(app: Any, pilot: Pilot[Any]) -> None:
        cp = app.screen.report.checkpoints[2]
        pane = await _detail_of(app, pilot, cp.seq)
        assert "summary protocol" in pane.plain
        assert "✂ Current work state truncated" in pane.plain
        assert "✗ Continuation contract missing" in pane.plain
        assert "✗ essential-complete marker missing" in pane.plain

    run_app(TRUNCATED_NATIVE, body)


def test_help_opens_on_f1_and_closes_on_escape() -> None:
    async def body(app: Any, pilot: Pilot[Any]) -> None:
        await pilot.press("f1")
        await _until(pilot, lambda: isinstance(app.screen, HelpScreen))
        keys = app.screen.query_one("#help-keys").render()
        assert keys is not None
        assert "hole" in app.screen.query_one("#help-hole").render().plain
        await pilot.press("escape")
        await _until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        assert app.screen.report is not None

    run_app(AMNESIAC, body)


def test_clip_says_how_much_was_left_out() -> None:
    text, note = clip("x" * 60_213, limit=12_000)
    assert len(text) == 12_000 and note == "… 48,213 more characters"
    text, note = clip("line\n" * 1000, max_lines=10)
    assert text.count("\n") == 9 and note is not None and "more lines" in note
    assert clip("short") == ("short", None)


def test_summary_sections_of_pi_and_protocol_summaries() -> None:
    name, rows, why = summary_sections(
        "## Goal\n- a\n\n## Constraints & Preferences\n- b\n\n## Progress\n- c"
    )
    assert name == "pi summary template" and why
    assert dict(rows)["Progress"] == "truncated" and dict(rows)["Critical Context"] == "missing"
    name, rows, why = summary_sections(
        "## Active request\nx\n## Current work state\ny\n## Safety and user constraints\nz\n"
        "## Continuation contract\nw\n<!-- essential-complete -->\n## Files\na\n"
    )
    assert name.startswith("summary protocol")
    assert dict(rows)["essential-complete marker"] == "present"
    assert dict(rows)["Files (optional)"] == "truncated"
    assert summary_sections("just prose")[1] == []
