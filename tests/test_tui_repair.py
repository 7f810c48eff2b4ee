"""Pilot tests of the repair screen (issue 5, points 6-7): plan, run with progress and cancel,
confirm, install into a copy of the ADR 0302 sample, and the session view reloaded afterwards.

Every test works on a copy in tmp_path and keeps its backups in a tmp data dir.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import threading
from pathlib import Path

import pytest
from textual.widgets import Button, Input, Static

from inspector.analysis import analyze
from inspector.formats import load
from inspector.providers import make_provider
from inspector.store.writeback import backup_dir, list_backups
from inspector.tui.app import create_app
from inspector.tui.help import HelpScreen
from inspector.tui.minimap import Minimap
from inspector.tui.repair import ConfirmInstall, RepairScreen
from inspector.tui.session import SessionScreen
from inspector.tui.timeline import Timeline
from tests.conftest import SAMPLES, app_reaches

pytestmark = pytest.mark.anyio

ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"
SIZE = (140, 40)


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    dst = tmp_path / "adr0302.jsonl"
    shutil.copyfile(ADR, dst)
    return dst


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


async def _until(pilot, cond, what: str) -> None:  # type: ignore[no-untyped-def]
    await app_reaches(pilot, cond, what)


async def _session_ready(app, pilot) -> None:  # type: ignore[no-untyped-def]
    await _until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.report is not None, "analysis")


async def _planned(pilot, screen: RepairScreen, request: int | None = None) -> None:  # type: ignore[no-untyped-def]
    def ok() -> bool:
        p = screen.plan
        return p is not None and (request is None or p.budgets.request == request)

    await _until(pilot, ok, "the plan")
    await pilot.pause()


async def _open_repair(app, pilot, request: int | None = None) -> RepairScreen:  # type: ignore[no-untyped-def]
    await _session_ready(app, pilot)
    await pilot.press("r")
    await _until(pilot, lambda: isinstance(app.screen, RepairScreen), "the repair screen")
    screen = app.screen
    if request is not None:
        screen.query_one("#request", Input).value = str(request)
    await _planned(pilot, screen, request)
    return screen


async def _ran(pilot, screen: RepairScreen) -> None:  # type: ignore[no-untyped-def]
    await _until(pilot, lambda: screen.result is not None and not screen.running, "the run")
    await pilot.pause()


async def _run_to_confirm(app, pilot, screen: RepairScreen) -> None:  # type: ignore[no-untyped-def]
    """Run the repair, then ask to install it: the confirm modal is up."""
    await pilot.press("r")
    await _ran(pilot, screen)
    await pilot.press("w")
    await _until(pilot, lambda: isinstance(app.screen, ConfirmInstall), "the confirm modal")


def _text(screen, selector: str) -> str:  # type: ignore[no-untyped-def]
    """What a Static shows, as plain text (rich renderables printed at a wide width)."""
    from rich.console import Console

    content = screen.query_one(selector, Static).content
    if isinstance(content, str):
        return content
    console = Console(width=400, record=True, file=io.StringIO())
    console.print(content)
    return console.export_text()


async def test_repair_adr0302_end_to_end_writes_the_file_and_reloads_the_view(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = session.read_bytes()
    app = create_app([str(session)], window=32_000)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_repair(app, pilot, request=2_500)
        plan = screen.plan
        assert plan.strategy == "resummarize" and plan.action == "summarize"
        assert len(plan.requests) == 8 and plan.before.holes == 168 and plan.after.holes == 0
        assert "summarize with 8 request(s)" in _text(screen, "#plan-view")
        assert screen.query_one("#install", Button).disabled  # nothing run yet
        seen: list[tuple[int, int, str]] = []
        real = RepairScreen.on_repair_screen_progressed

        def spy(self, msg):  # type: ignore[no-untyped-def]
            real(self, msg)
            seen.append((msg.i, msg.n, _text(self, "#progress-label")))

        monkeypatch.setattr(RepairScreen, "on_repair_screen_progressed", spy)
        await pilot.press("r")
        await _ran(pilot, screen)
        res = screen.result
        assert res.status == "built" and len(res.calls) == 8 and res.after.holes == 0
        assert [(i, n) for i, n, _ in seen] == [(i, 8) for i in range(1, 9)]  # request i of N, in order
        assert seen[0][2].startswith("request 1 of 8")
        assert "tokens" in seen[-1][2] and " in / " in seen[-1][2]  # the usage so far, while it runs
        assert "checkpoint built: not installed yet" in _text(screen, "#progress-label")  # issue 12, point 7
        assert "built" in _text(screen, "#result-view") and "installed (" not in _text(screen, "#result-view")
        assert session.read_bytes() == original  # running writes nothing
        # The coverage band after the run is the run's own analysis: no hole in it.
        band = screen.query_one("#band-after", Minimap)
        assert band.report is res.after.report and "hole" not in {c[0] for c in band._compute(50)}
        assert "hole" in {c[0] for c in screen.query_one("#band-before", Minimap)._compute(50)}
        assert not screen.query_one("#install", Button).disabled

        await pilot.press("w")
        await _until(pilot, lambda: isinstance(app.screen, ConfirmInstall), "the confirm modal")
        modal = app.screen
        shown = _text(modal, "#confirm-text")
        assert str(session.resolve()) in shown.replace("\n", "")
        assert str(backup_dir(str(session))) in shown.replace("\n", "")
        assert res.entry["id"] in shown and "resummarize (built)" in shown
        await pilot.press("y")
        await _until(pilot, lambda: isinstance(app.screen, SessionScreen), "back to the session view")
        view = app.screen
        await _until(pilot, lambda: view.report is not None and view.report.checkpoints[-1].record.id == res.entry["id"],
                     "the reloaded session")
        await pilot.pause()
        # The view shows the new checkpoint: the cursor is on it and no hole is left.
        assert view.query_one(Timeline).current_seq == view.report.checkpoints[-1].seq
        assert "hole" not in view.report.states
        assert "repaired" in _text(view, "#status") and res.entry["id"] in _text(view, "#status")

    # On disk: the original bytes, then exactly one compaction record, as promised.
    data = session.read_bytes()
    assert data.startswith(original) and data.count(b"\n") == original.count(b"\n") + 1
    last = json.loads(data.splitlines()[-1])
    assert last["type"] == "compaction" and last["id"] == res.entry["id"] and last["fromHook"] is True
    after = analyze(load(str(session)), window=32_000)
    assert after.checkpoints[-1].record.id == last["id"]
    assert after.coverage_counts().get("hole", 0) == 0
    # The backup holds the bytes before the write; the sample itself was never touched.
    (b,) = list_backups(str(session))
    assert Path(b.path).read_bytes() == original and b.entry_id == last["id"]
    assert _sha(ADR) == hashlib.sha256(original).hexdigest()


async def test_escape_backs_out_without_writing(session: Path) -> None:
    before = _sha(session)
    app = create_app([str(session)], window=32_000)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_repair(app, pilot)
        await _run_to_confirm(app, pilot, screen)
        await pilot.press("escape")  # the modal: cancel
        await _until(pilot, lambda: app.screen is screen, "the modal closed")
        await pilot.press("w")
        await _until(pilot, lambda: isinstance(app.screen, ConfirmInstall), "the confirm modal again")
        await pilot.press("n")
        await _until(pilot, lambda: app.screen is screen, "the modal closed again")
        await pilot.press("escape")  # the repair screen: back
        await _until(pilot, lambda: isinstance(app.screen, SessionScreen), "the session view")
    assert _sha(session) == before
    assert not backup_dir(str(session)).exists()


class Blocking:
    """The extractive summarizer, held at its first call until the test lets it go."""

    def __init__(self) -> None:
        self.inner = make_provider("extractive", model=None, base_url=None)
        self.name = self.inner.name
        self.route = self.inner.route
        self.entered = threading.Event()
        self.go = threading.Event()
        self.calls = 0

    def summarize(self, req):  # type: ignore[no-untyped-def]
        self.calls += 1
        self.entered.set()
        self.go.wait(10)
        return self.inner.summarize(req)


async def test_cancel_stops_the_run_and_leaves_nothing_to_install(session: Path) -> None:
    before = _sha(session)
    app = create_app([str(session)])
    async with app.run_test(size=SIZE) as pilot:
        await _session_ready(app, pilot)
        slow = Blocking()
        screen = RepairScreen(app.screen.report, window=32_000, summarizer=slow)
        await app.push_screen(screen)
        screen.query_one("#request", Input).value = "2500"
        await _planned(pilot, screen, 2_500)
        assert len(screen.plan.requests) == 8
        await pilot.press("r")
        await _until(pilot, slow.entered.is_set, "the first call")
        assert screen.running and not screen.query_one("#cancel-run", Button).disabled
        assert screen.query_one("#run", Button).disabled and screen.query_one("#install", Button).disabled
        await pilot.press("c")
        assert "cancelling" in _text(screen, "#progress-label")
        slow.go.set()
        await _ran(pilot, screen)
        res = screen.result
        assert res.cancelled and res.status == "failed" and res.entry is None
        assert slow.calls == 1  # the call in flight finished, no other was made
        assert screen.query_one("#install", Button).disabled
        assert "cancelled" in _text(screen, "#install-why")
        assert "cancelled" in _text(screen, "#result-view")
        await pilot.press("w")  # refused: no modal
        await pilot.pause(0.1)
        assert app.screen is screen
    assert _sha(session) == before


async def test_install_is_disabled_with_the_reason_when_the_session_cannot_be_written(session: Path) -> None:
    before = _sha(session)
    app = create_app([str(session)], window=32_000, at_line=200)  # --at: a repair appends to the whole file
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_repair(app, pilot)
        assert "read only up to a line" in _text(screen, "#write-note")  # said before running, in full
        await pilot.press("r")
        await _ran(pilot, screen)
        assert screen.result.entry is not None  # the repair itself ran
        assert screen.query_one("#install", Button).disabled
        assert "read only up to a line" in _text(screen, "#write-note")
        assert "not offered" in _text(screen, "#install-why")
        await pilot.press("w")
        await pilot.pause(0.1)
        assert app.screen is screen
    assert _sha(session) == before


async def test_budgets_and_strategy_replan_and_bad_budgets_are_explained(session: Path) -> None:
    app = create_app([str(session)], window=32_000)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_repair(app, pilot)
        p = screen.plan
        assert p.budgets.window == 32_000 and p.budgets.sources["window"] == "flag"
        assert "window 32,000 (typed here)" in _text(screen, "#plan-view"), "the app's words for a given budget"
        assert p.budgets.sources["reserve"] == "pi default"
        assert screen.query_one("#reserve", Input).placeholder == "16,384"  # the default, shown
        screen.query_one("#reserve", Input).value = "40000"  # more than the window
        await _until(pilot, lambda: "No plan" in _text(screen, "#plan-view"), "the plan error")
        assert "reserve" in _text(screen, "#plan-view") and screen.plan is None
        # The app names its own field, not the command line's flag (issue 12, point 10).
        assert "type it in the reserve field" in _text(screen, "#plan-view")
        assert "--reserve" not in _text(screen, "#plan-view")
        assert "(typed here)" not in _text(screen, "#plan-view")
        assert screen.query_one("#run", Button).disabled
        screen.query_one("#reserve", Input).value = ""
        await _planned(pilot, screen)
        screen.query_one("#strategy").value = "recover"
        await _until(pilot, lambda: screen.plan is not None and screen.plan.strategy == "recover", "the recover plan")
        assert screen.plan.action == "recover" and not screen.plan.requests
        assert "no model call" in _text(screen, "#plan-view")


async def test_repair_is_in_the_palette_and_the_help(session: Path) -> None:
    app = create_app([str(session)], window=32_000)
    async with app.run_test(size=SIZE) as pilot:
        await _session_ready(app, pilot)
        await pilot.press("f1")
        await _until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        assert any(action == "repair" for _k, action, _d in app.screen.keys)
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"repair")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await _until(pilot, lambda: isinstance(app.screen, RepairScreen), "the repair screen from the palette")
        screen = app.screen
        await _planned(pilot, screen)
        await pilot.press("f1")
        await _until(pilot, lambda: isinstance(app.screen, HelpScreen), "the repair help")
        assert {a for _k, a, _d in app.screen.keys} >= {"run", "cancel", "install", "back"}
        assert app.screen.about is not None and "Install asks first" in app.screen.about[1]


async def test_a_refused_write_is_shown_and_nothing_is_installed(session: Path) -> None:
    app = create_app([str(session)], window=32_000)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_repair(app, pilot)
        await _run_to_confirm(app, pilot, screen)
        # The agent appends a line after the analysis: the write must be refused.
        with open(session, "ab") as f:
            f.write(b'{"type":"custom","id":"late0001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}\n')
        changed = session.read_bytes()
        await pilot.press("y")
        # Refused by the store (the file changed since it was analysed), or before it by the
        # screen once the followed session view saw the append (issue 17.5: the plan is stale).
        await _until(pilot, lambda: app.screen is screen and not screen.writing and any(
                     w in _text(screen, "#install-why") for w in ("changed since", "grew since this plan")), "the refusal")
        assert screen.query_one("#install", Button).disabled
        assert "nothing installed" in _text(screen, "#progress-label")
    assert session.read_bytes() == changed
    assert list_backups(str(session)) == []


async def test_an_install_waits_for_the_sessions_late_hash_and_refuses_a_rewritten_file(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session view hashes the file after its landing (tui/fingerprint.py); an install before
    that hash was taken takes it first. A rewrite of the same size after the analysis (the view
    not watching) is refused as a changed file, not written over."""
    from inspector.tui.fingerprint import LateFingerprint

    monkeypatch.setattr(LateFingerprint, "start", lambda self: None)  # not taken yet at the install
    monkeypatch.setattr(SessionScreen, "check_disk", lambda self: None)  # the view sees nothing
    app = create_app([str(session)], window=32_000)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_repair(app, pilot)
        assert screen.report.ledger.sha256 is None
        await _run_to_confirm(app, pilot, screen)
        data = session.read_bytes()
        i = data.index(b'"timestamp"')
        session.write_bytes(data[:i] + data[i:].replace(b"2026", b"2027", 1))  # same size, other bytes
        changed = session.read_bytes()
        assert len(changed) == len(data) and changed != data
        await pilot.press("y")
        await _until(pilot, lambda: app.screen is screen and not screen.writing and "changed since" in _text(screen, "#install-why"),
                     "the refusal")  # fmt: skip
        assert "nothing installed" in _text(screen, "#progress-label")
    assert session.read_bytes() == changed
    assert list_backups(str(session)) == []


