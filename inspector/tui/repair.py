"""The repair screen (issue 5, points 6-7; DESIGN §5): pick a strategy and its budgets, read the
plan, run it with progress and a working cancel, compare before and after, and install it into the
session only after a confirm modal that names the file and the backup.

Everything heavy runs in thread workers that post messages; the handlers own the screen's state.
Planning and running share one lock: the engine reads the session's ledger lazily, and two threads
must not fill it at once. Nothing is written until the confirm modal's Install; Escape backs out.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import Button, Footer, Input, Label, ProgressBar, Select, Static

from inspector.analysis.engine import Report
from inspector.analysis.findings import SEVERITY_RANK, plural
from inspector.compaction.entries import WriteError, check_writable, lines_bytes, record_id, writer_of
from inspector.compaction.execute import STATUS_STYLE, RepairResult, repair
from inspector.compaction.export import checkpoint_json
from inspector.compaction.plan import (
    AVAILABLE_LABEL,
    STRATEGIES,
    Budgets,
    Outlook,
    PlanError,
    RepairPlan,
    action_sentence,
    broken_promises,
    plan,
)
from inspector.ledger.model import Ledger, Usage
from inspector.tui.fields import EDIT_DEBOUNCE, TokenField
from inspector.tui.minimap import Minimap
from inspector.tui.model import ROW_CHARS

# (key, action, description): the repair screen's keys, for the footer, the help screen and the
# command palette from this one list.
REPAIR_KEYS: list[tuple[str, str, str]] = [
    ("r", "run", "Run the repair (writes nothing)"),
    ("c", "cancel", "Cancel the run"),
    ("w", "install", "Install… (asks first)"),
    ("p", "replan", "Plan again"),
    ("f1", "app.help", "Help"),
    ("escape", "back", "Back (writes nothing)"),
]

REPAIR_HELP = (
    "The repair screen plans a new checkpoint for this session (strategy and budgets at the top; an "
    "empty budget takes the session's own value or the runtime's default; the plan names where each "
    "came from), runs it "
    "with the chosen summarizer (extractive: offline, deterministic) and compares the session before, "
    "as planned and after the run. Running writes nothing. Install asks first, naming the file and "
    "where its backup goes; the record is then appended under a lock (a database's rows: inserted in "
    "one transaction), read back and verified, and taken back if it is not what the plan promised. A JSON "
    "dump is never written in place (`inspector repair --out` writes a repaired copy); a read-only format "
    "says why beside Install. `inspector undo SESSION` restores the backup."
)

STRATEGY_HELP = {
    "compact": "summarize from the previous boundary, rolling the previous summary forward",
    "resummarize": "rebuild from source what no sound summary represents (fills holes)",
    "recover": "no model call: the deterministic recent-source checkpoint",
}
BUDGET_FIELDS: tuple[tuple[str, str], ...] = (
    ("window", "window"),
    ("reserve", "reserve"),
    ("keep_recent", "keep recent"),
    ("request", "request"),
)
# One lock for every repair screen: a screen left while its run finishes the call in flight still
# reads the same ledger, so the next screen's plan waits for it.
ENGINE_LOCK = threading.Lock()
DIM = "#8b949e"


# ---------------------------------------------------------------------------------------- renderers


def _span(d: dict[str, Any]) -> str:
    by = d.get("by_role") or {}
    inner = " / ".join(f"{n} {r}" for r, n in by.items())
    lines = f", lines {d['first_line']}–{d['last_line']}" if "first_line" in d else ""
    return f"{d['count']:,}" + (f" ({inner}{lines})" if inner else "")


class _CutTable(Table):
    """A table whose cells are cut to ROW_CHARS: a value from the file (a 3 MB record id in
    "keeps from line N (id)") is never laid out whole."""

    def add_row(self, *cells: Any, **kw: Any) -> None:  # type: ignore[override]
        super().add_row(*(c[:ROW_CHARS] if isinstance(c, str | Text) and len(c) > ROW_CHARS else c for c in cells), **kw)


def _table(title: str, *columns: str) -> Table:
    t = _CutTable(title=title, title_justify="left", title_style="bold", expand=True, box=None, padding=(0, 1),
              show_header=bool(columns), header_style=DIM)
    for c in columns:
        t.add_column(c)
    return t


def plan_error_text(e: PlanError) -> str:
    """The core's reason, and the field of this screen that gives the missing budget."""
    return f"{e}: type it in the {e.field.replace('_', ' ')} field" if e.field else str(e)


def source_words(source: str) -> str:
    """Where a budget came from, in this screen's terms: the operator's value was typed here."""
    return "typed here" if source == "flag" else source


def budgets_line(p: RepairPlan) -> Text:
    b = p.budgets
    out = Text()
    for name, label in BUDGET_FIELDS:
        v = getattr(b, name)
        if v is None:
            continue
        out.append(f"{label} ", style=DIM)
        out.append(f"{v:,} ", style="bold")
        out.append(f"({source_words(b.sources.get(name, ''))})   ", style=DIM)
    out.append(f"{AVAILABLE_LABEL} ", style=DIM)
    out.append(f"{b.available:,}", style="bold")
    return out


