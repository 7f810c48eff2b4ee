"""The triage browser (issue 3 point 7): a table of many sessions, filled by a thread worker in
batches, sortable and filterable while it fills; Enter opens the session view, Escape returns."""

from __future__ import annotations

import asyncio
import gc
import shutil
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual import events
from textual.widgets import DataTable, Input, Static

from inspector.analysis import analyze
from inspector.formats import load
from inspector.formats.registry import places
from inspector.ledger.model import Ledger
from inspector.store import scan
from inspector.tui import triage
from inspector.tui.app import InspectorApp
from inspector.tui.session import SessionScreen
from inspector.tui.triage import (
    SessionRow,
    TriageScreen,
    ago,
    fit_path,
    parse_filter,
    short_error,
)

from .conftest import SAMPLES
from .triage_pilot import filled, until
from .triage_pilot import run as run_at

PI_SAMPLES = sorted((SAMPLES / "pi").glob("*.jsonl"))
SIZE = (140, 40)
GARBAGE = 'this is not a session\n{"neither": "is this"}\n'


def run(app: InspectorApp, body: Callable[..., Awaitable[None]]) -> None:
    run_at(app, body, SIZE)


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The index `inspector scan` and the browser share, in the test's own folder."""
    d = tmp_path / "cache"
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(d))
    return d


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The pi samples (one in a subfolder: the walk is recursive), a garbage file, and a file
    that is not `*.jsonl` (ignored)."""
    root = tmp_path / "sessions"
    (root / "sub").mkdir(parents=True)
    for p in PI_SAMPLES:
        dest = root / "sub" / p.name if p.stem == "healthy_chained" else root / p.name
        shutil.copyfile(p, dest)
    (root / "garbage.jsonl").write_text(GARBAGE)
    (root / "notes.txt").write_text("not a session\n")
    return root


async def keys_now(pilot, *keys: str) -> None:  # type: ignore[no-untyped-def]
    """Send keys the way a terminal does: without Pilot's wait for the process to go idle, which
    never comes while the worker is busy (a short pause lets each key's focus change land)."""
    for key in keys:
        char = {"slash": "/", "enter": "\r", "escape": "\x1b"}.get(key, key if len(key) == 1 else None)
        pilot.app.post_message(events.Key(key, char))
        await asyncio.sleep(0.02)


def order(screen: TriageScreen) -> list[str]:
    """File names (no folder) of the table's rows, top to bottom."""
    table = screen.query_one(DataTable)
    return [Path(table.get_row_at(i)[0].row.path).stem for i in range(table.row_count)]


def rels(screen: TriageScreen) -> list[str]:
    table = screen.query_one(DataTable)
    return [table.get_row_at(i)[0].row.rel for i in range(table.row_count)]


def cell_text(screen: TriageScreen, stem: str, column: str) -> str:
    table = screen.query_one(DataTable)
    key = next(p for p in screen.rows if Path(p).stem == stem)
    return table.get_cell(key, column).plain


# ------------------------------------------------------------------------------------ filling


def test_fills_the_table_with_each_sessions_counts_and_worst_finding(folder: Path) -> None:
    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot)
        table = screen.query_one(DataTable)
        assert table.row_count == 8  # 7 samples + the garbage file; notes.txt is not a session
        assert {Path(p).name for p in screen.rows} == {p.name for p in PI_SAMPLES} | {"garbage.jsonl"}
        rows = {Path(p).stem: r for p, r in screen.rows.items()}

        amnesia = rows["adr0302_amnesiac_fallback"]
        assert (amnesia.format, amnesia.records, amnesia.holes) == ("pi v3", 229, 168)
        assert amnesia.worst == ("error", "hole")
        assert rows["healthy_chained"].worst is None and rows["healthy_chained"].holes == 0
        assert rows["healthy_chained"].rel == "sub/healthy_chained.jsonl"
        assert rows["compaction_loop_nothing_summarized"].worst == ("error", "compaction_loop")
        assert rows["dangling_first_kept"].worst == ("error", "dangling_first_kept")
        assert rows["orphan_tool_result_after_cut"].worst == ("error", "orphan_tool_result")
        assert rows["live_question_summarized"].worst == ("error", "live_question_summarized")

        # every number is what the core says about the file
        for p in PI_SAMPLES:
            report = analyze(load(str(p)))
            row = rows[p.stem]
            assert row.records == len(report.ledger.records)
            assert row.context_tokens == report.context_tokens
            assert row.holes == report.coverage_counts()["hole"]
            assert row.error is None

        # and the table shows them
        assert cell_text(screen, "adr0302_amnesiac_fallback", "holes") == "168"
        assert cell_text(screen, "adr0302_amnesiac_fallback", "records") == "229"
        assert cell_text(screen, "adr0302_amnesiac_fallback", "worst").startswith("error")
        assert "hole" in cell_text(screen, "adr0302_amnesiac_fallback", "worst")
        # the session's own last record time, not the copy's mtime (issue 12 point 14)
        last = rows["adr0302_amnesiac_fallback"].last_activity
        assert cell_text(screen, "adr0302_amnesiac_fallback", "activity") == ago(last) != "just now"
        assert "healthy" in cell_text(screen, "healthy_chained", "worst")
        assert cell_text(screen, "healthy_chained", "file") == "sub/healthy_chained"
        status = str(screen.query_one("#status", Static).render())
        assert "8 files analysed" in status and "1 with holes" in status and "1 unreadable" in status

    run(InspectorApp([str(folder)]), body)


