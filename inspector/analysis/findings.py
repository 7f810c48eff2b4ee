"""Findings (DESIGN §4): stable codes, a severity, the records they point at, one plain sentence."""

from __future__ import annotations

import functools
import itertools
import operator
from bisect import bisect_left
from collections.abc import Callable, Iterable

from inspector.analysis.engine import EXCLUDED, HOLE, CheckpointView, Finding, Report, result_ids
from inspector.analysis.numbers import count
from inspector.analysis.protocol import summary_completeness
from inspector.formats.base import FAILS_ON_OPEN, FAILS_ON_SEND, template_incomplete
from inspector.ledger.model import Record
from inspector.ledger.quoting import quote
from inspector.ledger.times import iso_time

SEVERITIES: tuple[str, ...] = ("error", "warning", "info")
SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}

# Every code the analysis can emit, with what it means (documented in docs/report-json.md).
CODES: dict[str, str] = {
    "hole": "messages removed from the request without being represented by any summary",
    "amnesiac_fallback": "a fallback checkpoint whose raw tail is one user message, or less than its budget allowed",
    "orphan_tool_result": "a tool result in the next request whose tool call is not in it",
    "unanswered_tool_call": "a tool call in the next request with no result in it",
    "truncated_summary": "a summary cut at the output limit, or whose essential sections are not closed",
    "compaction_loop": "repeated checkpoints that make no progress",
    "compaction_storm": "many summarizer calls within one turn",
    "usage_missing": "a checkpoint that records no usage and no failure reason",
    "dangling_first_kept": "a checkpoint's boundary points at a record not on the active path",
    "live_question_summarized": "the active turn's own user message is inside the removed range",
    "over_budget": "the next request is larger than the window minus the reserve",
    "malformed_line": "a line that could not be read as written",
    "duplicate_id": "two records share one id",
    "broken_tree": "the parent links cannot be walked (a cycle)",
    "file_structure": "the file reads, but how it is put together changes what it holds (another session's header in it, UI events without history)",
    "checkpoint_not_replayed": "a checkpoint the runtime will not replay (refused at load, its prefix no longer matches, or made on another route): the raw history is sent",
    "dropped_tool_call": "a tool call the runtime drops from the next request because nothing answers it",
    "dropped_tool_result": "a tool result the runtime removes from the next request because it pairs it with no call there: the model never reads that output",
    "resume_refused": "the runtime refuses to resume the session at all: it stops with an error and sends nothing",
    "request_fails": "the runtime cannot build its next request (an entry on the path or a message in it has a shape its code fails on): it stops with an error, every time, and sends nothing",
    "history_window": "messages older than the runtime's history window: never sent, and no summary stands for them",
    "compaction_report": "what the runtime itself recorded about a compaction (NextClaw's summaryDiagnostics), in its terms",
    "compacts_first": "the runtime compacts the session before it sends the next request (its own limit check, from the usage the file records): the request shown is not what it sends",
}

# Adapters' diagnostics that state a runtime's own verdict (maka: checkpoint_unused, ...), by code.
RUNTIME_PROBLEMS: dict[str, str] = {
    "checkpoint_refused": "checkpoint_not_replayed",
    "checkpoint_unused": "checkpoint_not_replayed",
    "checkpoint_route_scoped": "checkpoint_not_replayed",
    "unmatched_tool_call": "dropped_tool_call",
    "outside_history_window": "history_window",
    "resume_refused": "resume_refused",
}
# Adapters' diagnostics naming a tool result the runtime drops from the request it builds (adk-go's
# `response_without_call`, `response_replaced`): reported with the results the analysis finds removed (`_dropped_results`).
RESULT_DROPS = frozenset({"response_without_call", "response_replaced"})
# Adapters' notes that describe the session rather than something wrong with it.
NOTE_PROBLEMS = frozenset({"session_choice", "opaque_summary", "checkpoint_superseded", "heartbeat_left_out"})

# Diagnostics about how a file is put together rather than about a bad line.
STRUCTURE_PROBLEMS = frozenset({"chain_from_elsewhere", "local_time_stamps", "logical_parent_assumed", "repeated_session_meta", "events_only", "empty_session", "rewind_applied", "rewind_ignored", "leaf_moved", "leaf_ignored", "stamped_at_load", "next_message_scoped"})
# What a runtime itself recorded about its compactions (NextClaw's summaryDiagnostics), reported in
# its terms under this code: not a bad line.
RUNTIME_REPORTS = frozenset({"compaction_report"})


def role_counts(report: Report, seqs: Iterable[int]) -> dict[str, int]:
    # (the roles counted in C, one `list.count` per role: a Counter's per-element update cost as
    # much again, on the 15k holes of a 20 MB Codex rollout)
    roles = list(map(_ROLE, map(report.ledger.records.__getitem__, seqs)))
    return {k: n for k in _ROLE_ORDER if (n := roles.count(k))}