def plan_view(p: RepairPlan) -> Group:
    """The plan: what it asks (requests, chunks), the checkpoint it installs, its budgets and notes."""
    ix = p.index
    parts: list[RenderableType] = [Text(action_sentence(p), style="bold")]
    if p.range is not None:
        ms = ix.messages_in(*p.range)
        if ms:
            parts.append(Text(f"range summarized: lines {ix.rec(ms[0]).line}–{ix.rec(ms[-1]).line}, {plural(len(ms), 'message')}"))
    if p.carry is not None:
        c = p.carry
        trust = "sound" if c.trusted else f"not sound: {c.why_not}"
        parts.append(Text(f"carried summary: checkpoint {c.view.index} (line {c.view.record.line}), {c.tokens:,} tokens, {trust}", style=DIM))
    parts.append(budgets_line(p))
    if p.requests:
        t = _table(f"Summarizer requests ({len(p.requests)})", "#", "prompt", "lines", "messages", "prompt tokens", "max out")
        for k, ch in enumerate(p.requests, 1):
            lines = f"{ix.rec(ch.positions[0]).line}–{ix.rec(ch.positions[-1]).line}" if ch.positions else "—"
            msgs = f"{len(ch.positions)}" + (f", {len(ch.clipped)} clipped" if ch.clipped else "") + (" + file list" if ch.file_list else "")
            t.add_row(str(k), "update" if ch.carry_tokens else "initial", lines, msgs,
                      f"{ch.prompt_tokens:,} / {ch.budget:,}", f"{p.max_output_tokens:,}")
        parts.append(t)
    if p.checkpoint is not None:
        st = ix.tok.count(p.summary) if p.summary is not None else p.target_tokens
        parts.append(checkpoint_view(p, p.checkpoint, st, "Checkpoint to install"))
    if p.recovery is not None and p.action == "summarize":
        parts.append(Text(f"if the summary fails: recovery keeping {len(p.recovery.spec.retains)} recent messages "
                          f"({p.recovery.spec.tail_tokens:,} tokens)", style=DIM))
    for n in p.notes:
        parts.append(Text(f"note: {n}", style="yellow"))
    return Group(*parts)


def checkpoint_view(p: RepairPlan, spec: Any, summary_tokens: int | None, title: str) -> Table:
    d = checkpoint_json(p.index, spec, summary_tokens)
    t = _table(title)
    t.add_column("what", style=DIM, no_wrap=True)
    t.add_column("value", ratio=1)
    fk = d["boundary"]["first_kept"]
    t.add_row("kind", spec.kind + (f" (failure_reason {spec.failure_reason})" if spec.failure_reason else ""))
    t.add_row("boundary", f"keeps from line {fk['line']} ({fk['id']})" if fk else "keeps nothing raw")
    t.add_row("removes", _span(d["removes"]))
    t.add_row("represents", _span(d["represents"]))
    t.add_row("retains", _span(d["retains"]))
    size = f"summary {summary_tokens:,} + tail {spec.tail_tokens:,} = {d['size_tokens']:,} tokens" if summary_tokens is not None else f"tail {spec.tail_tokens:,} tokens"
    t.add_row("size", size)
    return t


def _errors(o: Outlook) -> str:
    e = sum(1 for f in o.findings if f.severity == "error")
    w = sum(1 for f in o.findings if f.severity == "warning")
    return f"{e} / {w}"


def compare_view(before: Outlook, planned: Outlook | None, ran: Outlook | None) -> Table:
    """Holes, orphans and the next request: before, as planned, and after the run (simulated)."""
    cols = [("before", before), ("planned", planned), ("after run", ran)]
    t = _table("Before → after", "", *(c for c, _ in cols))
    for c in t.columns[1:]:
        c.justify = "right"

    def cell(o: Outlook | None, get: Any, colored: bool) -> Text:
        """One value; green when fewer than before, red when more (for counts of trouble)."""
        if o is None:
            return Text("—", style=DIM)
        v, base = get(o), get(before)
        style = ""
        if colored and isinstance(v, int) and isinstance(base, int):
            style = "green" if v < base else ("red" if v > base else "")
        return Text(f"{v:,}" if isinstance(v, int) else v, style=style)

    rows: list[tuple[str, Any, bool]] = [
        ("holes", lambda o: o.holes, True),
        ("orphaned tool results", lambda o: o.orphans, True),
        ("unanswered tool calls", lambda o: o.unanswered, True),
        ("next request (tokens)", lambda o: o.context_tokens, False),
        ("next request (items)", lambda o: o.items, False),
        ("errors / warnings", _errors, False),
    ]
    for name, get, colored in rows:
        t.add_row(name, *(cell(o, get, colored) for _, o in cols))
    return t


def findings_view(o: Outlook | None, title: str) -> RenderableType:
    if o is None:
        return Text("")
    if not o.findings:
        return Text(f"{title}: none.", style="green")
    t = _table(title)
    t.add_column("severity", no_wrap=True)
    t.add_column("what", ratio=1)
    color = {"error": "red", "warning": "yellow", "info": "cyan"}
    for f in sorted(o.findings, key=lambda f: SEVERITY_RANK[f.severity]):
        t.add_row(Text(f.severity, style=color.get(f.severity, "")), f"{f.code}: {f.message}")
    return t


_DONE_WORDS = {
    "built": "checkpoint built",
    "recovered": "fallback recovery built",
    "failed": "failed: nothing to install",
    "noop": "nothing to do",
}