def test_the_bad_file_gets_a_row_with_its_error_and_does_not_open(folder: Path) -> None:
    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot)
        bad = next(r for r in screen.rows.values() if r.rel == "garbage.jsonl")
        assert bad.error is not None and "not a session ledger" in bad.error
        assert str(bad.error).startswith("line 1:")  # the path is the row's file, not repeated
        worst = cell_text(screen, "garbage", "worst")
        assert worst.startswith("unreadable") and "not a session ledger" in worst
        assert cell_text(screen, "garbage", "holes") == "–"

        table = screen.query_one(DataTable)
        table.move_cursor(row=table.get_row_index(bad.path))
        await pilot.pause()
        assert "not a session ledger" in str(screen.query_one("#detail", Static).render())
        await pilot.press("enter")
        await pilot.pause()
        assert pilot.app.screen is screen  # nothing to open; a notification says why

    run(InspectorApp([str(folder)]), body)


def test_a_named_missing_file_gets_a_row_too(folder: Path) -> None:
    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot)
        errors = {Path(r.path).name: r.error for r in screen.rows.values() if r.error}
        assert errors == {"gone.jsonl": "no such file or directory"}
        assert screen.query_one(DataTable).row_count == 3
        assert sorted(r.rel for r in screen.rows.values()) == [
            "dangling_first_kept.jsonl",
            "gone.jsonl",
            "sub/healthy_chained.jsonl",
        ]

    files = [
        folder / "dangling_first_kept.jsonl",
        folder / "sub" / "healthy_chained.jsonl",
        folder / "gone.jsonl",
    ]
    run(InspectorApp([str(f) for f in files]), body)


def test_rows_keep_no_ledger_or_report(folder: Path) -> None:
    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot)
        assert all(type(r) is SessionRow for r in screen.rows.values())
        gc.collect()
        # Only this folder's sessions: other tests may keep their own ledgers alive.
        alive = [o for o in gc.get_objects() if isinstance(o, Ledger) and str(o.path or "").startswith(str(folder))]
        assert alive == []

    run(InspectorApp([str(folder)]), body)


# ------------------------------------------------------------------------------------ sorting


def test_sorting_by_holes_puts_the_amnesiac_session_first(folder: Path) -> None:
    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot)
        await pilot.press("1", "1")  # by file, then reversed: the amnesiac session is not on top
        assert order(screen)[0] != "adr0302_amnesiac_fallback"
        assert rels(screen) == sorted(rels(screen), reverse=True)

        await pilot.press("8")  # holes, most first
        assert screen.sort_column == "holes" and screen.sort_descending
        assert order(screen)[0] == "adr0302_amnesiac_fallback"
        assert order(screen)[-1] == "garbage"  # unreadable files after every session

        await pilot.press("8")  # again: fewest first, unreadable still last
        assert order(screen)[-2:] == ["adr0302_amnesiac_fallback", "garbage"]

    run(InspectorApp([str(folder)]), body)