_ROLE_ORDER = ("system", "user", "assistant", "tool")


_ROLE = operator.attrgetter("role")
_LINE = operator.attrgetter("line")


def plural(n: int, word: str) -> str:
    return f"{count(n)} {word}" if n == 1 else f"{count(n)} {word}s"


def fmt_roles(by_role: dict[str, int]) -> str:
    return " / ".join(f"{count(n)} {role}" for role, n in by_role.items()) or "0"


def _at(report: Report, line: int) -> str:
    """A record's place as its runtime names it (`Runtime.record_place`): "line 12", "event 12"."""
    return f"{report.runtime.record_place} {line}"


def _lines(report: Report, seqs: list[int]) -> str:
    if not seqs:
        return ""
    ls = list(map(_LINE, map(report.ledger.records.__getitem__, seqs)))
    first, last = min(ls), max(ls)
    return _at(report, first) if first == last else f"{report.runtime.record_place}s {first}–{last}"


def _cp_name(report: Report, v: CheckpointView) -> str:
    return f"checkpoint {v.index} ({_at(report, v.record.line)})"


def find_all(report: Report) -> list[Finding]:
    return ordered([*find_history(report), *find_tail(report)])


def ordered(findings: list[Finding]) -> list[Finding]:
    """Findings in report order: by severity, then by their first record (a stable sort: rule
    order breaks ties)."""
    findings.sort(key=lambda f: (SEVERITY_RANK[f.severity], min(f.records) if f.records else -1))
    return findings


def find_history(report: Report) -> list[Finding]:
    """The rules that read the diagnostics, the checkpoints and the path up to the latest
    checkpoint: an append that adds neither a checkpoint nor a diagnostic, and only extends the
    path past its end with live messages, leaves what they find unchanged."""
    out: list[Finding] = []
    positions = hole_positions(report)
    causes = functools.cache(functools.partial(holes_by_cause, report, positions))  # for both rules, once
    roles = functools.cache(lambda seqs: role_counts(report, seqs))  # (a cause's holes, counted once for both)
    out += _malformed(report)
    out += _broken_tree(report)
    out += _holes(report, causes, positions, roles)
    out += _fallbacks(report, causes, roles)
    out += _dangling(report)
    out += _truncated(report)
    out += _usage_missing(report)
    out += _loops(report)
    out += _storms(report)
    return out


# The codes only `find_tail` emits (an incremental update recomputes them, keeps the others).
TAIL_CODES = frozenset(
    {"live_question_summarized", "orphan_tool_result", "unanswered_tool_call", "dropped_tool_result", "over_budget", "request_fails", "compacts_first"}
)


def find_tail(report: Report) -> list[Finding]:
    """The rules that read the end of the path and the next request: any append can change them."""
    out: list[Finding] = []
    out += _live_question(report)
    out += _tool_pairing(report)
    out += _dropped_results(report)
    out += _over_budget(report)
    out += _request_fails(report)
    out += _compacts_first(report)
    return out


def _compacts_first(report: Report) -> list[Finding]:
    """The runtime's own limit check before the next request, where it compacts the session first
    (`Runtime.compacts_first`): what the model receives next is then the summarizer's prompt."""
    rule = report.runtime.compacts_first
    if rule is None or not report.context or any(d.problem == "resume_refused" for d in report.ledger.diagnostics):
        return []  # (a session the runtime refuses to resume it never compacts)
    got = rule(report.ledger, report.context, report.path, report.window, report.reserve)
    if got is None:
        return []
    message, seqs = got
    return [Finding("compacts_first", "warning", message, seqs)]


def _converted(report: Report, s: int) -> bool:
    """Is the message s among those the runtime converts for the next request (on the active path,
    not taken out by the newest checkpoint)? Those it then drops for their stop reason are; one a
    checkpoint took out is not (pi's `buildSessionContext` gives only the summary, the kept entries
    and those after the compaction to the conversion, pi-coding-agent dist/core/session-manager.js:162-195;
    observed: pi 0.73.1 resumes a repaired session whose errored reply with null content sits
    before the kept entry, where inspector said it sends nothing, tests/peers/pi_resume/repair_probe.py)."""
    if not report.on_path[s]:
        return False
    if not report.checkpoints:
        return True
    return not report.checkpoints[-1].is_removed(report.path.index(s))