def not_installed_words(installable: bool) -> str:
    """What a built result is, where Install is offered or not (the reason is beside Install)."""
    return "not installed yet (w installs it)" if installable else "not installable here (see beside Install)"


def done_words(res: RepairResult, installable: bool) -> str:
    """The progress line once a run ended."""
    if res.cancelled:
        return "cancelled: nothing to install"
    word = _DONE_WORDS.get(res.status, res.status)
    return f"{word}: {not_installed_words(installable)}" if res.entry is not None else word


def result_view(res: RepairResult, installable: bool = True) -> Group:
    style = STATUS_STYLE[res.status]
    head = Text("cancelled" if res.cancelled else res.status, style=style)
    if res.entry is not None:
        head.append(f"  ({not_installed_words(installable)})", style=DIM)
    if res.failure_reason:
        head.append(f"  ·  failure_reason {res.failure_reason}", style="")
    if res.outcome:
        head.append(f"  ·  last outcome {res.outcome}", style="")
    parts: list[RenderableType] = [head]
    if res.reason:
        parts.append(Text(res.reason, style="red" if res.status == "failed" else ""))
    if res.calls:
        t = _table(f"Summarizer calls ({len(res.calls)})", "req", "kind", "msgs", "prompt", "outcome", "in / out")
        for c in res.calls:
            use = f"{c.usage.prompt:,} / {c.usage.output:,}" if c.usage is not None else "—"
            oc = Text(c.outcome + ("" if c.accepted else " ✗"), style="green" if c.accepted else "red")
            t.add_row(f"{c.request}.{c.attempt}", c.kind, str(c.messages), f"{c.prompt_tokens:,}", oc, use)
        parts.append(t)
    if res.usage is not None:
        parts.append(Text(f"usage (summed): {res.usage.prompt:,} in / {res.usage.output:,} out", style=DIM))
    if res.dropped:
        parts.append(Text(f"{plural(len(res.dropped), 'message')} were left out of the summary after a truncation: they are holes now.", style="yellow"))
    if res.retreated:
        parts.append(Text("The fold retreated to the proven span of the summarizer's route.", style="yellow"))
    if res.checkpoint is not None:
        st = res.plan.index.tok.count(res.summary) if res.summary is not None else None
        parts.append(checkpoint_view(res.plan, res.checkpoint, st, "Checkpoint built (not written yet)"))
    return Group(*parts)


def stale_words(how: str) -> str:
    """What the repair screen says once its session changed on disk under its plan."""
    return f"the session {how} since this plan: re-plan (p)"


def session_refusal(report: Report) -> str | None:
    """Why no repair can be installed into this session in place, whatever is run (None: one can):
    a read-only format, a partial read, a JSON dump (only ever written as a copy). The store's
    own guards, asked before anything is offered."""
    from inspector.store.writeback import check_in_place

    if report.ledger.path is None:
        return "the session was not read from a file"
    try:
        check_writable(report.ledger)
        check_in_place(report.ledger)
    except WriteError as e:
        return str(e)
    return None


def install_refusal(report: Report, res: RepairResult | None) -> str | None:
    """Why the result cannot be installed now (None: it can)."""
    why = session_refusal(report)
    if why is not None:
        return why
    if res is None:
        return "run the repair first"
    if res.cancelled:
        return "the run was cancelled: nothing to install"
    if res.status == "failed":
        return "the repair failed: nothing to install"
    if res.entry is None:
        return "nothing to install"
    return None


# ---------------------------------------------------------------------------------------- confirm


def write_verb(led: Any) -> str:
    """What an install does to this session's store: a database's rows are inserted, a JSON
    lines file's lines appended."""
    return "inserted" if writer_of(led).store is not None else "appended"


@dataclass(frozen=True, slots=True)
class InstallTarget:
    """What the confirm modal names: the file, the record(s), where its backup goes."""

    path: str
    size: int
    record: str  # compaction | checkpoint | compact_boundary | …
    entry_id: str | None
    records: int  # the records written with it (the entry among them)
    entry_bytes: int  # their bytes, as JSON lines (a database: as the rows' JSON)
    into_store: bool  # rows inserted into a database, not lines appended to a file
    backup_dir: str
    strategy: str
    status: str

    def write_row(self) -> tuple[str, str]:
        """(the verb, what is written and how): lines appended, or rows in one transaction."""
        named = f"the {self.record} record ({self.entry_id})"
        if self.records > 1:
            named += " among them"
        if self.into_store:
            what = named if self.records == 1 else f"{self.records} records, {named},"
            return ("inserts", f"{what} as rows, in one transaction; no existing row is updated or deleted")
        count = "one JSON line" if self.records == 1 else f"{self.records} JSON lines"
        return ("appends", f"{count}, {named}, {self.entry_bytes:,} bytes, "
                           "at its end; no existing byte is rewritten")

    def backup_words(self) -> str:
        if self.into_store:
            return f"a copy of the store ({self.size:,} bytes, SQLite's online backup) goes first to {self.backup_dir}/"
        return f"a copy of the {self.size:,} bytes goes first to {self.backup_dir}/"

    def guarantee(self) -> str:
        if self.into_store:
            return ("The store's write lock is taken at once (a store being written is refused), the session's rows are "
                    "checked unchanged since they were analysed, the new rows inserted in one transaction, read back and "
                    "verified; if it is not what the plan promised, exactly those rows are deleted again.")
        return ("The file is locked, checked unchanged since it was analysed, appended to in one write, read back "
                "and verified; if it is not what the plan promised, what was appended is cut off again.")


