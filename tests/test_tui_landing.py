"""The app's analysis lands without work nobody sees (issue 15, point 3): the next-request table,
one row per item of the request (thousands in a long session), is filled once its tab is opened."""

from __future__ import annotations

import sys
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


async def test_the_analysis_lands_before_the_next_requests_tokens_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each item's tokens are counted after the landing (only the next-request table shows them,
    and on a big rollout counting them is as long again as the analysis); opening that tab waits
    for the count and shows them."""
    import threading

    from inspector.analysis.engine import Report

    release = threading.Event()
    count = Report.ensure_tokens

    def slow_count(self: Report) -> Any:
        release.wait(20)
        return count(self)

    monkeypatch.setattr(Report, "ensure_tokens", slow_count)
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: analysed(app), "the analysis, its tokens still uncounted")
        screen: Any = app.screen
        assert not release.is_set()  # landed while the count waits
        release.set()
        await pilot.press("3")
        view = screen.query_one(NextRequestView)
        await until(pilot, lambda: view.report is screen.report, "the table filled")
        assert all(it.tokens is not None for it in view.items)


async def test_the_session_view_keeps_what_it_read_out_of_the_collectors_sight(monkeypatch: pytest.MonkeyPatch) -> None:
    """The analysis runs with the cyclic collector paused, and what the view read and analysed is
    frozen (`gc.freeze`, as the one-shot CLI does after its load): on a 500 MB rollout a million
    tracked objects each collection walked again. Closing the view unfreezes it all."""
    import gc

    from inspector.tui import session as session_mod

    collecting: list[bool] = []
    frozen_collecting: list[bool] = []
    analyze, freeze = session_mod.analyze, session_mod.keep_out_of_collector

    def watched(*args: Any, **kwargs: Any) -> Any:
        collecting.append(gc.isenabled())
        return analyze(*args, **kwargs)

    def watched_freeze() -> None:
        if sys._getframe(1).f_code.co_name == "_analyze_now":  # (its first call there: the analysis')
            frozen_collecting.append(gc.isenabled())
        freeze()

    monkeypatch.setattr(session_mod, "analyze", watched)
    monkeypatch.setattr(session_mod, "keep_out_of_collector", watched_freeze)
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: analysed(app), "the first analysis")
        screen: Any = app.screen
        assert collecting == [False]
        # The analysis' result frozen before the collector is back on (its first pass would walk
        # everything the analysis made: 0.13 s on a 500 MB rollout, issue 15.3).
        assert frozen_collecting[:1] == [False]
        tracked = {id(o) for o in gc.get_objects()}
        assert id(screen.report.states) not in tracked and id(screen.ledger.records) not in tracked
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0  # the app closed: its screen unmounted


def test_the_cli_analyses_with_the_collector_paused_as_the_app_does(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import gc

    from inspector.cli import main as cli_main

    collecting: list[bool] = []
    analyze = cli_main.analyze

    def watched(*args: Any, **kwargs: Any) -> Any:
        collecting.append(gc.isenabled())
        return analyze(*args, **kwargs)

    monkeypatch.setattr(cli_main, "analyze", watched)
    assert cli_main.main(["analyze", str(ADR), "--json"]) in (0, 1)
    assert collecting == [False] and gc.isenabled()
    assert capsys.readouterr().out.startswith("{")


async def test_the_header_counts_the_wait_until_the_analysis_is_painted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The wait the status line reports ends once the analysis is on screen: the paint after the
    landing draws the rows with their states (and the minimap's colours), and that is waited for too."""
    import time

    from inspector.tui.timeline import Timeline

    render_row = Timeline._render_row
    slowed: list[bool] = []

    def slow_first_row_with_states(self: Any, seq: int, width: int, selected: bool) -> Any:
        if self.report is not None and not slowed:
            slowed.append(True)
            time.sleep(0.4)
        return render_row(self, seq, width, selected)

    monkeypatch.setattr(Timeline, "_render_row", slow_first_row_with_states)
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        screen: Any = app.screen
        await until(pilot, lambda: "ready in" in str(screen.query_one("#status").render()), "the wait said")
        status = str(screen.query_one("#status").render())
        waited = float(status.split("ready in ")[1].split(" s")[0])
        index = float(status.split("(index ")[1].split(" s")[0])
        analysis = float(status.split("analysis ")[1].split(" s")[0])
        assert slowed and waited >= index + analysis + 0.4 - 0.02
        assert screen.ready_seconds is not None and abs(screen.ready_seconds - waited) < 0.01