def _request_fails(report: Report) -> list[Finding]:
    """An entry the runtime fails on, where it fails: on the active path when it opens the session,
    or among the messages it converts for the next request (those it then drops for their stop
    reason included: they are converted first)."""
    fails = [d for d in report.ledger.diagnostics if d.problem in (FAILS_ON_OPEN, FAILS_ON_SEND) and d.seqs]
    if not fails:
        return []
    sent = {s for it in report.context if it.seq is not None for s in (it.seq, *it.joined)}
    states, records = report.states, report.ledger.records
    out: list[Finding] = []
    for d in fails:
        s = d.seqs[0]
        if d.problem == FAILS_ON_OPEN:
            hit = bool(report.on_path[s])
        else:
            hit = s in sent or (
                states[s] == EXCLUDED and records[s].stop_reason in report.runtime.not_sent_as_written and _converted(report, s)
            )
        if hit:
            where = "is on the active path" if d.problem == FAILS_ON_OPEN else "is in the next request"
            msg = f"{d.message}. The message {where}: {report.runtime.name} sends nothing until that line is repaired"
            out.append(Finding("request_fails", "error", msg, [s], data={"line": d.line, "problem": d.problem}))
    return out


# ---------------------------------------------------------------------------------------- input


def _malformed(report: Report) -> list[Finding]:
    led = report.ledger
    out: list[Finding] = []
    lost = set(report.lost_to_runtime)
    for d in led.diagnostics:
        if d.problem in NOTE_PROBLEMS or d.problem in RESULT_DROPS or d.problem in (FAILS_ON_OPEN, FAILS_ON_SEND):
            continue  # which session of a database was read (ADK), ...: information; what the runtime fails on: `_request_fails`
        if d.problem in RUNTIME_PROBLEMS:
            out.append(Finding(RUNTIME_PROBLEMS[d.problem], d.severity, d.message, list(d.seqs), data={"line": d.line, "problem": d.problem}))
            continue
        if d.problem == "duplicate_id":
            out.append(Finding("duplicate_id", "warning", d.message, list(d.seqs)))
            continue
        if d.problem in RUNTIME_REPORTS:
            out.append(Finding(d.problem, d.severity, d.message, list(d.seqs), data={"line": d.line}))
            continue
        if d.problem in STRUCTURE_PROBLEMS:
            out.append(Finding("file_structure", d.severity, d.message, list(d.seqs), data={"line": d.line, "problem": d.problem}))
            continue
        if d.problem == "parent_cycle":  # an adapter's own walk met a cycle (Claude Code)
            out.append(Finding("broken_tree", "error", d.message, list(d.seqs), data={"line": d.line}))
            continue
        msg = d.message
        sev = d.severity
        if d.problem == "glued_objects" and report.runtime.skips_glued_lines:
            recs = [led.records[s] for s in d.seqs]
            parts = []
            msgs = [r for r in recs if r.kind == "message"]
            cps = [r for r in recs if r.kind == "checkpoint"]
            if msgs:
                parts.append(plural(len(msgs), "message"))
            if cps:
                parts.append(f"{len(cps)} compaction{'s' if len(cps) != 1 else ''}")
            cost = " and ".join(parts) or "its records"
            extra = ""
            cut_off = [s for s in report.lost_to_runtime if led.records[s].line != d.line]
            if cut_off:
                extra = f"; the path breaks there, so {plural(len(cut_off), 'earlier message')} ({fmt_roles(role_counts(report, cut_off))}) leave the request too"
            cp_note = ""
            if cps:
                cp_note = " The lost compaction never takes effect: the next request is built as if it had not been written."
            msg = (
                f"{d.message}. We recovered both, but {report.runtime.name} skips the whole line: {cost} never reach the model{extra}.{cp_note}"
            )
            sev = "error" if (cps or msgs) else "warning"
        elif d.problem == "missing_header" and report.runtime.needs_header:
            sev = "error"
        seqs = list(d.seqs) or [s for s in lost if led.records[s].line == d.line]
        out.append(Finding("malformed_line", sev, msg, seqs, data={"line": d.line, "problem": d.problem, "recovered": d.recovered}))
    return out


def _broken_tree(report: Report) -> list[Finding]:
    return [Finding("broken_tree", "error", d.message, list(d.seqs), data={"line": d.line}) for d in report.broken_tree]


# ---------------------------------------------------------------------------------------- coverage


def hole_positions(report: Report) -> list[int]:
    """The path positions of the holes on the path, in order. A hole is a message: where the
    analysis scanned this path (`engine.PathScan`) only its messages' positions are looked at."""
    path = report.path
    states = report.states
    if HOLE not in states:  # (one search in C: most sessions have none)
        return []
    scan = report._scan
    if scan is not None and scan.path is path:
        return [i for i in scan.msgs if states[path[i]] == HOLE]
    return [i for i, s in enumerate(path) if states[s] == HOLE]


def holes_by_cause(report: Report, positions: list[int] | None = None) -> list[tuple[CheckpointView, list[int]]]:
    """The holes on the path (seqs, in path order) by the first checkpoint that removed them
    without representing them, in checkpoint order; holes no checkpoint caused are left out.
    `positions`: `hole_positions(report)`, when the caller has them."""
    path = report.path
    holes = hole_positions(report) if positions is None else positions  # in path order: sorted
    out: list[tuple[CheckpointView, list[int]]] = []
    for v in report.checkpoints:
        if not holes:
            break
        # Removed (ADK: by a timestamp range, not a prefix) and not represented.
        gone, holes = v.split_unrepresented(holes)
        if gone:
            out.append((v, list(map(path.__getitem__, gone))))
    return out


