"""What the app shows, computed from the core's Ledger and Report: rows of the timeline, colours of
coverage states. No Textual here either: the widgets only render it."""

from __future__ import annotations

import re
from bisect import bisect_right

import orjson

from inspector.analysis.engine import ContextItem, Finding, Report
from inspector.analysis.export import summary_line
from inspector.analysis.findings import SEVERITY_RANK
from inspector.ledger.jsontext import deep, dumps_text
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
# A row or a cell shows one terminal width at most: a value from the file (a 14 MB record type,
# id or preview) is cut to this before it is styled and laid out.
ROW_CHARS = 1_000

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
    if s == "retained" and report is not None and report.summarized_by[rec.seq]:
        return f"retained, and summarized by checkpoint {report.summarized_by[rec.seq]}"
    return s


# ------------------------------------------------------------------------------------ the header


def finding_phrase(message: str, limit: int = 80) -> str:
    """A finding's sentence cut to its first clause (before `; ` or `: ` outside brackets and
    quotes), and to `limit` characters at a word: what fits beside the verdict in the header."""
    message = re.sub(r"^lines? [\d,–-]+: ", "", message)  # the header names no line: the list does
    depth = 0
    quoted = False
    cut = len(message)
    for i, ch in enumerate(message):
        if ch == "'" and quoted:
            quoted = False
        elif ch == "'" and (i == 0 or message[i - 1] in " (["):  # an apostrophe opens nothing
            quoted = True
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch in ";:" and not depth and not quoted and message[i + 1 : i + 2] == " ":
            cut = i
            break
    phrase = message[:cut].rstrip(" .")
    if len(phrase) > limit:
        phrase = phrase[: limit - 1].rsplit(" ", 1)[0] + "…"
    return phrase


def worst_finding(report: Report) -> Finding | None:
    """The finding the header names: the first of the worst severity (the report is sorted worst
    first). None when holes are the worst: the header's verdict already names them."""
    if not report.findings:
        return None
    rank = min(SEVERITY_RANK[f.severity] for f in report.findings)
    worst = [f for f in report.findings if SEVERITY_RANK[f.severity] == rank]
    if any(f.code == "hole" for f in worst):
        return None
    return worst[0]


def header_line(report: Report) -> str:
    """The session header: the one-sentence summary, and the worst finding named (code and its
    first clause) when the summary does not already name it."""
    line = summary_line(report)
    f = worst_finding(report)
    if f is None:
        return line
    return f"{line} · worst: {f.code}: {finding_phrase(f.message)}"


# ------------------------------------------------------------------------------------ full text


def record_full_text(ledger: Ledger, rec: Record) -> str:
    """Everything a record holds, uncut: each content block of a message (tool-call arguments as
    JSON), a checkpoint's summary, then the record as written."""
    parts: list[str] = [f"line {rec.line} · {rec.kind} · {rec.type}" + (f" · {rec.role}" if rec.role else "")]
    m = rec.message if rec.kind == "message" else None
    if m is not None:
        for b in m.blocks:
            if b.type == "tool_call":
                parts.append(f"── tool call {b.name or '?'} {b.call_id or ''}".rstrip())
                parts.append(json_text(b.args))
            elif b.type in ("text", "thinking", "tool_result"):
                label = "tool result" + (" (error)" if b.is_error else "") if b.type == "tool_result" else b.type
                parts.append(f"── {label} {b.call_id or ''}".rstrip())
                parts.append(b.text)
            else:
                parts.append(f"── {b.type}")
                parts.append(json_text(b.raw) if b.raw is not None else b.text)
    if rec.checkpoint is not None:
        parts.append("── summary")
        parts.append(rec.checkpoint.summary)
    raw = rec.raw()
    if raw is not None:
        parts.append("── as written")
        parts.append(json_text(raw))
    elif rec.extra:
        parts.append("── fields")
        parts.append(json_text(rec.extra))
    return "\n".join(parts)


def item_full_text(report: Report, it: ContextItem) -> str:
    """One item of the next request, uncut: its own text, or its record's content blocks."""
    if it.kind == "summary" or it.seq is None or it.text:  # (its own text: what is sent)
        return it.text
    rec = report.ledger.records[it.seq]
    src = rec._source
    m = it.sent if it.sent is not None else src.sent_message(rec) if it.trimmed and src is not None else rec.message  # (trimmed: what is sent)
    if m is None:
        return it.text
    parts: list[str] = []
    for b in m.blocks:
        if b.type == "tool_call":
            parts.append(f"tool call {b.name or '?'}({json_text(b.args)})")
        elif b.text:
            parts.append(b.text)
    return "\n\n".join(parts) or it.text


def json_text(value: object) -> str:
    try:
        return dumps_text(value, orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return deep(repr, value)


# ------------------------------------------------------------------------------------ navigation


def hole_ranges(ledger: Ledger, rows: list[int], states: list[str | None]) -> list[tuple[int, int]]:
    """Runs of hole messages on the timeline's rows, as (first seq, last seq): only a message in
    another state ends a run (a checkpoint or meta row inside it does not). `n`/`N` jump from one
    run to the next, so a 168-message hole is one stop."""
    out: list[tuple[int, int]] = []
    start: int | None = None
    last = 0
    for s in rows:
        if states[s] == "hole":
            if start is None:
                start = s
            last = s
        elif start is not None and ledger.records[s].kind == "message":
            out.append((start, last))
            start = None
    if start is not None:
        out.append((start, last))
    return out


def line_seq(ledger: Ledger, line: int) -> int | None:
    """The record that line `line` of the file belongs to: the last record starting at or before
    it (records are in file order)."""
    records = ledger.records
    i = bisect_right(records, line, key=lambda r: r.line) - 1
    return records[i].seq if i >= 0 else (records[0].seq if records else None)


# ------------------------------------------------------------------------------------ findings

GROUP_AT = 3  # this many findings of one code and severity are listed as one row with a count


def finding_groups(findings: list[Finding]) -> list[tuple[str, list[int]]]:
    """The findings (sorted worst first) in display order, as (code, indexes): a code with
    `GROUP_AT` or more findings of one severity is one group, at the place of its first."""
    by_key: dict[tuple[str, str], list[int]] = {}
    for i, f in enumerate(findings):
        by_key.setdefault((f.severity, f.code), []).append(i)
    out: list[tuple[str, list[int]]] = []
    seen: set[tuple[str, str]] = set()
    for i, f in enumerate(findings):
        key = (f.severity, f.code)
        members = by_key[key]
        if len(members) >= GROUP_AT:
            if key not in seen:
                seen.add(key)
                out.append((f.code, members))
        else:
            out.append((f.code, [i]))
    return out