async def test_the_minimaps_colours_at_the_landing_are_computed_by_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The minimap's pass over every record for the report's colours runs in the analysis worker
    (a third of a second of the main thread on a 500 MB rollout, in the paint after the landing)."""
    from inspector.tui import minimap as minimap_mod

    on_main: list[int] = []
    cells = minimap_mod.coverage_cells

    def watched(ledger: Any, report: Any, width: int, kinds: Any = None) -> Any:
        if report is not None:
            on_main.append(width)
        return cells(ledger, report, width, kinds)

    monkeypatch.setattr(minimap_mod, "coverage_cells", watched)  # what the widget itself would call
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        screen: Any = app.screen
        await until(pilot, lambda: screen.ready_seconds is not None, "the analysis painted")
        mm = screen.query_one(minimap_mod.Minimap)
        assert on_main == []
        assert mm._cells == cells(screen.ledger, screen.report, mm.size.width)


async def test_the_header_and_the_message_count_are_computed_off_the_main_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The header's summary (coverage counts, hole roles: passes over every record) is made by
    the analysis worker and the index's message count by the loading one; the main thread shows
    what they made, the same text it would have made."""
    import threading

    from inspector.tui import session as session_mod
    from inspector.tui.model import header_line

    main = threading.main_thread()
    made_on_main: list[str] = []

    def watched(report: Any) -> str:
        if threading.current_thread() is main:
            made_on_main.append("header")
        return header_line(report)

    monkeypatch.setattr(session_mod, "header_line", watched)
    counted = session_mod.SessionScreen._counted

    def count_watched(ledger: Any, kinds: Any = None) -> Any:
        if threading.current_thread() is main and len(ledger.records) > 10:
            made_on_main.append("count")
        return counted(ledger, kinds)

    monkeypatch.setattr(session_mod.SessionScreen, "_counted", staticmethod(count_watched))
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        screen: Any = app.screen
        await until(pilot, lambda: screen.ready_seconds is not None, "the analysis painted")
        assert made_on_main == []
        assert header_line(screen.report) in str(screen.query_one("#summary").render())
        n = sum(r.kind == "message" for r in screen.ledger.records)
        assert f"{n:,} messages" in str(screen.query_one("#status").render())


