"""Detail pane: the full content of the record selected in the timeline.

A message shows its metadata (role, line, time, stop reason, usage, route, coverage state) and
every content block: text, tool-call arguments and tool results as highlighted JSON, thinking
collapsed. A checkpoint shows its summary with the expected sections marked present / missing /
truncated, its failure reason, usage, shape and the ranges it removes, represents and retains
(counted with `export.PathCounts`: no big lists are materialized). Any other record shows its
type and the fields the model does not know.

Very long blocks are cut (with a note saying how much was left out) so a 50k-character tool result
does not stall the UI. The pane rebuilds itself after a short debounce, so holding a cursor key
in the timeline does not rebuild it once per row.
"""

from __future__ import annotations

import asyncio
import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

import orjson
from rich.box import ROUNDED
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from inspector.analysis.engine import CheckpointView, Finding, Report
from inspector.analysis.export import PathCounts, checkpoint_json, checkpoint_status
from inspector.analysis.findings import fmt_roles, plural
from inspector.analysis.protocol import ESSENTIAL_MARKER, ESSENTIAL_SECTIONS
from inspector.formats import registry
from inspector.formats.base import SummaryFormat, template_incomplete
from inspector.ledger.jsontext import py_str
from inspector.ledger.model import Block, Checkpoint, HistoryItem, Ledger, Message, Record, Usage
from inspector.ledger.times import iso_time
from inspector.tui.lazy_static import LazyStatic
from inspector.tui.model import SEVERITY_COLORS, STATE_COLORS, json_text, state_label, state_of

# A checkpoint status's tone (analysis.export.checkpoint_status).
TONE_COLORS = {"ok": "#3fb950", "neutral": "#58a6ff", "warning": "#d29922", "error": "#f85149"}

MAX_CHARS = 12_000  # per block: more than a screenful many times over, cheap to lay out
MAX_LINES = 400
DEBOUNCE = 0.08  # seconds: longer than a key repeat, shorter than a person notices

ROLE_COLORS = {"user": "#e3b341", "assistant": "#79c0ff", "tool": "#a5d6ff", "system": "#d2a8ff"}
SECTION_MARKS = {
    "present": ("✓", "#3fb950"),
    "missing": ("✗", "#f85149"),
    "truncated": ("✂", "#d29922"),
}
FAILURE_MEANING = {
    "no_new_history": "there was nothing new to summarize",
    "summary_budget": "the summarizer prompt did not fit its budget",
    "summary_provider": "the summarizer's provider failed",
    "checkpoint_oversized": "the summary was too large to install",
}
DIM = "#8b949e"


# ------------------------------------------------------------------------------------ helpers


def clip(text: str, limit: int = MAX_CHARS, max_lines: int = MAX_LINES) -> tuple[str, str | None]:
    """The text cut to `limit` characters and `max_lines` lines, and a note saying what was left."""
    cut = min(len(text), limit)
    pos = -1
    for _ in range(max_lines):
        pos = text.find("\n", pos + 1, cut)
        if pos < 0:
            break
    if pos >= 0:
        cut = pos
    if cut >= len(text):
        return text, None
    more_lines = text.count("\n", cut + 1) + 1
    lines = f" ({more_lines:,} more lines)" if more_lines > 1 else ""
    return text[:cut], f"… {len(text) - cut:,} more characters{lines}"


FIELD_CHARS = 400  # an id, a trigger, a route: a value of one grid row, never a screenful


def field_text(value: object, style: str = "") -> Text:
    """A field's value for one grid row, cut to FIELD_CHARS (a file may hold a 14 MB id: laying
    out all of it would freeze the app; DESIGN §4)."""
    text = py_str(value)
    if len(text) <= FIELD_CHARS:
        return Text(text, style=style)
    out = Text(text[:FIELD_CHARS], style=style)
    out.append(f" … {len(text) - FIELD_CHARS:,} more characters", style=f"italic {DIM}")
    return out


def _bounded(r: RenderableType) -> RenderableType:
    """Any text the pane lays out, cut to MAX_CHARS: the one guard behind every part (a record
    type or a diagnostic quoting a field can be megabytes long; the body views cut their own)."""
    if not isinstance(r, Text) or len(r) <= MAX_CHARS + FIELD_CHARS:
        return r
    cut = r[:MAX_CHARS]
    cut.append(f" … {len(r) - MAX_CHARS:,} more characters", style=f"italic {DIM}")
    return cut


def _json_view(value: Any) -> list[RenderableType]:
    text, note = clip(json_text(value))
    out: list[RenderableType] = [
        Syntax(text, "json", theme="monokai", word_wrap=True, background_color="default", indent_guides=False)
    ]
    if note:
        out.append(Text(note, style=f"italic {DIM}"))
    return out


