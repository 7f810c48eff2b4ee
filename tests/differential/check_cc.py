"""Compare our reading of a generated Claude Code session with what Claude Code sent (issue 16, point 2).

For every main-loop request: our next request on the transcript as it stood when the request
arrived (`load(..., upto_line=N)`, what `context --at N` shows) against the request's messages,
each content block traced to the transcript line that holds it (tool_use / tool_result by id, a
text by its exact text: a matched text is the same digest): the records in order, their roles, the
tool-call ids in order; and every message of that transcript our analysis calls a hole must be
absent from the request. For every summarizer request: the messages it was given against what the
checkpoint Claude Code then wrote represents by its own call (`summarized_here`, DESIGN §2; its
kept verbatim segment included when the summarizer saw it, issue 16 point 4).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.formats import load
from inspector.ledger.model import Ledger

REPO = Path(__file__).resolve().parents[2]
RESUME_HARNESS = REPO / "tests" / "peers" / "claude_code_resume" / "harness.py"
ROLE_SENT = {"tool": "user", "summary": "user", "user": "user", "assistant": "assistant"}


def _harness() -> Any:
    name = "claude_code_resume_harness"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, RESUME_HARNESS)
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


@dataclass
class Outcome:
    name: str
    calls_checked: int = 0
    calls_skipped: int = 0
    compactions: int = 0
    replay_checked: bool = False  # Claude Code has no replay: its summarizer inputs are checked instead
    disagreements: list[dict[str, Any]] = field(default_factory=list)

    def disagree(self, what: str, **detail: Any) -> None:
        self.disagreements.append({"what": what, **detail})


def record_of_line(led: Ledger) -> dict[str, str]:
    """Line uuid -> the id of the record the prediction names for it: a reply's continuation lines
    name their reply's first line, a summary line its boundary."""
    by_line = {r.line: r for r in led.records}
    out: dict[str, str] = {}
    for r in led.records:
        if r.id is None:
            continue
        e = r.extra or {}
        into = (
            e.get("merged_into_line")
            if isinstance(e.get("merged_into_line"), int)
            else e.get("summary_of_line")
        )
        target = by_line.get(into) if isinstance(into, int) else r
        out[r.id] = (target or r).id or r.id
    return out


def sent_records(
    body: dict[str, Any], prefix: Path, led: Ledger, predicted: set[str] | None = None
) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """The records the request carries, in order; (kind, call id) of its tool blocks in order;
    the texts of blocks that came from no line of the prefix (the runtime's own, or not yet
    written). A text several lines hold alike is credited to a predicted record's line."""
    names = record_of_line(led)
    prefer = {u for u, rid in names.items() if rid in (predicted or set())}
    items: list[str] = []
    tools: list[tuple[str, str]] = []
    unknown: list[str] = []
    for s in _harness().request_blocks(body, str(prefix), prefer):
        if s.role == "system":
            continue  # the environment note Claude Code renders itself
        if s.kind in ("tool_use", "tool_result") and s.call_id:
            tools.append((s.kind, s.call_id))
        if s.line_uuid is not None and s.line_uuid in names:
            rid = names[s.line_uuid]
            if not items or items[-1] != rid:
                items.append(rid)
        elif s.kind in ("tool_use", "tool_result") or not s.text.startswith("<system-reminder>"):
            unknown.append(f"{s.role}/{s.kind}: {s.text[:80]}")
    return items, tools, unknown


def _prefix(session: Path, n: int, tmp: Path) -> Path:
    lines = session.read_bytes().splitlines(keepends=True)[:n]
    p = tmp / f"upto{n}.jsonl"
    p.write_bytes(b"".join(lines))
    return p


