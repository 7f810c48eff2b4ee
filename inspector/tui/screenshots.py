"""Regenerate the README's pictures of the app (SVG screenshots Textual saves).

    python -m inspector.tui.screenshots [OUT_DIR]     # default: docs/images

Each picture is the app, headless at a fixed size, on a bundled sample session, so a newcomer
sees what the tool does before installing it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from inspector.tui.app import InspectorApp, create_app

REPO = Path(__file__).resolve().parents[2]
SIZE = (150, 44)


async def _wait(app: InspectorApp, pilot: Pilot[None], what: Callable[[], bool], seconds: float = 30) -> None:
    for _ in range(int(seconds / 0.05)):
        await pilot.pause(0.05)
        if what():
            return


async def _shot(
    out: Path,
    name: str,
    targets: list[str],
    steps: Callable[[InspectorApp, Pilot[None]], Awaitable[None]],
    **options: int,
) -> Path:
    app = create_app(targets, show_timings=False, **options)
    async with app.run_test(size=SIZE) as pilot:
        await steps(app, pilot)
        await pilot.pause(0.2)
        path = out / f"{name}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
    return path


async def _session_ready(app: InspectorApp, pilot: Pilot[None]) -> None:
    await _wait(app, pilot, lambda: getattr(app.screen, "report", None) is not None)


async def session_view(app: InspectorApp, pilot: Pilot[None]) -> None:
    await _session_ready(app, pilot)
    await pilot.press("n")  # the first hole


async def next_request(app: InspectorApp, pilot: Pilot[None]) -> None:
    await _session_ready(app, pilot)
    await pilot.press("3")


async def findings(app: InspectorApp, pilot: Pilot[None]) -> None:
    await _session_ready(app, pilot)
    await pilot.press("2")


async def triage(app: InspectorApp, pilot: Pilot[None]) -> None:
    def filled() -> bool:
        screen = app.screen
        return bool(getattr(screen, "finished", False))

    await _wait(app, pilot, filled, 60)
    await pilot.pause(0.5)


async def help_screen(app: InspectorApp, pilot: Pilot[None]) -> None:
    await _session_ready(app, pilot)
    await pilot.press("f1")


async def repair_screen(app: InspectorApp, pilot: Pilot[None]) -> None:
    """The repair screen after a run with the extractive summarizer (nothing is written)."""
    await _session_ready(app, pilot)
    await pilot.press("r")
    await _wait(app, pilot, lambda: getattr(app.screen, "plan", None) is not None)
    screen: Any = app.screen
    screen.query_one("#request").value = "2500"  # small requests: several chunks
    await _wait(app, pilot, lambda: screen.plan is not None and screen.plan.budgets.request == 2500)
    await pilot.press("r")
    await _wait(app, pilot, lambda: screen.result is not None and not screen.running)


async def simulate_screen(app: InspectorApp, pilot: Pilot[None]) -> None:
    """The simulate screen: pi's policy at a 16k window replayed beside what the session did."""
    await _session_ready(app, pilot)
    await pilot.press("s")
    await _wait(app, pilot, lambda: getattr(app.screen, "session", None) is not None)
    screen: Any = app.screen
    for fid, value in (("context_window", "16000"), ("reserve_tokens", "3000"), ("keep_recent_tokens", "4000")):
        screen.query_one(f"#{fid}").value = value
    await _wait(
        app,
        pilot,
        lambda: screen.result is not None and screen.result.whatif.policy.get("keep_recent_tokens") == 4000,
    )


async def main(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    adr = "sample_sessions/pi/adr0302_amnesiac_fallback.jsonl"
    return [
        await _shot(out, "session-view", [adr], session_view),
        await _shot(out, "findings", [adr], findings),
        await _shot(out, "next-request", [adr], next_request),
        await _shot(out, "triage", ["sample_sessions/pi"], triage),
        await _shot(out, "help", [adr], help_screen),
        await _shot(out, "repair", [adr], repair_screen, window=32_000),
        await _shot(out, "simulate", [adr], simulate_screen),
    ]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "images"
    os.chdir(REPO)  # paths in the pictures are relative to the repository
    for p in asyncio.run(main(target)):
        print(p)
