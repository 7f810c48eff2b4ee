"""A report to share (issue 18 point 5): one session's analysis as a self-contained HTML or
Markdown document a user attaches to a bug report for the runtime's maintainers.

Pure: a Report in, text out. The HTML has its style inline and the coverage band as an inline SVG:
nothing is fetched to view it. `redact` leaves out every piece of message and summary text (and
the session's file path) but keeps the structure: counts, roles, lines, tokens, finding codes and
the tool's own sentences (which quote no message text).
"""

from __future__ import annotations

import base64
import html
import os
from dataclasses import dataclass

from inspector.analysis.engine import STATES, Report
from inspector.analysis.export import (
    PathCounts,
    checkpoint_json,
    checkpoint_status,
    item_preview,
    summary_line,
)
from inspector.analysis.findings import SEVERITY_RANK, fmt_roles

# The coverage colours of the app (tui/model.py STATE_COLORS), so a report looks like the app.
STATE_COLORS: dict[str, str] = {
    "live": "#3fb950",
    "retained": "#56d364",
    "summarized": "#58a6ff",
    "excluded": "#6e7681",
    "hole": "#f85149",
    "inactive": "#30363d",
}
CHECKPOINT_COLOR = "#d29922"
# When many messages share one column of the band, the most alarming state shows.
_STATE_WEIGHT = {"hole": 5, "live": 1, "retained": 2, "summarized": 3, "excluded": 0, "inactive": -1}
BAND_COLUMNS = 600
BAND_WIDTH, BAND_HEIGHT = 900, 36
REDACTED = "[redacted]"


@dataclass(slots=True)
class BandColumn:
    state: str
    first_line: int
    last_line: int
    checkpoint: bool = False  # a checkpoint sits in this column