def hole_causes(report: Report) -> dict[int, CheckpointView]:
    """For each hole on the path, the first checkpoint that removed it without representing it."""
    cause: dict[int, CheckpointView] = {}
    for v, seqs in holes_by_cause(report):
        cause.update(dict.fromkeys(seqs, v))
    return cause


def _holes(
    report: Report,
    causes: Callable[[], list[tuple[CheckpointView, list[int]]]],
    positions: list[int],
    roles: Callable[[tuple[int, ...]], dict[str, int]],
) -> list[Finding]:
    holes = list(map(report.path.__getitem__, positions))
    lost = set(report.lost_to_runtime)  # off the path: holes the runtime cannot reach
    if lost:
        on_path = set(holes)
        holes += [s for s in lost if s not in on_path]
    if not holes:
        return []
    # Each group's seqs in order, the groups in the order of their first seq.
    by_key: dict[str, list[int]] = {"lost": sorted(lost)} if lost else {}
    placed: set[int] = set(lost)
    for v, seqs in causes():
        by_key[f"cp{v.index}"] = seqs
        placed.update(seqs)
    rest = set(holes) - placed
    if rest:  # the latest checkpoint removed them (or nothing did: the runtime cannot reach them)
        key = f"cp{report.checkpoints[-1].index}" if report.checkpoints else "lost"
        by_key[key] = [*by_key.get(key, []), *rest]
    ordered_groups = sorted((sorted(seqs), key) for key, seqs in by_key.items() if seqs)
    groups = {key: seqs for seqs, key in ordered_groups}
    out: list[Finding] = []
    by_index = {f"cp{v.index}": v for v in report.checkpoints}
    for key, seqs in groups.items():
        by_role = dict(roles(tuple(seqs)))
        n = len(seqs)
        if key == "lost":
            if report.ledger.runtime_rejects_file:
                why = report.runtime.file_rejected or f"{report.runtime.name} rejects this file whole and would start an empty session"
            else:
                why = "the runtime cannot read or reach them (see the malformed-line finding)"
            msg = f"{plural(n, 'message')} ({fmt_roles(by_role)}) never {'reaches' if n == 1 else 'reach'} the model: {why}."
        else:
            v = by_index[key]
            if v.empty_summary:
                how = "its summary is empty"
            elif v.carried_forward:
                how = "it carried the previous summary forward instead of summarizing them"
            elif v.checkpoint.failure_reason:
                how = f"it is a fallback ({v.checkpoint.failure_reason}) that summarized nothing"
            elif getattr(v, "summary_rep", None) is not None:
                # ADK: removed by timestamp, whether or not its summarizer was handed them.
                d = v.checkpoint.details if isinstance(v.checkpoint.details, dict) else {}
                how = (
                    f"their timestamps lie inside its range [{iso_time(d.get('start_timestamp'))}, "
                    f"{iso_time(d.get('end_timestamp'))}] "
                    "but its summarizer was not handed them (a timestamp tie at the range's end, or written "
                    "after the summary ran), and no other summary sent covers them"
                )
            else:
                how = "no summary covers them"
            msg = (
                f"{plural(n, 'message')} ({fmt_roles(by_role)}, {_lines(report, seqs)}) left the request at "
                f"{_cp_name(report, v)} without being represented: {how}."
            )
        data = {"checkpoint": by_index[key].index if key in by_index else None}
        out.append(Finding("hole", "error", msg, seqs, by_role=by_role, data=data))
    return out


def _fallbacks(
    report: Report,
    hole_causes: Callable[[], list[tuple[CheckpointView, list[int]]]],
    roles: Callable[[tuple[int, ...]], dict[str, int]],
) -> list[Finding]:
    out: list[Finding] = []
    records = report.ledger.records
    causes = dict((id(v), seqs) for v, seqs in hole_causes()) if any(v.fallback for v in report.checkpoints) else {}
    for v in report.checkpoints:
        if not v.fallback:
            continue
        kept = v.retains
        users = [s for s in kept if records[s].role == "user"]
        holes_here = causes.get(id(v), [])
        tokens_kept = None
        budget = v.checkpoint.budget_tokens
        too_small = False
        if budget:
            tokens_kept = sum(_rough_tokens(records[s]) for s in kept)
            too_small = tokens_kept < budget // 2 and bool(holes_here)
        one_user = len(kept) <= 1 and len(users) == len(kept)
        if not (one_user or too_small):
            continue
        if one_user:
            tail = "one user message" if kept else "nothing"
        else:
            tail = f"{len(kept)} messages ({tokens_kept} tokens of a {budget}-token budget)"
        lost = f"; {plural(len(holes_here), 'message')} ({fmt_roles(roles(tuple(holes_here)))}) it removed are represented by no summary" if holes_here else ""
        msg = f"{_cp_name(report, v)} is a fallback that kept {tail} raw{lost}."
        sev = "error" if holes_here or v is report.checkpoints[-1] else "warning"
        out.append(Finding("amnesiac_fallback", sev, msg, [v.seq, *kept], data={"checkpoint": v.index}))
    return out