def _looks_json(text: str) -> Any:
    """The parsed value when a tool result is a JSON object or array, else None."""
    s = text.strip()
    if len(s) < 2 or len(s) > 200_000 or s[0] not in "[{":
        return None
    try:
        v = orjson.loads(s)
    except orjson.JSONDecodeError:
        return None
    return v if isinstance(v, dict | list) else None


def _text_view(text: str, style: str = "") -> list[RenderableType]:
    body, note = clip(text)
    out: list[RenderableType] = [Text(body, style=style)]
    if note:
        out.append(Text(note, style=f"italic {DIM}"))
    return out


def _usage_text(u: Usage | None) -> Text:
    if u is None:
        return Text("not recorded", style=DIM)
    t = Text()
    t.append(f"{u.input:,}", "bold")
    t.append(" in · ", DIM)
    t.append(f"{u.output:,}", "bold")
    t.append(" out", DIM)
    if u.cache_read or u.cache_write:
        t.append(f" · cache read {u.cache_read:,} · write {u.cache_write:,}", DIM)
    t.append(f"  (prompt {u.prompt:,})", DIM)
    return t


def _grid() -> Table:
    g = Table.grid(padding=(0, 1), expand=True)
    g.add_column(style=DIM, no_wrap=True, min_width=8)
    g.add_column(ratio=1)
    return g


def _state_text(report: Report | None, rec: Record) -> Text:
    state = state_of(report, rec)
    color = STATE_COLORS.get(state, "#484f58")
    t = Text()
    t.append("  ", style=f"on {color}")
    t.append(" ")
    t.append(state_label(report, rec) if report is not None else "analysing…", style=f"bold {color}")
    return t


def _holds(sorted_seqs: list[int], seq: int) -> bool:
    i = bisect_left(sorted_seqs, seq)
    return i < len(sorted_seqs) and sorted_seqs[i] == seq


def _finding_line(f: Finding) -> Text:
    color = SEVERITY_COLORS.get(f.severity, "white")
    t = Text()
    t.append(f" {f.severity.upper()} ", style=f"bold #0d1117 on {color}")
    t.append(f" {f.code}: ", style=f"bold {color}")
    t.append(f.message)
    return t


def _styled_summary(text: str) -> Text:
    """Summary text with its structure visible: headings, protocol markers, file lists."""
    out = Text()
    in_files = False
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("## "):
            out.append(line, "bold #58a6ff")
        elif s.startswith("### "):
            out.append(line, "bold #79c0ff")
        elif s.startswith("<!--") and s.endswith("-->"):
            out.append(line, "bold #d2a8ff")
        elif re.fullmatch(r"</?(read-files|modified-files)>", s):
            in_files = not s.startswith("</")
            out.append(line, "#d2a8ff")
        elif in_files:
            out.append(line, DIM)
        elif s.startswith("**") or s.startswith("---"):
            out.append(line, "bold")
        else:
            out.append(line)
        out.append("\n")
    out.rstrip()
    return out


# ------------------------------------------------------------------------------------ summary sections


def _headings(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.startswith("## ")]


def summary_sections(summary: str) -> tuple[str, list[tuple[str, str]], str | None]:
    """Which template the summary follows, each expected section with its status
    (present | missing | truncated), and why it looks cut (or None)."""
    headings = _headings(summary)
    names = [h[3:] for h in headings]
    if any(n in ESSENTIAL_SECTIONS for n in names):
        return _protocol_sections(summary)
    for fmt in registry.REGISTRY:
        sf = fmt.runtime.summary_format
        if sf is not None:
            found = _template_sections(summary, sf)
            if found is not None:
                return f"{fmt.runtime.name} summary template", found[0], found[1]
    return "free-form (no known section template)", [], None


def _template_sections(summary: str, sf: SummaryFormat) -> tuple[list[tuple[str, str]], str | None] | None:
    """A runtime's own template (`Runtime.summary_format`): its sections, or None when the summary
    does not start it."""
    body = summary
    for tag in sf.file_list_tags:
        body = body.split(f"<{tag}>")[0]
    parts = body.split(sf.split_turn_separator)
    hist = _headings(parts[0])
    if not hist or hist[0] != sf.sections[0]:
        return None
    rows: list[tuple[str, str]] = [(h[3:], "present" if h in hist else "missing") for h in sf.sections]
    why = template_incomplete(summary, sf)
    if why:
        _mark_last_present(rows)
    if len(parts) > 1:
        closing = sf.split_turn_sections[1]
        prefix = _headings(parts[1])
        rows += [(f"split turn: {h[3:]}", "present") for h in prefix]
        if closing not in prefix:
            _mark_last_present(rows)
            rows.append((f"split turn: {closing[3:]}", "missing"))
    for tag in sf.file_list_tags:
        if f"<{tag}>" in summary:
            rows.append((f"<{tag}>", "present" if f"</{tag}>" in summary else "truncated"))
    return rows, why