def check_request(o: Outcome, k: int, req: dict[str, Any], session: Path, tmp: Path) -> None:
    n = req["transcript_lines"]
    if n == 0:  # the driver saw no transcript yet: nothing to predict from
        o.disagree("no_transcript_yet", request=k)
        return
    prefix = _prefix(session, n, tmp)
    led = load(str(prefix))
    rep = analyze(led)
    ours = [it for it in rep.context if not it.on_resume]
    want = [it.record_id if not it.synthetic else f"synthetic:{it.tool_result_id}" for it in ours]
    got, tools, unknown = sent_records(req["body"], prefix, led, {x for x in want if x})
    by_id = {r.id: r for r in led.records if r.id is not None}
    where = {"request": k, "at_line": n}
    if got != want:
        o.disagree(
            "next_request",
            **where,
            sent=[_show(by_id, x) for x in got],
            predicted=[_show(by_id, x) for x in want],
        )
        return
    roles_sent = [_sent_role(req["body"], by_id[x]) for x in got]
    roles_ours = [ROLE_SENT.get(it.role if it.kind != "summary" else "summary", it.role) for it in ours]
    if roles_sent != roles_ours:
        o.disagree("roles", **where, sent=roles_sent, predicted=roles_ours)
    tools_ours: list[tuple[str, str]] = []
    for it in ours:
        tools_ours += [("tool_use", c) for c in it.tool_call_ids]
        if it.tool_result_id:
            tools_ours.append(("tool_result", it.tool_result_id))
    if tools != tools_ours:
        o.disagree("tool_ids", **where, sent=tools, predicted=tools_ours)
    if unknown:
        o.disagree("unmatched_blocks", **where, blocks=unknown[:5])
    sent = set(got)
    holes = [r.id for r in led.records if r.kind == "message" and rep.states[r.seq] == "hole"]
    if sent & set(holes):
        o.disagree("hole_sent", **where, holes=[_show(by_id, x) for x in holes if x in sent])


def _sent_role(body: dict[str, Any], rec: Any) -> str:
    if rec.kind == "checkpoint":
        return "user"
    return "assistant" if rec.role == "assistant" else "user"


def _show(by_id: dict[str, Any], rid: str) -> str:
    r = by_id.get(rid)
    if r is None:
        return rid
    return f"line {r.line} {r.kind}:{r.role or ''}"


def check_summarizer(
    o: Outcome, k: int, req: dict[str, Any], session: Path, tmp: Path, until: int | None = None
) -> None:
    """The messages the summarizer was given against what the checkpoint it made represents by its
    own call (the earlier summary it was given stands for what that one represents). A request the
    scenario failed (`summarizer_failed`: refused, or cut at max_tokens) may make no checkpoint
    before the next request (at line `until`): then nothing is represented by it."""
    n = req["transcript_lines"]
    full = load(str(session))
    failed = req.get("summarizer_failed")
    boundary = next(
        (r for r in full.records if r.kind == "checkpoint" and r.line > n and not (failed and until and r.line > until)),
        None,
    )
    if boundary is None:
        if not failed:
            o.disagree("summary_not_written", request=k, at_line=n)  # the CLI made no checkpoint of it
        return
    summary_line = (boundary.extra or {}).get("summary_line", boundary.line)
    prefix = _prefix(session, summary_line, tmp)
    led = load(str(prefix))
    rep = analyze(led)
    view = next((v for v in rep.checkpoints if v.record.id == boundary.id), None)
    if view is None:
        o.disagree("checkpoint_not_read", request=k, line=boundary.line)
        return
    o.compactions += 1
    # A message the runtime never sends (a synthetic API-error reply) is no summarizer's input.
    ours = {led.records[s].id for s in view.own_range if rep.states[s] != "excluded"}
    # (the summary request itself is no line; a block several lines hold alike, a thinking text a
    # replayed step repeats, is credited to a line we say was given, as for a main request: the
    # kept lines of an earlier boundary come after its summary in the request, before it in the
    # file, so "the first after the previous block's line" would credit a later twin)
    got, _, _ = sent_records(req["body"], prefix, led, {x for x in ours if x})
    by_id = {r.id: r for r in led.records if r.id is not None}
    given = {x for x in got if by_id[x].kind == "message"}
    if not view.own_range and view.empty_summary:
        return  # an empty summary stands for nothing, whatever it was given
    if given != ours:
        o.disagree(
            "summarizer_input",
            request=k,
            checkpoint_line=boundary.line,
            given_not_represented=sorted(_show(by_id, x) for x in given - ours),
            represented_not_given=sorted(_show(by_id, x) for x in ours - given if x),
        )


def check(d: Path) -> Outcome:
    o = Outcome(d.name)
    session = d / "session.jsonl"
    reqs = [json.loads(x) for x in (d / "requests.jsonl").read_text().splitlines() if x.strip()]
    with tempfile.TemporaryDirectory(prefix="check-cc-") as t:
        tmp = Path(t)
        for k, req in enumerate(reqs, 1):
            if req["kind"] == "main":
                o.calls_checked += 1
                check_request(o, k, req, session, tmp)
            elif req["kind"] == "compact":
                later = next((r["transcript_lines"] for r in reqs[k:] if r["kind"] in ("main", "compact")), None)
                check_summarizer(o, k, req, session, tmp, later)
    return o