def _rough_tokens(rec: Record) -> int:
    m = rec.message
    if m is None:
        return 0
    n = sum(len(b.text) for b in m.blocks)
    return (n + 3) // 4


def summary_sound(report: Report, v: CheckpointView) -> bool:
    """Is this checkpoint a sound base for the next request: a real summary (not a fallback, not
    carried forward, not empty), complete, with its boundary on the path?"""
    cp = v.checkpoint
    carried = v.carried_forward and not v.repair  # a repair carries only a summary it judged sound
    if v.fallback or v.empty_summary or carried or cp.truncated or v.first_kept_found is False:
        return False
    state = summary_completeness(cp.summary)
    if state == "essential_incomplete" or cp.essential_complete is False:
        return False
    sf = report.runtime.summary_format
    return not (state is None and sf is not None and template_incomplete(cp.summary, sf))


def superseded_by(report: Report, v: CheckpointView) -> CheckpointView | None:
    """The first later checkpoint on the path that is sound: the next request no longer depends
    on `v`, so what is wrong with `v` is history, not the session's state."""
    for w in report.checkpoints[v.index :]:
        if summary_sound(report, w):
            return w
    return None


def _dangling(report: Report) -> list[Finding]:
    out: list[Finding] = []
    for v in report.checkpoints:
        if v.first_kept_found is False:
            cp = v.checkpoint
            target = cp.first_kept_id if cp.first_kept_id is not None else cp.explicit_boundary
            if isinstance(target, str) and target.startswith("index:"):
                target = f"entry index {target[6:]}"
            n_removed = sum(1 for s in report.path[: v.cut] if report.ledger.records[s].kind == "message")
            rt = report.runtime
            effect = (
                f"{rt.name} keeps nothing raw: {plural(n_removed, 'message')} before it leave the request"
                if rt.missing_boundary_keeps_nothing
                else f"nothing before it is kept raw: {plural(n_removed, 'message')} leave the request"
            )
            unverified = ""
            if rt.missing_boundary_keeps_nothing:
                unverified = (
                    " Its summary was written for a range ending at that missing entry, so the messages "
                    f"after it, which {rt.name} now drops, may be represented by nothing"
                )
            later = superseded_by(report, v)
            if later is not None:
                unverified = f" (history: {_cp_name(report, later)} supersedes it)"
            out.append(
                Finding(
                    "dangling_first_kept",
                    "error" if later is None else "warning",
                    f"{_cp_name(report, v)} keeps from {quote(target)}, which is not on the active path; {effect}.{unverified}",
                    [v.seq],
                    data={"checkpoint": v.index, "first_kept": target},
                )
            )
    return out


def _truncated(report: Report) -> list[Finding]:
    out: list[Finding] = []
    for v in report.checkpoints:
        cp = v.checkpoint
        reasons: list[str] = []
        state = summary_completeness(cp.summary)
        incomplete = state == "essential_incomplete" or cp.essential_complete is False
        if cp.truncated:
            reasons.append("it is marked truncated")
        if state == "essential_incomplete":
            reasons.append("it stops before the essential-sections marker")
        elif cp.essential_complete is False:
            reasons.append("its essential sections are not closed")
        elif state == "optional_truncated":
            reasons.append("an optional section after the essential marker is not closed")
        elif state is None and report.runtime.summary_format is not None:
            why = template_incomplete(cp.summary, report.runtime.summary_format)
            if why:
                reasons.append(why)
        if not reasons:
            continue
        # Cut before the essential marker: not installable (seed 004). Otherwise partly lost.
        later = superseded_by(report, v)
        sev = "error" if incomplete and later is None else "warning"
        effect = "the essential sections are incomplete" if incomplete else "what it stands for is partly lost"
        if later is not None:
            effect += f" (history: {_cp_name(report, later)} supersedes it)"
        out.append(
            Finding(
                "truncated_summary",
                sev,
                f"{_cp_name(report, v)}'s summary looks cut at the output limit: {'; '.join(reasons)}; {effect}.",
                [v.seq],
                data={"checkpoint": v.index},
            )
        )
    return out