async def test_a_summarizer_that_cannot_be_configured_is_said_and_cannot_run(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("INSPECTOR_OPENAI_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no config file: no key anywhere
    app = create_app([str(session)], window=32_000)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_repair(app, pilot)
        screen.query_one("#provider").value = "openai"
        await _until(pilot, lambda: "No plan" in _text(screen, "#plan-view"), "the provider error")
        assert "openai" in _text(screen, "#plan-view") and "key" in _text(screen, "#plan-view").lower()
        assert screen.query_one("#run", Button).disabled
        await pilot.press("r")  # nothing to run: no call, no result
        await pilot.pause(0.1)
        assert screen.result is None and not screen.running
        screen.query_one("#provider").value = "extractive"
        await _planned(pilot, screen)
        assert not screen.query_one("#run", Button).disabled


def test_the_plan_view_says_hole_messages_are_kept_raw_and_labels_the_budget() -> None:
    """The repair screen uses the CLI's words: the 168 hole messages fit the tail (no summarizer
    call), and the room for summary and tail is a budget (issue 12, points 8 and 12)."""
    from rich.console import Console

    from inspector.compaction.plan import plan
    from inspector.tui.repair import budgets_line, plan_view

    p = plan(analyze(load(str(SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"))), "resummarize")
    console = Console(width=400, record=True, file=io.StringIO())
    console.print(plan_view(p))
    shown = console.export_text()
    assert "the 168 hole messages fit in the window: kept raw, no summarizer call" in shown
    assert "nothing new to summarize" not in shown
    assert "summary + tail budget 1,031,164" in budgets_line(p).plain
async def test_empty_budgets_stay_valid_and_r_runs_what_was_just_typed(session: Path) -> None:
    """Issue 12 point 2: tabbing through the empty budget fields turned them red, and after typing
    in a field `r` went to the field (Enter only re-planned): running needed the button."""
    app = create_app([str(session)], window=32_000)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_repair(app, pilot)
        screen.query_one("#reserve", Input).focus()
        for _ in range(4):  # through reserve, keep recent, request and on: every one left empty
            await pilot.press("tab")
        await pilot.pause()
        for name in ("reserve", "keep_recent", "request"):
            box = screen.query_one(f"#{name}", Input)
            assert box.value == "" and not box.has_class("-invalid"), name
        box = screen.query_one("#request", Input)
        box.focus()
        await pilot.press(*"2500", "r")  # at once: before the edit's own re-plan
        await _ran(pilot, screen)
        assert box.value == "2500"  # the r was not typed into it
        # What ran is the plan of the budget just typed, not the one planned before the typing.
        assert screen.result.plan.budgets.request == 2_500 and len(screen.result.plan.requests) == 8
        assert screen.plan is screen.result.plan


async def test_no_plan_clears_the_after_band(session: Path) -> None:
    """Issue 12 point 3: budgets that make a plan impossible left the previous plan's "after"
    band on screen beside "No plan: …"."""
    app = create_app([str(session)], window=32_000)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_repair(app, pilot)
        band = screen.query_one("#band-after", Minimap)
        assert band.display and band.report is screen.plan.after.report
        screen.query_one("#reserve", Input).value = "40000"  # more than the window
        await _until(pilot, lambda: "No plan" in _text(screen, "#plan-view"), "the plan error")
        await pilot.pause()
        assert not band.display
        assert "no plan" in _text(screen, "#band-after-title")
        assert _text(screen, "#compare-view").strip() == "" and _text(screen, "#findings-view").strip() == ""
        screen.query_one("#reserve", Input).value = ""
        await _planned(pilot, screen)
        await pilot.pause()
        assert band.display and band.report is screen.plan.after.report


async def test_repair_and_simulate_open_on_one_window_that_says_where_it_came_from(session: Path) -> None:
    """Issue 12 point 11: the repair screen planned with the model table's 1,047,576 window while
    simulate opened at 200,000 on the same session; the window field showed "1,047,5"."""
    from inspector.tui.simulate import SimulateScreen

    app = create_app([str(session)])  # no --window: the session's model (gpt-4.1) decides
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_repair(app, pilot)
        assert screen.plan.budgets.window == 1_047_576
        assert screen.plan.budgets.sources["window"] == "model table (gpt-4.1)"
        box = screen.query_one("#window", Input)
        assert box.placeholder == "1,047,576"
        assert box.content_size.width > len(box.placeholder)  # the whole number, and the cursor
        await pilot.press("escape")
        await _until(pilot, lambda: isinstance(app.screen, SessionScreen), "the session view")
        await pilot.press("s")
        await _until(pilot, lambda: isinstance(app.screen, SimulateScreen) and app.screen.result is not None,
                     "the simulate screen")
        sim_screen = app.screen
        field = sim_screen.query_one("#context_window", Input)
        assert field.value == "1047576" and sim_screen.result.whatif.policy["context_window"] == 1_047_576
        assert "model table (gpt-4.1)" in _text(sim_screen, "#source-context_window")
        assert field.content_size.width > len(field.value)


async def test_a_read_landing_after_the_repair_screen_is_gone_is_kept_not_planned(session: Path) -> None:
    """A stale repair screen asked the session view to read the file again; the read lands after the
    screen's widgets are gone (the app quitting: CI saw NoMatches '#repair-status' here): no crash,
    the read kept for a plan made later."""
    app = create_app([str(session)])
    async with app.run_test(size=SIZE) as pilot:
        await _session_ready(app, pilot)
        report = app.screen.report
        screen = RepairScreen(report, window=32_000)  # never composed: as one whose widgets are gone
        screen._replan_when_read = True
        screen.session_read(report)
        assert screen._newer is report and screen._replan_when_read


async def test_a_change_on_disk_before_the_repair_screen_is_composed_is_kept_for_it(session: Path) -> None:
    """The session view's disk check can tell a repair screen that the file changed before the
    screen's widgets exist (pushed, not yet composed; or after they are gone, as the app quits):
    no crash; the stale plan is said once the screen is on."""
    app = create_app([str(session)])
    async with app.run_test(size=SIZE) as pilot:
        await _session_ready(app, pilot)
        screen = RepairScreen(app.screen.report, window=32_000)
        screen.session_changed("grew")  # not composed yet
        assert screen.stale == "grew"
        await app.push_screen(screen)
        await _until(pilot, lambda: "grew" in _text(screen, "#repair-status"), "the stale plan said")
