"""`inspector plan` and `inspector repair`: the repair engine from the command line (DESIGN §5-6).

plan   prints what a repair would ask and install and the session after it; calls and writes nothing.
repair carries it out with a summarizer (the offline extractive one unless told otherwise), prints
       the checkpoint it built and a before/after comparison; with --out it writes a copy of the
       session with the record appended, with --write it appends to the session itself
       (inspector.store.writeback: locked, unchanged check, backup, verify, undo).

Exit codes: 0 done (built, recovered, or nothing to do); 1 the repair failed open (nothing
installed: the summarizer's own reason is shown); 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from inspector.analysis.engine import Report
from inspector.analysis.findings import SEVERITY_RANK, plural
from inspector.cli.output import emit_json
from inspector.cli.render import SEVERITY_STYLE
from inspector.compaction.cut import PathIndex
from inspector.compaction.entries import CheckpointSpec, WriteError, check_writable, writer_of
from inspector.compaction.execute import STATUS_STYLE, RepairResult, repair
from inspector.compaction.export import checkpoint_json, plan_json, result_json
from inspector.compaction.plan import (
    AVAILABLE_LABEL,
    Budgets,
    Outlook,
    PlanError,
    RepairPlan,
    action_sentence,
    plan,
)
from inspector.formats.base import Writer
from inspector.ledger.jsontext import deep, json_dumps
from inspector.store.files import os_cause
from inspector.store.writeback import Installed


def _budgets(args: argparse.Namespace) -> Budgets:
    return Budgets(window=args.window, reserve=args.reserve, keep_recent=args.keep_recent, request=args.request_tokens)


def _err(msg: str) -> int:
    print(f"inspector: {msg}", file=sys.stderr)
    return 2


# ---------------------------------------------------------------------------------------- commands


def run_plan(args: argparse.Namespace, report: Report) -> int:
    try:
        p = plan(report, args.strategy, _budgets(args))
    except PlanError as e:
        return _err(plan_error_text(e))
    if args.json:
        emit_json(plan_json(p))
    else:
        Console().print(render_plan(p))
    return 0


def make_summarizer(args: argparse.Namespace) -> Any:
    """A provider is already a Summarizer: it takes and returns the engine's own types."""
    from inspector.providers import make_provider

    return make_provider(args.provider, model=args.model, base_url=args.base_url, timeout=args.timeout, config_path=args.config)


def plan_error_text(e: PlanError) -> str:
    """The core's reason, and the flag that gives the missing budget."""
    return f"{e}: pass --{e.field} N" if e.field else str(e)


def run_repair(args: argparse.Namespace, report: Report) -> int:
    from inspector.providers import ProviderConfigError

    if args.out is not None or args.write:
        try:  # before the summarizer runs: a write that cannot happen is told at once
            check_writable(report.ledger)
            _check_target(args, report)
        except WriteError as e:
            return _err(str(e))
    try:
        summarizer = make_summarizer(args)
    except ProviderConfigError as e:
        return _err(f"{args.provider}: {e}")
    try:
        p = plan(report, args.strategy, _budgets(args), route=summarizer.route)
    except PlanError as e:
        return _err(plan_error_text(e))
    try:
        if args.progress and p.requests and not args.json:
            res = _with_progress(p, summarizer)
        else:
            res = repair(p, summarizer)
    except WriteError as e:
        return _err(str(e))
    written: Outlook | None = None
    installed: Installed | None = None
    if args.out is not None and res.entry is not None:
        from inspector.analysis import analyze
        from inspector.formats import LoadError, load
        from inspector.store.copy import write_copy

        existed = os.path.lexists(args.out)
        try:
            write_copy(report.ledger, res.entry, args.out, res.lines)
        except WriteError as e:
            return _err(str(e))
        except OSError as e:
            return _err(f"--out {args.out}: {os_cause(e)}")
        try:
            written = Outlook.of(analyze(load(args.out, fingerprint=False), window=p.budgets.window, reserve=p.budgets.reserve))
        except LoadError as e:  # pragma: no cover - we just wrote it
            return _err(f"{args.out}: the copy does not read back: {e}")
        problem = _copy_broken_promises(res.after, written, args.out, existed)
        if problem is not None:
            return _err(problem)
    elif args.write and res.entry is not None:
        from inspector.compaction.plan import broken_promises
        from inspector.store.writeback import install, repair_what

        promised = res.after

        def expect(actual: Report) -> list[str]:
            return broken_promises(promised, Outlook.of(actual)) if promised is not None else []

        try:
            kind = res.checkpoint.kind if res.checkpoint is not None else "summary"
            installed = install(
                report, res.entry, lines=res.lines, what=repair_what(p.strategy, kind), expect=expect, step=_check_notice(report)
            )
        except WriteError as e:
            return _err(str(e))
        except OSError as e:
            return _err(f"{report.ledger.path}: {os_cause(e)}")
        written = Outlook.of(installed.report)
    # A session given by a symbolic link is written where the link points: `out` names that file.
    wrote = (installed.path if installed.link else report.ledger.path) if installed is not None else None
    target = (args.out or wrote) if res.entry is not None else None
    if args.json:
        doc = result_json(res, target, written)
        doc["backup"] = installed.backup.path if installed is not None else None
        emit_json(doc)
    else:
        Console().print(render_result(res, target, written, installed))
    return 1 if res.status == "failed" else 0