def _usage_missing(report: Report) -> list[Finding]:
    out: list[Finding] = []
    for v in report.checkpoints:
        cp = v.checkpoint
        d = cp.details if isinstance(cp.details, dict) else None
        records_usage = report.runtime.checkpoints_record_usage or (d is not None and "usage" in d)
        if records_usage and cp.usage is None and cp.failure_reason is None:
            out.append(
                Finding(
                    "usage_missing",
                    "warning",
                    f"{_cp_name(report, v)} records no usage and no failure reason: a budget failure and a provider failure look the same.",
                    [v.seq],
                    data={"checkpoint": v.index},
                )
            )
    return out


def _no_progress(report: Report, prev: CheckpointView, v: CheckpointView) -> str | None:
    """Why `v` made no progress over `prev`, or None when it did.

    A single fallback that carried the previous summary forward but moved the boundary is not a
    loop (the hole and amnesiac-fallback findings say what it cost); repeating it is.
    """
    if summary_sound(report, v) and not summary_sound(report, prev):
        return None  # a sound summary replacing a broken one is the progress a loop lacks
    if v.first_kept_found is not False and v.cut < prev.cut:
        return None  # it brought messages the previous one removed back into the request
    native = v.checkpoint.explicit_represents is not None or v.checkpoint.explicit_retains is not None
    if native:
        brought_back = set(v.checkpoint.explicit_retains or []) - set(prev.checkpoint.explicit_retains or [])
        if brought_back and brought_back & {prev._records[s].id for s in prev.removes}:
            return None  # it keeps raw what the previous one removed: not a loop
        if v.checkpoint.explicit_boundary == prev.checkpoint.explicit_boundary:
            return "same boundary"
    elif v.first_kept_seq is not None and v.first_kept_seq == prev.first_kept_seq:
        return "same boundary"
    if v.fallback and prev.fallback:
        return "repeated failures"
    if not _summarized_any(v) and not v.fallback:
        return "nothing summarized"
    s1, s2 = prev.checkpoint.summary.strip(), v.checkpoint.summary.strip()
    if s1 and s1 == s2 and v.cut <= prev.cut:
        return "identical summary"
    return None


def _summarized_any(v: CheckpointView) -> bool:
    """Did this checkpoint's own summarizer range hold at least one message? (Read position by
    position: a slice of the range copied the whole range, 32k positions a checkpoint of a 100 MB
    ledger, to answer at its first message.)"""
    recs, path = v._records, v._path
    return any(recs[path[i]].kind == "message" for lo, hi in v.own for i in range(lo, hi))


def _loops(report: Report) -> list[Finding]:
    out: list[Finding] = []
    cps = report.checkpoints
    run: list[tuple[CheckpointView, str]] = []

    def close() -> None:
        if run:
            first = run[0][0]
            reasons = sorted({r for _, r in run})
            n = len(run) + 1
            # A loop a later checkpoint broke out of is history; one that reaches the latest
            # checkpoint is the state the session is stuck in.
            ended = run[-1][0] is not cps[-1]
            sev = "error" if n >= 3 and not ended else "warning"
            tail = f"; {_cp_name(report, cps[cps.index(run[-1][0]) + 1])} broke out of it" if ended else ""
            seqs = [first.seq] + [v.seq for v, _ in run]
            seqs = sorted(set(seqs))
            # include the predecessor of the first looping checkpoint
            idx = cps.index(run[0][0])
            if idx > 0:
                seqs = sorted({cps[idx - 1].seq, *seqs})
            out.append(
                Finding(
                    "compaction_loop",
                    sev,
                    f"{n} checkpoints in a row make no progress ({', '.join(reasons)}), "
                    f"from {_at(report, report.ledger.records[seqs[0]].line)} to {_at(report, report.ledger.records[seqs[-1]].line)}{tail}.",
                    seqs,
                )
            )

    for prev, v in itertools.pairwise(cps):
        why = _no_progress(report, prev, v)
        if why:
            run.append((v, why))
        else:
            close()
            run = []
    close()
    # A single checkpoint that summarized nothing is a loop of one iteration waiting to happen.
    if cps and not out:
        first = cps[0]
        if not _summarized_any(first) and not first.fallback and first.cut == 0:
            out.append(
                Finding(
                    "compaction_loop",
                    "warning",
                    f"{_cp_name(report, first)} summarized nothing: it removes no message, so the next threshold check fires again.",
                    [first.seq],
                )
            )
    return out


