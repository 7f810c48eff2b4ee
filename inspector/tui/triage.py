"""Triage browser (DESIGN §6, issue 3 point 7): many sessions in one sortable, filterable table.

A thread worker walks the given places for `*.jsonl` files, loads and analyses them one at a time
and posts the table rows in batches (a few per second, never one message per file), so a folder of
thousands of sessions fills while the table stays usable. Only the row data is kept: every Ledger
and Report is dropped as soon as its row is built. Enter opens the session view; Escape there
comes back to this screen with the table as it was.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from glob import glob

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.coordinate import Coordinate
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Input, ProgressBar, Static
from textual.widgets.data_table import ColumnKey, RowKey
from textual.worker import Worker, WorkerState, get_current_worker

from inspector.analysis.sessions import ScanRow
from inspector.analysis.usage import (
    PriceTable,
    PriceTableError,
    UsageGroup,
    cost_text,
    load_prices,
    session_costs,
)
from inspector.formats import registry
from inspector.ledger.model import Ledger
from inspector.ledger.times import epoch_seconds
from inspector.store.index import IndexUnavailable, SearchHit, SessionIndex, index_key, match_expression
from inspector.store.places import parent_session, session_files
from inspector.store.scan import Scanner, SessionFilter, iso_seconds, read_session, when
from inspector.tui.model import SEVERITY_COLORS

SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}
UNREADABLE_COLOR = "#db61a2"
HEALTHY_COLOR = "#3fb950"
# Rows reach the table in batches: the first ones quickly, then at most twice a second (every
# batch re-sorts and repaints the table, which costs the same for 10 rows as for 500).
BATCH_FIRST_SECONDS = 0.1
BATCH_SECONDS = 0.5
BATCH_MAX = 1000
FILTER_DEBOUNCE = 0.15  # seconds of no typing before a filter is applied

# The longest format label: a format's name ("claude_code"); a versioned one ("native v1", "adk v0")
# is shorter.
FORMAT_WIDTH = max(len(name) for name in registry.names())

# (key, label, first press sorts descending?, width (None: shares what is left, see
# `column_widths`), right-aligned?). Widths leave two cells for the sort arrow.
COLUMNS: list[tuple[str, str, bool, int | None, bool]] = [
    ("file", "file", False, None, False),
    ("format", "format", False, FORMAT_WIDTH, False),
    ("records", "records", True, 9, True),
    ("activity", "last activity", True, 15, False),
    ("tokens", "context tokens", True, 16, True),
    ("cost", "cost", True, 14, True),
    ("worst", "worst finding", True, None, False),
    ("holes", "holes", True, 7, True),
]
FILE_MIN_WIDTH = 16
WORST_MIN_WIDTH = 20
SORTABLE = [c[0] for c in COLUMNS]

# (key, action, description): the triage browser's keys (footer, help screen).
TRIAGE_KEYS: list[tuple[str, str, str]] = [
    ("enter", "open", "Open session"),
    ("f", "filter", "Filter (also since:7d until:DATE project:TEXT format:NAME)"),
    ("slash", "search", "Search the text of every session (Enter on a hit opens it there)"),
    ("s", "sort_next", "Sort by next column"),
    ("S", "sort_reverse", "Reverse sort"),
    ("1-8", "sort_column", "Sort by column 1-8 (again: reverse)"),
    ("r", "rescan", "Rescan"),
    ("escape", "clear_filter", "Leave / clear the filter"),
    ("f1", "app.help", "Help"),
]

FILTER_HELP = (
    "filter: text in file name · since:7d · until:2026-01-31 · project:text · format:pi · holes>0 · error"
    " · unreadable · code:hole · tokens>50000 · !text"
)
SEARCH_HELP = "search every session's text, tool names and summaries (Enter: search; Escape: close)"
SEARCH_LIMIT = 200  # hits shown, best first
# Workers reading sessions (None: one per core, as `inspector scan`).
WORKERS: int | None = None


# ------------------------------------------------------------------------------------ row data


@dataclass(slots=True)
class SessionRow:
    """What the table shows about one session file; nothing else of its analysis is kept."""

    path: str  # absolute; the row key and what Enter opens
    rel: str  # shown: relative to the common base of the places searched
    mtime: float = 0.0  # the file's modification time
    last_activity: float = 0.0  # the session's newest record time (the file's mtime when none has one)
    format: str = ""
    records: int = -1
    context_tokens: int = -1
    holes: int = -1
    findings: tuple[tuple[str, str, int], ...] = ()  # (severity, code, count), worst first
    worst_message: str = ""
    error: str | None = None  # could not be read or analysed: why
    scan: ScanRow | None = None  # the row `inspector scan` has for it (what the scan filters read)
    cost: UsageGroup | None = None  # recorded usage and its cost, sub-agents included (None: no usage recorded)
    currency: str = "USD"

    @property
    def parent(self) -> str | None:
        return self.scan.parent if self.scan is not None else None

    @property
    def worst(self) -> tuple[str, str] | None:
        return (self.findings[0][0], self.findings[0][1]) if self.findings else None

    def severities(self) -> set[str]:
        return {s for s, _c, _n in self.findings}


def format_label(led: Ledger) -> str:
    """The format as the table shows it: its name, and the version it was written in."""
    return f"{led.format} v{led.version}" if led.version is not None else led.format


def last_record_time(led: Ledger) -> float | None:
    """Epoch seconds of the newest record time in the session (None: no record has one)."""
    times = [t for t in (epoch_seconds(r.timestamp) for r in led.records) if t is not None]
    return max(times) if times else None


def session_row(scan: ScanRow, rel: str, mtime: float | None = None) -> SessionRow:
    """The table's row of a session from the row `inspector scan` has for it (`store.scan`)."""
    row = SessionRow(path=scan.path, rel=rel, scan=scan)
    if mtime is None:
        try:
            mtime = os.stat(scan.path).st_mtime
        except OSError:
            mtime = 0.0
    row.mtime = mtime
    if scan.error is not None:
        row.error = scan.error
        return row
    row.format = f"{scan.format} v{scan.format_version}" if scan.format_version is not None else scan.format or ""
    row.records = scan.records or 0
    row.last_activity = iso_seconds(scan.last_activity) or row.mtime
    row.context_tokens = scan.context_tokens or 0
    row.holes = scan.holes or 0
    row.findings = tuple((c.severity, c.code, c.count) for c in scan.codes or ())
    row.worst_message = scan.worst_message or ""
    return row


