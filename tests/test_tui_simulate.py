"""The Simulate screen (issue 7): reached from the session view by `s` and the command palette,
parameters editable, the plot and the table follow; one snapshot."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static

from inspector.tui.app import create_app
from inspector.tui.help import HelpScreen
from inspector.tui.session import SessionScreen
from inspector.tui.simulate import SimulateScreen
from tests.conftest import SAMPLES, app_reaches
from tests.test_simulate import adk_session

SIZE = (140, 40)


@pytest.fixture
def gen_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A generated 40-turn ADK session with recorded usage, opened by a relative path (the
    screen shows it: snapshots must not depend on the temporary directory)."""
    (tmp_path / "gen40.json").write_text(json.dumps(adk_session(40, usage=True)))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    return "gen40.json"


async def _wait(pilot: Pilot, ready) -> None:  # type: ignore[no-untyped-def, type-arg]
    await app_reaches(pilot, ready)
    await pilot.pause(0.2)


async def _open_simulate(pilot: Pilot) -> SimulateScreen:  # type: ignore[type-arg]
    app = pilot.app
    await _wait(pilot, lambda: getattr(app.screen, "report", None) is not None)
    await pilot.press("s")
    await _wait(pilot, lambda: isinstance(app.screen, SimulateScreen) and app.screen.result is not None)
    assert isinstance(app.screen, SimulateScreen)
    return app.screen


async def _settle(pilot: Pilot, screen: SimulateScreen, label: str) -> None:  # type: ignore[type-arg]
    await _wait(pilot, lambda: screen.result is not None and screen.result.whatif.label == label)