def _storms(report: Report, threshold: int = 3) -> list[Finding]:
    records = report.ledger.records
    out: list[Finding] = []
    current: list[int] = []
    user_line: int | None = None

    def close() -> None:
        if len(current) >= threshold:
            out.append(
                Finding(
                    "compaction_storm",
                    "warning",
                    f"{len(current)} checkpoints within one turn"
                    + (f" (the turn started at {_at(report, user_line)})" if user_line else "")
                    + ": the summarizer ran again and again with no new user input.",
                    list(current),
                )
            )

    scan = report._scan
    if scan is not None and scan.path is report.path and threshold > 0:  # (what the analysis read of the path)
        if len(scan.breaks) < threshold:
            return out
        # The checkpoints grouped by the turn they fall in (the turns started before each: a
        # bisection per checkpoint, not a step per turn of the path).
        path, turns = report.path, scan.turns
        for before, group in itertools.groupby(scan.breaks, key=functools.partial(bisect_left, turns)):
            current = [path[i] for i in group]
            user_line = records[path[turns[before - 1]]].line if before else None
            close()
        return out
    for s in report.path:
        r = records[s]
        if r.kind == "message" and r.role == "user" and r.source_role in (None, "user", "custom"):
            close()
            current = []
            user_line = r.line
        elif r.kind == "checkpoint":
            current.append(s)
    close()
    return out


def appended_order(report: Report) -> list[int]:
    """The path in the order its records were appended, where the ledger records one that differs
    from the stored order (ADK: a reload orders timestamp ties by event id; the turn in progress
    is the one whose input was appended last). A report grown from another keeps it up to date
    (`analysis.incremental`, its `appended_order`): only the new records are placed."""
    hdr = report.ledger.header or {}
    ranks = hdr.get("append_ranks")
    if not isinstance(ranks, list) or len(ranks) != len(report.ledger.records):
        return report.path
    kept = getattr(report._growth, "appended_order", None)
    if isinstance(kept, list) and len(kept) == len(report.path):
        return kept
    # By (rank, seq): by seq, then stably by rank (two sorts at C speed, not a key tuple per record).
    return sorted(sorted(report.path), key=ranks.__getitem__)


def _active_user(report: Report) -> int | None:
    """The user message of the turn in progress: the last real user message on the path (or the
    record the ledger names as the run's input: ADK's answer to a long-running call), when no
    final answer (an assistant message that stopped normally) came after it, other than one of
    the run the ledger says the next model call continues (ADK: a parallel agent's sub-agent
    replied, another is still to)."""
    records = report.ledger.records
    hdr = report.ledger.header or {}
    run_input = hdr.get("run_input_seq")
    in_run = None
    if hdr.get("next_call_in_run") is True:
        last = next((records[s] for s in reversed(appended_order(report)) if records[s].kind == "message"), None)
        in_run = last.run_id if last is not None else None
    for s in reversed(appended_order(report)):
        r = records[s]
        if r.kind != "message":
            continue
        if r.role == "assistant" and r.stop_reason in ("stop", "length") and (in_run is None or r.run_id != in_run):
            m = r.message
            if m is not None and not m.tool_call_ids():
                return None
        if (r.role == "user" and r.source_role in ("user", None)) or s == run_input:
            return s
    return None


def _live_question(report: Report) -> list[Finding]:
    if not report.checkpoints:
        return []
    s = _active_user(report)
    if s is None:
        return []
    last = report.checkpoints[-1]
    i = report.path.index(s)
    if not last.is_removed(i):
        return []
    r = report.ledger.records[s]
    m = r.message
    text = m.first_line()[:80] if m is not None else ""
    how = "summarized" if last.is_represented(i) else "dropped"
    full = m.text().strip() if m is not None else ""
    if full and full in last.checkpoint.summary:
        # A runtime that keeps only a contiguous tail (pi) cannot keep the request raw when its
        # turn outgrows the window; a summary that quotes it verbatim still carries the instruction.
        return [
            Finding(
                "live_question_summarized",
                "warning",
                f"The active turn's own request ({_at(report, r.line)}: {text!r}) is not raw in the next request: "
                f"{_cp_name(report, last)} quotes it verbatim in its summary, so the model reads it as history.",
                [s, last.seq],
            )
        ]
    return [
        Finding(
            "live_question_summarized",
            "error",
            f"The active turn's own request ({_at(report, r.line)}: {text!r}) was {how} out of the next request by "
            f"{_cp_name(report, last)}: the model continues a task whose instruction it can no longer read.",
            [s, last.seq],
        )
    ]


def _tool_pairing(report: Report) -> list[Finding]:
    out: list[Finding] = []
    for it in report.context:
        if it.orphan and it.seq is not None:
            r = report.ledger.records[it.seq]
            out.append(
                Finding(
                    "orphan_tool_result",
                    "error",
                    f"The tool result on {_at(report, r.line)} (call {quote(it.tool_result_id)}) is sent without its tool call; "
                    "providers reject such a request.",
                    [it.seq],
                )
            )
        if it.unanswered and it.seq is not None:
            r = report.ledger.records[it.seq]
            if report.runtime.synthesize_missing_results:
                tail = f'{report.runtime.name} sends a synthetic "{report.runtime.synthetic_result_text}" error result in its place'
                sev = "warning"
            else:
                tail = report.runtime.unanswered_call or "providers reject such a request"
                sev = "error"
            calls = ", ".join(quote(c) for c in it.unanswered)  # (an id a file holds: shortened, never megabytes)
            out.append(
                Finding(
                    "unanswered_tool_call",
                    sev,
                    f"The tool call{'s' if len(it.unanswered) > 1 else ''} {calls} on {_at(report, r.line)} "
                    f"{'have' if len(it.unanswered) > 1 else 'has'} no result in the next request; {tail}.",
                    [it.seq],
                )
            )
    return out


