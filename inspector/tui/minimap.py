"""The coverage minimap: the whole session in one bar, coloured by coverage state, with the
checkpoints marked. Clicking a cell (or the keys) moves the timeline there."""

from __future__ import annotations

from itertools import islice
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

    def __init__(self, ledger: Ledger, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ledger = ledger
        self.report: Report | None = None
        self.cursor_seq: int | None = None
        self._cells: list[tuple[str, bool, int]] | None = None  # (state, has checkpoint, first seq)
        self._width = 0

    def set_ledger(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.report = None
        self._cells = None
        self.refresh()

    def set_report(self, report: Report | None, cells: tuple[int, list[Cell]] | None = None) -> None:
        """`cells`: (width, coverage_cells at that width) already computed for this report."""
        self.report = report
        self._cells = None
        if cells is not None:
            self._width, self._cells = cells
        self.refresh()

    def set_cursor(self, seq: int | None) -> None:
        self.cursor_seq = seq
        self.refresh()

    def _compute(self, width: int) -> list[tuple[str, bool, int]]:
        return coverage_cells(self.ledger, self.report, width)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self._cells is None or self._width != width:
            self._cells = self._compute(width)
            self._width = width
        segs: list[Segment] = []
        cur = self.cursor_seq
        for i, (state, has_cp, seq) in enumerate(self._cells):
            nxt = self._cells[i + 1][2] if i + 1 < len(self._cells) else 1 << 62
            here = cur is not None and seq <= cur < nxt
            if y == 0:
                ch = "▼" if here else ("┃" if has_cp else "█")
                color = "#ffffff" if here else (STATE_COLORS["checkpoint"] if has_cp else STATE_COLORS.get(state, "#484f58"))
                segs.append(Segment(ch, Style(color=color, bgcolor=STATE_COLORS.get(state, "#484f58"))))
            else:
                segs.append(Segment("▀", Style(color=STATE_COLORS.get(state, "#484f58"))))
        return Strip(segs).crop_extend(0, width, Style())

    def seq_at(self, x: int) -> int | None:
        if not self._cells or x < 0 or x >= len(self._cells):
            return None
        return self._cells[x][2]

    def on_click(self, event: Click) -> None:
        seq = self.seq_at(event.x)
        if seq is not None:
            self.post_message(self.Jump(seq))


def coverage_cells(ledger: Ledger, report: Report | None, width: int) -> list[Cell]:
    """The minimap's cells at `width`: (state, has a checkpoint, first seq) each; a cell is the
    records `i * width // n == c` and keeps the most alarming state of its messages ("inactive"
    when none has a better one). Each cell's slice of the records' kinds and states is read in C
    (`in`, `set`): the analysis sets a state on messages only, so a cell's states are its
    messages'. A 500 MB rollout's 1.3 million records cost a third of a second as a Python loop
    (in the analysis worker at the landing, and in the main thread's paint before it)."""
    records = ledger.records
    start = 1 if records and records[0].kind == "header" else 0
    n = len(records) - start
    if n <= 0 or width <= 0:
        return []
    width = min(width, n)
    kinds = list(map(_KIND, islice(records, start, None)))
    states = report.states if report is not None else None
    rank = {s: i for i, s in enumerate(PRIORITY)}
    out: list[Cell] = []
    lo = 0
    for c in range(width):
        hi = -(-(c + 1) * n // width)  # the first i of the next cell (ceil)
        ks = kinds[lo:hi]
        if states is None:
            state = "pending" if "message" in ks else "inactive"
        else:
            present = set(states[start + lo : start + hi])
            present.discard(None)
            best = min((rank.get(st, len(PRIORITY)) for st in present), default=len(PRIORITY))
            state = PRIORITY[best] if best < rank["inactive"] else "inactive"
        out.append((state, "checkpoint" in ks, start + lo))
        lo = hi
    return out


_KIND = attrgetter("kind")
