"""Human-readable reports, rendered with rich. Read in ten seconds: a summary line, findings by
severity, coverage by state, the checkpoints, and (for `context`) the next request."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from inspector.analysis.engine import STATES, Report
from inspector.analysis.export import (
    PathCounts,
    checkpoint_json,
    checkpoint_status,
    item_preview,
    summary_line,
)
from inspector.analysis.findings import SEVERITY_RANK, fmt_roles

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
# A checkpoint's status tone (analysis.export.checkpoint_status).
TONE_STYLE = {"ok": "green", "neutral": "cyan", "warning": "yellow", "error": "red"}
STATE_STYLE = {
    "live": "green",
    "retained": "bright_green",
    "summarized": "blue",
    "excluded": "bright_black",
    "hole": "bold red",
    "inactive": "dim",
}


def _header(report: Report) -> Text:
    led = report.ledger
    fmt = f"{led.format}"
    if led.version is not None:
        fmt += f" v{led.version}"
    if led.migrated:
        fmt += " (migrated in memory; the file is not touched)"
    n_msg = sum(1 for r in led.records if r.kind == "message")
    t = Text()
    t.append(str(led.path or "<input>"), style="bold")
    t.append(f"  ·  {fmt}  ·  {len(led.records):,} records, {n_msg:,} messages")
    if led.upto_line:
        t.append(f"  ·  as of line {led.upto_line}", style="magenta")
    if led.header and "next_agent" in led.header:
        # Lines are event positions; the next request depends on which agent asks (ADK).
        t.append(f"\nnext model call by agent {led.header.get('next_agent')!r} ({led.header.get('next_agent_reason')})")
    for d in led.diagnostics:
        if d.problem == "session_choice":
            t.append(f"\n{d.message}", style="cyan")
    return t


def _summary(report: Report) -> Text:
    line = summary_line(report)
    worst = min((SEVERITY_RANK[f.severity] for f in report.findings), default=None)
    style = "bold green" if worst is None else SEVERITY_STYLE[("error", "warning", "info")[worst]]
    return Text(line, style=style)


def findings_table(report: Report) -> Table | Text:
    if not report.findings:
        return Text("No findings.", style="green")
    t = Table(title="Findings", title_justify="left", show_lines=False, expand=True)
    t.add_column("severity", no_wrap=True)
    t.add_column("code", no_wrap=True)
    t.add_column("what", ratio=1)
    for f in sorted(report.findings, key=lambda f: SEVERITY_RANK[f.severity]):
        t.add_row(Text(f.severity, style=SEVERITY_STYLE[f.severity]), f.code, Text(f.message))
    return t


def coverage_line(report: Report) -> Text:
    counts = report.coverage_counts()
    t = Text("Coverage  ", style="bold")
    for i, s in enumerate(STATES):
        if s == "inactive" and not counts[s]:
            continue
        if i:
            t.append("  ·  ")
        t.append(f"{s} {counts[s]:,}", style=STATE_STYLE[s] if counts[s] else "dim")
    return t


def checkpoints_table(report: Report) -> Table | Text:
    if not report.checkpoints:
        return Text("No checkpoints on the active path.", style="dim")
    records = report.ledger.records
    t = Table(title="Checkpoints on the active path", title_justify="left", expand=True)
    for col in ("#", "line", "keeps from", "removes", "represents", "retains", "shape", "status"):
        t.add_column(col, no_wrap=col not in ("status", "shape", "keeps from"), min_width=8 if col == "status" else None)
    counts = PathCounts(report)
    for v in report.checkpoints:
        spans = checkpoint_json(report, v, counts)
        if v.first_kept_found is False:
            keeps = Text("not on path", style="red")
        elif v.first_kept_seq is not None:
            keeps = Text(f"line {records[v.first_kept_seq].line}")
        else:
            keeps = Text("—")
        status = checkpoint_status(report, v)
        t.add_row(
            str(v.index),
            str(v.record.line),
            keeps,
            str(spans["removes"]["count"]),
            str(spans["represents"]["count"]),
            str(spans["retains"]["count"]),
            (v.shape or "—").replace("_", " "),
            Text(status.words, style=TONE_STYLE[status.tone]),
        )
    return t


def context_footer(report: Report) -> Text:
    t = Text("Next request  ", style="bold")
    t.append(f"{len(report.context):,} items, about {report.context_tokens:,} tokens")
    if report.window:
        t.append(f" of a {report.window:,}-token window")
        if report.reserve:
            t.append(f" ({report.reserve:,} reserved)")
    t.append(f"  ·  counted from {report.tokens_source}; tokenizer: {report.tokenizer}", style="dim")
    return t


def render_analysis(report: Report) -> Group:
    parts = [
        _header(report),
        _summary(report),
        Text(""),
        findings_table(report),
        coverage_line(report),
        checkpoints_table(report),
        context_footer(report),
    ]
    holes = [f for f in report.findings if f.code == "hole" and f.by_role]
    if holes:
        total: dict[str, int] = {}
        for f in holes:
            for k, n in (f.by_role or {}).items():
                total[k] = total.get(k, 0) + n
        parts.append(Text(f"Holes by role: {fmt_roles(total)}", style="red"))
    return Group(*parts)


def render_context(report: Report) -> Group:
    t = Table(title="What the model receives next", title_justify="left", expand=True)
    for col in ("#", "role", "kind", "line", "tokens", "text"):
        t.add_column(col, no_wrap=col != "text", ratio=1 if col == "text" else None)
    for it in report.ensure_tokens():
        flags = []
        if it.synthetic:
            flags.append("added on resume" if it.on_resume else "synthetic")
        elif it.on_resume:  # (a message the runtime moves into the next prompt on resume)
            flags.append("on resume, sent as")
        if it.joined:  # (records the runtime sends as one message with this one's)
            flags.append(f"{1 + len(it.joined)} as one: lines {', '.join(str(report.ledger.records[s].line) for s in (it.seq, *it.joined))}")
        if it.orphan:
            flags.append("ORPHAN")
        if it.unanswered:
            flags.append(f"unanswered: {', '.join(it.unanswered)}")
        text = Text(item_preview(report, it, 100))
        if flags:
            text = Text(f"[{'; '.join(flags)}] ", style="red" if it.orphan else "yellow") + text
        t.add_row(
            str(it.index),
            it.role,
            it.kind,
            str(it.line) if it.line is not None else "—",
            f"{it.tokens or 0:,}" + ("*" if it.tokens_from == "usage" else ""),
            text,
        )
    note = Text("* tokens recorded by the provider (usage); others counted with " + report.tokenizer, style="dim")
    return Group(_header(report), t, context_footer(report), note)


def print_group(group: Group, console: Console | None = None) -> None:
    (console or Console()).print(group)