def _dropped_results(report: Report) -> list[Finding]:
    """The tool results on the path the runtime removes from the next request, pairing them with
    no call there (a call the request does not hold, or not where the runtime pairs them): the
    model never reads that output, though the user saw it. A line removed whole
    (`Report.dropped_results`), a line sent without some of its results
    (`ContextItem.removed_results`), in the adapter's own words where it names the line
    (`RESULT_DROPS`)."""
    records = report.ledger.records
    said = {d.seqs[0]: d for d in report.ledger.diagnostics if d.problem in RESULT_DROPS and d.seqs}
    lines = [(s, result_ids(records[s], records[s].result_id), False) for s in report.dropped_results]
    lines += [(it.seq, list(it.removed_results), True) for it in report.context if it.removed_results and it.seq is not None]
    out: list[Finding] = []  # (in any order: `ordered` puts every finding in report order)
    wanted = {c for s, calls, _ in lines if s not in said for c in calls}
    sent = _sent_results(report, wanted) if wanted else {}
    for s, calls, rest_sent in lines:
        if s not in said and calls:  # (a copy of a result the request holds for the same call: nothing is lost)
            calls = [c for c in calls if sent.get(c) is None or sent[c] != _result_blocks(records[s], c)]
            if not calls:
                continue
        d = said.pop(s, None)
        msg = d.message if d is not None else _dropped_message(report, s, calls, rest_sent)
        data: dict[str, object] = {"calls": calls} if d is None else {"calls": calls, "line": d.line, "problem": d.problem}
        out.append(Finding("dropped_tool_result", "warning", msg, [s], data=data))
    for d in said.values():  # (named by the adapter, not found removed by the request built here)
        out.append(Finding("dropped_tool_result", d.severity, d.message, list(d.seqs), data={"line": d.line, "problem": d.problem}))
    return out


def _result_blocks(rec: Record, call: str) -> list[tuple[str, str, bool]] | None:
    """What a line answers `call` with (its result blocks for it: type, text, error flag); None when
    its message cannot be read."""
    m = rec.message
    if m is None:
        return None
    return [(b.type, b.text, b.is_error) for b in m.blocks if b.type == "tool_result" and b.call_id == call]


def _sent_results(report: Report, wanted: set[str]) -> dict[str, list[tuple[str, str, bool]] | None]:
    """Of the `wanted` calls, those the next request holds a result for, each with what the first
    line sent for it answers: a result removed as a copy of one of these (Claude Code takes a
    reply's first line, and its results, off the chain when a later copy of that reply is on it:
    the copy's results go, the model reads the same output once) loses nothing. Only the lines
    answering a wanted call are read (a result's content is read on demand)."""
    records = report.ledger.records
    many = report.runtime.many_results_per_message  # (else a tool message answers its one call: no read)
    out: dict[str, list[tuple[str, str, bool]] | None] = {}
    for it in report.context:
        if it.role != "tool" or it.seq is None or it.synthetic:
            continue
        rec = records[it.seq]
        for c in result_ids(rec, it.tool_result_id) if many else (it.tool_result_id,):
            if c in wanted and c not in it.removed_results and c not in out:
                out[c] = _result_blocks(rec, c)
    return out


def _dropped_message(report: Report, s: int, calls: list[str], rest_sent: bool) -> str:
    many = len(calls) > 1
    ids = ", ".join(quote(c) for c in calls) or "a call with no id"
    them = "them" if many else "it"
    rest = "; the rest of that line is sent" if rest_sent else ""
    return (
        f"The tool result{'s' if many else ''} for {ids} on {_at(report, report.ledger.records[s].line)} {'are' if many else 'is'} "
        f"left out of the next request: {report.runtime.name} pairs {them} with no call in the request and removes {them}{rest}. "
        "The model never reads that output."
    )


def _over_budget(report: Report) -> list[Finding]:
    w = report.window
    if not w:
        return []
    total = report.context_tokens
    reserve = report.reserve or 0
    if total > w:
        return [
            Finding(
                "over_budget",
                "error",
                f"The next request holds about {total:,} tokens, more than the {w:,}-token window.",
                [],
            )
        ]
    if reserve and total > w - reserve:
        return [
            Finding(
                "over_budget",
                "warning",
                f"The next request holds about {total:,} tokens, over the {w - reserve:,} the window leaves after the "
                f"{reserve:,}-token reserve.",
                [],
            )
        ]
    return []

