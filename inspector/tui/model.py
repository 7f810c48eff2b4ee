"""What the app shows, computed from the core's Ledger and Report: rows of the timeline, colours of
coverage states. No Textual here either: the widgets only render it."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(slots=True)
class Row:
    """One line of the timeline: a record (message or other) or a checkpoint separator."""

    seq: int
    separator: bool = False  # a checkpoint row, drawn as a separator


def build_rows(ledger: Ledger, report: Report | None, show_inactive: bool = True) -> list[Row]:
    """Every record in file order (the header excepted); inactive branches optional."""
    rows: list[Row] = []
    states = report.states if report is not None else None
    on_path = report.on_path if report is not None else None
    for r in ledger.records:
        if r.kind == "header":
            continue
        if not show_inactive and on_path is not None and not on_path[r.seq] and (states is None or states[r.seq] != "hole"):
            continue
        rows.append(Row(r.seq, separator=r.kind == "checkpoint"))
    return rows


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