def coverage_band(report: Report, columns: int = BAND_COLUMNS) -> list[BandColumn]:
    """The active path's coverage states, left (oldest) to right, at most `columns` wide: a
    column stands for consecutive records and shows the most alarming state among them."""
    records = report.ledger.records
    path = [s for s in report.path if report.states[s] is not None or records[s].kind == "checkpoint"]
    if not path:
        return []
    per = max(1, -(-len(path) // columns))
    out: list[BandColumn] = []
    for i in range(0, len(path), per):
        chunk = path[i : i + per]
        states = [report.states[s] for s in chunk if report.states[s] is not None]
        if not states and out:  # a checkpoint between messages: a mark on the column before it
            out[-1].checkpoint = True
            continue
        state = max(states, key=lambda st: _STATE_WEIGHT.get(st or "", 0)) if states else "inactive"
        out.append(
            BandColumn(
                state or "inactive",
                records[chunk[0]].line,
                records[chunk[-1]].line,
                checkpoint=any(records[s].kind == "checkpoint" for s in chunk),
            )
        )
    return out


def coverage_svg(report: Report) -> str:
    """The coverage band as an SVG picture (self-contained, with a title per column)."""
    band = coverage_band(report)
    n = max(1, len(band))
    w = BAND_WIDTH / n
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="coverage-band" role="img" width="{BAND_WIDTH}" '
        f'height="{BAND_HEIGHT + 8}" viewBox="0 0 {BAND_WIDTH} {BAND_HEIGHT + 8}">',
        "<title>Coverage of the active path, oldest to newest</title>",
    ]
    i = 0
    while i < len(band):  # one rectangle per run of columns in one state
        j = i
        while j + 1 < len(band) and band[j + 1].state == band[i].state:
            j += 1
        a, b = band[i].first_line, band[j].last_line
        lines = f"line {a}" if a == b else f"lines {a}–{b}"
        parts.append(
            f'<rect x="{i * w:.2f}" y="4" width="{(j - i + 1) * w:.2f}" height="{BAND_HEIGHT}" '
            f'fill="{STATE_COLORS[band[i].state]}"><title>{band[i].state}: {lines}</title></rect>'
        )
        i = j + 1
    for i, c in enumerate(band):
        if c.checkpoint:
            parts.append(
                f'<rect x="{(i + 1) * w - 1.5:.2f}" y="0" width="3" height="{BAND_HEIGHT + 8}" fill="{CHECKPOINT_COLOR}">'
                f"<title>checkpoint after line {c.last_line}</title></rect>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _text_band(report: Report, columns: int = 80) -> str:
    glyph = {"live": "L", "retained": "R", "summarized": "S", "excluded": ".", "hole": "#", "inactive": " "}
    return "".join("|" if c.checkpoint else glyph[c.state] for c in coverage_band(report, columns))


@dataclass(slots=True)
class _Parts:
    """What both renderings show, computed once."""

    title: str
    facts: str
    sentence: str
    coverage: str
    checkpoints: list[dict[str, str]]
    findings: list[dict[str, str]]
    context: list[dict[str, str]]
    context_total: str
    version: str


def _records_of(report: Report, seqs: list[int], redact: bool, shown: int = 12) -> str:
    records = report.ledger.records
    out: list[str] = []
    for s in seqs[:shown]:
        r = records[s]
        where = f"line {r.line} ({r.role or r.kind})"
        if not redact and r.message is not None:
            preview = " ".join((r.message.text() or r.message.first_line()).split())[:100]
            if preview:
                where += f": {preview}"
        out.append(where)
    if len(seqs) > shown:
        out.append(f"… and {len(seqs) - shown:,} more")
    return "; ".join(out)


def _parts(report: Report, version: str, redact: bool) -> _Parts:
    led = report.ledger
    name = os.path.basename(led.path or "<input>")
    fmt = led.format + (f" v{led.version}" if led.version is not None else "")
    n_msg = sum(1 for r in led.records if r.kind == "message")
    facts = f"{fmt} · {len(led.records):,} records, {n_msg:,} messages"
    if led.session_id:
        facts += f" · session {led.session_id}"
    cov = report.coverage_counts()
    coverage = " · ".join(f"{s} {cov[s]:,}" for s in STATES if cov[s] or s != "inactive")
    counts = PathCounts(report)
    cps: list[dict[str, str]] = []
    for v in report.checkpoints:
        j = checkpoint_json(report, v, counts)

        def span(key: str, j: dict[str, object] = j) -> str:
            d = j[key]
            assert isinstance(d, dict)
            s = f"{d['count']:,}"
            if d.get("by_role"):
                s += f" ({fmt_roles(d['by_role'])})"
            if "first_line" in d:
                s += f", lines {d['first_line']}–{d['last_line']}"
            return s

        cps.append(
            {
                "#": str(v.index),
                "line": str(v.record.line),
                "removes": span("removes"),
                "represents": span("represents"),
                "retains": span("retains"),
                "shape": (v.shape or "—").replace("_", " "),
                "status": checkpoint_status(report, v).words,
                "summary": REDACTED if redact and v.checkpoint.summary else " ".join(v.checkpoint.summary.split())[:300],
            }
        )
    findings = [
        {"severity": f.severity, "code": f.code, "message": f.message, "records": _records_of(report, f.records, redact)}
        for f in sorted(report.findings, key=lambda f: SEVERITY_RANK[f.severity])
    ]
    context = [
        {
            "#": str(it.index),
            "role": it.role,
            "kind": it.kind,
            "line": str(it.line) if it.line is not None else "—",
            "tokens": f"{it.tokens or 0:,}",
            "text": REDACTED if redact else item_preview(report, it, 120),
        }
        for it in report.ensure_tokens()
    ]
    total = f"{len(report.context):,} items, about {report.context_tokens:,} tokens"
    if report.window:
        total += f" of a {report.window:,}-token window"
    return _Parts(
        title=f"inspector report: {REDACTED if redact else name}",
        facts=facts,
        sentence=summary_line(report),
        coverage=coverage,
        checkpoints=cps,
        findings=findings,
        context=context,
        context_total=total,
        version=version,
    )


_CSS = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:960px;color:#1f2328;padding:0 1em}
h1{font-size:1.4em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #d0d7de}
.facts{color:#57606a}.sentence{font-size:1.1em;font-weight:600;margin:1em 0}
table{border-collapse:collapse;width:100%;font-size:.9em}td,th{border:1px solid #d0d7de;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f6f8fa}.error{color:#cf222e;font-weight:600}.warning{color:#9a6700;font-weight:600}.info{color:#0969da}
.legend span{display:inline-block;margin-right:1em}.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-.1em}
footer{margin-top:2em;color:#57606a;font-size:.85em}
"""


def _table(rows: list[dict[str, str]], cls_key: str | None = None) -> str:
    if not rows:
        return "<p>None.</p>"
    head = "".join(f"<th>{html.escape(k)}</th>" for k in rows[0])
    body = []
    for r in rows:
        cells = []
        for k, v in r.items():
            cls = f' class="{html.escape(v)}"' if k == cls_key else ""
            cells.append(f"<td{cls}>{html.escape(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def html_report(report: Report, version: str, redact: bool = False) -> str:
    p = _parts(report, version, redact)
    legend = "".join(
        f'<span><i style="background:{STATE_COLORS[s]}"></i>{s}</span>' for s in STATES if s != "inactive"
    ) + f'<span><i style="background:{CHECKPOINT_COLOR}"></i>checkpoint</span>'
    return "".join(
        [
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
            f"<title>{html.escape(p.title)}</title><style>{_CSS}</style></head><body>",
            f"<h1>{html.escape(p.title)}</h1>",
            f'<p class="facts">{html.escape(p.facts)}</p>',
            f'<p class="sentence" id="header-sentence">{html.escape(p.sentence)}</p>',
            "<h2>Coverage</h2>",
            coverage_svg(report),
            f'<p class="legend">{legend}</p>',
            f"<p>{html.escape(p.coverage)}</p>",
            "<h2>Checkpoints on the active path</h2>",
            _table(p.checkpoints),
            "<h2>Findings</h2>",
            _table(p.findings, cls_key="severity"),
            "<h2>The next request</h2>",
            f"<p>{html.escape(p.context_total)}</p>",
            _table(p.context),
            f"<footer>Made by {html.escape(p.version)}" + (" · message text redacted" if redact else "") + "</footer>",
            "</body></html>\n",
        ]
    )


def _md_cell(v: str) -> str:
    return v.replace("|", "\\|").replace("\n", " ")


def _md_table(rows: list[dict[str, str]]) -> str:
    if not rows:
        return "None.\n"
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(_md_cell(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def markdown_report(report: Report, version: str, redact: bool = False) -> str:
    p = _parts(report, version, redact)
    svg = base64.b64encode(coverage_svg(report).encode()).decode()
    return "\n".join(
        [
            f"# {p.title}",
            "",
            p.facts,
            "",
            f"**{p.sentence}**",
            "",
            "## Coverage",
            "",
            f"![coverage band](data:image/svg+xml;base64,{svg})",
            "",
            "```",
            _text_band(report),
            "```",
            "",
            "(oldest to newest: `L` live, `R` retained, `S` summarized, `.` excluded, `#` hole, `|` checkpoint)",
            "",
            p.coverage,
            "",
            "## Checkpoints on the active path",
            "",
            _md_table(p.checkpoints),
            "## Findings",
            "",
            _md_table(p.findings),
            "## The next request",
            "",
            p.context_total,
            "",
            _md_table(p.context),
            f"_Made by {p.version}" + (" · message text redacted" if redact else "") + "_",
            "",
        ]
    )
