"""What the app shows, computed from the core's Ledger and Report: rows of the timeline, colours of
coverage states. No Textual here either: the widgets only render it."""

from __future__ import annotations

from inspector.analysis.engine import Report
from inspector.ledger.model import Ledger, Record

# One colour per coverage state, used by the timeline band, the minimap and the legend.
STATE_COLORS: dict[str, str] = {
    "live": "#3fb950",
    "retained": "#56d364",
    "summarized": "#58a6ff",
    "excluded": "#6e7681",
    "hole": "#f85149",
    "inactive": "#30363d",
    "pending": "#484f58",  # analysis still running
    "checkpoint": "#d29922",
}
SEVERITY_COLORS = {"error": "#f85149", "warning": "#d29922", "info": "#58a6ff"}


def build_rows(ledger: Ledger, report: Report | None, show_inactive: bool = True) -> list[int]:
    """The seqs the timeline shows, in file order (the header excepted); inactive branches
    optional. Plain ints: a 100k-record session builds this in milliseconds."""
    records = ledger.records
    start = 1 if records and records[0].kind == "header" else 0
    if show_inactive or report is None:
        return list(range(start, len(records)))
    on_path = report.on_path
    states = report.states
    return [s for s in range(start, len(records)) if on_path[s] or states[s] == "hole"]


def state_of(report: Report | None, rec: Record) -> str:
    if report is None:
        return "pending"
    if rec.kind == "checkpoint":
        return "checkpoint" if report.on_path[rec.seq] else "inactive"
    s = report.states[rec.seq]
    if s is None:
        return "inactive" if not report.on_path[rec.seq] else "excluded"
    return s


def state_label(report: Report | None, rec: Record) -> str:
    """`summarized by checkpoint k` spelled out; other states as they are."""
    s = state_of(report, rec)
    if s == "summarized" and report is not None and report.summarized_by[rec.seq]:
        return f"summarized by checkpoint {report.summarized_by[rec.seq]}"
    return s
