"""`inspector scan [PATH...]`: one row per session, from the shared index (issue 18 point 1).

Also the pieces `search` and `usage` share: the paths argument (default places, `-` for stdin),
the index, the progress bar and the row filters.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from inspector.analysis.findings import SEVERITY_RANK
from inspector.cli import args as argtypes
from inspector.cli.output import table_console

if TYPE_CHECKING:
    from inspector.analysis.sessions import ScanRow
    from inspector.store.index import SessionIndex
    from inspector.store.scan import Scanner

# The index, the scanner and the places are imported by the functions that use them: every CLI
# command builds this module's parser, and they (pydantic's row models among them) were half the
# start of `inspector analyze`.

EPILOG = """\
examples:
  inspector scan                                  every session in the default places
  inspector scan ~/.claude/projects --since 7d    sessions active in the last seven days
  inspector scan DIR --json > sessions.jsonl      one JSON object per line (docs/scan-json.md)
  inspector scan DIR --csv > sessions.csv
  inspector scan DIR --fail-on error              exit 1 when a session has an error finding (CI)
  find /archive -name '*.jsonl' | inspector scan - --json     paths from stdin (shard a big archive)

Rows come from the index in the cache dir ($INSPECTOR_CACHE_DIR, $XDG_CACHE_HOME/inspector or
~/.cache/inspector): a session whose file did not change is not read again; a changed or grown one is
read again in full. An unreadable file is a row with the reason (and counts as an error for --fail-on).
"""


def add_paths_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="session files or folders (default: every default place); - reads paths from stdin, one a line",
    )


def add_common(p: argparse.ArgumentParser) -> None:
    """Filters and progress, shared by scan, search and usage."""
    p.add_argument("--since", metavar="WHEN", help="sessions active at or after WHEN (2026-01-31, an ISO time, or 7d / 12h ago)")
    p.add_argument("--until", metavar="WHEN", help="sessions active at or before WHEN")
    p.add_argument("--project", metavar="TEXT", help="sessions whose project (working directory) contains TEXT")
    p.add_argument("--format", metavar="NAME", dest="format_name", help="sessions of this format (pi, claude_code, codex, ...)")
    p.add_argument("--workers", type=argtypes.positive_count, metavar="N", help="worker processes reading sessions (default: one per core)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "scan",
        help="one row per session across many (format, project, activity, tokens, checkpoints, holes, worst finding)",
        description="Scan session files (default: every default place of every format) and print one row per "
        "session: format, project, first and last activity (the session's own record times), records, next "
        "request tokens against the window, checkpoints, holes and the worst finding. Sessions are read by worker "
        "processes and kept in a persistent index, so a re-scan reads only what changed.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_paths_argument(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="one JSON object per line (docs/scan-json.md)")
    out.add_argument("--csv", action="store_true", help="CSV with a header row")
    p.add_argument(
        "--fail-on",
        choices=("error", "warning", "info"),
        help="exit 1 when a session shown has a finding of this severity or worse (an unreadable file counts as error)",
    )
    add_common(p)


# ------------------------------------------------------------------------------------ arguments

def read_times(args: argparse.Namespace) -> str | None:
    """Turn --since / --until into epoch seconds in place; the usage problem, if any."""
    from inspector.store.scan import when

    for flag in ("since", "until"):
        value = getattr(args, flag)
        if isinstance(value, str):
            try:
                setattr(args, flag, when(value))
            except ValueError as e:
                return f"argument --{flag}: {e}"
    return None


def resolve_paths(paths: list[str]) -> tuple[list[str], str | None]:
    """(paths to scan, a usage problem). `-` is replaced by the paths read from stdin; no path at
    all means the default places."""
    from inspector.store.places import default_place_patterns, default_places

    out: list[str] = []
    for p in paths:
        if p == "-":
            out += [line.strip() for line in sys.stdin if line.strip()]
        else:
            out.append(p)
    if not paths:
        out = default_places()
        if not out:
            return [], "none of the default places exists here: " + ", ".join(default_place_patterns())
    return out, None


def open_index() -> SessionIndex | None:
    from inspector.store.index import IndexUnavailable, SessionIndex

    try:
        index = SessionIndex()
    except IndexUnavailable as e:
        print(f"inspector: {e}", file=sys.stderr)
        return None
    if index.rebuilt_because:
        print(f"inspector: {index.path}: rebuilt the index: found {index.rebuilt_because}", file=sys.stderr)
    return index


# ------------------------------------------------------------------------------------ filters


def row_filter(args: argparse.Namespace) -> Callable[[ScanRow], bool]:
    """The rows the filters keep (`store.scan.SessionFilter`, shared with the triage browser)."""
    from inspector.store.scan import SessionFilter

    return SessionFilter(args.since, args.until, args.project, args.format_name).keeps


# ------------------------------------------------------------------------------------ scanning


class ProgressBar:
    """A progress bar on stderr while a scan is long (more than a second), when stderr is a
    terminal. Refreshed by the scan itself, at most ten times a second, never from a thread (the
    scan forks its workers)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._progress: Any = None
        self._task: Any = None
        self._started = time.monotonic()
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self._progress is None:
            if now - self._started < 1.0 or done >= total:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                console=Console(stderr=True), auto_refresh=False, transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("scan", total=total)
        if now - self._last >= 0.1 or done >= total:
            self._progress.update(self._task, completed=done)
            self._progress.refresh()
            self._last = now

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def scanned_rows(index: SessionIndex, paths: list[str], args: argparse.Namespace, scanner_out: list[Scanner] | None = None) -> Iterator[ScanRow]:
    """Every session's row under `paths`, through the index, with a progress bar."""
    from inspector.store.scan import Scanner

    bar = ProgressBar(not args.no_progress)
    scanner = Scanner(index, workers=args.workers, progress=bar)
    if scanner_out is not None:
        scanner_out.append(scanner)
    try:
        yield from scanner.rows(paths)
    finally:
        bar.close()