def _copy_broken_promises(promised: Outlook | None, written: Outlook, out: str, existed: bool) -> str | None:
    """Why the copy `--out` wrote, read back, is not what the plan promised (None: it is), as
    `--write` verifies the session it appends to. A copy that made a new file is removed again; one
    that replaced a file the user named is left, said so (the file it replaced is gone either way)."""
    from inspector.compaction.plan import broken_promises

    broken = broken_promises(promised, written) if promised is not None else []
    if not broken:
        return None
    what = f"{out}: the copy is not what the plan promised ({'; '.join(broken)})"
    if not existed:
        with contextlib.suppress(OSError):
            os.unlink(out)
            return f"{what}; it was removed again, the session is untouched"
    return f"{what}; do not resume from it (the session is untouched)"


# A store at least this big is named on stderr while SQLite checks it before the write (`PRAGMA
# quick_check` reads every page: about 2 s at 100 MB): a pause the user can put a name to.
CHECK_NOTICE_BYTES = 32 << 20


def _check_notice(report: Report) -> Any:
    """The write's step hook: at the store's check before the write, a line on stderr naming it,
    for a store of `CHECK_NOTICE_BYTES` or more (a session file has no such step)."""
    size = report.ledger.size or 0

    def step(label: str) -> None:
        if label == "checking" and size >= CHECK_NOTICE_BYTES:
            where = report.ledger.path
            print(f"inspector: checking {where} ({size / 1e6:,.0f} MB) with SQLite's quick_check before the write…", file=sys.stderr, flush=True)

    return step


def _check_target(args: argparse.Namespace, report: Report) -> None:
    """Refuse, before anything runs, a destination the write would refuse (the store checks again)."""
    import os

    from inspector.store.copy import check_copy_target
    from inspector.store.files import check_appendable
    from inspector.store.writeback import check_in_place

    if args.out is not None:
        check_copy_target(report.ledger, args.out)
    elif report.ledger.path is not None:
        check_in_place(report.ledger)  # a JSON dump: refused before the summarizer runs, not after
        check_appendable(os.path.realpath(report.ledger.path))