async def test_the_workers_token_count_steps_aside_while_the_cursor_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the landing the worker counts the next request's tokens a part at a time and waits
    while the timeline's cursor moves (each key's repaint then has the GIL to itself); it counts
    every item once the cursor rests, the same counts as the whole count."""
    import threading
    import time

    from inspector.analysis import analyze
    from inspector.formats import load
    from inspector.tui import session as session_mod

    monkeypatch.setattr(session_mod, "TOKEN_CHUNK", 1)
    app = create_app([str(ADR)])
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: analysed(app), "the first analysis")
        screen: Any = app.screen
        report = analyze(screen.ledger)  # a report of its own, its items' counts cleared
        for it in report.context:
            it.tokens = None
        uncounted = list(report.context)
        assert uncounted
        screen._last_move = time.monotonic() + 3600  # the cursor "keeps moving"
        t = threading.Thread(target=screen._count_tokens, args=(report, True), daemon=True)
        t.start()
        time.sleep(0.3)
        assert all(it.tokens is None for it in uncounted)  # stepped aside
        await pilot.press("down")  # a real move: the cursor moved just now
        assert time.monotonic() - screen._last_move < 5
        screen._last_move = 0.0
        t.join(20)
        assert not t.is_alive()
        whole = analyze(load(str(ADR)))
        whole.ensure_tokens()
        assert [it.tokens for it in report.context] == [it.tokens for it in whole.context]


def test_a_ledgers_repr_is_a_line_not_its_records() -> None:
    """Whatever shows a ledger (a log line, a traceback's locals, a worker's name) gets one short
    line, not every record's repr (a 500 MB rollout's would be some 100 MB of text)."""
    from inspector.formats import load
    from tests.conftest import SAMPLES

    led = load(str(SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"))
    text = repr(led)
    assert text.startswith("Ledger(pi, ") and f"{len(led.records):,} records" in text and len(text) < 200


async def test_the_session_file_is_hashed_after_the_landing_not_during_the_load(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """The app loads without hashing the file (only a write-back reads the hash) and takes the
    sha256 of the same bytes once its analysis is on screen; the ledger then holds what `load`
    would have given it."""
    import hashlib
    import shutil

    from inspector.formats import load
    from inspector.tui import session as session_mod

    f = tmp_path / ADR.name
    shutil.copy(ADR, f)
    asked: list[bool] = []

    def recording_load(*a: Any, **k: Any) -> Any:
        asked.append(k.get("fingerprint", True))
        return load(*a, **k)

    monkeypatch.setattr(session_mod, "load", recording_load)
    app = create_app([str(f)])
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: analysed(app), "the first analysis")
        screen: Any = app.screen
        led = screen.report.ledger
        screen.ensure_fingerprint(led)
        assert asked and not any(asked)  # no load hashed
        assert led.sha256 == hashlib.sha256(f.read_bytes()).hexdigest() == load(str(f)).sha256


def test_a_file_changed_before_its_late_hash_gets_a_digest_no_write_back_accepts(tmp_path: Any) -> None:
    """Appended, rewritten or replaced between the load and the hash: the prefix hashed then may not
    be what was analysed, so the ledger gets a digest no file has and an install refuses."""
    import shutil

    from inspector.compaction.entries import WriteError
    from inspector.formats import load
    from inspector.store.writeback import _check_unchanged
    from inspector.tui.fingerprint import CHANGED, LateFingerprint
    from inspector.tui.session import disk_stamp

    f = tmp_path / ADR.name
    shutil.copy(ADR, f)
    stamp = disk_stamp(str(f))
    led = load(str(f), fingerprint=False)
    data = f.read_bytes()
    with open(f, "ab") as out:
        out.write(b"\n")
    late = LateFingerprint(led, stamp, disk_stamp)
    late.ensure()
    assert led.sha256 == CHANGED
    with pytest.raises(WriteError):
        _check_unchanged(str(f), data, led.size, led.sha256, "analysed")
    unchanged = load(str(f), fingerprint=False)
    LateFingerprint(unchanged, disk_stamp(str(f)), disk_stamp).ensure()
    assert unchanged.sha256 == load(str(f)).sha256


def _stat_file(tmp_path: Any, age: float) -> str:
    """A /proc/<pid>/stat as Linux writes it, for a process started `age` seconds ago (its command's
    name holding the ") " a naive split would stop at)."""
    import os
    import time

    ticks_per_s = os.sysconf("SC_CLK_TCK")
    start = round((time.clock_gettime(time.CLOCK_BOOTTIME) - age) * ticks_per_s)
    fields = ["S", "1", "1", "1", "0", "-1", "4194560"] + ["0"] * 12 + [str(start), "123", "456"]
    path = tmp_path / "stat"
    path.write_text(f"4242 (odd) name) {' '.join(fields)}\n")
    return str(path)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's start time is read from /proc")
def test_the_process_start_is_read_from_the_kernel(tmp_path: Any) -> None:
    """`process_started`: the user's command started `age` seconds ago, to within a clock tick; an
    unreadable or insane start (a long-lived caller, a clock gone back) is now."""
    import time

    from inspector.tui.app import STARTED_SANE_S, process_started

    now = time.perf_counter()
    started = process_started(_stat_file(tmp_path, 2.0))
    assert abs((now - started) - 2.0) < 0.05
    for unusable in (str(tmp_path / "missing"), _stat_file(tmp_path, STARTED_SANE_S + 5), _stat_file(tmp_path, -3.0)):
        assert process_started(unusable) >= now
    (tmp_path / "stat").write_text("garbage")
    assert process_started(str(tmp_path / "stat")) >= now
    real = process_started()  # this test process: its start (before the test), or now when long ago
    assert real <= time.perf_counter()


def test_the_console_script_counts_the_wait_from_the_users_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """`inspector FILE` hands the app the process's start: the header's "ready in" (and the first
    paint) include the interpreter's start and the imports, the third of a second or more the user
    waited before the app existed (issue 15.2)."""
    import time

    from inspector.cli.main import run_app
    from inspector.tui import app as app_mod

    launched: list[float] = []
    started = time.perf_counter() - 3.0
    monkeypatch.setattr(app_mod, "process_started", lambda: started)
    monkeypatch.setattr(app_mod.InspectorApp, "run", lambda self, *a, **k: launched.append(self.launched))
    assert run_app([str(ADR)]) == 0
    assert launched == [started]


async def test_the_header_counts_from_the_launch_it_is_given() -> None:
    """An app launched (by the console script) before it was made says the whole wait."""
    import time

    app = create_app([str(ADR)], launched=time.perf_counter() - 3.0)
    async with app.run_test(size=(140, 40)) as pilot:
        screen: Any = app.screen
        await until(pilot, lambda: screen.ready_seconds is not None, "the analysis painted")
        assert screen.ready_seconds >= 3.0 and screen.first_paint >= 3.0
        status = str(screen.query_one("#status").render())
        assert float(status.split("ready in ")[1].split(" s")[0]) >= 3.0


@pytest.mark.parametrize(
    ("argv", "ahead"),
    [(["S"], ["S"]), (["S", "--at", "3"], []), (["S", "S"], [])],
    ids=["one session", "as it stood at a line", "two paths"],
)
def test_the_console_script_forks_a_big_sessions_reading_helper_before_the_app_starts(
    argv: list[str], ahead: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`inspector FILE` asks for the file's reading helper (`formats.fork_reader_ahead`: forked
    only for a big session of a chunked format) before Textual's import and threads, so the app's
    load, in a worker thread where no fork is safe, still reads on two cores (issue 15.3). Not for
    `--at` (a load that stops at a line takes no helper) nor for several paths."""
    from inspector import formats
    from inspector.cli.main import run_app
    from inspector.tui import app as app_mod

    asked: list[str] = []
    monkeypatch.setattr(formats, "fork_reader_ahead", lambda p: asked.append(p) or False)
    monkeypatch.setattr(app_mod.InspectorApp, "run", lambda self, *a, **k: None)
    assert run_app([str(ADR) if a == "S" else a for a in argv]) == 0
    assert asked == [str(ADR) if a == "S" else a for a in ahead]