def test_clicking_a_header_sorts_by_that_column(folder: Path) -> None:
    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot)
        table = screen.query_one(DataTable)
        await pilot.press("1")  # by file: adr0302 first
        x = sum(c.get_render_width(table) for c in list(table.columns.values())[:2]) + 2  # "records"
        await pilot.click("#sessions", offset=(x, 0))
        await pilot.pause()
        assert screen.sort_column == "records" and screen.sort_descending
        records = [table.get_row_at(i)[0].row.records for i in range(table.row_count)]
        assert records[:7] == sorted(records[:7], reverse=True)
        assert order(screen)[0] == "adr0302_amnesiac_fallback"  # 229 records
        await pilot.click("#sessions", offset=(x, 0))
        await pilot.pause()
        assert not screen.sort_descending
        assert order(screen)[0] == "compaction_loop_nothing_summarized"  # 23 records

    run(InspectorApp([str(folder)]), body)


def test_default_order_puts_errors_and_amnesia_first(folder: Path) -> None:
    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot)
        rows = order(screen)
        assert rows[0] == "adr0302_amnesiac_fallback"  # an error finding and the most holes
        assert rows[-1] == "healthy_chained"
        assert rows[-2] == "garbage"

    run(InspectorApp([str(folder)]), body)


# ------------------------------------------------------------------------------------ filter


def test_the_filter_narrows_the_rows(folder: Path) -> None:
    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot)
        table = screen.query_one(DataTable)

        box = screen.query_one("#filter", Input)

        async def filter_by(text: str, typed: bool = False) -> list[str]:
            await pilot.press("f")
            assert box.has_focus
            if typed:
                box.value = ""
                await pilot.press(*text)
            else:
                box.value = text
            await pilot.press("enter")
            assert table.has_focus  # Enter applies the filter and goes back to the table
            return sorted(order(screen))

        assert await filter_by("holes>0", typed=True) == ["adr0302_amnesiac_fallback"]
        assert "filter shows 1 of 8" in str(screen.query_one("#status", Static).render())
        assert await filter_by("loop", typed=True) == [
            "compaction_loop_nothing_summarized",
            "truncated_summary_loop",
        ]
        # as `inspector scan --format pi`: an unreadable file is never hidden by a scan filter
        assert await filter_by("format:pi") == sorted([*(p.stem for p in PI_SAMPLES), "garbage"])
        assert await filter_by("unreadable") == ["garbage"]
        assert await filter_by("error !garbage") == sorted(
            p.stem for p in PI_SAMPLES if p.stem != "healthy_chained"
        )
        assert await filter_by("code:dangling") == ["dangling_first_kept"]
        assert await filter_by("records<40 healthy") == []
        assert "no session matches" in str(screen.query_one("#detail", Static).render())

        await pilot.press("escape")  # not in the box any more: Escape clears the filter
        await until(pilot, lambda: table.row_count == 8)
        assert screen.predicate is None

    run(InspectorApp([str(folder)]), body)


def test_parse_filter_terms() -> None:
    ok = SessionRow(
        "/x/a.jsonl",
        "proj/a.jsonl",
        format="pi v3",
        records=50,
        context_tokens=60_000,
        holes=3,
        findings=(("error", "hole", 1), ("warning", "usage_missing", 2)),
    )
    healthy = SessionRow(
        "/x/b.jsonl", "proj/b.jsonl", format="native", records=10, context_tokens=100, holes=0
    )
    bad = SessionRow("/x/c.jsonl", "c.jsonl", error="line 1: binary data")

    def matches(text: str) -> list[str]:
        p = parse_filter(text)
        assert p is not None
        return [r.rel[-7] for r in (ok, healthy, bad) if p(r)]

    assert parse_filter("   ") is None
    assert matches("holes>0") == ["a"]
    assert matches("holes=0") == ["b"]  # unreadable files have no counts to compare
    assert matches("tokens>=50k") == ["a"]
    assert matches("records<=10") == ["b"]
    assert matches("findings>2") == ["a"]
    assert matches("error") == ["a", "c"]
    assert matches("warning") == ["a"]
    assert matches("healthy") == ["b"]
    assert matches("format:native") == ["b", "c"]  # as scan --format: an unreadable file stays
    assert matches("code:usage") == ["a"]
    assert matches("PROJ/") == ["a", "b"]
    assert matches("!proj") == ["c"]
    assert matches("proj holes") == ["a"]


