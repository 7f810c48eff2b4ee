"""The session view (DESIGN §6): timeline, coverage minimap, detail pane, findings, next request.

The file is indexed first and shown at once; the analysis runs in a worker thread and the view
fills in the coverage colours, findings and next request when it lands. Scrolling works meanwhile.
"""

from __future__ import annotations

import os
import time

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.analysis.export import summary_line
from inspector.formats import LoadError, load
from inspector.ledger.model import Ledger
from inspector.tui.context_view import NextRequestView
from inspector.tui.detail import DetailPane
from inspector.tui.findings_list import FindingsList
from inspector.tui.minimap import Minimap
from inspector.tui.model import STATE_COLORS
from inspector.tui.timeline import Timeline

# (key, action, description): the session view's keys, shown in the footer, the help screen and
# the command palette from this one list.
SESSION_KEYS: list[tuple[str, str, str]] = [
    ("n", "next_hole", "Next hole"),
    ("N", "prev_hole", "Previous hole"),
    ("f", "next_finding", "Next finding"),
    ("t", "follow_tool", "Tool call ↔ result"),
    ("c", "next_checkpoint", "Next checkpoint"),
    ("C", "prev_checkpoint", "Previous checkpoint"),
    ("slash", "search", "Search"),
    ("i", "toggle_inactive", "Inactive branches"),
    ("1", "tab('detail')", "Detail"),
    ("2", "tab('findings')", "Findings"),
    ("3", "tab('next')", "Next request"),
    ("r", "repair", "Repair… (plan, run, install)"),
    ("s", "simulate", "Simulate… (what-if compaction policy, plotted)"),
    ("f1", "app.help", "Help"),
    ("escape", "back", "Back"),
]
FOOTER_KEYS = {"n", "f", "t", "c", "slash", "i", "f1"}
PREVIEW_ABOVE_BYTES = 8 << 20  # files bigger than this show a preview while they are indexed
PREVIEW_LINES = 400


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
    """

    BINDINGS = [
        Binding(key, action, desc, show=key in FOOTER_KEYS, key_display="/" if key == "slash" else None)
        for key, action, desc in SESSION_KEYS
    ]

    class Loaded(Message):
        def __init__(self, ledger: Ledger, seconds: float, preview: bool = False) -> None:
            super().__init__()
            self.ledger = ledger
            self.seconds = seconds
            self.preview = preview  # only the first lines: the full index follows

    class Analyzed(Message):
        def __init__(self, report: Report, seconds: float) -> None:
            super().__init__()
            self.report = report
            self.seconds = seconds

    class Failed(Message):
        def __init__(self, error: str) -> None:
            super().__init__()
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
    ) -> None:
        super().__init__()
        self.path = path
        self.ledger = ledger
        self.report = report
        self.window = window
        self.reserve = reserve
        self.at_line = at_line
        self.started = time.perf_counter()
        self.first_paint: float | None = None
        self._finding_index = -1

    # -------------------------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Static(f"{self.path}  ·  indexing…", id="status")
        yield Static("", id="summary")
        yield Vertical(id="body")
        yield Input(placeholder="search text (Enter: next match, Escape: close)", id="search")
        yield Footer()

    async def on_mount(self) -> None:
        if self.ledger is not None:
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

    async def _show_ledger(self, ledger: Ledger, seconds: float, preview: bool = False) -> None:
        had = self.ledger is not None and self.query("#timeline")
        self.ledger = ledger
        if had:
            # The complete index replaces the preview: same widgets, more rows.
            self.query_one(Timeline).set_ledger(ledger)
            self.query_one(Minimap).set_ledger(ledger)
        else:
            body = self.query_one("#body", Vertical)
            timeline = Timeline(ledger, id="timeline")
            await body.mount(Minimap(ledger, id="minimap"))
            await body.mount(self._legend())
            side = TabbedContent(id="side")
            await body.mount(Horizontal(timeline, side, id="main"))
            await side.add_pane(TabPane("Detail", DetailPane(id="detail-pane"), id="detail"))
            await side.add_pane(TabPane("Findings", FindingsList(id="findings-list"), id="findings"))
            await side.add_pane(TabPane("Next request", NextRequestView(id="next-view"), id="next"))
            timeline.focus()
            self.call_after_refresh(self._painted)
        if preview:
            self._status(f"first {len(ledger.records):,} records shown · indexing the rest…")
        else:
            n = sum(1 for r in ledger.records if r.kind == "message")
            took = f" in {seconds:.2f} s" if self.app_timings else ""
            self._status(f"{len(ledger.records):,} records, {n:,} messages · indexed{took} · analysing…")

    @property
    def app_timings(self) -> bool:
        """Snapshot tests turn timings off so screens are byte-for-byte reproducible."""
        return bool(getattr(self.app, "show_timings", True))

    def _painted(self) -> None:
        if self.first_paint is None:
            self.first_paint = time.perf_counter() - self.started

    def _status(self, text: str) -> None:
        led = self.ledger
        fmt = ""
        if led is not None:
            fmt = f"{led.format} v{led.version}" if led.version is not None else led.format
            if led.migrated:
                fmt += " (migrated in memory)"
        at = f" · as of line {self.at_line}" if self.at_line else ""
        self.query_one("#status", Static).update(f"[b]{self.path}[/b]  ·  {fmt}{at}  ·  {text}")

    def _show_report(self, report: Report, seconds: float) -> None:
        self.report = report
        self.query_one(Timeline).set_report(report)
        self.query_one(Minimap).set_report(report)
        self.query_one(FindingsList).set_report(report)
        self.query_one(NextRequestView).set_report(report)
        worst = min((f.severity for f in report.findings), key=lambda s: ("error", "warning", "info").index(s), default=None)
        color = {"error": "red", "warning": "yellow", "info": "cyan"}.get(worst or "", "green")
        tok = "tokenizer: offline cl100k_base copy" if report.tokenizer_offline else "tokenizer: cl100k_base"
        self.query_one("#summary", Static).update(f"[{color}]{summary_line(report)}[/]  [dim]({tok})[/]")
        led = report.ledger
        n = sum(1 for r in led.records if r.kind == "message")
        took = f" in {seconds:.2f} s" if self.app_timings else ""
        self._status(f"{len(led.records):,} records, {n:,} messages · analysed{took}")
        self._refresh_detail()

    # -------------------------------------------------------------------------------- workers

    @work(thread=True, exclusive=True, group="load")
    def _load(self) -> None:
        t0 = time.perf_counter()
        try:
            # A big file: show its first screen at once, then index the whole of it.
            big = self.at_line is None and os.path.getsize(self.path) > PREVIEW_ABOVE_BYTES
            if big:
                preview = load(self.path, upto_line=PREVIEW_LINES)
                self.post_message(self.Loaded(preview, time.perf_counter() - t0, preview=True))
            ledger = load(self.path, upto_line=self.at_line)
        except LoadError as e:
            self.post_message(self.Failed(str(e)))
            return
        except OSError as e:
            self.post_message(self.Failed(f"{self.path}: {e.strerror or e}"))
            return
        self.post_message(self.Loaded(ledger, time.perf_counter() - t0))

    @work(thread=True, exclusive=True, group="analyze")
    def _analyze(self, ledger: Ledger) -> None:
        self._analyze_now(ledger)

    def _analyze_now(self, ledger: Ledger) -> None:
        t0 = time.perf_counter()
        report = analyze(ledger, window=self.window, reserve=self.reserve)
        report.ensure_tokens()
        self.post_message(self.Analyzed(report, time.perf_counter() - t0))

    async def on_session_screen_loaded(self, msg: Loaded) -> None:
        await self._show_ledger(msg.ledger, msg.seconds, msg.preview)
        if not msg.preview:
            # Analyse once the index is on screen, so the first paint never waits for it.
            self.call_after_refresh(self._analyze, msg.ledger)

    def on_session_screen_analyzed(self, msg: Analyzed) -> None:
        self._show_report(msg.report, msg.seconds)

    def on_session_screen_failed(self, msg: Failed) -> None:
        self.query_one("#status", Static).update(f"[red]{msg.error}[/]")
        self.notify(msg.error, severity="error", timeout=10)

    # -------------------------------------------------------------------------------- selection

    def on_timeline_selected(self, msg: Timeline.Selected) -> None:
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

    def go_to(self, seq: int) -> None:
        tl = self.query_one(Timeline)
        tl.go_to(seq)
        tl.focus()

    # -------------------------------------------------------------------------------- actions

    def _seqs_where(self, pred: object) -> list[int]:
        tl = self.query_one(Timeline)
        return [s for s in tl.rows if pred(s)]  # type: ignore[operator]

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
        self._jump(self._holes(), True, "holes")

    def action_prev_hole(self) -> None:
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
        self.notify(f"{f.severity}: {f.code}: {f.message}", timeout=6)

    def action_follow_tool(self) -> None:
        """From a tool call to its result, or from a result back to its call."""
        led = self.ledger
        tl = self.query_one(Timeline)
        cur = tl.current_seq
        if led is None or cur is None:
            return
        rec = led.records[cur]
        target: int | None = None
        if rec.call_ids:
            ids = set(rec.call_ids)
            target = next((r.seq for r in led.records[cur + 1 :] if r.result_id in ids), None)
        elif rec.result_id:
            rid = rec.result_id
            target = next((r.seq for r in reversed(led.records[:cur]) if rid in r.call_ids), None)
        else:
            self.notify("Not a tool call or a tool result.", timeout=3)
            return
        if target is None:
            self.notify("Its other half is not in this session (orphaned or unanswered).", severity="warning", timeout=4)
            return
        tl.go_to(target)

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

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
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
            self.query_one(Timeline).focus()
            getattr(event, "stop", lambda: None)()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()

    # -------------------------------------------------------------------------------- repair

    def action_repair(self) -> None:
        if self.report is None:
            self.notify("The analysis is still running: the repair screen opens once it has landed.", timeout=3)
            return
        from inspector.tui.repair import RepairScreen

        self.app.push_screen(RepairScreen(self.report, window=self.window, reserve=self.reserve))

    def action_simulate(self) -> None:
        if self.report is None:  # the whole session (not a preview) is read by then
            self.notify("The analysis is still running: the simulate screen opens once it has landed.", timeout=3)
            return
        from inspector.tui.simulate import SimulateScreen

        self.app.push_screen(SimulateScreen(self.report.ledger, window=self.window))

    async def show_installed(self, report: Report, entry_id: str | None, backup: str) -> None:
        """The repair screen wrote the session: show it as re-read and re-analysed, on the new
        checkpoint."""
        await self._show_ledger(report.ledger, 0.0)
        self._show_report(report, 0.0)
        seq = next((r.seq for r in reversed(report.ledger.records) if entry_id is not None and r.id == entry_id), None)
        if seq is not None:
            self.go_to(seq)
        led = report.ledger
        n = sum(1 for r in led.records if r.kind == "message")
        self._status(f"{len(led.records):,} records, {n:,} messages · repaired: checkpoint {entry_id} appended "
                     f"(backup {backup})")
