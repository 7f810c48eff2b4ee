"""Next-request view: what the model receives next, item by item, with a gauge of the total
against the context window.

The items live in a DataTable (virtualised: a request of thousands of items scrolls like one of
ten). Orphaned tool results are red, tool calls without a result yellow, items the runtime
synthesizes at send time dim and italic. Enter on an item posts `NextRequestView.Jump` for the
record it came from.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label, Static

from inspector.analysis.engine import ContextItem, Report
from inspector.tui.model import ROW_CHARS

ROLE_COLORS = {"user": "#e3b341", "assistant": "#79c0ff", "tool": "#a5d6ff", "system": "#d2a8ff"}
# Gauge segments, in request order: what the tokens of the next request are spent on.
SEGMENTS: tuple[tuple[str, str, str], ...] = (
    ("summary", "summary", "#58a6ff"),
    ("system", "system", "#d2a8ff"),
    ("user", "user", "#e3b341"),
    ("assistant", "assistant", "#39c5bb"),
    ("tool", "tool", "#8b949e"),
)
FREE = "#30363d"
RESERVE = "#6e4b16"
OVER = "#f85149"
ORPHAN = "#f85149"
UNANSWERED = "#d29922"
DIM = "#8b949e"
PREVIEW = 80


def segment_of(it: ContextItem) -> str:
    return "summary" if it.kind == "summary" else it.role


def item_preview(report: Report, it: ContextItem, chars: int = PREVIEW) -> str:
    """One line of an item's text, read cheaply (a long tool result is cut before it is split); of
    an item the runtime sends whose text the file does not hold, what it stands for (its note)."""
    if it.seq is None and not it.text and it.note:
        return f"({it.note})"[:chars]
    if it.kind == "summary" or it.seq is None or it.text:  # (its own text: what is sent)
        text = it.text
        if it.kind == "summary":
            text = text.split("<summary>", 1)[-1]
    else:
        m = report.ledger.records[it.seq].message
        if m is None:
            return ""
        text = ""
        for b in m.blocks:
            if b.type in ("text", "tool_result") and b.text.strip():
                text = b.text
                break
        if not text:
            names = [b.name or "?" for b in m.blocks if b.type == "tool_call"]
            text = f"[{', '.join(names)}]" if names else m.first_line()
    return " ".join(text[: chars * 4].split())[:chars]


_NOT_IN_FILE = "A synthetic item: the runtime adds it at send time, it is not in the file."

class Gauge(Widget):
    """The next request's tokens against the window: a bar split by what the tokens are spent on,
    the reserve marked at the end, and one line of numbers."""

    DEFAULT_CSS = """
    Gauge { height: auto; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.report: Report | None = None
        self.by_segment: dict[str, int] = {}

    def set_report(self, report: Report | None) -> None:
        self.report = report
        self.by_segment = {}
        if report is not None:
            for it in report.context:
                key = segment_of(it)
                self.by_segment[key] = self.by_segment.get(key, 0) + (it.tokens or 0)
        self.refresh(layout=True)

    def render(self) -> Text:
        r = self.report
        width = max(10, self.content_size.width or 40)
        if r is None:
            return Text("analysing…", style=f"italic {DIM}")
        total = r.context_tokens
        window = r.window
        reserve = r.reserve or 0
        n = len(r.context)
        pieces: list[Text] = []
        if window:
            budget = window - reserve
            color = OVER if total > budget else ("#d29922" if total > 0.8 * budget else "#3fb950")
            pieces.append(
                Text.assemble(
                    (f"{total:,}", f"bold {color}"),
                    (f" of {window:,} tokens ", "bold"),
                    (f"({100 * total / window:.1f}%)", f"bold {color}"),
                )
            )
            left = budget - total
            if left >= 0:
                pieces.append(Text(f"{left:,} left", style=DIM))
            else:
                pieces.append(Text(f"{-left:,} over budget", style=f"bold {OVER}"))
            if reserve:
                pieces.append(Text(f"reserve {reserve:,}", style=DIM))
            pieces.append(Text(f"{n:,} items", style=DIM))
            bar = self._bar(width, max(window, total), total, window, reserve)
        else:
            pieces.append(Text(f"{total:,} tokens", style="bold"))
            pieces.append(Text(f"{n:,} items", style=DIM))
            pieces.append(Text.assemble(("window unknown", "bold #d29922"), (": type it in the window field below (w)", DIM)))
            bar = self._bar(width, max(1, total), total, None, 0)
        out = flow(pieces, width, Text(" · ", style=DIM))
        out.append("\n")
        out.append_text(bar)
        out.append("\n")
        out.append_text(flow(self._legend(r), width, Text("  ")))
        return out

    def _bar(self, width: int, scale: int, total: int, window: int | None, reserve: int) -> Text:
        """Cells coloured by segment in proportion to their tokens, scaled so they add up to the
        total (which can come from the provider's usage, not from the items' own counts)."""
        counted = sum(self.by_segment.values()) or 1
        cells_total = round(width * total / scale) if scale else 0
        cells: list[str] = []
        acc = 0.0
        for key, _label, color in SEGMENTS:
            n = self.by_segment.get(key, 0)
            if not n:
                continue
            acc += cells_total * n / counted
            k = max(1, round(acc) - len(cells))
            cells += [color] * k
        cells = cells[:width]
        budget_cell = round(width * (window - reserve) / scale) if window else width
        bar = Text()
        for i in range(width):
            if i < len(cells):
                over = window is not None and i >= budget_cell
                bar.append("█", style=OVER if over else cells[i])
            elif window is not None and i >= budget_cell:
                bar.append("▒", style=RESERVE)
            else:
                bar.append("░", style=FREE)
        return bar

    def _legend(self, report: Report) -> list[Text]:
        out: list[Text] = []
        for key, label, color in SEGMENTS:
            n = self.by_segment.get(key)
            if n is not None:
                out.append(Text.assemble(("■ ", color), (f"{label} {n:,}", DIM)))
        if report.window and report.reserve:
            out.append(Text.assemble(("▒ ", RESERVE), ("reserve", DIM)))
        return out


MAX_TOKENS = 1 << 40  # far above any model's window; bigger is a typo


def parse_tokens(text: str) -> int | bool | None:
    """A field's number of tokens (`200,000` and `200_000` read as 200000); None when empty (the
    session's value); False when it is no number in range."""
    s = text.strip().replace(",", "").replace("_", "").replace(" ", "")
    if not s:
        return None
    if not s.isdigit() or not 0 < int(s) <= MAX_TOKENS:
        return False
    return int(s)


def flow(pieces: list[Text], width: int, sep: Text) -> Text:
    """Pieces joined by `sep`, broken into lines between pieces, never inside one (Rich would
    break `reserve 500` at its space)."""
    out = Text()
    col = 0
    for i, p in enumerate(pieces):
        if i:
            if col + len(sep) + len(p) > width:
                out.append("\n")
                col = 0
            else:
                out.append_text(sep)
                col += len(sep)
        out.append_text(p)
        col += len(p)
    return out


class NextRequestView(Vertical):
    """The items of the next request; Enter on one posts `Jump(seq)` for its record."""

    DEFAULT_CSS = """
    NextRequestView { height: 1fr; }
    NextRequestView > #next-head { height: auto; padding: 0 1; color: $text-muted; }
    NextRequestView > DataTable { height: 1fr; background: $surface; overflow-x: hidden; }
    NextRequestView > #next-keys { height: auto; padding: 0 1; color: $text-muted; }
    NextRequestView > #next-budgets { height: 1; padding: 0 1; }
    NextRequestView #next-budgets > Label { padding: 0 1 0 0; color: $text-muted; }
    NextRequestView #next-budgets > Input { width: 12; height: 1; border: none; padding: 0 1; margin: 0 1 0 0; }
    NextRequestView #next-budgets > Input.-invalid { background: $error 30%; }
    """

    class Budgets(Message):
        """The user set the window and the reserve (None: the session's own value)."""

        def __init__(self, window: int | None, reserve: int | None) -> None:
            super().__init__()
            self.window = window
            self.reserve = reserve

    class Jump(Message):
        """Go to the record an item of the next request came from."""

        def __init__(self, seq: int) -> None:
            super().__init__()
            self.seq = seq

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.report: Report | None = None
        self.items: list[ContextItem] = []

    def compose(self) -> ComposeResult:
        yield Gauge(id="next-gauge")
        with Horizontal(id="next-budgets"):
            yield Label("window")
            yield Input(id="next-window", placeholder="session's", restrict=r"[0-9,_ ]*")
            yield Label("reserve")
            yield Input(id="next-reserve", placeholder="session's", restrict=r"[0-9,_ ]*")
            yield Label("⏎ re-analyse")
        yield Static("", id="next-head")
        table: DataTable[Any] = DataTable(id="next-table", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static(
            Text.assemble(
                ("*", "bold"),
                (" provider usage  ", DIM),
                ("orphan", f"bold {ORPHAN}"),
                ("  ", DIM),
                ("unanswered", f"bold {UNANSWERED}"),
                ("  ⏎ go to record", DIM),
            ),
            id="next-keys",
        )

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one("#next-table", DataTable)

    def on_mount(self) -> None:
        if self.report is None:
            self.set_report(None)

    def set_report(self, report: Report | None) -> None:
        self.report = report
        table = self.table
        table.clear()
        head = self.query_one("#next-head", Static)
        if report is None:
            self.items = []
            self.query_one(Gauge).set_report(None)
            head.update("")
            return
        self._show_budgets(report)
        self.items = report.ensure_tokens()
        report.ledger.load_messages(
            [it.seq for it in self.items if it.seq is not None and it.kind == "message"]
        )
        self.query_one(Gauge).set_report(report)
        orphans = sum(1 for it in self.items if it.orphan)
        unanswered = sum(len(it.unanswered) for it in self.items)
        synthetic = sum(1 for it in self.items if it.synthetic and not it.on_resume)
        on_resume = sum(1 for it in self.items if it.on_resume and it.synthetic)
        moved = sum(1 for it in self.items if it.on_resume and not it.synthetic)
        h = Text(f"tokens from {report.tokens_source}", style=DIM)
        if orphans:
            h.append(
                f" · {orphans} orphaned tool result{'s' if orphans != 1 else ''}", style=f"bold {ORPHAN}"
            )
        if unanswered:
            h.append(
                f" · {unanswered} unanswered call{'s' if unanswered != 1 else ''}", style=f"bold {UNANSWERED}"
            )
        if synthetic:
            h.append(f" · {synthetic} synthetic result{'s' if synthetic != 1 else ''}", style=f"italic {DIM}")
        if on_resume:
            h.append(" · a reply the runtime adds on resume", style=f"italic {DIM}")
        if moved:
            h.append(" · a message the runtime moves into the next prompt on resume", style=f"italic {DIM}")
        head.update(h)
        table.clear(columns=True)
        for label, key in (
            ("#", "index"),
            ("role", "role"),
            ("kind", "kind"),
            ("line", "line"),
            ("tokens", "tokens"),
            ("text", "text"),
        ):
            table.add_column(label, key=key)
        table.add_rows([self._row(report, it) for it in self.items])
        if self.items:
            table.move_cursor(row=0)

    def _row(self, report: Report, it: ContextItem) -> list[Text]:
        """One item; an orphan is red, a call without result yellow, a synthetic item dim. The
        mark leads the text cell so the narrow side panel needs no extra column."""
        style = ""
        text = Text()
        if it.orphan:
            style = ORPHAN
            text.append("✗ orphan ", style=f"bold {ORPHAN}")
        elif it.unanswered:
            style = UNANSWERED
            n = len(it.unanswered)
            text.append(f"⚠ unanswered{f' ×{n}' if n > 1 else ''} ", style=f"bold {UNANSWERED}")
        elif it.synthetic:
            style = f"italic {DIM}"
            text.append("added on resume: " if it.on_resume else "added at send time: ", style=f"italic {DIM}")
        elif it.on_resume and it.seq is not None:  # (a message the runtime moves into the next prompt on resume)
            text.append("on resume, sent as: ", style=f"italic {DIM}")
        elif it.text and it.kind == "message" and it.seq is not None:  # (a failed reply sent as the runtime's marker)
            text.append("sent as: ", style=f"italic {DIM}")
        if it.joined:  # (several records the runtime sends as one message: OpenClaw's merges)
            text.append(f"{1 + len(it.joined)} as one: ", style=f"italic {DIM}")
        text.append(item_preview(report, it), style=style)
        kind = ("on resume" if it.on_resume else "synthetic") if it.synthetic else it.kind
        tokens = "…" if it.tokens is None else f"{it.tokens:,}"
        tok = Text(tokens + ("*" if it.tokens_from == "usage" else " "), justify="right")
        role = Text(it.role[:ROW_CHARS], style=style or ROLE_COLORS.get(it.role, ""))
        if it.kind == "summary":
            role.stylize("bold")
        return [
            Text(str(it.index), style=DIM, justify="right"),
            role,
            Text(kind, style=style or ("bold #58a6ff" if it.kind == "summary" else DIM)),
            Text(str(it.line) if it.line is not None else "—", justify="right", style=style or DIM),
            tok,
            text[:ROW_CHARS],  # a cell shows one width at most: a 14 MB preview is cut before layout
        ]

    def focus_window(self) -> None:
        self.query_one("#next-window", Input).focus()

    def _show_budgets(self, report: Report) -> None:
        """Each field's placeholder is the value the analysis used; empty means that value."""
        for field, value in (("#next-window", report.window), ("#next-reserve", report.reserve)):
            box = self.query_one(field, Input)
            box.placeholder = f"{value:,}" if value else "unknown" if field == "#next-window" else "none"

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id not in ("next-window", "next-reserve"):
            return
        event.stop()
        values: dict[str, int | None] = {}
        for name in ("window", "reserve"):
            box = self.query_one(f"#next-{name}", Input)
            value = parse_tokens(box.value)
            box.set_class(value is False, "-invalid")
            if value is False:
                self.notify(f"The {name} field: a number of tokens above 0, or empty for the session's value.",
                            severity="warning", timeout=5)
                box.focus()
                return
            values[name] = value
        self.post_message(self.Budgets(values["window"], values["reserve"]))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        i = event.cursor_row
        if not (0 <= i < len(self.items)):
            return
        it = self.items[i]
        if it.seq is None and it.line is not None and not it.synthetic and self.report is not None:
            # Content a line holds that is no record of its own (Codex: the base instructions in
            # session_meta, a replacement-history item in `compacted`): go to that line's record.
            at = next((r.seq for r in self.report.ledger.records if r.line == it.line), None)
            if at is not None:
                self.post_message(self.Jump(at))
                return
        if it.seq is None:
            self.notify(it.note if it.on_resume and it.note else _NOT_IN_FILE, timeout=4)
            return
        self.post_message(self.Jump(it.seq))