# ------------------------------------------------------------------------------------ output

CSV_COLUMNS = (
    "path", "format", "format_version", "session_id", "project", "parent", "first_activity", "last_activity",
    "records", "messages", "context_tokens", "window", "window_share", "checkpoints", "holes",
    "worst_severity", "worst_code", "worst_message", "findings_error", "findings_warning", "findings_info",
    "usage_input", "usage_output", "usage_cache_read", "usage_cache_write", "models", "size", "error",
)


def csv_record(row: ScanRow) -> list[Any]:
    d = row.model_dump()
    f = d.pop("findings") or {}
    u = d.pop("usage") or {}
    for k in ("error", "warning", "info"):
        d[f"findings_{k}"] = f.get(k)
    for k in ("input", "output", "cache_read", "cache_write"):
        d[f"usage_{k}"] = u.get(k)
    d["models"] = " ".join(d["models"]) if d.get("models") else None
    return ["" if d.get(c) is None else d[c] for c in CSV_COLUMNS]


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    if home and home != "/" and path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


def _short_time(iso: str | None) -> str:
    return iso[:16].replace("T", " ") if iso else "–"


def print_table(rows: list[ScanRow], base: str) -> None:
    from rich.table import Table
    from rich.text import Text

    style = {"error": "bold red", "warning": "yellow", "info": "cyan"}
    console = table_console()
    # A narrower terminal drops columns: first the project and first activity, then more.
    wide, narrow = console.width >= 130, console.width < 100
    t = Table(expand=True, show_lines=False, pad_edge=False, box=None, header_style="bold")
    t.add_column("session", no_wrap=True)
    cols = [("format", "left"), ("project", "left"), ("first", "left"), ("last", "left"), ("records", "right"),
            ("tokens", "right"), ("ckpt", "right"), ("holes", "right")]
    if not wide:
        cols = [c for c in cols if c[0] not in ("project", "first")]
    if narrow:
        cols = [c for c in cols if c[0] not in ("tokens", "ckpt", "records")]
    for col, just in cols:
        t.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
    t.add_column("worst finding", no_wrap=True, overflow="ellipsis")
    room = max(20, console.width - (92 if wide else 34 if narrow else 62) - 22)
    for r in rows:
        name = os.path.relpath(r.path, base) if base else _home(r.path)
        name += " (sub-agent)" if r.parent else ""
        name = name if len(name) <= room else "…" + name[len(name) - room + 1 :]
        if r.error is not None:
            t.add_row(name, *([""] * len(cols)), Text("unreadable: " + r.error, style="magenta"))
            continue
        fmt = f"{r.format} v{r.format_version}" if r.format_version is not None else (r.format or "")
        tokens = f"{r.context_tokens or 0:,}"
        if r.window:
            tokens += f" ({100 * (r.window_share or 0):.0f}%)"
        worst = Text(r.worst_code or "✓ none", style=style.get(r.worst_severity or "", "green"))
        project = (os.path.basename((r.project or "").rstrip("/")) or "–")[:16]
        cells: dict[str, Any] = {
            "format": fmt, "project": project, "first": (r.first_activity or "–")[:10],
            "last": _short_time(r.last_activity), "records": f"{r.records or 0:,}", "tokens": tokens,
            "ckpt": str(r.checkpoints or 0), "holes": Text(f"{r.holes or 0:,}", style="bold red" if r.holes else ""),
        }
        t.add_row(name, *(cells[c] for c, _j in cols), worst)
    console.print(t)


def _base(paths: list[str]) -> str:
    dirs = [os.path.abspath(os.path.expanduser(p)) for p in paths]
    dirs = [d if os.path.isdir(d) else os.path.dirname(d) for d in dirs]
    try:
        return os.path.commonpath(dirs) if dirs else ""
    except ValueError:
        return ""


def failing(row: ScanRow, limit: int) -> bool:
    if row.error is not None:
        return True
    return row.worst_severity is not None and SEVERITY_RANK[row.worst_severity] <= limit


def run(args: argparse.Namespace) -> int:
    problem = read_times(args)
    if problem:
        print(f"inspector scan: {problem}", file=sys.stderr)
        return 2
    paths, problem = resolve_paths(args.paths)
    if problem:
        print(f"inspector: {problem}", file=sys.stderr)
        return 2
    index = open_index()
    if index is None:
        return 2
    keep = row_filter(args)
    limit = SEVERITY_RANK[args.fail_on] if args.fail_on else None
    failed = False
    shown: list[ScanRow] = []
    scanners: list[Scanner] = []
    with index:
        writer = csv.writer(sys.stdout) if args.csv else None
        if writer is not None:
            writer.writerow(CSV_COLUMNS)
        out = sys.stdout.buffer
        for row in scanned_rows(index, paths, args, scanners):
            if not keep(row):
                continue
            if limit is not None and failing(row, limit):
                failed = True
            if args.json:
                out.write(row.model_dump_json(by_alias=True).encode() + b"\n")
            elif writer is not None:
                writer.writerow(csv_record(row))
            else:
                shown.append(row)
        out.flush()
    stats = scanners[0].stats
    if not args.json and not args.csv:
        print_table(shown, _base(paths))
        print(
            f"{len(shown):,} of {stats.found:,} sessions shown · {stats.read:,} read, {stats.from_index:,} from the index"
            + (f" · {stats.unreadable:,} unreadable" if stats.unreadable else ""),
            file=sys.stderr,
        )
    if stats.missing:
        for m in stats.missing:
            print(f"inspector: {m}: no such file or directory", file=sys.stderr)
        return 2
    return 1 if failed else 0
