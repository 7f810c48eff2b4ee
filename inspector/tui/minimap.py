"""The coverage minimap: the whole session in one bar, coloured by coverage state, with the
checkpoints marked. Clicking a cell (or the keys) moves the timeline there."""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache
from operator import attrgetter

from rich.segment import Segment
from rich.style import Style
from textual.events import Click
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from inspector.analysis.engine import Report
from inspector.ledger.model import Ledger
from inspector.tui.model import STATE_COLORS

# When a cell covers several records, the most alarming state wins.
PRIORITY = ("hole", "excluded", "summarized", "retained", "live", "inactive", "pending")
Cell = tuple[str, bool, int]  # (state, has a checkpoint, first seq)


class Minimap(Widget):
    DEFAULT_CSS = """
    Minimap { height: 2; }
    """

    class Jump(Message):
        def __init__(self, seq: int) -> None:
            super().__init__()
            self.seq = seq

    def __init__(self, ledger: Ledger, *, kinds: list[str] | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ledger = ledger
        self.kinds = kinds  # record_kinds(ledger), when known
        self.report: Report | None = None
        self.cursor_seq: int | None = None
        self._cells: list[tuple[str, bool, int]] | None = None  # (state, has checkpoint, first seq)
        self._width = 0
        self._strips: tuple[tuple[int, int], tuple[Strip, Strip]] | None = None  # ((width, cursor cell), lines)
        self._seq_starts: tuple[list[Cell] | None, list[int]] | None = None

    def set_ledger(self, ledger: Ledger, kinds: list[str] | None = None) -> None:
        """`kinds`: `record_kinds(ledger)`, when the caller has them."""
        self.ledger = ledger
        self.kinds = kinds
        self.report = None
        self._cells = None
        self._strips = None
        self.refresh()

    def set_report(self, report: Report | None, cells: tuple[int, list[Cell]] | None = None) -> None:
        """`cells`: (width, coverage_cells at that width) already computed for this report."""
        self.report = report
        self._cells = None
        self._strips = None
        if cells is not None:
            self._width, self._cells = cells
        self.refresh()

    def set_cursor(self, seq: int | None) -> None:
        self.cursor_seq = seq
        self.refresh()

    def _compute(self, width: int) -> list[tuple[str, bool, int]]:
        return coverage_cells(self.ledger, self.report, width, self.kinds)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self._cells is None or self._width != width:
            self._cells = self._compute(width)
            self._width = width
            self._strips = None
        cells = self._cells
        cur = self.cursor_seq
        here = -1 if cur is None else bisect_right(self._starts(), cur) - 1
        key = (width, here)
        if self._strips is None or self._strips[0] != key:
            self._strips = (key, self._draw(cells, here, width))
        return self._strips[1][0 if y == 0 else 1]

    def _starts(self) -> list[int]:
        """Each cell's first seq, in order (the cells are in file order)."""
        if self._seq_starts is None or self._seq_starts[0] is not self._cells:
            self._seq_starts = (self._cells, [seq for _, _, seq in self._cells or ()])
        return self._seq_starts[1]

    @staticmethod
    def _draw(cells: list[Cell], here: int, width: int) -> tuple[Strip, Strip]:
        """Both lines, the cursor's cell marked: drawn once per cursor cell, not per line and key
        (each key redraws the minimap; its 2 x 160 styled cells were a few ms of the key)."""
        top: list[Segment] = []
        bottom: list[Segment] = []
        for i, (state, has_cp, _seq) in enumerate(cells):
            bg = STATE_COLORS.get(state, "#484f58")
            if i == here:
                ch, color = "▼", "#ffffff"
            else:
                ch, color = ("┃", STATE_COLORS["checkpoint"]) if has_cp else ("█", bg)
            top.append(Segment(ch, _style(color, bg)))
            bottom.append(Segment("▀", _style(bg, None)))
        return Strip(top).crop_extend(0, width, Style()), Strip(bottom).crop_extend(0, width, Style())

    def seq_at(self, x: int) -> int | None:
        if not self._cells or x < 0 or x >= len(self._cells):
            return None
        return self._cells[x][2]

    def on_click(self, event: Click) -> None:
        seq = self.seq_at(event.x)
        if seq is not None:
            self.post_message(self.Jump(seq))


def record_kinds(ledger: Ledger) -> list[str]:
    """Every record's kind, in file order: read once per ledger by the loading worker, and shared
    by the status line's count of messages and the minimap's cells, pending and after the analysis
    (each was a pass of its own over a 500 MB rollout's 1.3 million records; issue 15.3)."""
    return list(map(_KIND, ledger.records))


def coverage_cells(ledger: Ledger, report: Report | None, width: int, kinds: list[str] | None = None) -> list[Cell]:
    """The minimap's cells at `width`: (state, has a checkpoint, first seq) each; a cell is the
    records `i * width // n == c` and keeps the most alarming state of its messages ("inactive"
    when none has a better one). Each cell's slice of the records' kinds and states is read in C
    (`in`, `set`): the analysis sets a state on messages only, so a cell's states are its
    messages'. A 500 MB rollout's 1.3 million records cost a third of a second as a Python loop
    (in the analysis worker at the landing, and in the main thread's paint before it). `kinds`:
    `record_kinds(ledger)` when known (read again when it is not that ledger's length)."""
    records = ledger.records
    start = 1 if records and records[0].kind == "header" else 0
    n = len(records) - start
    if n <= 0 or width <= 0:
        return []
    width = min(width, n)
    if kinds is None or len(kinds) != len(records):
        kinds = record_kinds(ledger)
    states = report.states if report is not None else None
    rank = {s: i for i, s in enumerate(PRIORITY)}
    out: list[Cell] = []
    lo = start
    for c in range(width):
        hi = start - (-(c + 1) * n // width)  # the first seq of the next cell (ceil)
        ks = kinds[lo:hi]
        if states is None:
            state = "pending" if "message" in ks else "inactive"
        else:
            present = set(states[lo:hi])
            present.discard(None)
            best = min((rank.get(st, len(PRIORITY)) for st in present), default=len(PRIORITY))
            state = PRIORITY[best] if best < rank["inactive"] else "inactive"
        out.append((state, "checkpoint" in ks, lo))
        lo = hi
    return out


_KIND = attrgetter("kind")


@lru_cache(maxsize=64)
def _style(color: str, bgcolor: str | None) -> Style:
    return Style(color=color, bgcolor=bgcolor)