def _mark_last_present(rows: list[tuple[str, str]]) -> None:
    for i in range(len(rows) - 1, -1, -1):
        if rows[i][1] == "present":
            rows[i] = (rows[i][0], "truncated")
            return


def _protocol_sections(summary: str) -> tuple[str, list[tuple[str, str]], str | None]:
    head, sep, tail = summary.partition(ESSENTIAL_MARKER)
    rows: list[tuple[str, str]] = []
    for name in ESSENTIAL_SECTIONS:
        rows.append((name, "present" if f"## {name}" in head else "missing"))
    why: str | None = None
    if not sep:
        _mark_last_present(rows)
        rows.append(("essential-complete marker", "missing"))
        why = "it stops before the essential-sections marker"
    else:
        rows.append(("essential-complete marker", "present"))
        if any(s == "missing" for _, s in rows):
            why = "an essential section is missing"
        closed = set(re.findall(r"<!-- end: ([^>]+?) -->", tail))
        for h in _headings(tail):
            name = h[3:]
            status = "present" if name in closed else "truncated"
            if status == "truncated" and why is None:
                why = f"optional section {name!r} is not closed"
            rows.append((f"{name} (optional)", status))
    return "summary protocol (essential sections first)", rows, why


# ------------------------------------------------------------------------------------ the pane


@dataclass(slots=True)
class Chunk:
    """Renderables of one part of the pane; `classes` says how it is set off (title, error...)."""

    renderables: list[RenderableType]
    classes: str = ""


Part = Chunk | Widget


def _assemble(parts: list[Part]) -> list[Widget]:
    """Runs of chunks become one Static each: a record without collapsible blocks is one widget,
    updated in place when the selection moves (no mounting, no widget churn)."""
    out: list[Widget] = []
    run: list[RenderableType] = []
    for p in parts:
        if isinstance(p, Widget):
            if run:
                out.append(LazyStatic(Group(*run)))
                run = []
            out.append(p)
            continue
        if p.classes in ("title", "summary", "empty") and (run or out):
            run.append(Text(""))
        if p.classes == "error":
            run.append(Panel(Group(*p.renderables), box=ROUNDED, border_style="#f85149", style="#f85149"))
        elif p.classes == "empty":
            run += [Text(r.plain, style=DIM) if isinstance(r, Text) else r for r in p.renderables]
        else:
            run += p.renderables
    if run or not out:
        out.append(LazyStatic(Group(*run)))
    return out


