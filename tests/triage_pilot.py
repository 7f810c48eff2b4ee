"""Driving the triage browser headless: run an app under a pilot, wait for a condition, wait for the
browser to finish filling (shared by the triage tests)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from inspector.tui.app import InspectorApp
from inspector.tui.triage import TriageScreen


def run(app: InspectorApp, body: Callable[..., Awaitable[None]], size: tuple[int, int]) -> None:
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await body(pilot)

    asyncio.run(main())


async def until(pilot, cond: Callable[[], bool], timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.02)


async def filled(pilot, settle: float | None = None) -> TriageScreen:  # type: ignore[no-untyped-def]
    """The browser once every session is in its table."""
    await until(pilot, lambda: isinstance(pilot.app.screen, TriageScreen) and pilot.app.screen.finished)
    await pilot.pause(settle)
    screen = pilot.app.screen
    assert isinstance(screen, TriageScreen)
    return screen