# ------------------------------------------------------------------------------------ open and back


def test_enter_opens_the_session_view_and_escape_returns_to_the_same_table(folder: Path) -> None:
    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot)
        table = screen.query_one(DataTable)
        await pilot.press("8")
        await pilot.press("down", "down")
        await pilot.press("up", "up")  # back on the amnesiac session
        target = next(p for p in screen.rows if Path(p).stem == "adr0302_amnesiac_fallback")
        assert table.cursor_row == 0 and order(screen)[0] == "adr0302_amnesiac_fallback"
        before = order(screen)

        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
        session = pilot.app.screen
        assert isinstance(session, SessionScreen) and session.path == target
        await until(pilot, lambda: session.report is not None)

        await pilot.press("escape")
        await until(pilot, lambda: pilot.app.screen is screen)
        assert order(screen) == before  # the table is as it was: rows, order, cursor
        assert table.cursor_row == 0 and screen.sort_column == "holes"
        assert table.has_focus

        # and a session further down opens too
        await pilot.press("down")
        second = table.get_row_at(1)[0].row.path
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
        assert pilot.app.screen.path == second  # type: ignore[attr-defined]

    run(InspectorApp([str(folder)]), body)


# ------------------------------------------------------------------------------------ many files


def many(root: Path, n: int) -> Path:
    root.mkdir()
    for i in range(n):
        src = PI_SAMPLES[i % len(PI_SAMPLES)]
        d = root / f"project{i // 50:02d}"
        d.mkdir(exist_ok=True)
        shutil.copyfile(src, d / f"{i:04d}_{src.name}")
    return root


def test_a_big_folder_fills_in_batches_and_sorting_and_filtering_work_mid_fill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 210
    root = many(tmp_path / "many", n)
    real = scan.read_session
    calls: list[str] = []
    gate = threading.Event()

    def slow(path: str, parent: str | None = None, size: int | None = None) -> scan.ReadSession:
        # a steady pace, and a pause at file 120 until the test has done its part: "mid-fill"
        # is certain however loaded the machine is
        calls.append(path)
        if len(calls) == 120:
            gate.wait(30)
        time.sleep(0.005)
        return real(path, parent, size)

    monkeypatch.setattr(scan, "read_session", slow)
    monkeypatch.setattr(triage, "WORKERS", 1)  # read in this process, where the patch is
    batches: list[int] = []
    handler = TriageScreen.on_triage_screen_batch

    times: list[float] = []

    def counting(self: TriageScreen, msg: TriageScreen.Batch) -> None:
        batches.append(len(msg.rows))
        times.append(time.monotonic())
        handler(self, msg)

    monkeypatch.setattr(TriageScreen, "on_triage_screen_batch", counting)

    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        await until(
            pilot, lambda: isinstance(pilot.app.screen, TriageScreen) and len(pilot.app.screen.rows) >= 20
        )
        screen = pilot.app.screen
        assert isinstance(screen, TriageScreen)
        table = screen.query_one(DataTable)

        await keys_now(pilot, "3")  # records, most first: the 229-record amnesiac copies on top
        await until(pilot, lambda: screen.sort_column == "records", timeout=5.0)
        assert not screen.finished
        shown = [table.get_row_at(i)[0].row.records for i in range(table.row_count)]
        assert shown == sorted(shown, reverse=True) and shown[0] == 229

        box = screen.query_one("#filter", Input)
        await keys_now(pilot, "f")
        await until(pilot, lambda: box.has_focus, timeout=5.0)
        await keys_now(pilot, *"holes>0", "enter")
        # Enter applied the whole filter and went back to the table
        await until(pilot, lambda: box.value == "holes>0" and table.has_focus, timeout=5.0)
        assert not screen.finished
        assert table.row_count > 0
        assert all(table.get_row_at(i)[0].row.holes > 0 for i in range(table.row_count))
        progress = screen.query_one("#progress")
        assert 0 < progress.progress < n  # type: ignore[attr-defined]

        gate.set()
        await filled(pilot)
        # rows that arrived later were filtered and sorted as they came
        amnesiac = sum(
            1 for i in range(n) if PI_SAMPLES[i % len(PI_SAMPLES)].stem == "adr0302_amnesiac_fallback"
        )
        assert table.row_count == amnesiac
        assert all("amnesiac" in table.get_row_at(i)[0].row.path for i in range(table.row_count))
        await pilot.press("escape")
        await until(pilot, lambda: table.row_count == n)
        shown = [table.get_row_at(i)[0].row.records for i in range(table.row_count)]
        assert shown == sorted(shown, reverse=True)

    run(InspectorApp([str(root)]), body)
    assert sum(batches) == n
    # Rows come in batches, not one message per file: at most ten a second for the first
    # second, then two a second, however many files there are.
    seconds = times[-1] - times[0]
    assert len(batches) <= 2 + 10 + 2 * seconds + 1
    assert len(batches) < n / 2