def _with_progress(p: RepairPlan, summarizer: Any) -> RepairResult:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(
        TextColumn("[bold]summarizing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        task = bar.add_task("", total=len(p.requests))

        def progress(i: int, n: int, label: str) -> None:
            bar.update(task, total=n, completed=i - 1, description=label)

        res = repair(p, summarizer, progress=progress)
        bar.update(task, completed=bar.tasks[0].total, description=res.status)
    return res


# ---------------------------------------------------------------------------------------- render


def _roles(d: dict[str, Any]) -> str:
    by = d.get("by_role") or {}
    inner = " / ".join(f"{n} {r}" for r, n in by.items())
    lines = f", lines {d['first_line']}–{d['last_line']}" if "first_line" in d else ""
    return f"{d['count']:,}" + (f" ({inner}{lines})" if inner else "")


def _budget_table(p: RepairPlan) -> Table:
    b = p.budgets
    t = Table(title="Budgets", title_justify="left", expand=True, show_header=False)
    t.add_column("what", no_wrap=True)
    t.add_column("tokens", justify="right", no_wrap=True)
    t.add_column("from", ratio=1)
    t.add_row("window", f"{b.window:,}", b.sources.get("window", ""))
    t.add_row("reserve", f"{b.reserve:,}", b.sources.get("reserve", ""))
    t.add_row("keep recent", f"{b.keep_recent:,}", b.sources.get("keep_recent", ""))
    if b.request is not None:
        t.add_row("request", f"{b.request:,}", b.sources.get("request", ""))
    t.add_row(AVAILABLE_LABEL, f"{b.available:,}", "window − reserve − summary wrapper")
    if p.action == "summarize":
        t.add_row("summary target", f"{p.target_tokens:,}", f"provider limit {p.max_output_tokens:,} (+10%); {p.installable_tokens:,} installable")
    return t


def _requests_table(p: RepairPlan) -> Table | Text:
    if not p.requests:
        return Text("No summarizer request." if p.action != "summarize" else "", style="dim")
    ix = p.index
    t = Table(title=f"Summarizer requests ({len(p.requests)})", title_justify="left", expand=True)
    for col in ("#", "prompt", "lines", "messages", "prompt tokens", "max output", "file list"):
        t.add_column(col, no_wrap=col != "messages", ratio=1 if col == "messages" else None,
                     justify="right" if "tokens" in col or col == "max output" else "left")
    for k, ch in enumerate(p.requests, 1):
        lines = f"{ix.rec(ch.positions[0]).line}–{ix.rec(ch.positions[-1]).line}" if ch.positions else "—"
        roles: dict[str, int] = {}
        for q in ch.positions:
            roles[ix.rec(q).role or "?"] = roles.get(ix.rec(q).role or "?", 0) + 1
        msgs = f"{len(ch.positions)}: " + ", ".join(f"{n} {_SHORT.get(r, r)}" for r, n in roles.items())
        if ch.clipped:
            msgs += f", {len(ch.clipped)} clipped"
        t.add_row(
            str(k),
            "update" if ch.carry_tokens else "initial",
            lines,
            msgs,
            f"{ch.prompt_tokens:,} / {ch.budget:,}",
            f"{p.max_output_tokens:,}",
            "yes" if ch.file_list else "",
        )
    return t


_SHORT = {"assistant": "asst", "user": "user", "tool": "tool", "system": "sys"}


def _checkpoint_table(ix: PathIndex, spec: CheckpointSpec, summary_tokens: int | None, title: str) -> Table:
    d = checkpoint_json(ix, spec, summary_tokens)
    t = Table(title=title, title_justify="left", expand=True, show_header=False)
    t.add_column("what", no_wrap=True)
    t.add_column("value", ratio=1)
    fk = d["boundary"]["first_kept"]
    t.add_row("kind", spec.kind + (f" (failure_reason {spec.failure_reason})" if spec.failure_reason else ""))
    t.add_row("boundary", f"keeps from line {fk['line']} ({fk['id']})" if fk else "keeps nothing raw")
    t.add_row("removes", _roles(d["removes"]))
    t.add_row("represents", _roles(d["represents"]))
    kept = _roles(d["retains"])
    if d["retains"]["kept_ahead"]:
        kept += f"; kept ahead of the window: line {', '.join(str(r['line']) for r in d['retains']['kept_ahead'])}"
    if d["retains"]["dropped"]["count"]:
        kept += f"; dropped from the window: {_roles(d['retains']['dropped'])}"
    t.add_row("retains", kept)
    t.add_row("shape", spec.shape.replace("_", " "))
    size = f"summary {summary_tokens:,} + tail {spec.tail_tokens:,} = {d['size_tokens']:,} tokens" if summary_tokens is not None else f"tail {spec.tail_tokens:,} tokens"
    t.add_row("size", size)
    if d["quotes_active_request"]:
        t.add_row("active request", f"line {d['quotes_active_request']['line']}, quoted verbatim ({ix.report.runtime.name} keeps a contiguous tail)")
    return t


def _compare(before: Outlook, after: Outlook | None, after_label: str) -> Table:
    t = Table(title="Before / after", title_justify="left", expand=True)
    t.add_column("", no_wrap=True)
    t.add_column("before", justify="right")
    t.add_column(after_label, justify="right")

    def errs(o: Outlook) -> str:
        e = sum(1 for f in o.findings if f.severity == "error")
        w = sum(1 for f in o.findings if f.severity == "warning")
        return f"{e} / {w}"

    def row(name: str, a: Any, b: Any, bad_if_more: bool = True) -> None:
        style = "green" if b is not None and a is not None and b < a else ("red" if bad_if_more and b and a is not None and b > a else "")
        t.add_row(name, f"{a:,}" if isinstance(a, int) else str(a), Text(f"{b:,}" if isinstance(b, int) else str(b), style=style))

    a = after or before
    row("holes", before.holes, a.holes)
    row("orphaned tool results", before.orphans, a.orphans)
    row("unanswered tool calls", before.unanswered, a.unanswered)
    row("next request (tokens)", before.context_tokens, a.context_tokens)
    row("next request (items)", before.items, a.items, bad_if_more=False)
    t.add_row("errors / warnings", errs(before), errs(a))
    return t


def _findings(o: Outlook | None, title: str) -> Table | Text:
    if o is None or not o.findings:
        return Text(f"{title}: none.", style="green")
    t = Table(title=title, title_justify="left", expand=True)
    t.add_column("severity", no_wrap=True)
    t.add_column("code", no_wrap=True)
    t.add_column("what", ratio=1)
    for f in sorted(o.findings, key=lambda f: SEVERITY_RANK[f.severity]):
        t.add_row(Text(f.severity, style=SEVERITY_STYLE[f.severity]), f.code, f.message)
    return t


def render_plan(p: RepairPlan) -> Group:
    led = p.report.ledger
    ix = p.index
    head = Text()
    head.append(str(led.path or "<input>"), style="bold")
    head.append(f"  ·  {led.format}  ·  plan: {p.strategy}")
    action = Text(action_sentence(p), style="bold")
    parts: list[Any] = [head, action]
    if p.carry is not None:
        c = p.carry
        trust = "sound" if c.trusted else f"not sound: {c.why_not}"
        parts.append(Text(f"Carried summary: checkpoint {c.view.index} (line {c.view.record.line}), {c.tokens:,} tokens, {trust}"))
    if p.range is not None:
        ms = ix.messages_in(*p.range)
        if ms:
            parts.append(Text(f"Range summarized: lines {ix.rec(ms[0]).line}–{ix.rec(ms[-1]).line}, {plural(len(ms), 'message')}"))
    if p.route is not None:
        proven = f"line {ix.rec(p.proven).line}" if p.proven is not None else "none (no reply from this route)"
        parts.append(Text(f"Proven span of {p.route.label()}: up to {proven}", style="dim"))
    parts += [_budget_table(p), _requests_table(p)]
    if p.checkpoint is not None:
        st = ix.tok.count(p.summary) if p.summary is not None else p.target_tokens
        parts.append(_checkpoint_table(ix, p.checkpoint, st, "Checkpoint it would install"))
    if p.lines:
        parts.append(appended_lines_view(p.lines, writer_of(led)))
    if p.recovery is not None and p.action == "summarize":
        parts.append(Text(f"If the summary fails: recovery keeping {len(p.recovery.spec.retains)} recent messages "
                          f"({p.recovery.spec.tail_tokens:,} tokens).", style="dim"))
    if p.after is not None or p.checkpoint is None:
        parts.append(_compare(p.before, p.after, "after (simulated)"))
        parts.append(_findings(p.after, "Findings after"))
    for n in p.notes:
        parts.append(Text(f"note: {n}", style="yellow"))
    return Group(*parts)


def appended_lines_view(lines: list[dict[str, Any]], w: Writer) -> Group:
    """What a repair writes, one JSON object each in the runtime's own shape, long texts
    shortened (the full records: `--json`): lines appended, rows inserted, or a new copy's records."""
    what = "Rows it would insert" if w.store is not None else ("Records a new copy would add" if w.copy is not None else "Lines it would append")
    out: list[Any] = [Text(f"{what} ({plural(len(lines), 'record')}, the {w.record_name} record among them)", style="bold")]
    for o in lines:
        out.append(Text(json_dumps(deep(_shortened, o), ensure_ascii=False), style="dim"))
    return Group(*out)


def _shortened(v: Any, limit: int = 100) -> Any:
    if isinstance(v, str) and len(v) > limit:
        return v[: limit - 1] + f"… ({len(v):,} characters)"
    if isinstance(v, dict):
        return {k: _shortened(x, limit) for k, x in v.items()}
    if isinstance(v, list):
        return [_shortened(x, limit) for x in v]
    return v


def render_result(res: RepairResult, out: str | None, written: Outlook | None, installed: Installed | None = None) -> Group:
    p = res.plan
    ix = p.index
    style = STATUS_STYLE[res.status]
    head = Text(f"{res.status}", style=style)
    if res.entry is not None:
        where = "installed into the session" if installed is not None else ("written to a copy" if out else "not installed (no --out or --write)")
        head.append(f"  ·  {where}")
    if res.failure_reason:
        head.append(f"  ·  failure_reason {res.failure_reason}")
    if res.outcome:
        head.append(f"  ·  last outcome {res.outcome}")
    parts: list[Any] = [head]
    if res.reason:
        parts.append(Text(res.reason, style="red" if res.status == "failed" else ""))
    if res.calls:
        t = Table(title=f"Summarizer calls ({len(res.calls)})", title_justify="left", expand=True)
        for col in ("req", "kind", "msgs", "prompt", "max out", "outcome", "usage in/out"):
            t.add_column(col, no_wrap=True)
        for c in res.calls:
            use = f"{c.usage.prompt:,}/{c.usage.output:,}" if c.usage is not None else "—"
            oc = Text(c.outcome + ("" if c.accepted else " ✗"), style="green" if c.accepted else "red")
            t.add_row(f"{c.request}.{c.attempt}", c.kind, str(c.messages), f"{c.prompt_tokens:,}", f"{c.max_output_tokens:,}", oc, use)
        parts.append(t)
        if res.usage is not None:
            parts.append(Text(f"Usage (summed): {res.usage.prompt:,} in / {res.usage.output:,} out", style="dim"))
    if res.dropped:
        parts.append(Text(f"{plural(len(res.dropped), 'message')} were left out of the summary after a truncation: they are holes now.", style="yellow"))
    if res.retreated:
        parts.append(Text("The fold retreated to the proven span of the summarizer's route.", style="yellow"))
    if res.checkpoint is not None:
        st = ix.tok.count(res.summary) if res.summary is not None else None
        title = "Checkpoint installed" if installed is not None else ("Checkpoint written to the copy" if out else "Checkpoint built")
        parts.append(_checkpoint_table(ix, res.checkpoint, st, title))
    record = writer_of(p.report.ledger).record_name
    if installed is not None:
        parts.append(Text(
            f"Appended one {record} record ({installed.entry_id}) to {installed.path}"
            + (f" ({installed.link} leads there through a symbolic link)" if installed.link else "")
            + f": {installed.size_before:,} → "
            f"{installed.size_after:,} bytes, read back and verified. Backup: {installed.backup.path} "
            f"(`inspector undo {p.report.ledger.path}` restores it).", style="green"))
    elif out:
        parts.append(Text(f"Wrote {out} (the session plus one {record} record); {p.report.ledger.path} is untouched.", style="green"))
    label = "after (written file)" if written is not None else ("after (simulated)" if res.after is not None else "after")
    after = written or res.after
    parts.append(_compare(p.before, after, label))
    if after is not None:
        parts.append(_findings(after, "Findings after"))
    return Group(*parts)