class DetailPane(VerticalScroll):
    """Everything about one record. `show()` is cheap: the rebuild happens after a short debounce."""

    DEFAULT_CSS = """
    DetailPane { padding: 0 1; background: $surface; }
    DetailPane > Static { width: 1fr; height: auto; }
    DetailPane Collapsible { padding: 0; margin: 1 0 0 0; border-top: none; background: $surface; }
    DetailPane Collapsible > Contents { padding: 0 0 0 2; }
    """

    def __init__(
        self, *, id: str | None = None, classes: str | None = None, first: tuple[Ledger, int | None] | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._first = first  # the record shown from the start (the view's first paint draws it)
        self._pending: tuple[Ledger, Report | None, int | None] | None = None
        self._shown: tuple[int, int, int | None] | None = None
        self._timer: Timer | None = None
        self._lock = asyncio.Lock()
        self._counts: tuple[Report, PathCounts] | None = None
        self._ctx_index: tuple[Report, dict[int, int]] | None = None
        self._findings_sorted: tuple[Report, list[tuple[Finding, list[int]]]] | None = None
        self.plain = ""  # the pane's text, for tests and copy
        self.seq: int | None = None

    def on_mount(self) -> None:
        if self._first is None:
            self.mount(LazyStatic(Text("Select a record in the timeline.", style=DIM)))
            return
        # Built now, not after the debounce that follows the cursor's first `show` (another layout
        # of the screen after its first paint, while the worker indexes the file; issue 15.3).
        ledger, seq = self._first
        self._first = None
        self.mount_all(_assemble(self._build(ledger, None, seq)))
        self._shown = (id(ledger), id(None), seq)
        self.seq = seq

    def show(self, ledger: Ledger, report: Report | None, seq: int | None) -> None:
        """Show a record (rebuilt after a short debounce; the newest call wins, so holding a
        cursor key rebuilds the pane once, when the cursor stops)."""
        self._pending = (ledger, report, seq)
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE, self._flush)

    async def _flush(self) -> None:
        async with self._lock:
            target = self._pending
            self._pending = None
            if target is None:
                return
            ledger, report, seq = target
            key = (id(ledger), id(report), seq)
            if key == self._shown:
                return
            shown, plain = self._shown, self.plain
            widgets = _assemble(self._build(ledger, report, seq))
            children = list(self.children)
            single = len(widgets) == 1 and len(children) == 1 and type(children[0]) is LazyStatic
            if single and report is None and shown is not None and shown[1:] == key[1:] and self.plain == plain:
                # The same record, read again without an analysis (a big file's full index after
                # its first screen's): the same text, no layout (issue 15.3).
                self._shown = key
                return
            if single:
                # The common case (no collapsible block): one update, no widget churn.
                children[0].update(widgets[0].content)
            else:
                with self.app.batch_update():
                    await self.remove_children()
                    await self.mount_all(widgets)
            self.scroll_home(animate=False)
            self._shown = key
            self.seq = seq

    # -------------------------------------------------------------------------------- building

    def _build(self, ledger: Ledger, report: Report | None, seq: int | None) -> list[Part]:
        self._parts: list[str] = []
        out: list[Part]
        if seq is None or not (0 <= seq < len(ledger.records)):
            out = [self._static(Text("Select a record in the timeline."), classes="empty")]
        else:
            rec = ledger.records[seq]
            if rec.kind == "message" and rec.message is not None:
                out = self._message(ledger, report, rec, rec.message)
            elif rec.kind == "checkpoint" and rec.checkpoint is not None:
                out = self._checkpoint(ledger, report, rec)
            else:
                out = self._other(ledger, report, rec)
        self.plain = "\n".join(self._parts)
        return out

    def _static(self, *renderables: RenderableType, classes: str = "") -> Chunk:
        parts = [_bounded(r) for r in renderables]
        for r in parts:
            self._parts.append(_plain(r))
        return Chunk(parts, classes)

    def _title(self, text: str | Text) -> Chunk:
        t = text if isinstance(text, Text) else Text(text, style=f"bold {DIM}")
        return self._static(t, classes="title")

    def _findings_here(self, report: Report | None, seq: int) -> list[Part]:
        if report is None:
            return []
        here = [f for f, seqs in self._finding_seqs(report) if _holds(seqs, seq)]
        if not here:
            return []
        return [self._title("Findings"), self._static(*[_finding_line(f) for f in here])]

    def _finding_seqs(self, report: Report) -> list[tuple[Finding, list[int]]]:
        """Each finding with its records sorted, once per report: a hole finding of a 500 MB
        rollout names 370k records, scanned at every cursor move before (issue 15.2)."""
        known = self._findings_sorted
        if known is None or known[0] is not report:
            known = self._findings_sorted = (report, [(f, sorted(f.records)) for f in report.findings])
        return known[1]

    def _diagnostics_here(self, ledger: Ledger, rec: Record) -> list[Part]:
        ds = [d for d in ledger.diagnostics if rec.seq in d.seqs or (not d.seqs and d.line == rec.line)]
        if not ds:
            return []
        lines = []
        for d in ds:
            t = Text(f"{d.problem}: ", style="bold #d29922")
            t.append(d.message, style="#d29922")
            if d.recovered:
                t.append(f" (recovered: {d.recovered})", style=DIM)
            lines.append(t)
        return [self._title("Input problems"), self._static(*lines)]

    # messages

    def _message(self, ledger: Ledger, report: Report | None, rec: Record, m: Message) -> list[Part]:
        role_color = ROLE_COLORS.get(m.role, "white")
        head = Text()
        head.append(m.role, style=f"bold {role_color}")
        if m.source_role and m.source_role != m.role:
            head.append(f" ({m.source_role})", style=DIM)
        head.append(f"  line {rec.line}", style="bold")
        head.append(f" · seq {rec.seq}", style=DIM)
        g = _grid()
        g.add_row("state", self._state_with_context(report, rec))
        if rec.id:
            g.add_row("id", field_text(rec.id))
        if rec.timestamp is not None:
            g.add_row("time", Text(iso_time(rec.timestamp)))
        if m.stop_reason or m.stop_reason_raw is not None:
            st = Text(
                m.stop_reason or "—",
                style="bold #f85149" if m.stop_reason in ("length", "error", "aborted") else "bold",
            )
            if m.stop_reason_raw is not None and m.stop_reason_raw != m.stop_reason:
                st.append(f"  (raw: {m.stop_reason_raw})", style=DIM)
            g.add_row("stop", st)
        if m.role == "assistant" or m.usage is not None:
            g.add_row("usage", _usage_text(m.usage))
        if m.route is not None:
            g.add_row("route", field_text(m.route.label()))
        if m.never_sent:
            g.add_row("sent", Text("never sent by design", style=DIM))
        out: list[Part] = [self._static(head, classes="head"), self._static(g)]
        if m.error_message:
            out.append(self._static(Text(m.error_message), classes="error"))
        out += self._findings_here(report, rec.seq)
        out += self._diagnostics_here(ledger, rec)
        if not m.blocks:
            out.append(self._static(Text("(no content blocks)", style=DIM), classes="empty"))
        for b in m.blocks:
            out += self._block(b)
        extra = rec.extra
        if extra:
            out.append(self._title("Fields the model does not know"))
            out.append(self._static(*_json_view(extra)))
        return out

    def _state_with_context(self, report: Report | None, rec: Record) -> Text:
        t = _state_text(report, rec)
        if report is None:
            return t
        state = state_of(report, rec)
        if state == "hole":
            if rec.seq in report.lost_to_runtime:
                t.append(" · the runtime's reader cannot reach it", style=DIM)
            elif report.checkpoints:
                last = report.checkpoints[-1]
                t.append(
                    f" · removed by checkpoint {last.index} (line {last.record.line}), represented by no summary",
                    style=DIM,
                )
        idx = self._context_index(report).get(rec.seq)
        if idx is not None:
            t.append(f" · next request item #{idx}", style=DIM)
        return t

    def _context_index(self, report: Report) -> dict[int, int]:
        if self._ctx_index is None or self._ctx_index[0] is not report:
            # (a record sent in another item's message, `ContextItem.joined`, is in that item)
            m = {s: it.index for it in report.context if it.seq is not None and it.kind == "message" for s in (it.seq, *it.joined)}
            self._ctx_index = (report, m)
        return self._ctx_index[1]

    def _block(self, b: Block) -> list[Part]:
        if b.type == "text":
            return [self._title(Text("text", style="bold")), self._static(*_text_view(b.text))]
        if b.type == "thinking":
            chunk = self._static(*_text_view(b.text, style="italic #8b949e"))
            body = Static(Group(*chunk.renderables))
            return [Collapsible(body, title=f"thinking · {len(b.text):,} characters", collapsed=True)]
        if b.type == "tool_call":
            t = Text("tool call ", style="bold #d2a8ff")
            t.append(str(b.name or "?"), style="bold")
            if b.call_id:
                t.append(f"  {b.call_id}", style=DIM)
            return [self._title(t), self._static(*_json_view(b.args))]
        if b.type == "tool_result":
            t = Text("tool result", style="bold #d2a8ff")
            if b.is_error:
                t.append("  error", style="bold #f85149")
            if b.call_id:
                t.append(f"  {b.call_id}", style=DIM)
            parsed = _looks_json(b.text)
            body = (
                _json_view(parsed)
                if parsed is not None
                else _text_view(b.text, style="#f85149" if b.is_error else "")
            )
            if not b.text:
                body = [Text("(empty)", style=DIM)]
            return [self._title(t), self._static(*body)]
        if b.type == "image":
            raw = b.raw if isinstance(b.raw, dict) else {}
            mime = raw.get("mimeType") or raw.get("media_type") or raw.get("mime_type") or "image"
            data = raw.get("data")
            size = f", {len(data):,} base64 characters" if isinstance(data, str) else ""
            return [self._title("image"), self._static(Text(f"[{mime}{size}]", style=DIM))]
        from rich.pretty import Pretty  # (here: a block of a kind no format names is rare, and rich.pretty
        # with the attrs it imports was a share of the app's start; issue 15.3)

        body = [Pretty(b.raw)] if b.raw is not None else [Text(b.text or "(empty)")]
        return [self._title(f"block {b.type!r} (kept as written)"), self._static(*body)]

    # checkpoints

    def _path_counts(self, report: Report) -> PathCounts:
        if self._counts is None or self._counts[0] is not report:
            self._counts = (report, PathCounts(report))
        return self._counts[1]

    def _checkpoint(self, ledger: Ledger, report: Report | None, rec: Record) -> list[Part]:
        cp = rec.checkpoint
        assert cp is not None
        view: CheckpointView | None = None
        if report is not None:
            view = next((v for v in report.checkpoints if v.seq == rec.seq), None)
        out: list[Part] = [self._static(self._checkpoint_head(report, view, rec), classes="head")]
        out.append(self._static(self._checkpoint_grid(ledger, report, view, rec)))
        out += self._findings_here(report, rec.seq)
        out += self._diagnostics_here(ledger, rec)

        if report is not None and view is not None:
            out.append(self._title("Ranges"))
            out.append(self._static(self._ranges(report, view)))
        if cp.replacement is not None:
            out.append(
                self._title(
                    Text.assemble(
                        ("Replacement history ", "bold"),
                        (f"· {plural(len(cp.replacement), 'item')}, all the history sent after it, in this order", DIM),
                    )
                )
            )
            out.append(self._static(self._replacement(ledger, cp.replacement)))
        out += self._checkpoint_summary(cp)
        if cp.details is not None:
            out.append(self._title("details (as written)"))
            out.append(self._static(*_json_view(cp.details)))
        extra = rec.extra
        if extra:
            out.append(self._title("Fields the model does not know"))
            out.append(self._static(*_json_view(extra)))
        return out

    @staticmethod
    def _checkpoint_head(report: Report | None, view: CheckpointView | None, rec: Record) -> Text:
        """Which checkpoint, where, and whether it is on the active path."""
        head = Text()
        head.append(
            f"checkpoint {view.index}" if view else "compaction", style=f"bold {STATE_COLORS['checkpoint']}"
        )
        head.append(f"  line {rec.line}", style="bold")
        head.append(f" · seq {rec.seq} · {rec.type}", style=DIM)
        if report is not None and view is None:
            head.append("  not on the active path", style="bold #6e7681")
        return head

    def _checkpoint_grid(
        self, ledger: Ledger, report: Report | None, view: CheckpointView | None, rec: Record
    ) -> RenderableType:
        """The checkpoint's fields: status, failure, id, time, trigger, size, usage, boundary, shape, flags."""
        cp = rec.checkpoint
        assert cp is not None
        g = _grid()
        g.add_row("status", self._cp_status(report, view, cp.failure_reason, bool(cp.summary.strip())))
        if cp.failure_reason:
            fr = Text(cp.failure_reason, style="bold #f85149")
            meaning = FAILURE_MEANING.get(cp.failure_reason)
            if meaning:
                fr.append(f": {meaning}", style="#f85149")
            g.add_row("failure", fr)
        if rec.id:
            g.add_row("id", field_text(rec.id))
        if rec.timestamp is not None:
            g.add_row("time", Text(iso_time(rec.timestamp)))
        if cp.trigger:
            g.add_row("trigger", field_text(cp.trigger))
        if cp.tokens_before is not None:
            g.add_row("before", Text(f"{cp.tokens_before:,} tokens"))
        g.add_row("usage", _usage_text(cp.usage))
        g.add_row("boundary", self._boundary(ledger, view, cp.first_kept_id or cp.explicit_boundary))
        shape = (view.shape if view else cp.retained_tail_shape) or "keeps nothing raw"
        g.add_row("shape", Text(shape, style="bold #d29922" if shape == "latest_user_message" else ""))
        flags = []
        if cp.truncated:
            flags.append("marked truncated")
        if cp.essential_complete is not None:
            flags.append(
                "essential sections closed" if cp.essential_complete else "essential sections NOT closed"
            )
        if view is not None and view.repair:
            flags.append("written by inspector's repair")
        elif cp.from_hook:
            flags.append("written by a hook")
        if flags:
            g.add_row("flags", Text(" · ".join(flags)))
        return g

    def _checkpoint_summary(self, cp: Checkpoint) -> list[Part]:
        """The summary's title (size, template), its sections, and its text (or why there is none)."""
        template, rows, why = summary_sections(cp.summary)
        out: list[Part] = [
            self._title(Text.assemble(("Summary ", "bold"), (f"· {len(cp.summary):,} characters · {template}", DIM)))
        ]
        if rows:
            out.append(self._static(self._sections_table(rows, why)))
        if cp.summary:
            body, note = clip(cp.summary)
            parts: list[RenderableType] = [_styled_summary(body)]
            if note:
                parts.append(Text(note, style=f"italic {DIM}"))
            out.append(self._static(*parts, classes="summary"))
        elif cp.opaque_summary is not None:
            out.append(self._static(Text(f"(opaque summary: {cp.opaque_summary}; what it represents is known, its text is not)", style=DIM)))
        else:
            out.append(self._static(Text("(empty summary: it represents nothing)", style="bold #f85149")))
        return out

    def _replacement(self, ledger: Ledger, items: list[HistoryItem], limit: int = 80) -> RenderableType:
        """Codex: each item a record kept raw (its line) or the checkpoint's own content."""
        g = Table.grid(padding=(0, 1), expand=True)
        g.add_column(style=DIM, no_wrap=True)
        g.add_column(no_wrap=True)
        g.add_column(no_wrap=True)
        g.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        for i, h in enumerate(items[:limit]):
            if h.seq is not None:
                rec = ledger.records[h.seq]
                m = rec.message
                where, style = f"kept, line {rec.line}", "#3fb950"
                text = m.first_line() if m is not None else ""
            else:
                where, style = ("summary" if h.kind == "summary" else "its own"), "bold #58a6ff"
                text = h.text.strip().splitlines()[0] if h.text.strip() else ""
            g.add_row(str(i), h.role, Text(where, style=style), text[:200])
        if len(items) > limit:
            g.add_row("", "", "", Text(f"… {len(items) - limit} more", style=DIM))
        return g

    def _cp_status(self, report: Report | None, view: CheckpointView | None, failure: str | None, has_summary: bool) -> Text:
        if report is not None and view is not None:
            status = checkpoint_status(report, view)
            return Text(status.words, style=f"bold {TONE_COLORS[status.tone]}")
        if not has_summary:
            return Text("empty summary", style="bold #f85149")
        if failure:
            return Text("fallback", style="bold #f85149")
        return Text("summarized", style="bold #3fb950")

    def _boundary(self, ledger: Ledger, view: CheckpointView | None, target: str | None) -> Text:
        if target is None:
            return Text("none named", style=DIM)
        if view is None:
            return field_text(f"keeps from {target}")
        if view.first_kept_found is False:
            return field_text(f"{target}: not on the active path", style="bold #f85149")
        if view.first_kept_seq is not None:
            return field_text(f"keeps from line {ledger.records[view.first_kept_seq].line} ({target})")
        return field_text(f"after {target}")

    def _ranges(self, report: Report, view: CheckpointView) -> RenderableType:
        j = checkpoint_json(report, view, self._path_counts(report))
        g = Table.grid(padding=(0, 1), expand=True)
        g.add_column(no_wrap=True, min_width=10)
        g.add_column(ratio=1)
        rows = [
            ("removes", j["removes"], "#f0883e", "taken out of the next request"),
            ("represents", j["represents"], STATE_COLORS["summarized"], "what its summary stands for"),
            (
                "retains",
                j["retains"],
                STATE_COLORS["retained"],
                f"kept raw · {j['retains']['shape'] or 'nothing'}",
            ),
            ("new here", j["summarized_here"], "#a5d6ff", "what its own summarizer call covered"),
        ]
        if "represented_and_retained" in j:
            both = ("both", j["represented_and_retained"], STATE_COLORS["retained"], "kept raw and represented: its summarizer saw them")
            rows.insert(3, both)
        for name, span, color, meaning in rows:
            g.add_row(Text(name, style=f"bold {color}"), _span_text(span, meaning))
        for f in report.findings:
            if f.code == "hole" and (f.data or {}).get("checkpoint") == view.index:
                lost = Text(f"{len(f.records):,} messages", style=f"bold {STATE_COLORS['hole']}")
                lost.append(" removed without being represented\n", style=STATE_COLORS["hole"])
                lost.append(fmt_roles(f.by_role or {}), style=STATE_COLORS["hole"])
                g.add_row(Text("lost", style=f"bold {STATE_COLORS['hole']}"), lost)
        first = report.ledger.records[report.path[0]].line if report.path else 0
        return Group(RangeBar(view, self._path_counts(report), first, view.record.line), g)

    def _sections_table(self, rows: list[tuple[str, str]], why: str | None) -> RenderableType:
        t = Table.grid(padding=(0, 1))
        t.add_column(no_wrap=True)
        t.add_column()
        t.add_column(no_wrap=True)
        for name, status in rows:
            mark, color = SECTION_MARKS[status]
            t.add_row(Text(mark, style=f"bold {color}"), Text(name), Text(status, style=color))
        if why:
            return Group(t, Text(f"looks cut at the output limit: {why}", style="bold #d29922"))
        return t

    # other records

    def _other(self, ledger: Ledger, report: Report | None, rec: Record) -> list[Part]:
        head = Text()
        head.append(rec.kind, style="bold")
        head.append(f" · {rec.type}", style="bold #d2a8ff")
        head.append(f"  line {rec.line}", style="bold")
        head.append(f" · seq {rec.seq}", style=DIM)
        g = _grid()
        if rec.id:
            g.add_row("id", field_text(rec.id))
        if rec.parent_id:
            g.add_row("parent", field_text(rec.parent_id))
        if rec.timestamp is not None:
            g.add_row("time", Text(iso_time(rec.timestamp)))
        if report is not None:
            g.add_row(
                "path",
                Text(
                    "on the active path" if report.on_path[rec.seq] else "not on the active path", style=DIM
                ),
            )
        if rec.kind == "unknown":
            g.add_row(
                "note",
                Text("a record type this tool does not know: kept and shown, never fatal", style="#d29922"),
            )
        run = next((r for r in ledger.runs.values() if r.seq == rec.seq), None)
        if run is not None:
            g.add_row("route", field_text(run.route.label()))
        if rec.kind == "message":
            g.add_row("content", Text("could not be read", style="#f85149"))
        out: list[Part] = [self._static(head, classes="head"), self._static(g)]
        out += self._findings_here(report, rec.seq)
        out += self._diagnostics_here(ledger, rec)
        if rec.kind == "header" and ledger.header:
            out.append(self._title("Header"))
            out.append(self._static(*_json_view(ledger.header)))
        extra = rec.extra
        if extra:
            out.append(self._title("Fields"))
            out.append(self._static(*_json_view(extra)))
        raw = rec.raw()
        if raw is not None:
            out.append(self._title("As written"))
            out.append(self._static(*_json_view(raw)))
        return out