def test_dismissing_the_screen_cancels_the_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = many(tmp_path / "many", 200)
    calls: list[str] = []
    real = scan.read_session

    def slow(path: str, parent: str | None = None, size: int | None = None) -> scan.ReadSession:
        calls.append(path)
        time.sleep(0.01)
        return real(path, parent, size)

    monkeypatch.setattr(scan, "read_session", slow)
    monkeypatch.setattr(triage, "WORKERS", 1)  # read in this process, where the patch is

    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        await until(pilot, lambda: len(calls) >= 5)
        screen = pilot.app.screen
        assert isinstance(screen, TriageScreen)
        worker = screen._worker
        assert worker is not None and worker.is_running
        pilot.app.pop_screen()
        await until(pilot, lambda: worker.is_finished)
        assert worker.is_cancelled
        stopped_at = len(calls)
        await pilot.pause(0.2)
        assert len(calls) <= stopped_at + 1  # the thread stops between files
        assert stopped_at < 200

    run(InspectorApp([str(root)]), body)


# ------------------------------------------------------------------------------------ nothing found


def test_no_default_places_explains_where_it_looked_and_what_to_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.pi, no ~/.openclaw

    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.pause(0.2)
        screen = pilot.app.screen
        assert isinstance(screen, TriageScreen) and screen.paths == []
        text = str(screen.query_one("#empty", Static).render())
        for place in places():
            assert place in text
        assert "inspector ~/path/to/sessions" in text
        assert screen.has_class("empty") and not screen.query_one(DataTable).display

    run(InspectorApp([]), body)


def test_an_empty_folder_names_the_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()

    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        await until(pilot, lambda: isinstance(pilot.app.screen, TriageScreen) and pilot.app.screen.finished)
        text = str(pilot.app.screen.query_one("#empty", Static).render())
        assert "No session files found" in text and str(tmp_path / "empty") in text

    run(InspectorApp([str(tmp_path / "empty")]), body)


# ------------------------------------------------------------------------------------ helpers


def test_fit_path_keeps_the_start_of_the_name() -> None:
    assert fit_path("proj/session.jsonl", 40) == ("proj/", "session")
    folder, name = fit_path("--home-user-src-project--/2026-11-26T10-00-00-000Z_0199a3e4.jsonl", 35)
    assert len(folder) + len(name) <= 35
    assert folder == "…rc-project--/"  # its end: the project, the most specific part
    assert name.startswith("2026-11-26T10") and name.endswith("…")


def test_ago_and_short_error() -> None:
    now = 1_800_000_000.0
    assert ago(now - 5, now) == "just now"
    assert ago(now - 600, now) == "10 min ago"
    assert ago(now - 3 * 3600, now) == "3 h ago"
    assert ago(now - 86400, now) == "1 day ago"
    assert ago(now - 90 * 86400, now) == time.strftime("%Y-%m-%d", time.localtime(now - 90 * 86400))
    assert short_error(
        "line 1: not a session ledger this tool knows (first record has type 'x'); formats: pi"
    ) == ("not a session ledger this tool knows")


