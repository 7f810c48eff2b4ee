"""The app's analysis lands without work nobody sees (issue 15, point 3): the next-request table,
one row per item of the request (thousands in a long session), is filled once its tab is opened."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.tui.app import create_app
from inspector.tui.context_view import NextRequestView
from tests.test_tui_follow import ADR, analysed, until

pytestmark = pytest.mark.anyio


async def test_the_next_request_table_is_filled_when_its_tab_is_opened() -> None:
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: analysed(app), "the first analysis")
        screen: Any = app.screen
        view = screen.query_one(NextRequestView)
        assert screen.report is not None and view.report is None  # the Detail tab is open
        await pilot.press("3")
        await until(pilot, lambda: view.report is screen.report, "the table filled")
        assert len(view.items) == len(screen.report.context) > 0


async def test_no_worker_reprs_the_session_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker given the ledger (the analysis) is described by its name: Textual's default
    description is the repr of every argument, and a ledger's repr is every record's (on a 500 MB
    rollout 1.3 s of the main thread and a 100 MB string before the analysis starts)."""
    from inspector.ledger.model import Ledger

    reprs: list[int] = []
    monkeypatch.setattr(Ledger, "__repr__", lambda self: reprs.append(len(self.records)) or "Ledger(...)")
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: analysed(app), "the first analysis")
        await pilot.press("ctrl+r")  # a reload analyses again
        await until(pilot, lambda: analysed(app), "the second analysis")
    assert reprs == []