def summarize_session(path: str, rel: str) -> SessionRow:
    """One file's row, read the way `inspector scan` reads it (no index). Never raises."""
    parent = parent_session(path)
    return session_row(read_session(path, parent if parent and os.path.exists(parent) else None).row, rel)


def discover(
    paths: Iterable[str], cancelled: Callable[[], bool] = lambda: False
) -> tuple[str, list[str], list[str]]:
    """(common base, session files, paths that do not exist), by the walk `inspector scan` and
    `watch` use (`store.places.session_files`): every registered format's files, what a format names
    as not sessions left out, files given by name taken whatever their name."""
    paths = [os.path.abspath(os.path.expanduser(p)) for p in paths]
    found = list(session_files(paths, cancelled))
    roots = [p if os.path.isdir(p) else os.path.dirname(p) for p in paths]
    return _base(roots), [f.path for f in found if not f.missing], [f.path for f in found if f.missing]


def _base(roots: list[str]) -> str:
    if not roots:
        return ""
    try:
        return os.path.commonpath(roots)
    except ValueError:  # different drives
        return ""


def _full(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path))


def relative(path: str, base: str) -> str:
    return os.path.relpath(path, base) if base else path


def ago(mtime: float, now: float | None = None) -> str:
    """Human-readable age of a modification time."""
    if mtime <= 0:
        return ""
    secs = (now if now is not None else time.time()) - mtime
    if secs < 0:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))
    if secs < 60:
        return "just now"
    if secs < 3600:
        return f"{int(secs // 60)} min ago"
    if secs < 86400:
        return f"{int(secs // 3600)} h ago"
    if secs < 86400 * 30:
        days = int(secs // 86400)
        return f"{days} day{'s' if days != 1 else ''} ago"
    return time.strftime("%Y-%m-%d", time.localtime(mtime))


# ------------------------------------------------------------------------------------ filter

_COMPARE = re.compile(r"(holes|records|tokens|findings)(>=|<=|!=|==|=|>|<)(\d[\d_,]*)([km]?)", re.IGNORECASE)
_NUMERIC = {
    "holes": lambda r: r.holes,
    "records": lambda r: r.records,
    "tokens": lambda r: r.context_tokens,
    "findings": lambda r: sum(n for _s, _c, n in r.findings),
}
_OPS: dict[str, Callable[[int, int], bool]] = {
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    "=": lambda a, b: a == b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}

Predicate = Callable[[SessionRow], bool]


SCAN_FILTER_KEYS = ("since", "until", "project", "format", "fmt")


def scan_filter_term(key: str, value: str) -> SessionFilter:
    """`since:7d`, `until:2026-01-31`, `project:text`, `format:pi`: the filters of `inspector scan`.
    Raises ValueError on a time it cannot read."""
    if key in ("since", "until"):
        try:
            secs = when(value)
        except ValueError as e:
            raise ValueError(f"{key}:{value}: {e}") from None
        return SessionFilter(since=secs) if key == "since" else SessionFilter(until=secs)
    if key == "project":
        return SessionFilter(project=value)
    return SessionFilter(format=value)


def _scan_of(r: SessionRow) -> ScanRow:
    if r.scan is not None:
        return r.scan
    return ScanRow(path=r.path, format=r.format.split(" ")[0] or None, error=r.error)


def scan_filters(text: str) -> list[str]:
    """The `scan` filters a filter text holds, in words for the header (`since 7d`)."""
    out = []
    for tok in text.split():
        key, sep, val = tok.partition(":")
        if sep and val and key.lower() in SCAN_FILTER_KEYS:
            out.append(f"{'format' if key.lower() == 'fmt' else key.lower()} {val}")
    return out


def _term(tok: str) -> Predicate:
    low = tok.lower()
    key, sep, val = tok.partition(":")
    if sep and val and key.lower() in SCAN_FILTER_KEYS:
        keep = scan_filter_term(key.lower(), val).keeps
        return lambda r: keep(_scan_of(r))
    m = _COMPARE.fullmatch(low)
    if m:
        field, op, num, unit = m.groups()
        value = int(num.replace(",", "").replace("_", "")) * {"": 1, "k": 1000, "m": 1_000_000}[unit]
        get, cmp = _NUMERIC[field], _OPS[op]
        return lambda r: r.error is None and cmp(get(r), value)
    if ":" in low:
        key, _, val = low.partition(":")
        if key == "code":
            return lambda r: any(val in c for _s, c, _n in r.findings)
        if key in ("sev", "severity"):
            return _term(val)
        if key in ("file", "name", "path"):
            return lambda r: val in r.rel.lower()
    if low in ("error", "errors"):
        return lambda r: r.error is not None or "error" in r.severities()
    if low in ("warning", "warnings", "info"):
        sev = low.rstrip("s")
        return lambda r: sev in r.severities()
    if low in ("unreadable", "failed", "broken"):
        return lambda r: r.error is not None
    if low in ("healthy", "ok", "clean"):
        return lambda r: r.error is None and not r.findings
    if low == "holes":
        return lambda r: r.holes > 0
    return lambda r: low in r.rel.lower()


def parse_filter(text: str) -> Predicate | None:
    """Every word must match. `holes>0`, `tokens>=50k`, `records<100`, `findings>2`; `error`
    (an error finding or an unreadable file), `warning`, `info`, `unreadable`, `healthy`, `holes`;
    `code:hole`, `file:text`; `since:7d`, `until:2026-01-31`, `project:text`, `format:pi` (the
    filters of `inspector scan`, by the same code); `!word` negates; anything else is a substring
    of the file name. None: no filter. Raises ValueError on a time it cannot read."""
    terms: list[Predicate] = []
    for tok in text.split():
        if tok.startswith("!") and len(tok) > 1:
            inner = _term(tok[1:])
            terms.append(lambda r, p=inner: not p(r))
        else:
            terms.append(_term(tok))
    if not terms:
        return None
    return lambda r: all(t(r) for t in terms)


# ------------------------------------------------------------------------------------ sorting


def _worst_rank(r: SessionRow) -> int:
    """Most urgent first: error findings, warnings, unreadable files, info, healthy."""
    if r.error is not None:
        return 2
    if not r.findings:
        return 4
    return {"error": 0, "warning": 1}.get(r.findings[0][0], 3)


def _cost_rank(r: SessionRow) -> float:
    """Known costs by amount; an unknown one above every known (it may be any amount), no usage last."""
    if r.cost is None:
        return -1.0
    return float("inf") if r.cost.cost is None else r.cost.cost_known


def sort_key(column: str, descending: bool) -> tuple[Callable[[SessionRow], object], bool]:
    """(key function, reverse flag). Numbers are negated for descending order so ties stay in
    file-name order; unreadable files sort after every session on the numeric columns."""
    sign = -1 if descending else 1
    if column == "file":
        return (lambda r: r.rel.lower()), descending
    if column == "format":
        return (lambda r: (r.error is not None, r.format, r.rel.lower())), descending
    if column == "activity":
        return (lambda r: (sign * r.last_activity, r.rel.lower())), False
    if column == "worst":

        def worst(r: SessionRow) -> object:
            # within a rank, more amnesia first, then more findings
            n = sum(c for _s, _c, c in r.findings)
            return (sign * -_worst_rank(r), sign * max(r.holes, 0), sign * n, r.rel.lower())

        return worst, False
    get = {
        "records": lambda r: r.records,
        "tokens": lambda r: r.context_tokens,
        "holes": lambda r: r.holes,
        "cost": _cost_rank,
    }[column]
    return (lambda r: (r.error is not None, sign * get(r), r.rel.lower())), False


# ------------------------------------------------------------------------------------ cells


def column_widths(table_width: int) -> dict[str, int]:
    """Every column's width for a table this wide: the fixed ones as declared; the file and
    worst-finding columns share the rest (the worst finding needs 34 cells, the file gets every
    cell beyond that); two cells of padding per column and two for the scrollbar."""
    widths = {key: w for key, _l, _d, w, _r in COLUMNS if w is not None}
    spare = table_width - sum(widths.values()) - 2 * len(COLUMNS) - 2
    widths["worst"] = max(WORST_MIN_WIDTH, min(34, spare // 2))
    widths["file"] = max(FILE_MIN_WIDTH, spare - widths["worst"])
    return widths


def _num(n: int) -> Text:
    return Text("–", style="dim", justify="right") if n < 0 else Text(f"{n:,}", justify="right")


class FileCell(Text):
    """The file cell carries its row, so the table can be sorted by any of the row's fields."""

    row: SessionRow


def short_error(error: str) -> str:
    """The gist of a load error for a table cell: no line number, no parenthesised detail."""
    gist = re.sub(r"^line \d+: ", "", error)
    return re.split(r" \(|; ", gist, maxsplit=1)[0]


def fit_path(rel: str, width: int) -> tuple[str, str]:
    """(folder, name) of a shown path squeezed into `width` cells: the `.jsonl` every file found
    has is dropped, a long folder loses its start, then the name its end (a session's name
    starts with what tells it apart: a timestamp, a descriptive word)."""
    folder, name = os.path.split(rel)
    name = name.removesuffix(".jsonl")
    folder = folder + os.sep if folder else ""
    if len(folder) + len(name) <= width:
        return folder, name
    budget = max(8, width * 2 // 5)
    if len(folder) > budget:  # the end of a folder is its most specific part (the project)
        folder = "…" + folder[len(folder) - (budget - 1) :]
    room = max(4, width - len(folder))
    if len(name) > room:
        name = name[: room - 1] + "…"
    return folder, name


def cells(row: SessionRow, now: float, file_width: int = 60) -> tuple[Text, ...]:
    folder, name = fit_path(row.rel, file_width)
    file = FileCell(overflow="ellipsis", no_wrap=True)
    file.append(folder, style="dim")
    file.append(name, style="bold" if row.findings or row.error else "")
    file.row = row
    if row.error is not None:
        worst = Text.assemble(
            ("unreadable ", f"bold {UNREADABLE_COLOR}"), (short_error(row.error), UNREADABLE_COLOR)
        )
        holes = _num(-1)
    else:
        w = row.worst
        if w is None:
            worst = Text("✓ healthy", style=HEALTHY_COLOR)
        else:
            sev, code = w
            color = SEVERITY_COLORS.get(sev, "")
            more = sum(n for _s, _c, n in row.findings) - 1
            worst = Text.assemble(
                (f"{sev:<8}", f"bold {color}"), (code, color), (f" +{more}" if more else "", "dim")
            )
        holes = (
            Text(f"{row.holes:,}", style="bold #f85149", justify="right")
            if row.holes
            else Text("0", style="dim", justify="right")
        )
    worst.overflow = "ellipsis"
    worst.no_wrap = True
    return (
        file,
        Text(row.format or "?", style="" if row.format else "dim"),
        _num(row.records),
        Text(ago(row.last_activity or row.mtime, now)),
        _num(row.context_tokens),
        cost_cell(row),
        worst,
        holes,
    )


def cost_cell(row: SessionRow) -> Text:
    """The session's cost from the price table: `unknown` for a model it does not price (never
    $0.00), `–` when the runtime recorded no usage."""
    if row.cost is None:
        return Text("–", style="dim", justify="right")
    words = cost_text(row.cost, row.currency).replace(" + ", "+")
    return Text(words, style="yellow" if row.cost.cost is None else "", justify="right")


# ------------------------------------------------------------------------------------ screen


class SessionTable(DataTable[Text]):
    """A DataTable whose columns all have fixed widths and whose rows are one line high, so the
    measuring DataTable does for every new row (a Rich measure of each cell, for auto widths and
    heights) is pointless: only the scrollable size needs recomputing. Refilling 2,000 rows
    (a filter, a resize) costs 4 ms here instead of 400 ms."""

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        super()._update_dimensions(())


class TriageScreen(Screen[None]):
    DEFAULT_CSS = """
    TriageScreen #title { height: auto; padding: 0 1; background: $panel; }
    TriageScreen #sessions { height: 1fr; }
    TriageScreen #empty { height: 1fr; padding: 1 4; display: none; }
    TriageScreen.empty #empty { display: block; }
    TriageScreen.empty #sessions, TriageScreen.empty #filter, TriageScreen.empty #detail { display: none; }
    TriageScreen #detail { height: 4; padding: 0 1; border-top: solid $primary-background; }
    TriageScreen #detail, TriageScreen #status { text-wrap: nowrap; text-overflow: ellipsis; }
    TriageScreen #progress-row { height: 1; padding: 0 1; background: $panel; }
    TriageScreen #progress { width: auto; margin-right: 2; }
    TriageScreen #status { width: 1fr; }
    TriageScreen.done #progress { display: none; }
    TriageScreen #search, TriageScreen #hits { display: none; }
    TriageScreen.searching #search, TriageScreen.searching #hits { display: block; }
    TriageScreen.searching #sessions, TriageScreen.searching #filter { display: none; }
    TriageScreen #hits { height: 1fr; }
    """

    BINDINGS = [
        Binding("f", "filter", "Filter"),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("s", "sort_next", "Sort"),
        Binding("S", "sort_reverse", "Reverse"),
        Binding("r", "rescan", "Rescan"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        *(
            Binding(str(i + 1), f"sort_column({i})", f"Sort by {COLUMNS[i][1]}", show=False)
            for i in range(len(SORTABLE))
        ),
    ]

    class Found(Message):
        """The walk is over: how many files will be analysed, relative to which base."""

        def __init__(self, generation: int, base: str, total: int) -> None:
            super().__init__()
            self.generation = generation
            self.base = base
            self.total = total

    class Hits(Message):
        """What a search across the sessions found (or why it could not run)."""

        def __init__(self, query: str, hits: list[SearchHit], error: str | None = None) -> None:
            super().__init__()
            self.query = query
            self.hits = hits
            self.error = error

    class Broken(Message):
        """The index cannot be opened: nothing to scan into."""

        def __init__(self, generation: int, error: str) -> None:
            super().__init__()
            self.generation = generation
            self.error = error

    class Costs(Message):
        """Parents' costs with their sub-agents rolled up, once every row is in."""

        def __init__(self, generation: int, costs: dict[str, UsageGroup]) -> None:
            super().__init__()
            self.generation = generation
            self.costs = costs

    class Batch(Message):
        """Rows for some files; `done` files analysed so far; `final` on the last one."""

        def __init__(self, generation: int, rows: list[SessionRow], done: int, final: bool = False) -> None:
            super().__init__()
            self.generation = generation
            self.rows = rows
            self.done = done
            self.final = final

    def __init__(self, paths: list[str], *, searched: Sequence[str] | None = None) -> None:
        """`paths`: what to walk; `searched`: the default places' patterns when `paths` are the
        ones of them that exist (bare `inspector`), so the screen names every place it looked."""
        super().__init__()
        self.paths = list(paths)
        self.searched = list(searched) if searched is not None else None
        self.rows: dict[str, SessionRow] = {}  # path -> row, in discovery order
        self._cells: dict[str, tuple[Text, ...]] = {}  # path -> its table cells (refilling is cheap)
        self.base = ""
        self.total = 0
        self.done = 0
        self.finished = False
        self.seconds = 0.0  # how long the last complete scan took
        self.sort_column = "worst"
        self.sort_descending = True
        self.predicate: Predicate | None = None
        self.filter_text = ""  # what the predicate was made from (the header names its scan filters)
        self.hits: list[SearchHit] = []  # the last search's hits, in the hits table's order
        self._file_width = 0
        self._widths: dict[str, int] = {}
        self._generation = 0
        self._started = 0.0
        self._worker: Worker[None] | None = None
        self._filter_timer: Timer | None = None

    # -------------------------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="title")
        yield Input(placeholder=FILTER_HELP, id="filter")
        yield SessionTable(id="sessions", cursor_type="row", zebra_stripes=True)
        # Disabled while hidden: a hidden box that takes the focus would swallow every key.
        yield Input(placeholder=SEARCH_HELP, id="search", disabled=True)
        yield DataTable(id="hits", cursor_type="row", zebra_stripes=True)
        yield Static("", id="empty")
        yield Static("", id="detail")
        with Horizontal(id="progress-row"):
            yield ProgressBar(id="progress", show_eta=False)
            yield Static("looking for session files…", id="status")
        yield Footer()

    def on_mount(self) -> None:
        self._columns(self.app.size.width)
        self.query_one(DataTable).focus()
        self.rescan()

    def on_resize(self) -> None:
        if column_widths(self.size.width) != self._widths:
            self._rebuild(table_width=self.size.width)

    def _columns(self, table_width: int) -> None:
        """(Re)create the columns: every width fixed, so rows never make the table jump sideways."""
        table = self.query_one(DataTable)
        table.clear(columns=True)
        self._widths = column_widths(table_width)
        self._file_width = self._widths["file"]
        for key, label, _desc, _width, _right in COLUMNS:
            table.add_column(label, key=key, width=self._widths[key])
        self._label_columns()

    def _absent_places(self) -> list[str]:
        """The default places (patterns) that do not exist here."""
        return [p for p in self.searched or () if not any(os.path.isdir(d) for d in glob(os.path.expanduser(p)))]

    def _title(self) -> str:
        """Where the sessions come from, and the `scan` filters in force."""
        active = scan_filters(self.filter_text)
        return self._places_title() + (f"  ·  [b]{' · '.join(active)}[/b]" if active else "")

    def _places_title(self) -> str:
        if not self.paths:
            return "[b]Sessions[/b]  ·  nothing in the default places"
        if self.searched is not None:
            absent = self._absent_places()
            found = ", ".join(_home(p) for p in self.paths)
            none = f"  ·  not present: {', '.join(absent)}" if absent else ""
            return f"[b]Sessions[/b] in the default places: {found}{none}"
        where = self.base or ", ".join(self.paths)
        places = f"  ·  {len(self.paths)} places" if len(self.paths) > 1 else ""
        return f"[b]Sessions[/b] under {_home(where)}{places}"

    # -------------------------------------------------------------------------------- worker

    def rescan(self) -> None:
        self._generation += 1
        self.rows.clear()
        self._cells.clear()
        self.total = self.done = 0
        self.finished = False
        self.remove_class("done", "empty")
        self.query_one(DataTable).clear()
        self.query_one("#detail", Static).update("")
        self.query_one(ProgressBar).update(total=None, progress=0)
        self._started = time.perf_counter()
        if not self.paths:
            self._show_empty()
            return
        self._worker = self._scan(self._generation)

    @work(thread=True, exclusive=True, group="triage", exit_on_error=False)
    def _scan(self, generation: int) -> None:
        """The rows of `inspector scan` (`store.scan.Scanner`, through the same index), posted in
        batches with their cost."""
        worker = get_current_worker()
        base = _base([p if os.path.isdir(p) else os.path.dirname(p) for p in map(_full, self.paths)])
        try:
            index = SessionIndex()
        except IndexUnavailable as e:
            self.post_message(self.Broken(generation, str(e)))
            return
        prices = self._prices()
        with index:
            files_done = [0]  # the progress is in files (a store of many sessions is one)

            def progress(done: int, _total: int) -> None:
                files_done[0] = done

            scanner = Scanner(
                index,
                workers=WORKERS,
                progress=progress,
                found=lambda total: self.post_message(self.Found(generation, base, total)),
                cancelled=lambda: worker.is_cancelled,
            )
            batch: list[SessionRow] = []
            started = last = time.monotonic()
            parents: set[str] = set()
            children: set[str] = set()
            for scan in scanner.rows(self.paths):
                if worker.is_cancelled:
                    return
                batch.append(session_row(scan, relative(scan.path, base)))
                if scan.parent:
                    parents.add(scan.parent)
                    children.add(scan.path)
                now = time.monotonic()
                every = BATCH_FIRST_SECONDS if now - started < 1.0 else BATCH_SECONDS
                if now - last >= every or len(batch) >= BATCH_MAX:
                    self._price(index, prices, batch)
                    self.post_message(self.Batch(generation, batch, files_done[0]))
                    batch = []
                    last = now
            if worker.is_cancelled:
                return
            if scanner.stats.found == 0:
                self.post_message(self.Found(generation, base, 0))
            self._price(index, prices, batch)
            self.post_message(self.Batch(generation, batch, files_done[0], final=True))
            if parents and prices is not None:
                # A parent's row came before its sub-agents were read: its cost again, rolled up.
                rolled = self._costs(index, prices, parents | children)
                self.post_message(self.Costs(generation, {p: rolled[p] for p in parents if p in rolled}))

    def _prices(self) -> PriceTable | None:
        try:
            return load_prices()
        except PriceTableError as e:
            self.app.call_from_thread(self.notify, str(e), title="No cost column", severity="error", timeout=8)
            return None

    @staticmethod
    def _costs(index: SessionIndex, prices: PriceTable, paths: Iterable[str]) -> dict[str, UsageGroup]:
        """Usage and cost by session path, from the index (the arithmetic of `inspector usage`)."""
        real = {index_key(p): p for p in paths}
        got = session_costs(index.usage_items(list(real)), prices)
        return {real.get(index_key(k), k): g for k, g in got.items()}

    def _price(self, index: SessionIndex, prices: PriceTable | None, rows: list[SessionRow]) -> None:
        if prices is None or not rows:
            return
        costs = self._costs(index, prices, [r.path for r in rows if r.error is None])
        for r in rows:
            r.cost, r.currency = costs.get(r.path), prices.currency

    def on_unmount(self) -> None:
        # Dismissed: stop the walk (the thread checks between files) and drop late batches.
        self._generation += 1
        if self._worker is not None:
            self._worker.cancel()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Rows never raise (each file's failure is its row's error); this is a bug in the walk.
        if event.worker is self._worker and event.state == WorkerState.ERROR:
            self.finished = True
            self.add_class("done")
            error = f"scan stopped: {type(event.worker.error).__name__}: {event.worker.error}"
            self.query_one("#status", Static).update(Text(error, style="bold #f85149"))
            self.notify(error, severity="error", timeout=10)

    def on_triage_screen_found(self, msg: Found) -> None:
        if msg.generation != self._generation:
            return
        self.base = msg.base
        self.total = msg.total
        self.query_one("#title", Static).update(self._title())
        if msg.total == 0:
            self._show_empty()
            return
        self.query_one(ProgressBar).update(total=msg.total, progress=0)
        self._status()

    def on_triage_screen_broken(self, msg: Broken) -> None:
        if msg.generation != self._generation:
            return
        self.finished = True
        self.add_class("done")
        self.query_one("#status", Static).update(Text(msg.error, style="bold #f85149"))
        self.notify(msg.error, title="No index", severity="error", timeout=10)

    def on_triage_screen_costs(self, msg: Costs) -> None:
        if msg.generation != self._generation:
            return
        now = time.time()
        for path, group in msg.costs.items():
            row = self.rows.get(path)
            if row is not None:
                row.cost = group
                self._cells[path] = cells(row, now, self._file_width)
        self._rebuild()

    def on_triage_screen_batch(self, msg: Batch) -> None:
        if msg.generation != self._generation:
            return
        self.done = msg.done
        table = self.query_one(DataTable)
        now = time.time()
        pred = self.predicate
        for row in msg.rows:
            self.rows[row.path] = row
            self._cells[row.path] = c = cells(row, now, self._file_width)
            if pred is None or pred(row):
                table.add_row(*c, key=row.path)
        if msg.rows:
            # Follow the highlighted session only once the user has moved off the top row.
            self._resort(follow=table.cursor_row > 0)
        self.query_one(ProgressBar).update(progress=msg.done)
        if msg.final:
            self.finished = True
            self.seconds = time.perf_counter() - self._started
            self.add_class("done")
        self._status()

    # -------------------------------------------------------------------------------- view

    def _show_empty(self) -> None:
        self.finished = True
        self.add_class("empty", "done")
        if not self.paths:
            where = "None of the default places where agents keep their sessions exists here"
            places = list(registry.places())
        else:
            where = "Looked for [b]*.jsonl[/b] files and ADK session stores, recursively, in"
            places = [_home(os.path.abspath(os.path.expanduser(p))) for p in self.paths]
            places += [f"{p} (not present)" for p in self._absent_places()]
        lines = [
            "[b]No session files found.[/b]",
            "",
            f"{where}:",
            "",
            *(f"  • {p}" for p in places),
            "",
            "Pass a directory of sessions, or session files:",
            "",
            "  [b]inspector ~/path/to/sessions[/b]",
            "  [b]inspector SESSION.jsonl[/b]",
        ]
        self.query_one("#empty", Static).update("\n".join(lines))
        self.query_one("#status", Static).update("no session files")

    def _status(self) -> None:
        rows = self.rows.values()
        holed = sum(1 for r in rows if r.holes > 0)
        errors = sum(1 for r in rows if "error" in r.severities())
        bad = sum(1 for r in rows if r.error is not None)
        parts = []
        if self.finished:
            took = f" in {self.seconds:.1f} s" if getattr(self.app, "show_timings", True) else ""
            parts.append(f"{len(rows):,} files analysed{took}")
        else:
            elapsed = time.perf_counter() - self._started
            rate = f" · {self.done / elapsed:,.0f} files/s" if elapsed > 0.5 and self.done else ""
            parts.append(f"analysing {self.done:,} of {self.total:,}{rate}")
        parts.append(f"[#f85149]{holed:,} with holes[/]" if holed else "no holes")
        parts.append(f"{errors:,} with errors")
        if bad:
            parts.append(f"[{UNREADABLE_COLOR}]{bad:,} unreadable[/]")
        if self.predicate is not None:
            parts.append(f"[b]filter shows {self.query_one(DataTable).row_count:,} of {len(rows):,}[/b]")
        self.query_one("#status", Static).update(" · ".join(parts))

    def _label_columns(self) -> None:
        table = self.query_one(DataTable)
        for key, label, _d, _w, right in COLUMNS:
            col = table.columns[ColumnKey(key)]
            sorted_here = key == self.sort_column
            arrow = ("▼" if self.sort_descending else "▲") if sorted_here else ""
            style = "bold underline" if sorted_here else "bold"
            if right:  # the header ignores justify: pad it, arrow first, so it lines up with the numbers
                text = Text.assemble((arrow + " " if arrow else "", "bold"), (label, style))
                text.pad_left(max(0, col.width - text.cell_len))
            else:
                text = Text.assemble((label, style), (" " + arrow if arrow else "", "bold"))
            col.label = text
        table.refresh()

    def _current_path(self) -> str | None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value

    def _resort(self, follow: bool = True) -> None:
        """Sort the table's rows; keep the cursor on the same session when `follow`."""
        table = self.query_one(DataTable)
        current = self._current_path() if follow else None
        keyfn, reverse = sort_key(self.sort_column, self.sort_descending)
        table.sort("file", key=lambda cell: keyfn(cell.row), reverse=reverse)
        if current is not None:
            table.move_cursor(row=table.get_row_index(RowKey(current)))
        self._show_detail()

    def _rebuild(self, table_width: int | None = None) -> None:
        """Refill the table from the kept rows (filter changed, or the terminal was resized)."""
        table = self.query_one(DataTable)
        current = self._current_path()
        if table_width is not None:
            self._columns(table_width)
            now = time.time()
            self._cells = {path: cells(row, now, self._file_width) for path, row in self.rows.items()}
        else:
            table.clear()
        pred = self.predicate
        add, all_cells = table.add_row, self._cells
        for row in self.rows.values():
            if pred is None or pred(row):
                add(*all_cells[row.path], key=row.path)
        self._resort(follow=False)
        if current is not None and current in table.rows:
            table.move_cursor(row=table.get_row_index(RowKey(current)))
        self._show_detail()
        self._status()

    def _show_detail(self) -> None:
        detail = self.query_one("#detail", Static)
        path = self._current_path()
        row = self.rows.get(path) if path is not None else None
        if row is None:
            detail.update(Text("no session matches the filter", style="dim") if self.rows else "")
            return
        head = Text(_home(row.path), style="bold")
        if row.last_activity and row.last_activity != row.mtime:
            last = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.last_activity))
            head.append(f"  ·  last activity {last} ({ago(row.last_activity)})", style="dim")
        if row.mtime:
            modified = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.mtime))
            head.append(f"  ·  file modified {modified} ({ago(row.mtime)})", style="dim")
        if row.error is not None:
            body = Text.assemble(("cannot open: ", f"bold {UNREADABLE_COLOR}"), (row.error, UNREADABLE_COLOR))
            detail.update(Text("\n").join([head, body]))  # the error may wrap: it is the point
            return
        facts = Text(
            f"{row.format}  ·  {row.records:,} records  ·  next request ≈ {row.context_tokens:,} tokens"
        )
        if not row.findings:
            facts.append("  ·  ", style="dim")
            facts.append("✓ no findings", style=HEALTHY_COLOR)
            detail.update(_lines(head, facts))
            return
        if row.holes:
            facts.append("  ·  ", style="dim")
            facts.append(f"{row.holes:,} messages in holes", style="bold #f85149")
        for i, (sev, code, n) in enumerate(row.findings):
            facts.append("  " if i else "  ·  ", style="dim")
            facts.append(code + (f" ×{n}" if n > 1 else ""), style=SEVERITY_COLORS.get(sev, ""))
        detail.update(_lines(head, facts, Text(row.worst_message)))

    # -------------------------------------------------------------------------------- events

    def on_data_table_row_highlighted(self, msg: DataTable.RowHighlighted) -> None:
        if msg.data_table.id == "sessions":
            self._show_detail()

    def on_data_table_row_selected(self, msg: DataTable.RowSelected) -> None:
        msg.stop()
        if msg.data_table.id == "hits":
            self._open_hit(msg.cursor_row)
            return
        self._open(msg.row_key.value)

    def on_data_table_header_selected(self, msg: DataTable.HeaderSelected) -> None:
        msg.stop()
        self._sort_by(str(msg.column_key.value))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "filter":
            return
        # Refilling thousands of rows on every keystroke would make typing lag: wait for a pause.
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(FILTER_DEBOUNCE, lambda: self.apply_filter(event.value))

    def apply_filter(self, text: str) -> None:
        self._filter_timer = None
        try:
            predicate = parse_filter(text)
        except ValueError as e:
            self.query_one("#status", Static).update(Text(f"filter: {e}", style="bold #f85149"))
            return
        self.filter_text = text
        self.query_one("#title", Static).update(self._title())
        if predicate is None and self.predicate is None:
            return
        self.predicate = predicate
        self._rebuild()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "search":
            self._search(event.value)
            return
        if event.input.id == "filter":
            if self._filter_timer is not None:  # Enter applies it at once
                self._filter_timer.stop()
                self.apply_filter(event.value)
            self.query_one(DataTable).focus()

    def _open(self, path: str | None) -> None:
        row = self.rows.get(path) if path is not None else None
        if row is None:
            return
        if row.error is not None:
            self.notify(f"{row.rel}: {row.error}", title="Cannot open", severity="error", timeout=6)
            return
        self.app.open_session(row.path)  # type: ignore[attr-defined]

    # -------------------------------------------------------------------------------- actions

    def action_open(self) -> None:
        self._open(self._current_path())

    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        self.add_class("searching")
        box.disabled = False
        box.focus()

    def _leave_search(self) -> None:
        self.remove_class("searching")
        self.query_one("#search", Input).disabled = True
        self.query_one("#sessions", DataTable).focus()
        self._show_detail()
        self._status()

    def _search(self, query: str) -> None:
        match = match_expression(query)
        if not match:
            return
        # The sessions the table shows (the filter applies), as the index knows them.
        table = self.query_one("#sessions", DataTable)
        scope = [self.rows[str(k.value)].path for k in table.rows if self.rows[str(k.value)].error is None]
        self.query_one("#status", Static).update(f"searching {len(scope):,} sessions for {query!r}…")
        self._search_in_thread(query, match, scope)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search_in_thread(self, query: str, match: str, scope: list[str]) -> None:
        """`inspector search`'s query (`SessionIndex.search`) over the index the scan filled."""
        try:
            with SessionIndex() as index:
                hits = index.search(match, [index_key(p) for p in scope], limit=SEARCH_LIMIT)
        except (IndexUnavailable, sqlite3.Error) as e:
            self.post_message(self.Hits(query, [], f"search failed: {e}"))
            return
        self.post_message(self.Hits(query, hits))

    def on_triage_screen_hits(self, msg: Hits) -> None:
        table = self.query_one("#hits", DataTable)
        table.clear(columns=True)
        for label, width in (("session", max(20, self._file_width)), ("line", 7), ("role", 10), ("match", None)):
            table.add_column(label, key=label, width=width)
        self.hits = msg.hits
        for i, h in enumerate(msg.hits):
            snippet = Text(h.snippet, no_wrap=True, overflow="ellipsis")
            for a, b in h.marks:
                snippet.stylize("bold yellow", a, b)
            folder, name = fit_path(relative(h.path, self.base), max(20, self._file_width))
            session = Text.assemble((folder, "dim"), name)
            role = f"{h.role} {h.kind}" if h.kind != "text" else h.role
            table.add_row(session, Text(f"{h.line:,}", justify="right"), role, snippet, key=str(i))
        if msg.error is not None:
            self.query_one("#status", Static).update(Text(msg.error, style="bold #f85149"))
        else:
            many = f"the first {len(msg.hits):,}" if len(msg.hits) >= SEARCH_LIMIT else f"{len(msg.hits):,}"
            self.query_one("#status", Static).update(
                f"{many} hits for {msg.query!r} · Enter opens the session at the hit · Escape: back to the sessions"
            )
        if msg.hits:
            table.focus()

    def _open_hit(self, index: int) -> None:
        if not 0 <= index < len(self.hits):
            return
        hit = self.hits[index]
        screen = self.app.session_screen(hit.path)  # type: ignore[attr-defined]
        screen.focus_line = hit.line
        self.app.push_screen(screen)

    def action_clear_filter(self) -> None:
        if self.has_class("searching"):
            box = self.query_one("#search", Input)
            if box.has_focus and self.hits:
                self.query_one("#hits", DataTable).focus()
            else:
                self._leave_search()
            return
        box = self.query_one("#filter", Input)
        if box.has_focus:
            self.query_one(DataTable).focus()
        elif box.value:
            box.value = ""

    def _sort_by(self, column: str, toggle: bool = True) -> None:
        if column not in SORTABLE:
            return
        if column == self.sort_column and toggle:
            self.sort_descending = not self.sort_descending
        else:
            self.sort_column = column
            self.sort_descending = next(c[2] for c in COLUMNS if c[0] == column)
        self._label_columns()
        # Keep the highlighted session in view, unless the cursor is still on the top row.
        self._resort(follow=self.query_one(DataTable).cursor_row > 0)

    def action_sort_column(self, index: int) -> None:
        if 0 <= index < len(SORTABLE):
            self._sort_by(SORTABLE[index])

    def action_sort_next(self) -> None:
        i = SORTABLE.index(self.sort_column)
        self._sort_by(SORTABLE[(i + 1) % len(SORTABLE)], toggle=False)

    def action_sort_reverse(self) -> None:
        self._sort_by(self.sort_column)

    def action_rescan(self) -> None:
        self.rescan()


def _lines(*lines: Text) -> Text:
    """One line each, cut with an ellipsis where the pane is too narrow."""
    text = Text("\n").join(lines)
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path
