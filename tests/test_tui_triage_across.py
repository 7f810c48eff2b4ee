"""The triage browser across sessions (issue 18 points 1, 3, 4): it reads through the index `inspector
scan` keeps, shows each session's cost (sub-agents rolled into their parent; an unpriced model is
"unknown", never $0.00), takes the scan filters in its filter bar and names them in the header, and
`/` searches the text of every session (Enter opens the session at the hit's record)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from inspector.analysis.usage import cost_text, load_prices, session_costs
from inspector.cli.main import main
from inspector.store.index import SessionIndex
from inspector.tui.app import InspectorApp
from inspector.tui.session import SessionScreen
from inspector.tui.timeline import Timeline
from inspector.tui.triage import TriageScreen
from tests.test_scan import tree
from tests.triage_pilot import filled, until
from tests.triage_pilot import run as run_at

SIZE = (160, 40)


def run(app: InspectorApp, body: Callable[..., Awaitable[None]]) -> None:
    run_at(app, body, SIZE)


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """`tests.test_scan.tree` (pi samples, a Claude Code session with a sub-agent, a broken file)
    and a copy of the Claude Code session answered by a model no price table knows."""
    root = tree(tmp_path)
    src = root / "claude" / "proj" / "sess.jsonl"
    (root / "claude" / "other").mkdir()
    (root / "claude" / "other" / "mystery.jsonl").write_text(src.read_text().replace("claude-opus-4-6", "mystery-model-9"))
    return root


def by_name(screen: TriageScreen) -> dict[str, object]:
    return {Path(p).name: r for p, r in screen.rows.items()}


def shown(screen: TriageScreen) -> set[str]:
    table = screen.query_one(DataTable)
    return {Path(table.get_row_at(i)[0].row.path).name for i in range(table.row_count)}


def test_cost_column_rolls_sub_agents_into_their_parent_and_unknown_is_never_zero(sessions: Path) -> None:
    parent = sessions / "claude" / "proj" / "sess.jsonl"
    child = sessions / "claude" / "proj" / "sess" / "subagents" / "agent-acompact-1.jsonl"
    prices = load_prices()

    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot, 0.1)
        await until(pilot, lambda: screen.rows[str(parent)].cost is not None and screen.rows[str(parent)].cost.subagents)
        rows = by_name(screen)
        table = screen.query_one(DataTable)
        # the figures are `inspector usage`'s, from the same index
        with SessionIndex() as index:
            costs = session_costs(index.usage_items([str(parent), str(child)]), prices)
        want = costs[str(parent)]
        assert want.subagents == {str(child)} and want.cost is not None and want.cost > 0
        got = rows["sess.jsonl"].cost  # type: ignore[attr-defined]
        assert got.cost == pytest.approx(want.cost) and got.usage == want.usage
        assert table.get_cell(str(parent), "cost").plain == cost_text(want, "USD")
        own = rows["agent-acompact-1.jsonl"].cost  # type: ignore[attr-defined]
        assert own.cost is not None and own.cost < got.cost  # the sub-agent's own share, inside its parent's
        mystery = str(sessions / "claude" / "other" / "mystery.jsonl")
        assert table.get_cell(mystery, "cost").plain == "unknown"
        assert rows["mystery.jsonl"].cost.cost is None  # type: ignore[attr-defined]
        # an unreadable file has no usage: no cost to show (not $0.00)
        assert table.get_cell(str(sessions / "broken.jsonl"), "cost").plain == "–"

    run(InspectorApp([str(sessions)]), body)


def test_the_scan_filters_narrow_the_table_as_scan_does_and_the_header_names_them(
    sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", str(sessions), "--project", "spotter", "--json", "--no-progress"]) == 0
    by_scan = {Path(json.loads(line)["path"]).name for line in capsys.readouterr().out.splitlines()}

    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot, 0.1)
        table = screen.query_one(DataTable)
        box = screen.query_one("#filter", Input)
        title = screen.query_one("#title", Static)

        async def filter_by(text: str) -> set[str]:
            await pilot.press("f")
            assert box.has_focus
            box.value = text
            await pilot.press("enter")
            return shown(screen)

        assert await filter_by("project:spotter") == by_scan  # the very rows `scan --project` prints
        assert "mystery.jsonl" in by_scan and "healthy_chained.jsonl" not in by_scan
        assert "project spotter" in str(title.render())
        assert await filter_by("format:pi") == {"adr0302_amnesiac_fallback.jsonl", "healthy_chained.jsonl", "broken.jsonl"}
        assert "format pi" in str(title.render())
        # the Claude Code sessions ran on 2026-02-10 / 11; the pi samples have older times
        assert "sess.jsonl" in await filter_by("since:2026-02-01")
        assert await filter_by("since:2026-02-01 until:2026-02-01") == {"broken.jsonl"}
        assert "since 2026-02-01 · until 2026-02-01" in str(title.render())
        before = shown(screen)
        await filter_by("since:someday")  # a time it cannot read: said, and the table stays
        assert shown(screen) == before
        assert "since:someday: expected a date" in str(screen.query_one("#status", Static).render())
        await filter_by("")
        assert table.row_count == len(screen.rows)
        assert "since" not in str(title.render())

    run(InspectorApp([str(sessions)]), body)


def test_slash_searches_every_session_and_enter_opens_the_session_at_the_hit(
    sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "bash", str(sessions), "--json", "--no-progress", "--limit", "200"]) == 0
    want = [(h["path"], h["line"], h["role"]) for h in json.loads(capsys.readouterr().out)["hits"]]
    assert want

    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot, 0.1)
        await pilot.press("slash")
        box = screen.query_one("#search", Input)
        assert box.has_focus and screen.has_class("searching")
        await pilot.press(*"bash", "enter")
        hits_table = screen.query_one("#hits", DataTable)
        await until(pilot, lambda: hits_table.row_count > 0)
        # the hits `inspector search` prints, from the same index and query code
        assert [(h.path, h.line, h.role) for h in screen.hits] == want
        assert hits_table.has_focus
        status = str(screen.query_one("#status", Static).render())
        assert f"{len(want)} hits for 'bash'" in status
        first = screen.hits[0]
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen) and pilot.app.screen.report is not None)
        view = pilot.app.screen
        assert isinstance(view, SessionScreen) and view.path == first.path
        await until(pilot, lambda: view.query_one(Timeline).current_seq is not None)
        await pilot.pause(0.1)
        seq = view.query_one(Timeline).current_seq
        record = next(r for r in view.ledger.records if r.seq == seq)  # type: ignore[union-attr]
        assert record.line == first.line  # the cursor is on the record the hit names
        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is screen)
        assert screen.has_class("searching")  # back on the hits, as they were
        await pilot.press("escape")
        assert not screen.has_class("searching") and screen.query_one("#sessions", DataTable).has_focus

    run(InspectorApp([str(sessions)]), body)


def test_a_search_covers_only_the_sessions_the_filter_shows(sessions: Path) -> None:
    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot, 0.1)
        await pilot.press("f")
        screen.query_one("#filter", Input).value = "format:pi"
        await pilot.press("enter")
        await pilot.press("slash", *"bash", "enter")
        await pilot.pause(0.5)
        assert all("/pi/" in h.path for h in screen.hits)

    run(InspectorApp([str(sessions)]), body)


def test_a_in_the_session_view_goes_to_the_sub_agent_and_back(sessions: Path) -> None:
    parent = sessions / "claude" / "proj" / "sess.jsonl"
    child = sessions / "claude" / "proj" / "sess" / "subagents" / "agent-acompact-1.jsonl"

    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        await until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen) and pilot.app.screen.report is not None)
        top = pilot.app.screen
        assert isinstance(top, SessionScreen) and top.sub_agent_paths() == [str(child)]
        await pilot.press("a")
        await until(pilot, lambda: pilot.app.screen is not top and pilot.app.screen.report is not None)  # type: ignore[attr-defined]
        sub = pilot.app.screen
        assert isinstance(sub, SessionScreen) and sub.path == str(child)
        assert sub.parent_session_path() == str(parent)
        await pilot.press("a")  # in the sub-agent: back to the parent it came from
        await until(pilot, lambda: pilot.app.screen is top)

    run(InspectorApp([str(parent)]), body)


def test_a_in_a_sub_agent_opened_alone_opens_its_parent(sessions: Path) -> None:
    parent = sessions / "claude" / "proj" / "sess.jsonl"
    child = sessions / "claude" / "proj" / "sess" / "subagents" / "agent-acompact-1.jsonl"

    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        await until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen) and pilot.app.screen.report is not None)
        sub = pilot.app.screen
        await pilot.press("a")
        await until(pilot, lambda: pilot.app.screen is not sub and isinstance(pilot.app.screen, SessionScreen))
        assert pilot.app.screen.path == str(parent)  # type: ignore[attr-defined]

    run(InspectorApp([str(child)]), body)