def test_a_folder_walk_finds_adk_stores_by_content_not_by_name(tmp_path: Path) -> None:
    """ADK sessions live in SQLite databases (any name) and JSON dumps: the walk takes those whose
    content is ADK's, and leaves other databases and JSON files alone."""
    import sqlite3

    from .conftest import SHARED, need_shared

    corpus = need_shared(SHARED / "peers" / "adk" / "corpus")
    app = tmp_path / "app"
    app.mkdir()
    shutil.copyfile(corpus / "token_threshold.db", app / "sessions.sqlite")
    shutil.copyfile(corpus / "token_threshold.json", app / "dump.json")
    shutil.copyfile(corpus / "token_threshold.oracle.json", app / "oracle.json")  # JSON, not a session
    con = sqlite3.connect(app / "other.db")
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    (app / "broken.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    _, files, _ = triage.discover([str(tmp_path)])
    assert sorted(Path(f).name for f in files) == ["dump.json", "sessions.sqlite"]
    for f in files:
        assert load(f).format == "adk"


# ------------------------------------------------------------------------------------ issue 12 point 14


def test_format_column_fits_every_label_and_last_activity_is_the_sessions_own(tmp_path: Path) -> None:
    """The format column showed "native v" and "claude_c"; "last activity" was the file's mtime
    (a copied file was "just now" whatever its session said)."""
    import os

    from textual.widgets.data_table import ColumnKey

    from inspector.ledger.times import epoch_seconds

    from .conftest import SHARED, need_shared

    claude = need_shared(SHARED / "real_sessions" / "claude_code" / "spotter__tool_heavy.jsonl")
    root = tmp_path / "mixed"
    root.mkdir()
    for src in (SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl", SAMPLES / "native" / "adr0302_amnesiac_fallback.jsonl", claude):
        shutil.copyfile(src, root / f"{src.parent.name}_{src.name}")
    adr = root / "pi_adr0302_amnesiac_fallback.jsonl"
    last = max(t for t in (epoch_seconds(r.timestamp) for r in load(str(adr)).records) if t is not None)
    os.utime(adr, (last + 86400 * 40, last + 86400 * 40))  # the file was touched long after

    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot)
        width = screen.query_one(DataTable).columns[ColumnKey("format")].width
        labels = {r.format for r in screen.rows.values()}
        assert {"pi v3", "native v1", "claude_code"} <= labels
        assert all(len(label) <= width for label in labels)
        row = next(r for r in screen.rows.values() if r.path == str(adr))
        assert row.last_activity == last and row.mtime == last + 86400 * 40
        assert cell_text(screen, adr.stem, "activity") == ago(last)

    run(InspectorApp([str(root)]), body)


def test_bare_inspector_names_every_default_place_it_looked_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only ~/.claude/projects present: the title named that place alone."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)  # no .adk here either
    project = tmp_path / ".claude" / "projects" / "proj"
    project.mkdir(parents=True)
    shutil.copyfile(SAMPLES / "pi" / "healthy_chained.jsonl", project / "s.jsonl")

    async def body(pilot) -> None:  # type: ignore[no-untyped-def]
        screen = await filled(pilot)
        assert screen.paths == [str(tmp_path / ".claude" / "projects")]
        title = str(screen.query_one("#title", Static).render())
        assert "~/.claude/projects" in title
        for place in places():
            if place != "~/.claude/projects":
                assert place in title.split("not present:")[1], place

    run(InspectorApp([]), body)


def test_adk_schemas_are_labelled_with_their_version() -> None:
    """Issue 12 point 13: the legacy DatabaseSessionService schema reads "adk v0", as v1 reads "adk v1"."""
    from .conftest import REPO

    v0 = REPO / "tests" / "data" / "adk" / "token_threshold.v0.db"
    row = triage.summarize_session(str(v0), v0.name)
    assert row.error is None and row.format == "adk v0"