@pytest.mark.anyio
async def test_simulate_screen_edits_follow_into_the_replay(gen_session: str) -> None:
    app = create_app([gen_session], show_timings=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_simulate(pilot)
        assert screen.result is not None
        # No recorded compaction in an ADK session: it opens on token threshold at half the peak.
        assert screen.query_one("#policy", Select).value == "adk-token"
        peak = max(c.prompt_tokens for c in screen.result.baseline.calls)
        assert screen.query_one("#token_threshold", Input).value == str(peak // 2)
        assert screen.result.whatif.compactions  # the what-if compacts where the session did not
        assert screen.result.whatif.peak < screen.result.baseline.peak
        # The fields of another policy are hidden.
        assert not screen.query_one("#compaction_interval", Input).display or screen.query_one(
            "#compaction_interval", Input
        ).has_class("-irrelevant")

        # Seed 003: a short sliding interval with a large retention starves tail retention.
        screen.query_one("#policy", Select).value = "adk-both"
        await _settle(pilot, screen, "adk-both")
        screen.query_one("#compaction_interval", Input).value = "2"
        screen.query_one("#event_retention_size", Input).value = "10"
        await _wait(
            pilot,
            lambda: screen.result is not None and screen.result.whatif.policy.get("event_retention_size") == 10,
        )
        assert screen.result is not None
        assert screen.result.whatif.policy["compaction_interval"] == 2
        assert "sliding_starves_tail" in {w.code for w in screen.result.warnings}
        shown = screen.query_one("#sim-stats", Static).content
        assert "sliding_starves_tail" in shown.renderables[1].plain  # type: ignore[union-attr]

        # retention 0 on the token path: the live question goes, and the screen says so.
        screen.query_one("#policy", Select).value = "adk-token"
        screen.query_one("#event_retention_size", Input).value = "0"
        await _wait(
            pilot,
            lambda: screen.result is not None
            and screen.result.whatif.label == "adk-token"
            and screen.result.whatif.policy.get("event_retention_size") == 0,
        )
        assert screen.result is not None
        assert screen.result.whatif.live_questions_lost
        assert "retention_zero" in {w.code for w in screen.result.warnings}

        # F1 explains the screen; Escape closes help, then goes back to the session view.
        await pilot.press("f1")
        await pilot.pause(0.2)
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.about is not None and app.screen.about[0] == "The simulate screen"
        await pilot.press("escape")
        await pilot.pause(0.1)
        await pilot.press("escape")
        await pilot.pause(0.2)
        assert isinstance(app.screen, SessionScreen)


@pytest.mark.anyio
async def test_simulate_is_in_the_command_palette(gen_session: str) -> None:
    from inspector.tui.app import SessionCommands

    app = create_app([gen_session], show_timings=False)
    async with app.run_test(size=SIZE) as pilot:
        await _wait(pilot, lambda: getattr(app.screen, "report", None) is not None)
        provider = SessionCommands(app.screen)
        hits = [h async for h in provider.search("simulate")]
        assert hits and "Simulate" in str(hits[0].match_display)
        await hits[0].command()
        await _wait(pilot, lambda: isinstance(app.screen, SimulateScreen) and app.screen.result is not None)
        assert isinstance(app.screen, SimulateScreen)


def test_simulate_screen_snapshot(snap_compare, gen_session: str) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot: Pilot) -> None:  # type: ignore[type-arg]
        await _open_simulate(pilot)
        await pilot.pause(0.3)

    assert snap_compare(create_app([gen_session], show_timings=False), terminal_size=SIZE, run_before=before)


ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"


@pytest.mark.anyio
async def test_typing_a_number_replays_once_after_the_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12 point 4: every keystroke re-ran the replay ("1", "16", "160", ...)."""
    from inspector.analysis import simulate as sim
    from inspector.tui import simulate as sim_screen

    # The pause is the screen's: a longer one here, so that a loaded machine's slow keystrokes
    # (one was 0.5 s apart in a CI run) are still one burst of typing.
    monkeypatch.setattr(sim_screen, "EDIT_DEBOUNCE", 3.0)
    app = create_app([str(ADR)], show_timings=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_simulate(pilot)
        assert screen.query_one("#policy", Select).value == "pi"
        replays: list[int] = []
        real = sim.simulate

        def counted(led, policy, *args, **kwargs):  # type: ignore[no-untyped-def]
            replays.append(policy.context_window)
            return real(led, policy, *args, **kwargs)

        monkeypatch.setattr(sim, "simulate", counted)
        box = screen.query_one("#context_window", Input)
        box.focus()
        box.value = ""
        await pilot.press(*"16000")
        await _wait(pilot, lambda: screen.result is not None and screen.result.whatif.policy["context_window"] == 16_000)
        await pilot.pause(0.6)
        assert replays == [16_000]
        assert "typed here" in str(screen.query_one("#source-context_window", Static).content)


@pytest.mark.anyio
async def test_the_plot_draws_the_window_the_threshold_and_both_kinds_of_compaction() -> None:
    """Issue 12 point 24: the plot drew the prompts and the what-if compactions only."""
    from textual_plotext import PlotextPlot

    app = create_app([str(ADR)], show_timings=False, window=16_000)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_simulate(pilot)
        assert screen.window is not None and screen.window.tokens == 16_000
        assert "--window" in str(screen.query_one("#source-context_window", Static).content)
        screen.query_one("#reserve_tokens", Input).value = "4000"
        screen.query_one("#keep_recent_tokens", Input).value = "2000"
        await _wait(pilot, lambda: screen.result is not None and screen.result.whatif.policy["reserve_tokens"] == 4000)
        r = screen.result
        assert r.whatif.compactions and r.baseline.compactions  # the ADR session compacted 3 times
        drawn: list[tuple[str, list[float], list[float]]] = []
        plt = screen.query_one(PlotextPlot).plt
        for name in ("plot", "scatter"):
            real = getattr(plt, name)

            def spy(xs, ys, *a, real=real, **kw):  # type: ignore[no-untyped-def]
                drawn.append((kw.get("label", ""), list(xs), list(ys)))
                return real(xs, ys, *a, **kw)

            setattr(plt, name, spy)
        screen._show(r, "")
        by_label = {label: (xs, ys) for label, xs, ys in drawn}
        assert by_label["context window 16,000"][1] == [16_000, 16_000]
        assert by_label["compaction threshold 12,000"][1] == [12_000, 12_000]
        assert len(by_label["recorded compaction"][0]) == len(r.baseline.compactions)
        assert len(by_label["what-if compaction"][0]) == len(r.whatif.compactions)


@pytest.mark.anyio
async def test_a_replay_landing_after_the_screen_closed_is_dropped() -> None:
    """The replay runs on a worker thread; a result that lands once the user closed the screen
    went to a screen whose widgets were gone (NoMatches '#sim-title', found by the fuzzer)."""
    app = create_app([str(ADR)], show_timings=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_simulate(pilot)
        result = screen.result
        assert result is not None
        await pilot.press("escape")
        await _wait(pilot, lambda: isinstance(app.screen, SessionScreen) and screen not in app.screen_stack)
        screen._if_open(screen._show, result, "")  # what the worker's call_from_thread runs
        screen._if_open(screen._show_error, "late")
        assert isinstance(app.screen, SessionScreen)