class ConfirmInstall(ModalScreen[bool]):
    """Names the file and the backup; Install (y) writes, Cancel (n, Escape) writes nothing."""

    DEFAULT_CSS = """
    ConfirmInstall { align: center middle; background: $background 60%; }
    ConfirmInstall > #confirm-dialog {
        width: 112; max-width: 95%; height: auto; border: thick $warning; background: $surface; padding: 0 1;
    }
    ConfirmInstall #confirm-text { margin-bottom: 1; }
    ConfirmInstall #confirm-buttons { height: auto; align-horizontal: right; }
    ConfirmInstall Button { margin-left: 2; }
    """
    BINDINGS = [
        Binding("y", "confirm", "Install"),
        Binding("n,escape", "dismiss(False)", "Cancel"),
    ]

    def __init__(self, target: InstallTarget, before: Outlook, after: Outlook | None) -> None:
        super().__init__()
        self.target = target
        self.before = before
        self.after = after

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(self._text(), id="confirm-text")
            with Horizontal(id="confirm-buttons"):
                yield Button("Install (y)", variant="warning", id="confirm-install")
                yield Button("Cancel (Esc)", id="confirm-cancel")

    def on_mount(self) -> None:
        self.query_one("#confirm-cancel", Button).focus()  # Enter on the default writes nothing

    def _text(self) -> Group:
        t = self.target
        rows = [
            ("store" if t.into_store else "file", f"{t.path}  ({t.size:,} bytes)"),
            t.write_row(),
            ("backup", t.backup_words()),
            ("undo", f"inspector undo {t.path}"),
            ("repair", f"{t.strategy} ({t.status})"),
        ]
        a = self.after
        if a is not None:
            b = self.before
            rows.append(("promised", f"holes {b.holes:,} → {a.holes:,} · orphaned tool results {b.orphans:,} → {a.orphans:,} · "
                                     f"next request {b.context_tokens:,} → {a.context_tokens:,} tokens"))
        grid = Table.grid(padding=(0, 2), expand=True)
        grid.add_column(style=f"bold {DIM}", justify="right", no_wrap=True)
        grid.add_column(ratio=1, overflow="fold")
        for k, v in rows:
            grid.add_row(k, v)
        return Group(
            Text(f"Install the repair into the session {'store' if t.into_store else 'file'}?\n", style="bold"),
            grid,
            Text("\n" + t.guarantee(), style=DIM),
        )

    def action_confirm(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-install")
    def _install(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-cancel")
    def _cancel(self) -> None:
        self.dismiss(False)


# ---------------------------------------------------------------------------------------- screen


class _Watched:
    """The chosen summarizer, reporting the usage of each call as it lands (for the progress line)."""

    def __init__(self, inner: Any, on_usage: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "?")
        self.route = getattr(inner, "route", None)
        self.on_usage = on_usage

    def summarize(self, req: Any) -> Any:
        res = self.inner.summarize(req)
        self.on_usage(getattr(res, "usage", None))
        return res


class RepairScreen(Screen[None]):
    DEFAULT_CSS = """
    RepairScreen #repair-status { height: 1; padding: 0 1; background: $panel; }
    RepairScreen #form { height: auto; padding: 0 1; }
    RepairScreen #form Label { padding: 1 0 0 1; }
    RepairScreen #form #strategy { width: 20; }
    RepairScreen #strategy-help { height: 1; padding: 0 2; color: $text-muted; }
    RepairScreen #write-note { height: auto; padding: 0 2; color: $warning; }
    RepairScreen #run-row { height: 1; padding: 0 2; }
    RepairScreen #bar { width: 40; }
    RepairScreen #progress-label { width: 1fr; padding: 0 1; }
    RepairScreen #panes { height: 1fr; }
    RepairScreen #plan-pane { width: 3fr; padding: 0 1; }
    RepairScreen #outcome-pane { width: 2fr; padding: 0 1; border-left: solid $primary-background; }
    RepairScreen #outcome-pane > Static { margin-bottom: 1; }
    RepairScreen #outcome-pane > .band-title { margin-bottom: 0; }
    RepairScreen #outcome-pane > Minimap { margin-bottom: 1; }
    RepairScreen #actions { height: 3; padding: 0 1; }
    RepairScreen #actions Button { margin-left: 1; }
    RepairScreen #actions Label { padding: 1 1 0 0; }
    RepairScreen #actions #provider { width: 18; }
    RepairScreen #install-why { width: 1fr; padding: 1 1 0 1; }
    """

    BINDINGS = [Binding(key, action, desc) for key, action, desc in REPAIR_KEYS]

    class Planned(Message):
        def __init__(self, gen: int, plan: RepairPlan | None, summarizer: Any, error: str | None) -> None:
            super().__init__()
            self.gen = gen
            self.plan = plan
            self.summarizer = summarizer
            self.error = error

    class Progressed(Message):
        def __init__(self, i: int, n: int, label: str) -> None:
            super().__init__()
            self.i = i
            self.n = n
            self.label = label

    class Used(Message):
        def __init__(self, usage: Usage | None) -> None:
            super().__init__()
            self.usage = usage

    class Ran(Message):
        def __init__(self, gen: int, result: RepairResult | None, error: str | None = None) -> None:
            super().__init__()
            self.gen = gen
            self.result = result
            self.error = error

    class Written(Message):
        def __init__(self, installed: Any, error: str | None = None) -> None:
            super().__init__()
            self.installed = installed
            self.error = error

    def __init__(
        self,
        report: Report,
        *,
        window: int | None = None,
        reserve: int | None = None,
        strategy: str = "resummarize",
        provider: str = "extractive",
        summarizer: Any = None,
        entry_id: str | None = None,
        timestamp: str | None = None,
        fingerprint: Callable[[Ledger], None] | None = None,
    ) -> None:
        super().__init__()
        self.report = report
        # Sets the session's sha256 before an install compares it (the session view takes it
        # after its landing: tui/fingerprint.py).
        self.fingerprint = fingerprint
        self.initial = {"window": window, "reserve": reserve}
        self.strategy = strategy
        self.provider = provider
        self.given_summarizer = summarizer  # tests hand in their own; otherwise the provider's
        self.entry_id = entry_id
        self.timestamp = timestamp
        self.plan: RepairPlan | None = None
        self.summarizer: Any = None
        self.result: RepairResult | None = None
        self.running = False
        self.writing = False
        self._gen = 0
        self._cancel = threading.Event()
        self._lock = ENGINE_LOCK
        self._usage: Usage | None = None
        self._replan_timer: Timer | None = None
        self._planned_form: tuple[Any, ...] | None = None  # the form the current plan was made from
        self._planning = False  # a plan is on its way
        self._run_when_planned = False  # `r` was pressed before it landed: run it then
        self._last_label = ""
        # The session changed on disk since the read this plan was made from ("grew" or
        # "changed"): Install refuses until `p` plans again from a newer read.
        self.stale: str | None = None
        self._newer: Report | None = None  # the session view's newer read, planned from on `p`
        self._replan_when_read = False  # `p` asked the session view to read the file: plan then

    # -------------------------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Static(self._status_markup(), id="repair-status")
        with Horizontal(id="form"):
            yield Label("strategy")
            yield Select([(s, s) for s in STRATEGIES], value=self.strategy, allow_blank=False, id="strategy")
            for name, label in BUDGET_FIELDS:
                yield Label(label)
                v = self.initial.get(name)
                yield TokenField(str(v) if v is not None else "", id=name, placeholder="session")
        yield Static(STRATEGY_HELP.get(self.strategy, ""), id="strategy-help")
        # Why no repair can be installed into this session (a read-only format, a JSON dump, --at):
        # the whole reason, full width, before anything is run.
        yield Static("", id="write-note")
        with Horizontal(id="run-row"):
            yield ProgressBar(total=1, show_eta=False, id="bar")
            yield Static("", id="progress-label")
        with Horizontal(id="panes"):
            with VerticalScroll(id="plan-pane"):
                yield Static("planning…", id="plan-view")
            with VerticalScroll(id="outcome-pane"):
                # The whole session's coverage, before and after: the minimap's band, twice.
                yield Static(Text("coverage before", style=DIM), classes="band-title")
                yield Minimap(self.report.ledger, id="band-before")
                yield Static(Text("coverage after", style=DIM), id="band-after-title", classes="band-title")
                yield Minimap(self.report.ledger, id="band-after")
                yield Static("", id="compare-view")
                yield Static("", id="result-view")
                yield Static("", id="findings-view")
        with Horizontal(id="actions"):
            yield Label("summarizer")
            yield Select([(n, n) for n in _provider_names()], value=self.provider, allow_blank=False, id="provider")
            yield Button("Run (r)", variant="primary", id="run", disabled=True)
            yield Button("Cancel run (c)", id="cancel-run", disabled=True)
            yield Button("Install… (w)", variant="warning", id="install", disabled=True)
            yield Static("", id="install-why")
        yield Footer()

    def _status_markup(self) -> str:
        led = self.report.ledger
        line = f"[b]{led.path or '<input>'}[/b]  ·  {led.format}  ·  repair"
        if self.stale is not None:
            line += f"  ·  [b yellow]{stale_words(self.stale)}[/]"
        return line

    # -------------------------------------------------------------------------------- stale

    def session_changed(self, how: str = "grew") -> None:
        """The session's file changed since this plan's read (its agent appended, another
        inspector installed, `inspector undo` ran): the plan is stale, and Install says so before
        the user tries (the store would refuse the changed file anyway)."""
        if self.stale != "changed":  # "changed" (shrank or replaced) outranks "grew"
            self.stale = how
        status = self.query("#repair-status")
        if not status:  # not composed yet (its compose says `stale`), or torn down as the app quits
            return
        status.first(Static).update(self._status_markup())
        self._refresh_actions()

    def session_read(self, report: Report) -> None:
        """The session view read the file again: the next plan is made from this read."""
        self._newer = report
        if self._replan_when_read and self.query("#repair-status"):  # (not torn down as the app quits)
            self._replan_when_read = False
            self.replan()

    def _plan_from_newest_read(self) -> bool:
        """Before planning a stale screen: take the session view's newer read, or ask it for one
        (False: planning waits for it)."""
        if self._newer is not None:
            self.report, self._newer = self._newer, None
            self.stale = None
            self.query_one("#repair-status", Static).update(self._status_markup())
            before = self.query_one("#band-before", Minimap)
            before.set_ledger(self.report.ledger)
            before.set_report(self.report)
            return True
        if self.stale is None:
            return True
        session = self._session_below()
        if session is None:
            return True  # nothing to read it again: the plan stays stale, Install refuses
        self._replan_when_read = True
        self.query_one("#plan-view", Static).update(Text("reading the grown session, then planning…", style=DIM))
        session.action_reload()
        return False

    def on_mount(self) -> None:
        self.query_one("#band-before", Minimap).set_report(self.report)
        self.query_one("#plan-pane").focus()
        self._refresh_actions()
        self.replan()

    # -------------------------------------------------------------------------------- planning

    def budgets(self) -> Budgets:
        """The form's budgets; an empty field takes the session's value or the default."""
        vals: dict[str, int | None] = {}
        for name, label in BUDGET_FIELDS:
            raw = self.query_one(f"#{name}", Input).value.strip()
            if not raw:
                vals[name] = None
                continue
            try:
                n = int(raw)
            except ValueError:
                raise PlanError(f"{label}: {raw!r} is not a number of tokens") from None
            if n <= 0:
                raise PlanError(f"{label}: must be a positive number of tokens, not {n}")
            vals[name] = n
        return Budgets(**vals)

    def _form(self) -> tuple[Any, ...]:
        return (self.strategy, self.provider, *(self.query_one(f"#{n}", Input).value.strip() for n, _ in BUDGET_FIELDS))

    def _replan_if_changed(self) -> None:
        """After typing: plan again only if the form differs from the one planned (the inputs'
        own first Changed events, or a value typed and then restored, change nothing)."""
        self._replan_timer = None
        if self._form() != self._planned_form and not self.running and not self.writing:
            self.replan()

    def replan(self, then_run: bool = False) -> None:
        if self._replan_timer is not None:
            self._replan_timer.stop()
            self._replan_timer = None
        if self.running or self.writing:
            return  # the form is disabled meanwhile; this is only a stray event
        if not self._plan_from_newest_read():
            return
        self._planned_form = self._form()
        self._planning = True
        self._run_when_planned = then_run
        self._gen += 1
        self.plan = None
        self.result = None
        self._show_result()
        self.query_one("#plan-view", Static).update(Text("planning…", style=DIM))
        self._set_progress(None)
        self._refresh_actions()
        try:
            budgets = self.budgets()
        except PlanError as e:
            self.post_message(self.Planned(self._gen, None, None, plan_error_text(e)))
            return
        self._plan_worker(self._gen, self.strategy, budgets, self.provider)

    @work(thread=True, exclusive=True, group="plan", description="repair plan")
    def _plan_worker(self, gen: int, strategy: str, budgets: Budgets, provider: str) -> None:
        try:
            summarizer = self.given_summarizer or _make_summarizer(provider)
        except Exception as e:  # ProviderConfigError: a missing key or model, said as itself
            self.post_message(self.Planned(gen, None, None, f"{provider}: {e}"))
            return
        try:
            with self._lock:
                p = plan(self.report, strategy, budgets, route=getattr(summarizer, "route", None))
        except PlanError as e:
            self.post_message(self.Planned(gen, None, summarizer, plan_error_text(e)))
            return
        self.post_message(self.Planned(gen, p, summarizer, None))

    def on_repair_screen_planned(self, msg: Planned) -> None:
        if msg.gen != self._gen:
            return  # the form changed since: a newer plan is on its way
        self._planning = False
        then_run, self._run_when_planned = self._run_when_planned, False
        self.summarizer = msg.summarizer
        view = self.query_one("#plan-view", Static)
        if msg.plan is None:
            view.update(Text(f"No plan: {msg.error}", style="bold red"))
            self._show_result()  # nothing planned: no after band, no comparison
            if then_run:
                self._set_progress(None, 1, "no plan: nothing run")
        else:
            self.plan = msg.plan
            view.update(plan_view(msg.plan))
            self._show_budget_sources(msg.plan)
            self._show_result()
        self._refresh_actions()
        if then_run and self.plan is not None:
            self.action_run()

    def _show_budget_sources(self, p: RepairPlan) -> None:
        """Empty fields show what the plan took and where from."""
        for name, _label in BUDGET_FIELDS:
            v = getattr(p.budgets, name)
            box = self.query_one(f"#{name}", Input)
            box.placeholder = f"{v:,}" if v is not None else "auto"
            box.tooltip = source_words(p.budgets.sources.get(name, "from the output budget")) if v is not None else "window − output budget"

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "strategy" and isinstance(event.value, str) and event.value != self.strategy:
            self.strategy = event.value
            self.query_one("#strategy-help", Static).update(STRATEGY_HELP.get(self.strategy, ""))
            self.replan()
        elif event.select.id == "provider" and isinstance(event.value, str) and event.value != self.provider:
            self.provider = event.value
            self.replan()

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        if self._replan_timer is not None:
            self._replan_timer.stop()
        self._replan_timer = self.set_timer(EDIT_DEBOUNCE, self._replan_if_changed)

    @on(Input.Submitted)
    def _input_submitted(self, event: Input.Submitted) -> None:
        self.replan()

    def action_replan(self) -> None:
        if self.running:
            self.notify("A run is in progress: cancel it first.", timeout=3)
            return
        self.replan()

    # -------------------------------------------------------------------------------- running

    def action_run(self) -> None:
        """Run the plan of the form as it is shown: a budget typed since the plan (`r` right after
        typing in a field) is planned first, then run."""
        if self.running or self.writing:
            return
        if self._form() != self._planned_form:
            self.replan(then_run=True)
        elif self._planning:
            self._run_when_planned = True
        if self._planning:
            self._set_progress(None, 1, "planning, then running…")
            return
        if self.plan is None:
            self.notify("No plan to run yet.", severity="warning", timeout=3)
            return
        self.running = True
        self.result = None
        self._usage = None
        self._cancel = threading.Event()
        self._show_result()
        n = len(self.plan.requests)
        self._set_progress(0, max(n, 1), "starting…" if n else "no summarizer request: building the checkpoint…")
        self._refresh_actions()
        self._run_worker(self._gen, self.plan, self.summarizer, self._cancel)

    @work(thread=True, exclusive=True, group="run", description="repair run")  # (see session._analyze_in_thread)
    def _run_worker(self, gen: int, p: RepairPlan, summarizer: Any, cancel: threading.Event) -> None:
        watched = _Watched(summarizer, lambda u: self.post_message(self.Used(u))) if summarizer is not None else None
        try:
            with self._lock:
                res = repair(
                    p,
                    watched,
                    progress=lambda i, n, label: self.post_message(self.Progressed(i, n, label)),
                    cancel=cancel.is_set,
                    entry_id=self.entry_id,
                    timestamp=self.timestamp,
                )
        except Exception as e:  # never a traceback on screen: the reason, and nothing installed
            self.post_message(self.Ran(gen, None, f"{type(e).__name__}: {e}"))
            return
        self.post_message(self.Ran(gen, res))

    def on_repair_screen_progressed(self, msg: Progressed) -> None:
        if self.running:
            self._set_progress(msg.i - 1, msg.n, msg.label)

    def on_repair_screen_used(self, msg: Used) -> None:
        if msg.usage is not None:
            self._usage = msg.usage if self._usage is None else self._usage + msg.usage
        self._set_label(None)

    def on_repair_screen_ran(self, msg: Ran) -> None:
        self.running = False
        if msg.gen != self._gen:  # pragma: no cover - the form is disabled while running
            self._refresh_actions()
            return
        self.result = msg.result
        if msg.result is None:
            self._set_progress(0, 1, f"[red]the run failed: {msg.error}[/]")
        else:
            r = msg.result
            n = max(len(self.plan.requests) if self.plan else 0, 1)
            word = done_words(r, session_refusal(self.report) is None)
            self._set_progress(n if not r.cancelled else None, n, f"{word} · {len(r.calls)} call(s)")
        self._show_result()
        self._refresh_actions()

    def action_cancel(self) -> None:
        if not self.running:
            self.notify("Nothing is running.", timeout=2)
            return
        self._cancel.set()
        self._set_label("cancelling after the current request…")

    # -------------------------------------------------------------------------------- installing

    def _install_why(self) -> str | None:
        """Why Install refuses now (None: it may ask)."""
        if self.running:
            return "a run is in progress"
        if self.writing:
            return "writing…"
        if self.stale is not None:
            return stale_words(self.stale)
        return install_refusal(self.report, self.result)

    def action_install(self) -> None:
        why = self._install_why()
        if why is not None or self.result is None or self.plan is None:
            self.notify(f"Cannot install: {why}", severity="warning", timeout=4)
            return
        from inspector.store.writeback import backup_dir

        led = self.report.ledger
        assert led.path is not None and self.result.entry is not None
        path = os.path.abspath(led.path)
        lines = self.result.lines or [self.result.entry]
        target = InstallTarget(
            path=path,
            size=led.size,
            record=writer_of(led).record_name,
            entry_id=record_id(self.result.entry),
            records=len(lines),
            entry_bytes=len(lines_bytes(lines)),
            into_store=writer_of(led).store is not None,
            backup_dir=str(backup_dir(path)),
            strategy=self.plan.strategy,
            status=self.result.status,
        )
        self.app.push_screen(ConfirmInstall(target, self.plan.before, self.result.after), self._confirmed)

    def _confirmed(self, yes: bool | None) -> None:
        if not yes or self.result is None:
            self.notify("Nothing written.", timeout=2)
            return
        if self.stale is not None:  # it changed while the confirm modal was open
            self._set_progress(None, 1, "[red]nothing installed[/]")
            self._refresh_actions()
            self.notify(f"Nothing written: {stale_words(self.stale)}", severity="warning", timeout=6)
            return
        self.writing = True
        self._refresh_actions()
        self._set_progress(None, 1, "writing: lock, unchanged check, backup, append, verify…")
        self._write_worker(self.result)

    @work(thread=True, exclusive=True, group="write", description="repair write")
    def _write_worker(self, res: RepairResult) -> None:
        from inspector.store.writeback import install, repair_what

        promised = res.after

        def expect(actual: Report) -> list[str]:
            return broken_promises(promised, Outlook.of(actual)) if promised is not None else []

        assert res.entry is not None
        try:
            with self._lock:
                if self.fingerprint is not None:
                    self.fingerprint(self.report.ledger)
                done = install(self.report, res.entry, lines=res.lines, what=repair_what(res.plan.strategy, res.checkpoint.kind if res.checkpoint is not None else "summary", "the app"), expect=expect)
                done.report.ensure_tokens()
        except (WriteError, OSError) as e:
            self.post_message(self.Written(None, str(e)))
            return
        self.post_message(self.Written(done))

    async def on_repair_screen_written(self, msg: Written) -> None:
        self.writing = False
        if msg.installed is None:
            self.result = None  # the file is as it was (or taken back): analyse it again before another try
            self._set_progress(None, 1, "[red]nothing installed[/]")
            self.query_one("#install-why", Static).update(Text(msg.error or "", style="red"))
            self.query_one("#install", Button).disabled = True
            self.notify(msg.error or "write failed", severity="error", timeout=10)
            return
        done = msg.installed
        session = self._session_below()
        self.app.pop_screen()
        verb = write_verb(done.report.ledger)
        self.app.notify(f"{verb.capitalize()} {done.entry_id} {'into' if verb == 'inserted' else 'to'} {done.path}; "
                        f"backup: {done.backup.path}", timeout=8)
        if session is not None:
            await session.show_installed(done.report, done.entry_id, done.backup.path)

    def _session_below(self) -> Any:
        stack = self.app.screen_stack
        i = stack.index(self) if self in stack else -1
        below = stack[i - 1] if i > 0 else None
        return below if below is not None and hasattr(below, "show_installed") else None

    # -------------------------------------------------------------------------------- state shown

    def _show_result(self) -> None:
        p = self.plan
        cmp_ = self.query_one("#compare-view", Static)
        res_ = self.query_one("#result-view", Static)
        fnd = self.query_one("#findings-view", Static)
        band = self.query_one("#band-after", Minimap)
        if p is None:
            # Nothing planned (being planned, or no plan possible): no "after" to show at all.
            band.display = False
            self.query_one("#band-after-title", Static).update(Text("coverage after: no plan", style=DIM))
            cmp_.update("")
            res_.update("")
            fnd.update("")
            return
        r = self.result
        shown = r.after if r is not None and r.after is not None else p.after
        band.display = shown is not None
        if shown is not None and band.report is not shown.report:
            band.set_ledger(shown.report.ledger)
            band.set_report(shown.report)
        which = "after the run" if r is not None and r.after is not None else "after (planned)"
        self.query_one("#band-after-title", Static).update(Text(f"coverage {which}", style=DIM))
        cmp_.update(compare_view(p.before, p.after, r.after if r is not None else None))
        res_.update(result_view(r, session_refusal(self.report) is None) if r is not None else Text("Not run yet: r runs it (writes nothing).", style=DIM))
        after = r.after if r is not None and r.after is not None else p.after
        fnd.update(findings_view(after, "Findings after" + (" the run" if r is not None and r.after is not None else " (planned)")))

    def _set_progress(self, done: int | None, total: int = 1, label: str = "") -> None:
        bar = self.query_one("#bar", ProgressBar)
        if done is None:
            bar.update(total=None if self.writing else total, progress=0)
        else:
            bar.update(total=total, progress=done)
        self._set_label(label)

    def _set_label(self, label: str | None) -> None:
        """The progress line: what is happening (None: unchanged), and the tokens used so far."""
        if label is None:
            label = self._last_label
        else:
            self._last_label = label
        use = f"  ·  tokens {self._usage.prompt:,} in / {self._usage.output:,} out" if self._usage is not None and self.running else ""
        self.query_one("#progress-label", Static).update(label + use)

    def _refresh_actions(self) -> None:
        busy = self.running or self.writing
        self.query_one("#form").disabled = busy  # a plan does not change under a run
        self.query_one("#provider").disabled = busy
        self.query_one("#run", Button).disabled = busy or self.plan is None
        self.query_one("#cancel-run", Button).disabled = not self.running
        why = self._install_why()
        self.query_one("#install", Button).disabled = why is not None
        never = session_refusal(self.report)
        note = self.query_one("#write-note", Static)
        note.display = never is not None
        note.update(Text(f"Install is not offered for this session: {never}" if never is not None else ""))
        if never is not None and why == never:
            why = "not offered for this session (why: above)"
        loud = why is not None and (self.result is not None or self.stale is not None)
        self.query_one("#install-why", Static).update(
            Text("" if why is None else f"install: {why}", style="yellow" if loud else DIM)
        )

    @on(Button.Pressed, "#run")
    def _run_pressed(self) -> None:
        self.action_run()

    @on(Button.Pressed, "#cancel-run")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#install")
    def _install_pressed(self) -> None:
        self.action_install()

    def action_back(self) -> None:
        if self.writing:
            self.notify("Writing: wait for it to finish.", timeout=3)
            return
        self._cancel.set()  # a run in progress stops at its next request; nothing was written
        self.app.pop_screen()


def _provider_names() -> tuple[str, ...]:
    from inspector.providers import PROVIDER_NAMES

    return PROVIDER_NAMES


def _make_summarizer(name: str) -> Any:
    from inspector.providers import make_provider

    return make_provider(name, model=None, base_url=None)
