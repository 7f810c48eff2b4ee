"""The session view (DESIGN §6): timeline, coverage minimap, detail pane, findings, next request.

The file is indexed first and shown at once; the analysis runs in a worker thread and the view
fills in the coverage colours, findings and next request when it lands. Scrolling works meanwhile.

Follow mode (issue 17.2): while the file grows the view re-reads it in a worker and shows the new
records, keeping the user's cursor and scroll (a cursor on the last record follows the end); a
finding new since the previous read is announced once. File events come from `watchfiles` (the
session's folder, so a replace by rename or a deletion is seen too); a stat poll is the fallback.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import orjson
from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Static, TabbedContent, TabPane

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.analysis.export import context_json
from inspector.analysis.findings import plural
from inspector.formats import LoadError, load, split_selector
from inspector.formats.whole_lines import collector_paused
from inspector.ledger.jsontext import dumps_text
from inspector.ledger.model import Ledger
from inspector.live.sessions import (
    DELETED,
    UNREADABLE,
    FindingKey,
    SessionState,
    changes,
    finding_key,
    summary_of,
)
from inspector.store.places import parent_session, subagent_files
from inspector.tui.context_view import NextRequestView
from inspector.tui.detail import DetailPane
from inspector.tui.findings_list import FindingsList
from inspector.tui.fingerprint import LateFingerprint
from inspector.tui.footer import SteadyFooter
from inspector.tui.help import key_label
from inspector.tui.minimap import Cell, Minimap, coverage_cells, record_kinds
from inspector.tui.model import (
    STATE_COLORS,
    finding_phrase,
    header_line,
    hole_ranges,
    item_full_text,
    line_seq,
    record_full_text,
)
from inspector.tui.timeline import Timeline

if TYPE_CHECKING:
    from inspector.live.incremental import Follower
    from inspector.tui.repair import RepairScreen


def __getattr__(name: str) -> object:
    """`Follower` (the follow reads' incremental reader, with the incremental analysis under it)
    is imported when first asked for: a follow read, never the first read of a session (a share
    of the app's start; issue 15.3)."""
    if name == "Follower":
        from inspector.live.incremental import Follower

        return Follower
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# (key, action, description): the session view's keys, shown in the footer (the description up to
# its first " ("), the help screen and the command palette from this one list.
SESSION_KEYS: list[tuple[str, str, str]] = [
    ("n", "next_hole", "Next hole (range of messages)"),
    ("N", "prev_hole", "Previous hole (range of messages)"),
    ("right_square_bracket", "next_hole_message", "Next message in a hole"),
    ("left_square_bracket", "prev_hole_message", "Previous message in a hole"),
    ("f", "next_finding", "Next finding"),
    ("t", "follow_tool", "Tool call ↔ results (from a call: each result in turn, then the call)"),
    ("c", "next_checkpoint", "Next checkpoint"),
    ("C", "prev_checkpoint", "Previous checkpoint"),
    ("slash", "search", "Search"),
    ("ctrl+g", "go_to_line", "Go to line…"),
    ("i", "toggle_inactive", "Inactive branches"),
    ("1", "tab('detail')", "Detail"),
    ("2", "tab('findings')", "Findings"),
    ("3", "tab('next')", "Next request"),
    ("w", "set_window", "Set the window and reserve (next request)"),
    ("v", "view_full", "View in full (the record, or the next-request item)"),
    ("y", "copy_record", "Copy the record (as written)"),
    ("Y", "copy_summary", "Copy the summary and the findings"),
    ("J", "copy_request", "Copy the next request as JSON"),
    ("m", "maximize", "Maximize / restore the pane"),
    ("ctrl+r", "reload", "Reload the file"),
    ("F", "toggle_follow", "Follow the file as it grows (tail mode)"),
    ("a", "sub_agents", "Sub-agents: open the next sub-agent's transcript; in one, back to its parent"),
    ("o", "open", "Open another file…"),
    ("r", "repair", "Repair… (plan, run, install)"),
    ("s", "simulate", "Simulate… (what-if compaction policy, plotted)"),
    ("f1", "app.help", "Help"),
    ("escape", "back", "Back"),
]
# The footer's keys, in its order: the headline screens early, so an 80-column footer shows them.
FOOTER_KEYS: tuple[str, ...] = ("n", "f", "r", "s", "t", "c", "slash", "f1")
# What works before (or without) a session: a load error leaves a screen where these still do.
WITHOUT_SESSION = {"open", "reload", "back"}
WATCH_SECONDS = 2.0  # how often the file is checked for changes on disk
FALLBACK_POLL_SECONDS = 0.25  # ... and how often while following without file events
FRESH_SECONDS = 5.0  # a file written this recently when opened is still growing: followed
WATCH_DEBOUNCE_MS = 100  # file events are gathered this long before the view hears of them
# ... unless the file is quiet this long first: longer than an agent's pause between the writes of
# one burst, so a burst is one batch per WATCH_DEBOUNCE_MS (at 20 ms, writes 25 ms apart were a
# batch each, and a fast follow read took nearly one read per write)
WATCH_QUIET_MS = 50
# The summary's rows until the analysis lands: two, its most (see SessionScreen._summary; a header
# naming the worst finding takes both at 160 columns, and most at 80).
ANALYSING = "[dim]analysing…[/]\n"
PREVIEW_ABOVE_BYTES = 8 << 20  # files bigger than this show a preview while they are indexed
PREVIEW_LINES = 400
FIRST_PAINT_WAIT_S = 1.0  # the full index's read waits at most this long for the preview's first paint
TOKEN_CHUNK = 500  # items of the next request the worker counts between two looks at the cursor
STEP_ASIDE_S = 0.3  # the worker's count waits until the cursor has not moved for this long


Stamp = tuple[int, int, int, int, int]
STORE_SIDES = ("-wal", "-journal")  # a SQLite store's files beside it that a write changes first


def disk_stamp(path: str) -> Stamp | None:
    """What says the file changed on disk: its size, modification time and inode (a rewrite by
    rename, as `inspector undo` does, changes the inode), then the size and time of its -wal (a
    WAL-mode store's commits land there, the database file unchanged until a checkpoint; absent:
    0, 0). `FILE#SESSION`: the store file's."""
    base = split_selector(path)[0]
    try:
        st = os.stat(base)
    except OSError:
        return None
    try:
        wal = os.stat(base + "-wal")
        wal_size, wal_time = wal.st_size, wal.st_mtime_ns
    except OSError:
        wal_size = wal_time = 0
    return (st.st_size, st.st_mtime_ns, st.st_ino, wal_size, wal_time)


def watched_files(path: str) -> frozenset[str]:
    """The files whose events say `path` changed: the file (a store's, for `FILE#SESSION`) and a
    store's -wal and -journal."""
    base = os.path.abspath(split_selector(path)[0])
    return frozenset([base, *(base + side for side in STORE_SIDES)])


def disk_problem(path: str) -> tuple[str, str] | None:
    """Why the file can no longer be read, as (status, reason) in `inspector watch`'s terms
    (deleted | unreadable); None when it can. `FILE#SESSION`: the store file's."""
    path = split_selector(path)[0]
    try:
        os.stat(path)
    except FileNotFoundError:
        return (DELETED, "the file was deleted")
    except OSError as e:
        return (UNREADABLE, e.strerror or str(e))
    if not os.access(path, os.R_OK):
        return (UNREADABLE, "permission denied")
    return None


def tokens_counted(report: Report) -> bool:
    """Every item of the next request has its tokens counted (`Report.ensure_tokens`)."""
    return all(it.tokens is not None for it in report.context)


def keep_out_of_collector() -> None:
    """What a session view read or analysed lives as long as the view: moved out of the cyclic
    collector's sight (`gc.freeze`), as the one-shot CLI does after its load (issue 15.3). A 500 MB
    rollout's index and report are a million tracked objects, none in a cycle; each collection
    walked them again (the analysis 7.7 s CPU, 3.5 s with the collector paused and the result
    frozen), and a full pass after the landing stalled the main thread 0.8 s. Whatever else was
    alive is frozen too: the view's unmount unfreezes all, so a cycle frozen meanwhile is collected
    then, never lost."""
    gc.freeze()


REPLACED = "the file shrank or was replaced"  # why a follow read starts from the top (else: it grew)


def replaced(old: Stamp, new: Stamp) -> bool:
    """The file is not the one read plus appended bytes: it shrank or is another file (a rename
    over it, as `inspector undo` and rotations do)."""
    return new[2] != old[2] or new[0] < old[0]


TOAST_SEVERITY = {"error": "error", "warning": "warning"}  # info findings: an information toast


def new_finding_words(event: dict[str, object]) -> str:
    """A new finding as a notification names it: `hole: 40 messages … left the request at
    checkpoint 2 (line 812)` (the first clause of its message, and its first line)."""
    code = str(event["code"])
    phrase = finding_phrase(str(event["message"]).removeprefix(code + ": "), 120)
    return f"{code}: {phrase} · from line {event['line']:,}"


def mid_write(report: Report) -> set[FindingKey]:
    """The findings about a last line without its newline: the agent is writing it, and the next
    read completes it. Shown, never announced."""
    return {
        finding_key(report, f) for f in report.findings if f.data is not None and f.data.get("problem") == "truncated_line"
    }


class SessionScreen(Screen[None]):
    DEFAULT_CSS = """
    SessionScreen #status { height: 1; padding: 0 1; background: $panel; }
    SessionScreen #summary { height: auto; max-height: 2; padding: 0 1; }
    SessionScreen #main { height: 1fr; }
    SessionScreen Timeline { width: 3fr; }
    SessionScreen #side { width: 2fr; border-left: solid $primary-background; }
    SessionScreen #search { dock: bottom; display: none; }
    SessionScreen #search.visible { display: block; }
    SessionScreen #legend { height: 1; padding: 0 1; }
    SessionScreen #load-error { margin: 1 2; padding: 1 2; border: round $error; height: auto; }
    """

    BINDINGS = [
        Binding(
            key, action, desc.split(" (")[0], show=key in FOOTER_KEYS, key_display=key_label(key) if key == "slash" else None
        )
        for key, action, desc in sorted(
            SESSION_KEYS, key=lambda k: FOOTER_KEYS.index(k[0]) if k[0] in FOOTER_KEYS else len(FOOTER_KEYS)
        )
    ]
    AUTO_FOCUS = ""  # focus goes to the timeline once it is there, never to the hidden search box

    class Loaded(Message):
        def __init__(
            self, ledger: Ledger, seconds: float, preview: bool = False, stamp: tuple[int, int, int] | None = None
        ) -> None:
            super().__init__()
            self.ledger = ledger
            self.seconds = seconds
            self.preview = preview  # only the first lines: the full index follows
            self.stamp = stamp  # the file as it was when the read began

    class Analyzed(Message):
        def __init__(
            self,
            report: Report,
            seconds: float,
            generation: int = 0,
            cells: tuple[int, list[Cell]] | None = None,
            header: str | None = None,
        ) -> None:
            super().__init__()
            self.report = report
            self.seconds = seconds
            self.generation = generation
            self.cells = cells  # the minimap's, at its width then (see minimap.coverage_cells)
            self.header = header  # the header's summary (`header_line`), also computed by the worker

    class Counted(Message):
        """The worker counted the tokens of every item of the analysis's next request."""

        def __init__(self, generation: int) -> None:
            super().__init__()
            self.generation = generation

    class Failed(Message):
        def __init__(self, error: str, stage: str = "load") -> None:
            super().__init__()
            self.error = error
            self.stage = stage  # load | analysis

    class DiskEvent(Message):
        """The file watcher saw the file change (or vanish): look at it."""

    class WatchUnavailable(Message):
        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    class Followed(Message):
        """A follow read landed: the grown (or replaced) file, indexed and analysed, or why not."""

        def __init__(
            self, generation: int, ledger: Ledger | None, report: Report | None, stamp: Stamp | None,
            whole: str, error: str = "",
        ) -> None:  # fmt: skip
            super().__init__()
            self.generation = generation
            self.ledger = ledger
            self.report = report
            self.stamp = stamp
            self.whole = whole  # why the file was read again from the start ("": it grew)
            self.error = error

    def __init__(
        self,
        path: str,
        *,
        ledger: Ledger | None = None,
        report: Report | None = None,
        window: int | None = None,
        reserve: int | None = None,
        at_line: int | None = None,
        started: float | None = None,
    ) -> None:
        super().__init__()
        self.path = path
        self.ledger = ledger
        self.report = report
        self.window = window
        self.reserve = reserve
        self.at_line = at_line
        self.focus_line: int | None = None  # put the cursor on the record at this line once loaded (a search hit)
        self._sub_agent_turn = -1  # the sub-agent `a` opened last
        # When the user started waiting (the app's launch for the first screen): the header reports
        # the time they waited, not only the analysis's share of it.
        self.started = started if started is not None else time.perf_counter()
        self.first_paint: float | None = None
        self._first_painted = threading.Event()  # set with `first_paint`: the full index's read waits for it
        self.ready_seconds: float | None = None  # from `started` until the analysis was on screen (the header's "ready in")
        self.index_seconds = 0.0
        self._finding_index = -1
        self._generation = 0
        self._stamp: Stamp | None = None
        self.changed_on_disk = False
        self._status_text = ""
        # Follow mode. `follow_choice`: the user's F (None: not chosen, growth decides).
        self.following = False
        self.follow_choice: bool | None = None
        self.follow_reads = 0  # follow reads started (a burst of appends is a few, not one per event)
        self._follow_gen = 0  # a newer read, or our own write, makes an older read's answer stale
        self._follow_busy = False  # one read in flight at most
        self._follow_again = False  # the file changed while it was read: look again once it lands
        self._follower: Follower | None = None  # reads only what the file gained (live.incremental)
        self._disk_problem: tuple[str, str] | None = None  # deleted | unreadable, and why
        self._seen_state: SessionState | None = None  # (see _seen)
        self._seen_report: Report | None = None
        self._watch_stop: threading.Event | None = None
        self._poll_timer: object | None = None
        self._next_request_behind = False  # the next-request view shows an older read than self.report
        self._tokens_lock = threading.Lock()  # one thread at a time counts the next request's tokens
        self._message_count: tuple[Ledger, int, int] | None = None  # (see _messages_in)
        self._loaded_count: tuple[Ledger, int, int] | None = None  # the same, set by the loading worker
        self._kinds: tuple[Ledger, list[str]] | None = None  # the loaded ledger's `record_kinds`, read by the loading worker
        self._last_move = 0.0  # when the timeline's cursor last moved (monotonic)
        self._timeline_mounted = False  # `shows_session`, kept as a flag: the footer asks it per binding
        self._fingerprint: LateFingerprint | None = None  # the loaded ledger's sha256, taken after the landing

    # -------------------------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Static(f"{self.path}  ·  indexing…", id="status")
        yield Static("", id="summary")
        yield Vertical(id="body")
        # Disabled while hidden: a hidden box that takes the focus would swallow q and every key.
        yield Input(placeholder="search text (Enter: next match, Escape: close)", id="search", disabled=True)
        # The footer comes with the view (or the load error): composed once, with the keys that
        # work there (see _mount_footer).

    async def on_mount(self) -> None:
        self.set_interval(WATCH_SECONDS, self.check_disk)
        if self.ledger is not None:
            self._stamp = disk_stamp(self.path)
            self._start_following(self._stamp)
            await self._show_ledger(self.ledger, 0.0)
            if self.report is not None:
                self._show_report(self.report, 0.0)
            else:
                self._analyze(self.ledger)
        else:
            self._load()

    def _legend(self) -> Static:
        parts = []
        for s in ("live", "retained", "summarized", "excluded", "hole", "inactive", "checkpoint"):
            parts.append(f"[on {STATE_COLORS[s]}]  [/] {s}")
        return Static("  ".join(parts), id="legend")

    @property
    def shows_session(self) -> bool:
        """The timeline and its panes are on screen (not before the index, not after a load error).
        A flag set where they are mounted and removed, not a DOM query: `check_action` asks it for
        every binding at every footer refresh, and a query walks the whole screen (on a big session,
        a third of a second of the main thread while the worker loads; issue 15.3)."""
        return self._timeline_mounted

    async def _show_ledger(self, ledger: Ledger, seconds: float, preview: bool = False) -> None:
        had = self.ledger is not None and self.shows_session
        self.ledger = ledger
        if had:
            # The complete index replaces the preview (or a reload the earlier read): same widgets.
            self.query_one(Timeline).set_ledger(ledger)
            self.query_one(Minimap).set_ledger(ledger, self._kinds_of(ledger))
        else:
            body = self.query_one("#body", Vertical)
            timeline = Timeline(ledger, id="timeline")
            # The whole view in one mount, its panes composed with it (not added one by one: each
            # `add_pane` and each awaited mount was a layout of the screen of its own, on the main
            # thread while the worker indexes the file; issue 15.3).
            side = TabbedContent(id="side")
            first = (ledger, timeline.current_seq)
            side.compose_add_child(TabPane("Detail", DetailPane(id="detail-pane", first=first), id="detail"))
            side.compose_add_child(TabPane("Findings", FindingsList(id="findings-list"), id="findings"))
            side.compose_add_child(TabPane("Next request", NextRequestView(id="next-view"), id="next"))
            with self.app.batch_update():
                await body.remove_children()  # a load error's panel, when a reload succeeds
                minimap = Minimap(ledger, kinds=self._kinds_of(ledger), id="minimap")
                await body.mount_all([minimap, self._legend(), Horizontal(timeline, side, id="main")])
                self._timeline_mounted = True
                timeline.focus()
                # The keys that need a session now work (`check_action`): the footer shows them.
                # Only here: a footer rebuilds every key's widget (0.1 s of the main thread), and
                # nothing else it shows changes with the index or the report (issue 15.2-3).
                self.refresh_bindings()
                await self._mount_footer()
                if self.report is None:
                    self.query_one("#summary", Static).update(ANALYSING)
            self.call_after_refresh(self._painted)
        if preview:
            self._status(f"first {len(ledger.records):,} records shown · indexing the rest…")
        else:
            self.index_seconds = seconds
            n = self._messages_in(ledger)
            took = f" in {seconds:.2f} s" if self.app_timings else ""
            self._status(f"{len(ledger.records):,} records, {n:,} messages · indexed{took} · analysing…")

    @staticmethod
    def _counted(ledger: Ledger, kinds: list[str] | None = None) -> tuple[Ledger, int, int]:
        kinds = kinds if kinds is not None else record_kinds(ledger)
        return (ledger, len(ledger.records), kinds.count("message"))

    def _kinds_of(self, ledger: Ledger) -> list[str] | None:
        """The loading worker's `record_kinds` of `ledger` (None: another ledger, or it grew)."""
        known = self._kinds
        return known[1] if known is not None and known[0] is ledger and len(known[1]) == len(ledger.records) else None

    def _messages_in(self, ledger: Ledger) -> int:
        """How many message records the status line counts: once per ledger (the index, then the
        landing, of a 500 MB rollout's 1.3 million records each counted them on the main thread;
        the loading worker counts the index it read, `_loaded_count`)."""
        for known in (self._message_count, self._loaded_count):
            if known is not None and known[0] is ledger and known[1] == len(ledger.records):
                return known[2]
        self._message_count = self._counted(ledger)
        return self._message_count[2]

    @property
    def app_timings(self) -> bool:
        """Snapshot tests turn timings off so screens are byte-for-byte reproducible."""
        return bool(getattr(self.app, "show_timings", True))

    def _painted(self) -> None:
        if self.first_paint is None:
            self.first_paint = time.perf_counter() - self.started
        self._first_painted.set()

    def _status(self, text: str | None = None) -> None:
        if text is not None:
            self._status_text = text
        led = self.ledger
        fmt = ""
        if led is not None:
            fmt = f"{led.format} v{led.version}" if led.version is not None else led.format
            if led.migrated:
                fmt += " (migrated in memory)"
        if self.at_line:
            fmt += f" · as of line {self.at_line}"
        parts = [f"[b]{escape(self.path)}[/b]", fmt, self._status_text]
        if self.following:
            parts.insert(0, "[b reverse green] following [/]")
        if self._disk_problem is not None:
            parts.append(f"[b red]{escape(self._disk_problem[1])}: showing the last read[/]")
        elif self.changed_on_disk:
            parts.append("[b yellow]changed on disk: ctrl+r reloads[/]")
        # One line, its height fixed (DEFAULT_CSS): a new text never moves anything, so no layout
        # of the screen (each was one while the worker indexes or analyses; issue 15.3).
        self.query_one("#status", Static).update("  ·  ".join(p for p in parts if p), layout=False)

    def _show_report(
        self, report: Report, seconds: float, cells: tuple[int, list[Cell]] | None = None, header: str | None = None
    ) -> None:
        self.report = report
        self.query_one(Timeline).set_report(report)
        self.query_one(Minimap).set_report(report, cells)
        self.query_one(FindingsList).set_report(report)
        # The next request is one table row per item (thousands in a long session, more to build
        # than the whole analysis): filled only when it is on screen, else once its tab is opened,
        # so neither the first landing nor a follow read waits for rows nobody sees (issue 15.3).
        if not self._side_shows("next") or not tokens_counted(report):
            self._next_request_behind = True  # (filled when its tab opens, or its tokens are counted)
        else:
            self._show_next_request(report)
        worst = min((f.severity for f in report.findings), key=lambda s: ("error", "warning", "info").index(s), default=None)
        color = {"error": "red", "warning": "yellow", "info": "cyan"}.get(worst or "", "green")
        tok = "tokenizer: offline cl100k_base copy" if report.tokenizer_offline else "tokenizer: cl100k_base"
        header = header if header is not None else header_line(report)
        self._summary(f"[{color}]{escape(header)}[/]  [dim]({tok})[/]")
        led = report.ledger
        n = self._messages_in(led)
        analysed = f"{len(led.records):,} records, {n:,} messages · analysed"
        self._status(analysed)
        self.call_after_refresh(self._landed, analysed, seconds)
        self._refresh_detail()
        self._seen_report, self._seen_state = report, None  # (`_seen` reads it when first asked)
        repair = self._repair_above()
        if repair is not None and repair.report.ledger is not report.ledger:
            repair.session_read(report)

    def _summary(self, text: str) -> None:
        """The header's summary. The screen is laid out again only when the summary's height
        changes: its rows are there from the first screen on (`ANALYSING`), so the landing of a
        summary of as many lines is a repaint, not a layout of the whole screen (issue 15.3)."""
        box = self.query_one("#summary", Static)
        before = box.size.height
        box.update(text, layout=False)
        width = box.content_region.width
        if not before or not width or box.get_content_height(box.size, box.size, width) != before:
            box.refresh(layout=True)

    def _landed(self, analysed: str, seconds: float) -> None:
        """The analysis is on screen (the paint after `_show_report`, the minimap's colours and the
        rows' states drawn): the header says how long the user waited for it, from the launch (or
        ctrl+r), unless the status line moved on meanwhile (a follow read says what it added)."""
        waited = self.ready_seconds = time.perf_counter() - self.started
        self._last_move = time.monotonic()  # (the worker's token count waits a little longer: see _analyze_now)
        # Now, not beside the landing: the file's sha256 (for a write-back: see LateFingerprint)
        # would share the cores with the landing's paint.
        late = self._fingerprint
        if late is not None and self.report is not None and late.ledger is self.report.ledger:
            late.start()
        if self.app_timings and self._status_text == analysed:
            self._status(f"{analysed} · ready in {waited:.2f} s (index {self.index_seconds:.2f} s, analysis {seconds:.2f} s)")

    # -------------------------------------------------------------------------------- workers

    @work(thread=True, exclusive=True, group="load")
    def _load(self) -> None:
        t0 = time.perf_counter()
        stamp = disk_stamp(self.path)
        try:
            # A big file: show its first screen at once, then index the whole of it.
            big = self.at_line is None and os.path.getsize(split_selector(self.path)[0]) > PREVIEW_ABOVE_BYTES
            if big:
                preview = load(self.path, upto_line=PREVIEW_LINES, fingerprint=False)
                self.post_message(self.Loaded(preview, time.perf_counter() - t0, preview=True))
                # The whole file once the preview is on screen: read beside the main thread's mount
                # and first paint of the view, the two threads took turns at the GIL, each switch
                # a cost of both (issue 15.3).
                self._first_painted.wait(FIRST_PAINT_WAIT_S)
            # Not hashed now: after the landing (`LateFingerprint`), as only a write-back reads it;
            # a database's rows are digested as they are read (no later step takes their digest).
            ledger = load(self.path, upto_line=self.at_line, fingerprint=False, digest=True)
            # (here, not in the main thread's paint of it; one pass for the count and the minimap)
            kinds = record_kinds(ledger)
            self._kinds = (ledger, kinds)
            self._loaded_count = self._counted(ledger, kinds)
            keep_out_of_collector()
        except LoadError as e:
            self.post_message(self.Failed(str(e)))
            return
        except OSError as e:
            self.post_message(self.Failed(f"{self.path}: {e.strerror or e}"))
            return
        except Exception as e:  # a loader's bug must not leave the screen stuck at "indexing…"
            self.post_message(self.Failed(f"{self.path}: the loader failed: {type(e).__name__}: {e}"))
            return
        self.post_message(self.Loaded(ledger, time.perf_counter() - t0, stamp=stamp))

    def _analyze(self, ledger: Ledger) -> None:
        """Analyse in a worker thread; a newer request makes the answer of an older one stale."""
        self._generation += 1
        minimap = self.query(Minimap)
        width = minimap.first().size.width if minimap else 0
        self._analyze_in_thread(ledger, self._generation, width)

    # A worker's description is its name, never Textual's default (the repr of every argument): the
    # repr of a ledger is every record's, 1.3 s of the main thread and a 100 MB string on a 500 MB
    # rollout, before the analysis starts (issue 15.3). The same for every worker given a ledger,
    # a report or what holds one.
    @work(thread=True, exclusive=True, group="analyze", description="analyze")
    def _analyze_in_thread(self, ledger: Ledger, generation: int, width: int) -> None:
        self._analyze_now(ledger, generation, width)

    def _analyze_now(self, ledger: Ledger, generation: int = 0, width: int = 0) -> None:
        """The analysis, and the minimap's colours at `width` (its own pass over every record:
        here, not in the main thread's paint after the landing)."""
        t0 = time.perf_counter()
        try:
            with collector_paused():  # (see keep_out_of_collector)
                report = analyze(ledger, window=self.window, reserve=self.reserve)
                cells = (width, coverage_cells(ledger, report, width, self._kinds_of(ledger))) if width > 0 else None
                header = header_line(report)  # (its counts are passes over every record, as the cells)
                # Frozen before the collector is back on: else its first pass walks everything the
                # analysis made (0.13 s of this thread on a 500 MB rollout) before the freeze.
                keep_out_of_collector()
        except Exception as e:  # the timeline stays usable: say what failed on the status line
            self.post_message(self.Failed(f"the analysis failed: {type(e).__name__}: {e}", stage="analysis"))
            return
        # The landing counts as a move of the cursor: the count below steps aside for its paint and
        # for the keys a user presses once the colours are there (building tiktoken's encoder, its
        # first step, holds the GIL for a tenth of a second or more: the first key after the
        # landing waited for it; issue 15.2).
        self._last_move = time.monotonic()
        self.post_message(self.Analyzed(report, time.perf_counter() - t0, generation, cells, header))
        # The tokens of each item of the next request: only its table shows them (the analysis
        # counted what the total needs), and counting them is as long again as the analysis on a
        # big rollout, so after the landing, as `inspector analyze` never counts them (issue 15.3).
        try:
            self._count_tokens(report, yielding=True)
            keep_out_of_collector()
        except Exception as e:
            self.post_message(self.Failed(f"counting the next request's tokens failed: {type(e).__name__}: {e}", stage="analysis"))
            return
        self.post_message(self.Counted(generation))

    def ensure_fingerprint(self, ledger: Ledger) -> None:
        """The ledger's sha256 as its load would have taken it, before a write-back compares it
        (taken now, or waited for, when the thread the landing started has not finished)."""
        late = self._fingerprint
        if late is not None and late.ledger is ledger:
            late.ensure()

    def _count_tokens(self, report: Report, yielding: bool = False) -> None:
        """Every item's tokens; a second caller waits for the first rather than counting again.
        `yielding` (the worker's count after the landing): a part at a time, waiting while the
        user moves through the timeline, so that each key's repaint has the GIL to itself (with
        the count beside it a key took three to ten times its own CPU; issue 15.2)."""
        with self._tokens_lock, collector_paused():
            if not yielding:
                report.ensure_tokens()
                return
            items = report.context
            for i in range(0, len(items), TOKEN_CHUNK):
                while time.monotonic() - self._last_move < STEP_ASIDE_S:
                    time.sleep(STEP_ASIDE_S / 4)
                report.ensure_tokens(items[i : i + TOKEN_CHUNK])

    async def on_session_screen_loaded(self, msg: Loaded) -> None:
        await self._show_ledger(msg.ledger, msg.seconds, msg.preview)
        if not msg.preview and self.focus_line is not None:
            self._go_to_record_at(msg.ledger, self.focus_line)
            self.focus_line = None
        if not msg.preview:
            self._stamp = msg.stamp
            self._fingerprint = LateFingerprint(msg.ledger, msg.stamp, disk_stamp)
            self._start_following(msg.stamp)
            # Analyse once the index is on screen, so the first paint never waits for it.
            self.call_after_refresh(self._analyze, msg.ledger)

    def on_session_screen_analyzed(self, msg: Analyzed) -> None:
        if msg.generation == self._generation:  # an earlier window's analysis, landing late, is dropped
            self._show_report(msg.report, msg.seconds, msg.cells, msg.header)

    def on_session_screen_counted(self, msg: Counted) -> None:
        if msg.generation == self._generation:
            self._next_request_catch_up()

    async def on_session_screen_failed(self, msg: Failed) -> None:
        if self.report is None:
            self.query_one("#summary", Static).update("")  # no analysis is coming: not `ANALYSING`
        if msg.stage == "load":
            self._stamp = disk_stamp(self.path)  # watch on: a fixed file is announced
        if msg.stage == "load" and self.ledger is not None:
            self._status(f"[red]reload failed: {escape(msg.error)}[/] · showing the earlier read")
            return
        self._status(f"[red]{escape(msg.error)}[/]")
        if msg.stage == "load":
            await self._show_load_error(msg.error)

    async def _show_load_error(self, error: str) -> None:
        """The file could not be read: say so where the session would be, with the keys that work."""
        keys = [("o", "open another file"), ("ctrl+r", "try again")]
        if len(self.app.screen_stack) > 2:
            keys.append(("Escape", "back"))
        keys += [("q", "quit"), ("F1", "help")]
        text = Text()
        text.append("Could not open this file\n", style="bold red")
        text.append(f"{error}\n\n")
        for i, (key, what) in enumerate(keys):
            if i:
                text.append("  ·  ", style="dim")
            text.append(key, style="bold #e3b341")
            text.append(f" {what}")
        body = self.query_one("#body", Vertical)
        self._timeline_mounted = False
        await body.remove_children()
        await body.mount(Static(text, id="load-error"))
        self.refresh_bindings()
        await self._mount_footer()

    async def _mount_footer(self) -> None:
        """The footer, once, after the keys it shows are set (`check_action`, the focus): its first
        compose shows them. Composed with the screen, it was empty at first, then rebuilt every
        key's widget and laid out the screen again after the first paint, while the worker indexes
        the file (issue 15.3)."""
        if not self.query(SteadyFooter):
            await self.mount(SteadyFooter(ready=True))

    # -------------------------------------------------------------------------------- the one guard

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Before the session is on screen (indexing, or a load error) only the keys that need no
        session work; the footer hides the others and the palette does not offer them."""
        return action in WITHOUT_SESSION or self.shows_session

    # -------------------------------------------------------------------------------- disk

    def check_disk(self) -> None:
        """An agent appended, or `inspector undo` ran in another shell: follow it, or say so once
        per change. A deleted or unreadable file keeps the last view and says why."""
        if self._stamp is None or not self.shows_session:
            return  # being read (its own stamp follows), or never read
        if self._disk_changed_problem():
            return
        stamp = disk_stamp(self.path)
        if stamp is None or stamp == self._stamp:
            return
        self._disk_changed(REPLACED if replaced(self._stamp, stamp) else "")

    def _disk_changed(self, whole: str) -> None:
        """The file differs from the last read: grew (`whole` empty), or must be read from the
        top (`whole` says why). Read it when following; else say so once."""
        repair = self._repair_above()
        if repair is not None:
            if repair.writing:
                return  # our own install: the repair screen hands the view its result
            repair.session_changed("changed" if whole else "grew")
        if not self.following and self.follow_choice is None and not whole and self.at_line is None:
            self._set_following(True)  # it grows while open: follow it (F turns it off)
        if self.following:
            self._follow_read(whole)
        elif not self.changed_on_disk:
            self.changed_on_disk = True
            self._status()
            self.notify(f"{self.path} changed on disk: ctrl+r reloads it.", timeout=8)

    def _disk_changed_problem(self) -> bool:
        """Note the file becoming deleted or unreadable (said once), or readable again (read
        again); True while it cannot be read."""
        problem = disk_problem(self.path)
        if problem == self._disk_problem:
            return problem is not None
        was, self._disk_problem = self._disk_problem, problem
        if self._seen is not None:
            old = self._seen if was is None else replace(self._seen, status=was[0], error=was[1])
            new = self._seen if problem is None else replace(self._seen, status=problem[0], error=problem[1])
            for ev in changes(old, new, "error"):
                self.notify(ev["message"], severity="warning" if problem is not None else "information", timeout=8)
        self._status()
        if problem is None and was is not None:  # what is there now is read from the top
            self._disk_changed("readable again" if was[0] == UNREADABLE else "the file was created again")
        return problem is not None

    def _repair_above(self) -> RepairScreen | None:
        """The repair screen opened from this view, if it is open."""
        stack = self.app.screen_stack
        if self not in stack or stack[-1] is self:
            return None  # (nothing above: the repair screen's module need not be imported to say so)
        from inspector.tui.repair import RepairScreen

        above = stack[stack.index(self) + 1 :]
        return next((s for s in above if isinstance(s, RepairScreen) and s.report.ledger.path == self.path), None)

    # -------------------------------------------------------------------------------- follow

    def _start_following(self, stamp: Stamp | None) -> None:
        """After the first read: follow a file that was still being written when opened, and
        watch it either way (it may start growing)."""
        if stamp is None or self.at_line is not None or self._watch_stop is not None:
            return
        if self.follow_choice is None and time.time() - max(stamp[1], stamp[4]) / 1e9 < FRESH_SECONDS:
            self.following = True
            self._status()
        self._watch_stop = threading.Event()
        self._watch_file(self._watch_stop)

    @work(thread=True, group="watch", exit_on_error=False)
    def _watch_file(self, stop: threading.Event) -> None:
        """File events for this file (a store's -wal and -journal too), from its folder (a rename
        over it and a deletion are events of the folder). Ends when the screen goes; a watcher that cannot start says so."""
        targets = watched_files(self.path)
        try:
            import watchfiles

            for _batch in watchfiles.watch(
                os.path.dirname(os.path.abspath(split_selector(self.path)[0])),
                watch_filter=lambda _change, p: os.path.abspath(p) in targets,
                debounce=WATCH_DEBOUNCE_MS,
                step=WATCH_QUIET_MS,
                stop_event=stop,
                rust_timeout=500,
                yield_on_timeout=True,
                recursive=False,
                raise_interrupt=False,
            ):
                if stop.is_set():
                    return
                if _batch:
                    self.post_message(self.DiskEvent())
        except Exception as e:  # no inotify, too many watches, a folder gone: poll instead
            if not stop.is_set():
                self.post_message(self.WatchUnavailable(f"{type(e).__name__}: {e}"))

    def on_session_screen_disk_event(self, _msg: DiskEvent) -> None:
        self.check_disk()

    def on_session_screen_watch_unavailable(self, _msg: WatchUnavailable) -> None:
        if self._poll_timer is None:
            self._poll_timer = self.set_interval(FALLBACK_POLL_SECONDS, self.check_disk)

    def on_unmount(self) -> None:
        if self._watch_stop is not None:
            self._watch_stop.set()
        gc.unfreeze()  # what the view kept out of the collector's sight is collectable again

    def _set_following(self, on: bool) -> None:
        self.following = on
        if on:
            self.changed_on_disk = False
        self._status()

    def action_toggle_follow(self) -> None:
        if self.at_line is not None:
            self.notify("Viewing the file as of a line: nothing to follow.", timeout=3)
            return
        self.follow_choice = not self.following
        self._set_following(self.follow_choice)
        if not self.following:
            self.notify("Follow off: a change on disk is announced, ctrl+r reloads.", timeout=3)
            return
        tl = self.query_one(Timeline)
        tl.action_edge(1)  # tail mode: on the last record, which follows the end
        self.notify("Following the file: new records appear as they are written.", timeout=3)
        if self._stamp is not None and disk_stamp(self.path) != self._stamp:
            self.check_disk()
        elif self._watch_stop is None:
            self._start_following(self._stamp)

    def _follow_read(self, whole: str) -> None:
        """Read the grown file in a worker; while one read is in flight, the changes meanwhile
        are gathered into one read after it (a burst of appends costs a few reads, not one per
        event, and the newest read is the one left on screen)."""
        if self._follow_busy:
            self._follow_again = True
            return
        self._follow_busy = True
        self.follow_reads += 1
        self._follow_gen += 1
        self._follow_worker(self._follow_gen, whole, self.window, self.reserve)

    @work(thread=True, group="follow", exit_on_error=False)
    def _follow_worker(self, generation: int, whole: str, window: int | None, reserve: int | None) -> None:
        """Read what the file gained (inspector.live.incremental: only the new complete lines, the
        report extended; a partial last line waits for its newline; a file replaced or shrunk is
        read from the start). One worker at a time (`_follow_busy`) uses the Follower."""
        stamp = disk_stamp(self.path)
        try:
            follower = self._follower
            update = None
            if follower is None or (follower.window, follower.reserve) != (window, reserve):
                from inspector.live.incremental import Follower

                follower = Follower(self.path, window=window, reserve=reserve)
                shown = self.ledger
                if shown is not None and self.at_line is None:
                    update = follower.adopt(shown, self.report)
                    if update.ledger is shown:  # the view is the file as it was: look for what it gained
                        update = None
                self._follower = follower
            update = update or follower.poll()
            if update is None:  # nothing complete was added (a line still being written)
                self.post_message(self.Followed(generation, None, None, stamp, whole))
                return
            update.report.ensure_tokens()
        except LoadError as e:
            self._follower = None
            self.post_message(self.Followed(generation, None, None, stamp, whole, str(e)))
            return
        except OSError as e:
            self._follower = None
            self.post_message(self.Followed(generation, None, None, stamp, whole, f"{self.path}: {e.strerror or e}"))
            return
        except Exception as e:  # a core bug on a grown file must not stop the follow
            self._follower = None
            msg = f"{self.path}: the follow read failed: {type(e).__name__}: {e}"
            self.post_message(self.Followed(generation, None, None, stamp, whole, msg))
            return
        self.post_message(self.Followed(generation, update.ledger, update.report, stamp, whole))

    async def on_session_screen_followed(self, msg: Followed) -> None:
        if msg.generation != self._follow_gen:
            return  # our own install, or ctrl+r, replaced the view since this read began
        self._follow_busy = False
        if (msg.ledger is None or msg.report is None) and not msg.error:
            self._stamp = msg.stamp  # only a line still being written: it is read once complete
        elif msg.ledger is None or msg.report is None:
            if not self._disk_changed_problem():
                self._stamp = msg.stamp  # announced once; the next change is read again
                self._status(f"[red]reading the grown file failed: {escape(msg.error)}[/]")
        elif self.shows_session:
            self._stamp = msg.stamp
            await self._show_followed(msg.ledger, msg.report, msg.whole)
        if self._follow_again:
            self._follow_again = False
            self.check_disk()

    async def _show_followed(self, ledger: Ledger, report: Report, whole: str) -> None:
        """The grown file on screen: the cursor stays where the user put it (on the last record, it
        follows the end), the scroll position is kept; each finding new since the last read is
        announced once."""
        tl = self.query_one(Timeline)
        at_end = bool(tl.rows) and tl.cursor >= len(tl.rows) - 1
        before = len(self.ledger.records) if self.ledger is not None else 0
        seen = self._seen
        self._generation += 1  # an analysis under way is of the file before it grew
        await self._show_ledger(ledger, 0.0)
        self._show_report(report, 0.0)
        if at_end or tl.cursor >= len(tl.rows):  # (past the end: the file shrank under it)
            tl.action_edge(1)  # else the timeline kept the cursor's record and the scroll
        self._announce(seen, report)
        n = len(ledger.records)
        what = f"reloaded in full: {whole}" if whole else f"+{plural(n - before, 'record')}"
        m = self._messages_in(ledger)
        self._status(f"{n:,} records, {m:,} messages · {what}")
        if whole == REPLACED:
            self.notify(f"{self.path}: {whole}: reloaded in full.", timeout=6)

    def _show_next_request(self, report: Report | None) -> None:
        self._next_request_behind = False
        if report is not None:
            self._count_tokens(report)  # (waits for the worker's count, if it is under way)
        self.query_one(NextRequestView).set_report(report)

    def _next_request_catch_up(self) -> None:
        """The next-request view came on screen: refill it if a follow read left it behind."""
        if self._next_request_behind and self.report is not None and self._side_shows("next"):
            self._show_next_request(self.report)

    def on_tabbed_content_tab_activated(self, _event: TabbedContent.TabActivated) -> None:
        self.call_after_refresh(self._next_request_catch_up)  # `active` is set by then

    @property
    def _seen(self) -> SessionState | None:
        """The findings of the last read, in `inspector watch`'s terms: taken when first asked (a
        follow read, the file's disappearance), not at the landing: each finding's first line is
        a pass over the records it names (a 500 MB rollout's holes name 370k; issue 15.3)."""
        if self._seen_state is None and self._seen_report is not None:
            self._seen_state = self._findings_seen(self._seen_report)
        return self._seen_state

    def _findings_seen(self, report: Report) -> SessionState:
        stamp = self._stamp or (-1, -1, -1, -1, -1)
        return summary_of(self.path, report, stamp[0], stamp[1])

    def _announce(self, seen: SessionState | None, report: Report) -> None:
        """A notification for each finding the last read did not have (its identity: code and
        first line, as `inspector watch` tells them)."""
        if seen is None or self._seen is None:
            return
        writing = mid_write(report)
        for ev in changes(seen, self._seen, "info"):
            if ev["event"] != "finding" or FindingKey(ev["code"], ev["line"]) in writing:
                continue
            self.notify(new_finding_words(ev), title=f"new {ev['severity']}", severity=TOAST_SEVERITY.get(ev["severity"], "information"), timeout=10)

    def action_reload(self) -> None:
        self.changed_on_disk = False
        self._follow_gen += 1  # a follow read under way is of an older file
        self._follow_busy = self._follow_again = False
        self._follower = None
        self._stamp = None  # not watched while it is read: the read's own stamp follows
        self.started = time.perf_counter()
        if self.shows_session:
            self.report = None
            self.query_one(FindingsList).set_report(None)
            self._show_next_request(None)
        self._status("reloading…")
        self._load()

    # -------------------------------------------------------------------------------- selection

    def on_timeline_selected(self, msg: Timeline.Selected) -> None:
        self._last_move = time.monotonic()  # (the worker's token count steps aside meanwhile)
        self.query_one(Minimap).set_cursor(msg.seq)
        self._refresh_detail(msg.seq)

    def _refresh_detail(self, seq: int | None = None) -> None:
        if self.ledger is None:
            return
        if seq is None:
            seq = self.query_one(Timeline).current_seq
        self.query_one(DetailPane).show(self.ledger, self.report, seq)

    def on_minimap_jump(self, msg: Minimap.Jump) -> None:
        self.go_to(msg.seq)

    def on_findings_list_jump(self, msg: FindingsList.Jump) -> None:
        if msg.seqs:
            self.go_to(msg.seqs[0])

    def on_next_request_view_jump(self, msg: NextRequestView.Jump) -> None:
        self.go_to(msg.seq)

    def on_next_request_view_budgets(self, msg: NextRequestView.Budgets) -> None:
        """The window / reserve fields of the next-request view: analyse again with them."""
        self.window, self.reserve = msg.window, msg.reserve
        if self.ledger is None or self.report is None:
            return
        self._status("analysing with the new window and reserve…")
        self._analyze(self.report.ledger)

    def _go_to_record_at(self, ledger: Ledger, line: int) -> None:
        """The cursor on the record written at `line` (the last one before it, for a line that is
        no record of its own)."""
        seqs = [r.seq for r in ledger.records if r.line <= line]
        if seqs:
            self.go_to(seqs[-1])

    def go_to(self, seq: int) -> None:
        tl = self.query_one(Timeline)
        tl.go_to(seq)
        tl.focus()

    # -------------------------------------------------------------------------------- actions

    def _seqs_where(self, pred: Callable[[int], bool]) -> list[int]:
        tl = self.query_one(Timeline)
        return [s for s in tl.rows if pred(s)]

    def _jump(self, candidates: list[int], forward: bool, what: str) -> None:
        tl = self.query_one(Timeline)
        cur = tl.current_seq
        if cur is None or not candidates:
            self.notify(f"No {what}.", timeout=3)
            return
        if forward:
            nxt = next((s for s in candidates if s > cur), candidates[0])
        else:
            nxt = next((s for s in reversed(candidates) if s < cur), candidates[-1])
        tl.go_to(nxt)

    def action_next_hole(self) -> None:
        self._jump([a for a, _ in self._hole_ranges()], True, "holes")

    def action_prev_hole(self) -> None:
        self._jump([a for a, _ in self._hole_ranges()], False, "holes")

    def _hole_ranges(self) -> list[tuple[int, int]]:
        if self.report is None:
            return []
        return hole_ranges(self.report.ledger, self.query_one(Timeline).rows, self.report.states)

    def action_next_hole_message(self) -> None:
        self._jump(self._holes(), True, "holes")

    def action_prev_hole_message(self) -> None:
        self._jump(self._holes(), False, "holes")

    def _holes(self) -> list[int]:
        if self.report is None:
            return []
        states = self.report.states
        return self._seqs_where(lambda s: states[s] == "hole")

    def action_next_checkpoint(self) -> None:
        self._jump(self._checkpoints(), True, "checkpoints")

    def action_prev_checkpoint(self) -> None:
        self._jump(self._checkpoints(), False, "checkpoints")

    def _checkpoints(self) -> list[int]:
        led = self.ledger
        if led is None:
            return []
        return self._seqs_where(lambda s: led.records[s].kind == "checkpoint")

    def _side_shows(self, tab: str) -> bool:
        """The side pane is on screen (not hidden by a maximized timeline) with `tab` open."""
        side = self.query_one("#side", TabbedContent)
        return self.maximized in (None, side) and side.active == tab

    def action_next_finding(self) -> None:
        if self.report is None or not self.report.findings:
            self.notify("No findings.", timeout=3)
            return
        findings = [f for f in self.report.findings if f.records]
        if not findings:
            self.notify("No finding points at a record.", timeout=3)
            return
        self._finding_index = (self._finding_index + 1) % len(findings)
        f = findings[self._finding_index]
        self.query_one(Timeline).go_to(f.records[0])
        if self._side_shows("findings"):
            self.query_one(FindingsList).show_finding(f)
        elif not self._side_shows("detail"):  # the detail pane names the finding: no toast over it
            self.notify(f"{f.severity}: {f.code}: {f.message}", timeout=6)

    def action_follow_tool(self) -> None:
        """From a tool call to its first result, on to each further result, back to the call."""
        led = self.ledger
        tl = self.query_one(Timeline)
        cur = tl.current_seq
        if led is None or cur is None:
            return
        rec = led.records[cur]
        call: int | None = None
        if rec.call_ids:
            call = cur
        elif rec.result_id:
            rid = rec.result_id
            call = next((r.seq for r in reversed(led.records[:cur]) if rid in r.call_ids), None)
        else:
            self.notify("Not a tool call or a tool result.", timeout=3)
            return
        cycle = [call, *self._results_of(call)] if call is not None else []
        if len(cycle) < 2:
            self.notify("Its other half is not in this session (orphaned or unanswered).", severity="warning", timeout=4)
            return
        target = cycle[(cycle.index(cur) + 1) % len(cycle)] if cur in cycle else cycle[0]
        tl.go_to(target)

    def _results_of(self, call: int) -> list[int]:
        """The records answering the calls of one reply, in file order (the scan stops once every
        call is answered)."""
        assert self.ledger is not None
        waiting = set(self.ledger.records[call].call_ids)
        out: list[int] = []
        for r in self.ledger.records[call + 1 :]:
            if not waiting:
                break
            if r.result_id in waiting:
                out.append(r.seq)
                waiting.discard(r.result_id)
        return out

    def action_toggle_inactive(self) -> None:
        tl = self.query_one(Timeline)
        tl.set_show_inactive(not tl.show_inactive)
        self.notify("Inactive branches " + ("shown" if tl.show_inactive else "hidden"), timeout=2)

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        # Focus the pane's list so Enter works straight away.
        if tab == "findings":
            self.query_one(FindingsList).focus()
        elif tab == "next":
            self.query_one(NextRequestView).table.focus()

    def action_set_window(self) -> None:
        self.action_tab("next")
        self.query_one(NextRequestView).focus_window()

    def action_maximize(self) -> None:
        """The timeline, or the side pane when the focus is in it, fills the screen; again restores."""
        if self.maximized is not None:
            self.minimize()
            self._next_request_catch_up()
            return
        side = self.query_one("#side", TabbedContent)
        focused = self.focused
        in_side = focused is not None and side in focused.ancestors_with_self
        self.maximized = side if in_side else self.query_one(Timeline)

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.disabled = False
        box.add_class("visible")
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "search" or self.ledger is None:
            return
        needle = event.value.strip().lower()
        tl = self.query_one(Timeline)
        if not needle:
            tl.matches = set()
            tl.refresh()
            return
        start = tl.current_seq or 0
        led = self.ledger
        led.load_messages([r.seq for r in led.records if r.kind == "message"])
        hits = [r.seq for r in led.records if r.kind == "message" and r.message and needle in r.message.text().lower()]
        tl.matches = set(hits)
        tl._cache.clear()
        if not hits:
            self.notify(f"No message contains {event.value!r}.", timeout=3)
            return
        nxt = next((s for s in hits if s > start), hits[0])
        tl.go_to(nxt)
        self.notify(f"{len(hits)} matches", timeout=2)

    def on_key(self, event: object) -> None:
        box = self.query_one("#search", Input)
        if getattr(event, "key", None) == "escape" and box.has_class("visible"):
            box.remove_class("visible")
            box.disabled = True
            self.query_one(Timeline).focus()
            getattr(event, "stop", lambda: None)()

    # -------------------------------------------------------------------------------- sub-agents

    def parent_session_path(self) -> str | None:
        """The session that spawned this one: a Claude Code transcript's `<session>.jsonl`, or a
        Codex child rollout's parent as the index `inspector scan` keeps knows it."""
        parent = parent_session(self.path)
        if parent is not None and os.path.exists(parent):
            return parent
        # (imported here: the index and the scan's models are pydantic, a tenth of a second of the
        # app's start that opening one file never needs; issue 15.3)
        from inspector.analysis.sessions import spawning_session_id
        from inspector.store.index import IndexUnavailable, SessionIndex

        spawner = spawning_session_id(self.ledger) if self.ledger is not None else None
        if spawner is None:
            return None
        try:
            with SessionIndex() as index:
                return index.path_of_session(spawner)
        except (IndexUnavailable, sqlite3.Error):
            return None

    def sub_agent_paths(self) -> list[str]:
        """This session's sub-agent transcripts: Claude Code's `<session>/subagents/`, and the
        child rollouts the index names this session as the parent of."""
        from inspector.store.index import IndexUnavailable, SessionIndex

        subs = subagent_files(self.path)
        try:
            with SessionIndex() as index:
                subs += [p for p in index.children_of(self.path) if p not in subs]
        except (IndexUnavailable, sqlite3.Error):
            pass
        return subs

    def action_sub_agents(self) -> None:
        parent = self.parent_session_path()
        if parent is not None:
            stack = self.app.screen_stack
            below = stack[-2] if len(stack) >= 2 else None
            if isinstance(below, SessionScreen) and os.path.realpath(below.path) == os.path.realpath(parent):
                self.app.pop_screen()  # came here from the parent: back to it, as it was
            else:
                self.app.open_session(parent)  # type: ignore[attr-defined]
            return
        subs = self.sub_agent_paths()
        if not subs:
            self.notify("This session has no sub-agent transcripts.", timeout=3)
            return
        self._sub_agent_turn = (self._sub_agent_turn + 1) % len(subs)
        path = subs[self._sub_agent_turn]
        self.notify(f"sub-agent {self._sub_agent_turn + 1} of {len(subs)}: {os.path.basename(path)} (a: back to the parent)", timeout=4)
        self.app.open_session(path)  # type: ignore[attr-defined]

    def action_back(self) -> None:
        if self.maximized is not None:
            self.minimize()
            self._next_request_catch_up()
        elif len(self.app.screen_stack) > 2:
            self.app.pop_screen()

    # -------------------------------------------------------------------------------- go to, view, copy

    def action_go_to_line(self) -> None:
        # The dialogs (Textual's TextArea among them) are imported when first opened: a share of
        # the app's start that opening a session never needs (issue 15.3).
        from inspector.tui.dialogs import PromptScreen

        led = self.ledger
        assert led is not None
        last = led.records[-1].line if led.records else 0
        self.app.push_screen(
            PromptScreen("Go to line", placeholder=f"a line of the file, 1 to {last:,}", hint="Enter: go · Escape: cancel"),
            self._go_to_line,
        )

    def _go_to_line(self, answer: str | None) -> None:
        if not answer or not answer.strip() or self.ledger is None:
            return
        text = answer.strip().replace(",", "").replace("_", "")
        if not text.isdigit() or int(text) < 1:
            self.notify(f"Not a line number: {answer.strip()!r}.", severity="warning", timeout=4)
            return
        line = int(text)
        seq = line_seq(self.ledger, line)
        if seq is None:
            self.notify("The session has no records.", timeout=3)
            return
        last = self.ledger.records[-1].line
        if line > last:
            self.notify(f"Line {line:,} is past the last record (line {last:,}): showing that one.", timeout=4)
        self.go_to(seq)

    def _next_item_selected(self) -> int | None:
        """The next-request item under the cursor when the next-request list has the focus."""
        view = self.query_one(NextRequestView)
        if self.focused is not view.table or not view.items:
            return None
        return view.table.cursor_row if 0 <= view.table.cursor_row < len(view.items) else None

    def action_view_full(self) -> None:
        from inspector.tui.dialogs import FullTextScreen  # (see action_go_to_line)

        led = self.ledger
        assert led is not None
        i = self._next_item_selected()
        if i is not None and self.report is not None:
            it = self.query_one(NextRequestView).items[i]
            where = f", line {it.line}" if it.line is not None else ""
            title = f"next request item #{it.index} · {it.role} {it.kind}{where}"
            self.app.push_screen(FullTextScreen(title, item_full_text(self.report, it)))
            return
        seq = self.query_one(Timeline).current_seq
        if seq is None:
            return
        rec = led.records[seq]
        self.app.push_screen(FullTextScreen(f"record at line {rec.line}", record_full_text(led, rec)))

    def _copy(self, text: str, what: str) -> None:
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {what} ({len(text):,} characters).", timeout=3)

    def action_copy_record(self) -> None:
        led = self.ledger
        assert led is not None
        seq = self.query_one(Timeline).current_seq
        if seq is None:
            return
        rec = led.records[seq]
        raw = rec.raw()
        text = dumps_text(raw, orjson.OPT_NON_STR_KEYS) if raw is not None else record_full_text(led, rec)
        self._copy(text, f"the record at line {rec.line}")

    def action_copy_summary(self) -> None:
        if self.report is None:
            self.notify("The analysis is still running: nothing to copy yet.", timeout=3)
            return
        self._copy(summary_text(self.report), "the summary")

    def action_copy_request(self) -> None:
        if self.report is None:
            self.notify("The analysis is still running: nothing to copy yet.", timeout=3)
            return
        self._count_tokens(self.report)
        text = dumps_text(context_json(self.report), orjson.OPT_INDENT_2)
        self._copy(text, "the next request as JSON")

    def action_open(self) -> None:
        from inspector.tui.dialogs import PromptScreen  # (see action_go_to_line)

        folder = os.path.dirname(os.path.abspath(self.path))
        self.app.push_screen(
            PromptScreen(
                "Open a session file or a folder of sessions",
                value=folder + os.sep,
                hint="Enter: open · Escape: cancel",
            ),
            self._open,
        )

    def _open(self, answer: str | None) -> None:
        if answer and answer.strip():
            self.app.open_target(answer.strip())  # type: ignore[attr-defined]

    # -------------------------------------------------------------------------------- repair

    def action_repair(self) -> None:
        if self.report is None:
            self.notify("The analysis is still running: the repair screen opens once it has landed.", timeout=3)
            return
        from inspector.tui.repair import RepairScreen

        self.app.push_screen(RepairScreen(self.report, window=self.window, reserve=self.reserve, fingerprint=self.ensure_fingerprint))

    def action_simulate(self) -> None:
        if self.report is None:  # the whole session (not a preview) is read by then
            self.notify("The analysis is still running: the simulate screen opens once it has landed.", timeout=3)
            return
        from inspector.tui.simulate import SimulateScreen

        self.app.push_screen(SimulateScreen(self.report.ledger, window=self.window))

    async def show_installed(self, report: Report, entry_id: str | None, backup: str) -> None:
        """The repair screen wrote the session: show it as re-read and re-analysed, on the new
        checkpoint."""
        self._stamp = disk_stamp(self.path)  # our own write is no change on disk to announce
        self.changed_on_disk = False
        self._follow_gen += 1  # a follow read under way is of the file before the write
        self._follow_busy = self._follow_again = False
        await self._show_ledger(report.ledger, 0.0)
        self._show_report(report, 0.0)
        seq = next((r.seq for r in reversed(report.ledger.records) if entry_id is not None and r.id == entry_id), None)
        if seq is not None:
            self.go_to(seq)
        from inspector.tui.repair import write_verb

        led = report.ledger
        n = self._messages_in(led)
        self._status(f"{len(led.records):,} records, {n:,} messages · repaired: checkpoint {entry_id} {write_verb(led)} "
                     f"(backup {backup})")


def summary_text(report: Report) -> str:
    """The session in plain text, to paste into an issue: the header, then every finding."""
    led = report.ledger
    fmt = f"{led.format} v{led.version}" if led.version is not None else led.format
    lines = [f"{led.path} · {fmt}", header_line(report)]
    for f in report.findings:
        where = ""
        if f.records:
            first, last = led.records[min(f.records)].line, led.records[max(f.records)].line
            where = f" (line {first})" if first == last else f" (lines {first}–{last})"
        lines.append(f"- {f.severity} {f.code}: {f.message}{where}")
    return "\n".join(lines)