def _span_text(span: dict[str, Any], meaning: str) -> Text:
    t = Text()
    n = span["count"]
    t.append(f"{n:,}", style="bold")
    t.append(" message" if n == 1 else " messages")
    if "first_line" in span:
        a, b = span["first_line"], span["last_line"]
        t.append(f" · line {a}" if a == b else f" · lines {a}–{b}", style=DIM)
    if n:
        t.append("\n" + fmt_roles(span["by_role"]), style=DIM)
    t.append(f"\n{meaning}", style=f"italic {DIM}")
    return t


class RangeBar:
    """The active path up to a checkpoint in one line: messages represented, removed without
    being represented, retained. Counted from the checkpoint's intervals and the path's message
    positions, so it costs O(width · log n) whatever the session's size."""

    def __init__(self, view: CheckpointView, counts: PathCounts, first_line: int, last_line: int) -> None:
        self.view = view
        self.msg_pos = counts.msg_pos
        self.first_line = first_line
        self.last_line = last_line

    def _messages(self, lo: int, hi: int) -> int:
        return bisect_left(self.msg_pos, hi) - bisect_left(self.msg_pos, lo) if hi > lo else 0

    def colors(self, width: int) -> list[str]:
        v = self.view
        n = max(1, v.pos)
        out: list[str] = []
        prev = STATE_COLORS["summarized"]
        for c in range(width):
            a = c * n // width
            b = max(a + 1, (c + 1) * n // width)
            hi = min(b, v.cut)
            removed = self._messages(a, hi)
            rep = sum(self._messages(max(lo, a), min(rhi, hi)) for lo, rhi in v.rep)
            if removed > rep:
                color = STATE_COLORS["hole"]
            elif rep:
                color = STATE_COLORS["summarized"]
            elif self._messages(max(a, v.cut), b):
                color = STATE_COLORS["retained"]
            else:
                color = prev  # no message in this cell: continue the neighbour
            out.append(color)
            prev = color
        if self._messages(v.cut, v.pos) and STATE_COLORS["retained"] not in out:
            out[-1] = STATE_COLORS["retained"]  # a short retained tail must stay visible
        return out

    def __rich_console__(self, console: Any, options: Any) -> Any:
        width = max(10, options.max_width)
        bar = Text()
        for color in self.colors(width):
            bar.append("▆", style=color)
        yield bar
        left, right = f"line {self.first_line}", f"checkpoint, line {self.last_line}"
        axis = Text(left, style=DIM)
        axis.append(" " * max(1, width - len(left) - len(right)))
        axis.append(right, style=DIM)
        yield axis
        legend = Text()
        for label, key in (
            ("represented", "summarized"),
            ("not represented", "hole"),
            ("retained", "retained"),
        ):
            legend.append("■ ", style=STATE_COLORS[key])
            legend.append(label + "  ", style=DIM)
        yield legend


def _plain(r: RenderableType) -> str:
    if isinstance(r, Text):
        return r.plain
    if isinstance(r, Syntax):
        return r.code
    if isinstance(r, Table):
        cols = [list(col.cells) for col in r.columns]
        rows = []
        for i in range(r.row_count):
            rows.append(" ".join(p for p in (_plain(c[i]) for c in cols if i < len(c)) if p))
        return "\n".join(rows)
    if isinstance(r, str):
        return r
    if isinstance(r, RangeBar):
        return "represented / removed, not represented / retained"
    renderables = getattr(r, "renderables", None)
    if renderables is not None:
        return "\n".join(_plain(x) for x in renderables)
    return ""
