"""The timeline: every record of the session, one line each, virtualised.

Modelled on toolong's `log_lines.py`: one ScrollView that renders only the visible lines through
`render_line`, with an LRU cache of rendered strips; never one widget per row, so a 100k-record
session scrolls as fast as a 100-record one.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from datetime import UTC, datetime

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from inspector.analysis.engine import Report
from inspector.analysis.export import checkpoint_status
from inspector.ledger.model import Ledger, Record
from inspector.tui.model import ROW_CHARS, STATE_COLORS, build_rows, state_of

ROLE_STYLE = {
    "user": Style(color="#e3b341", bold=True),
    "assistant": Style(color="#79c0ff"),
    "tool": Style(color="#a5d6ff", dim=True),
    "system": Style(color="#d2a8ff"),
}
DIM = Style(dim=True)
CURSOR = Style(bgcolor="#1f6feb")


def _time(ts: object) -> str:
    if isinstance(ts, str) and len(ts) >= 19:
        return ts[11:19]
    if isinstance(ts, int | float):
        v = ts / 1000 if ts > 1e11 else ts
        try:
            return datetime.fromtimestamp(v, UTC).strftime("%H:%M:%S")
        except (OverflowError, OSError, ValueError):
            return ""
    return ""


@dataclass(frozen=True, slots=True)
class Columns:
    """Which columns a record row has at a width, and how wide the variable ones are."""

    line: int
    time: bool
    stop: bool
    state: int


MIN_TEXT = 24  # columns of message text a row keeps before the fixed columns are narrowed


def columns_for(width: int, line_digits: int) -> Columns:
    """The widest layout that leaves `MIN_TEXT` columns of text: all columns, then no time, then
    the stop reason inline and a narrower state."""
    line = max(line_digits, 4)
    fixed = line + 1 + 10 + 2  # line, role, link
    for cols in (Columns(line, True, True, 10), Columns(line, False, True, 10), Columns(line, False, False, 8)):
        used = fixed + (9 if cols.time else 0) + (8 if cols.stop else 0) + cols.state + 1
        if width - used >= MIN_TEXT:
            return cols
    return Columns(line, False, False, 8)


class Timeline(ScrollView, can_focus=True):
    """Rows of the session; the cursor row is the selection."""

    DEFAULT_CSS = """
    Timeline { background: $surface; }
    """

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    class Selected(Message):
        """The cursor moved to a record."""

        def __init__(self, seq: int) -> None:
            super().__init__()
            self.seq = seq

    def __init__(self, ledger: Ledger, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ledger = ledger
        self.report: Report | None = None
        self.show_inactive = True
        self.rows: list[int] = build_rows(ledger, None)
        self._cache: LRUCache[tuple[int, int, int], Strip] = LRUCache(1024)
        self.matches: set[int] = set()  # seqs matching the current search
        self._update_size()

    # -------------------------------------------------------------------------------- data

    def set_report(self, report: Report | None) -> None:
        current = self.current_seq
        self.report = report
        self._rebuild(current, new_report=True)

    def _rows_are_all(self) -> bool:
        """The rows are every record of the ledger (the header excepted), as `build_rows` shows
        them with inactive branches (or before the analysis): increasing seqs, as many as that."""
        records = self.ledger.records
        start = 1 if records and records[0].kind == "header" else 0
        return len(self.rows) == len(records) - start

    def set_ledger(self, ledger: Ledger) -> None:
        """The complete index replaces the preview (same file, more records)."""
        current = self.current_seq
        self.ledger = ledger
        self.report = None
        self._rebuild(current)

    def set_show_inactive(self, show: bool) -> None:
        current = self.current_seq
        self.show_inactive = show
        self._rebuild(current)

    def _rebuild(self, keep_seq: int | None, new_report: bool = False) -> None:
        # Only the report changed (the rows were built from this ledger): with inactive
        # branches shown the rows stay every record, whatever the report, and are kept (a
        # million-int list built again on the main thread at the landing of a 500 MB rollout;
        # issue 15.3).
        if not (new_report and self.show_inactive and self._rows_are_all()):
            self.rows = build_rows(self.ledger, self.report, self.show_inactive)
        self._cache.clear()
        self._update_size()
        if keep_seq is not None:
            self.go_to(keep_seq, center=False)
        self.refresh()

    def _update_size(self) -> None:
        size = Size(max(self.size.width, 40), len(self.rows))
        if self.container_size and size != self.virtual_size:
            # Laid out already: the new size is set without a layout of the screen (the timeline's
            # own height is its share of the screen, never its rows), and Textual's own rule then
            # shows or hides a scrollbar (`_scroll_update`), which asks for a layout only if one
            # comes or goes. The first resize, after the first paint, and a big file's full index
            # after its first screen's each made a layout of the screen while the worker indexes
            # or analyses (issue 15.3).
            self.set_reactive(Timeline.virtual_size, size)
            self._scroll_update(size)
            self.refresh()
            return
        self.virtual_size = size

    def row_of(self, seq: int) -> int | None:
        """The row showing `seq`, None if it is hidden. The rows are seqs in file order: a binary
        search, never a seq -> row dict (a million-entry dict built on the main thread each time
        the report lands: 0.1 s and 100 MB on a 500 MB rollout; issue 15.2)."""
        i = bisect_left(self.rows, seq)
        return i if i < len(self.rows) and self.rows[i] == seq else None

    @property
    def current_seq(self) -> int | None:
        if not self.rows:
            return None
        return self.rows[min(self.cursor, len(self.rows) - 1)]

    # -------------------------------------------------------------------------------- moving

    def go_to(self, seq: int, center: bool = True) -> bool:
        """Put the cursor on a record (the nearest shown one after it if it is hidden)."""
        i = self.row_of(seq)
        if i is None:
            i = bisect_left(self.rows, seq)
            if i >= len(self.rows):
                return False
        self.cursor = i
        self._scroll_to_cursor(center)
        return True

    def _scroll_to_cursor(self, center: bool) -> None:
        h = self.scrollable_content_region.height or self.size.height or 1
        y = self.cursor
        if center:
            self.scroll_to(y=max(0, y - h // 2), animate=False)
        elif y < self.scroll_offset.y:
            self.scroll_to(y=y, animate=False)
        elif y >= self.scroll_offset.y + h:
            self.scroll_to(y=y - h + 1, animate=False)

    def watch_cursor(self, old: int, new: int) -> None:
        if self.rows:
            self.post_message(self.Selected(self.rows[min(new, len(self.rows) - 1)]))
        # The cache is keyed on (row, width, selected): only the two rows that changed repaint.
        self.refresh_lines(old)
        self.refresh_lines(new)

    def action_cursor(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))
            self._scroll_to_cursor(False)

    def action_page(self, direction: int) -> None:
        h = max(1, self.scrollable_content_region.height - 1)
        self.action_cursor(direction * h)

    def action_edge(self, end: int) -> None:
        if self.rows:
            self.cursor = len(self.rows) - 1 if end else 0
            self._scroll_to_cursor(False)

    def on_click(self, event: object) -> None:
        y = getattr(event, "y", None)
        if y is None or not self.rows:
            return
        row = int(self.scroll_offset.y) + int(y)
        if 0 <= row < len(self.rows):
            self.cursor = row

    def on_resize(self) -> None:
        self._cache.clear()
        self._update_size()
        # A smaller terminal must not leave the cursor row below the fold.
        self.call_after_refresh(self._scroll_to_cursor, False)

    # -------------------------------------------------------------------------------- drawing

    def render_line(self, y: int) -> Strip:
        row_index = int(self.scroll_offset.y) + y
        width = self.scrollable_content_region.width or self.size.width
        if row_index >= len(self.rows) or width <= 0:
            return Strip.blank(width, self.rich_style)
        key = (row_index, width, 1 if row_index == self.cursor else 0)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        rec = self.ledger.records[self.rows[row_index]]
        if rec._message is None and rec.kind == "message":
            # The rows on screen read from the file in one pass, not one open and read each: a
            # page of a big session drawn while a worker holds the GIL waited for it at each read.
            top = int(self.scroll_offset.y)
            self.ledger.load_messages(self.rows[top : top + max(self.size.height, y + 1)])
        strip = self._render_row(self.rows[row_index], width, row_index == self.cursor)
        self._cache[key] = strip
        return strip

    def _render_row(self, seq: int, width: int, selected: bool) -> Strip:
        rec = self.ledger.records[seq]
        report = self.report
        state = state_of(report, rec)
        band = Style(bgcolor=STATE_COLORS.get(state, "#484f58"))
        base = CURSOR if selected else Style()
        dim = report is not None and not report.on_path[rec.seq] and state != "hole"
        segs: list[Segment] = [Segment(" ", band), Segment(" ", base)]
        if rec.kind == "checkpoint":
            segs += self._separator(rec, width - 2, base)
        else:
            segs += self._record_cells(rec, base, dim, width - 2)
        strip = Strip(segs).crop_extend(0, width, base)
        if rec.seq in self.matches:
            strip = strip.apply_style(Style(underline=True))
        return strip

    def _separator(self, rec: Record, width: int, base: Style) -> list[Segment]:
        cp = rec.checkpoint
        view = None
        if self.report is not None:
            view = next((v for v in self.report.checkpoints if v.seq == rec.seq), None)
        label = f"── checkpoint {view.index} · line {rec.line}" if view else f"── compaction · line {rec.line}"
        parts = [label]
        if view is not None:
            parts.append(f"removes {len(view.removes)} · represents {len(view.represents)} · retains {len(view.retains)}")
            if view.shape:
                parts.append(view.shape)
        if view is not None and self.report is not None:
            status = checkpoint_status(self.report, view)
            if status.words != "summarized":
                parts.append(status.words)
        elif cp is not None and cp.failure_reason:
            parts.append(f"failure: {cp.failure_reason}")
        if view is not None and view.first_kept_found is False:
            parts.append("boundary not on path")
        text = " · ".join(parts) + " "
        style = base + Style(color=STATE_COLORS["checkpoint"], bold=True)
        return [Segment(text + "─" * max(0, width - len(text)), style)]

    def _record_cells(self, rec: Record, base: Style, dim: bool, width: int = 200) -> list[Segment]:
        """The columns of a record row. A narrow timeline (80 columns, side pane open) drops the
        time, then folds the stop reason into the text and narrows the state, so that some of the
        message's own text always shows."""
        report = self.report
        layout = columns_for(width, self._line_digits())
        pos = f"{rec.line:>{layout.line}} "
        role = (rec.role or rec.type or "?")[:9]
        role_style = ROLE_STYLE.get(rec.role or "", DIM)
        stop = ""
        link = "  "
        if rec.kind == "message":
            if rec.stop_reason and rec.stop_reason not in ("stop", "tool_use"):
                stop = rec.stop_reason
            if rec.call_ids:
                link = "→ "
            elif rec.result_id:
                link = "← "
            if report is not None:
                state = report.states[rec.seq] or ""
                if state == "summarized" and report.summarized_by[rec.seq]:
                    state = f"sum·{report.summarized_by[rec.seq]}"
                elif state == "retained" and report.summarized_by[rec.seq]:
                    state = f"ret·sum{report.summarized_by[rec.seq]}"  # kept raw and represented
            else:
                state = "…"
        else:
            state = rec.kind
        text = self._first_line(rec)[:ROW_CHARS]  # a row shows one screen width at most
        style = base + (DIM if dim else Style())
        stop_style = style + Style(color="#f85149")
        segs = [Segment(pos, style + DIM)]
        if layout.time:
            segs.append(Segment(f"{_time(rec.timestamp):>8} ", style + DIM))
        segs += [
            Segment(f"{role:<9} ", style + role_style),
            Segment(f"{state:<{layout.state}.{layout.state}} ", style),
        ]
        if layout.stop:
            segs.append(Segment(f"{stop:<7.7} ", stop_style))
        segs.append(Segment(link, style + Style(color="#d2a8ff")))
        if stop and not layout.stop:
            segs.append(Segment(f"{stop} ", stop_style))
        segs.append(Segment(text, style))
        return segs

    def _line_digits(self) -> int:
        records = self.ledger.records
        return len(str(records[-1].line)) if records else 1

    def _first_line(self, rec: Record) -> str:
        if rec.kind == "message":
            m = rec.message
            if m is None:
                return ""
            if m.role == "assistant" and m.tool_call_ids():
                names = [b.name or "?" for b in m.blocks if b.type == "tool_call"]
                head = m.first_line()
                calls = ", ".join(names)
                return f"{head}  [{calls}]" if head and not head.endswith("(…)") else f"[{calls}]"
            return m.first_line()
        if rec.kind == "run":
            raw = rec.raw()
            if isinstance(raw, dict):
                return f"model {raw.get('provider') or raw.get('connection')}/{raw.get('modelId') or raw.get('model')}"
        if rec.kind == "unknown":
            return f"unknown record type {rec.type!r}"
        return rec.type
