"""Compare our reading of a generated ADK session with what ADK did (issue 16, point 2).

For every agent model call: our next request at that point (`context --at N`, in-process) against
the contents ADK sent (role, which event or summary each content is, the parts' kinds, names and
text digests, the order); every earlier event's state (live/retained, summarized, hole) against
what the request shows; the live question. For the whole session: the simulator replaying the
scenario's own settings (and the recorded policy, where it infers one) must make ADK's own
compactions (moment, trigger, summarizer input, seed, timestamp range).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis import simulate as sim
from inspector.formats import load
from tests.differential.campaign import Outcome
from tests.differential.campaign import read_lines as _lines


def _sha(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


class Facts:
    """The session ADK wrote and what its requests and summarizers show."""

    def __init__(self, d: Path) -> None:
        ev = json.loads((d / "events.json").read_text())
        self.events: list[dict[str, Any]] = ev["events"]
        self.appended: list[str] = ev["appended"]
        self.requests = _lines(d / "requests.jsonl")
        self.attempts = _lines(d / "compactions.jsonl")
        self.scenario = json.loads((d / "scenario.json").read_text())
        self.index = {e["id"]: i for i, e in enumerate(self.events)}
        self.rank = {eid: k for k, eid in enumerate(self.appended)}
        self.by_key: dict[str, list[int]] = {}
        self.summary_key: dict[str, list[int]] = {}  # several summaries can read the same
        for i, e in enumerate(self.events):
            if e["compaction"] is not None:
                for k in e["compaction"]["keys"]:
                    if k is not None:
                        self.summary_key.setdefault(json.dumps(k), []).append(i)
                continue
            for k in e["keys"]:
                if k is not None:
                    self.by_key.setdefault(json.dumps(k), []).append(i)
        self.twin = self._twins()
        # Made compactions (in creation order) and what each stands for, through its seed.
        self.made = [a for a in self.attempts if a["event_id"] in self.index]
        self.covered: dict[int, set[int]] = {}
        sha_of = {}
        for a in self.made:
            ci = self.index[a["event_id"]]
            comp = self.events[ci]["compaction"]
            sha_of[ci] = next((k[1] for k in comp["keys"] if k and k[0] == "text"), None)
        for a in self.made:
            ci = self.index[a["event_id"]]
            cov = {self.index[i] for i in a["input_ids"] if i in self.index}
            if "seed_id" in a:  # recorded by ADK's own code (older fixtures: by the seed's text)
                if a["seed_shown"] and self.index.get(a["seed_id"]) in self.covered:
                    cov |= self.covered[self.index[a["seed_id"]]]
            else:
                for s in a["seed_texts"]:
                    for cj, h in sha_of.items():
                        if h == s and cj in self.covered:
                            cov |= self.covered[cj]
            self.covered[ci] = cov

    def _twins(self) -> dict[int, int]:
        """Compactions with one range appended back to back (a parallel agent's sub-agents
        compact concurrently, over the same events): each to the first of them. Which one ADK
        then holds last in memory, so keeps (apps/compaction.py:202-241: identical ranges keep
        the latest) and seeds from, is the order their appends finished (sessions/
        sqlite_session_service.py:461-556: the event joins the session's list after its insert
        commits), which the session does not hold: the checks take twins as one summary."""
        out: dict[int, int] = {}
        run: list[int] = []
        for eid in self.appended:
            i = self.index.get(eid)
            if i is None:
                continue
            c = self.events[i]["compaction"]
            if c is None:
                run = []
                continue
            out[i] = next(
                (
                    j
                    for j in run
                    if (self.events[j]["compaction"]["start"], self.events[j]["compaction"]["end"])
                    == (c["start"], c["end"])
                ),
                i,
            )
            run.append(i)
        return out

    def as_one_summary(self, items: list[tuple[str, Any, list[Any]]]) -> list[tuple[str, Any, list[Any]]]:
        return [
            (r, ("summary", self.twin.get(w[1], w[1])) if w[0] == "summary" else w, p) for r, w, p in items
        ]

    def _source(
        self, parts: list[Any], existing: set[int], raw: list[int], summaries: list[int]
    ) -> tuple[str, int] | None:
        """What a content is, from the driver's record of the event each part came from (by
        identity): a summary, an event (every part's event counts as shown: a merged content of
        several responses), or another agent's event as context. None: not recorded."""
        known = [
            (k, self.index[i])
            for k, i in (p for p in parts if p)
            if i in self.index and self.index[i] in existing
        ]
        if not known:
            return None
        kind, first = known[0]
        if self.events[first]["compaction"] is not None:
            summaries.append(first)
            return ("summary", first)
        raw.extend(i for _, i in known if i not in raw)
        return ("context" if kind == "context" else "event", first)

    def sent(self, req: dict[str, Any]) -> tuple[list[tuple[str, Any, list[Any]]], list[int], list[int]]:
        """Each content as (role, what it is, part digests); raw event indexes; summary indexes."""
        existing = {self.index[i] for i in req["event_ids"] if i in self.index}
        out: list[tuple[str, Any, list[Any]]] = []
        raw: list[int] = []
        summaries: list[int] = []
        kept_ranges = [
            (
                self.events[self.index[i]]["compaction"]["start"],
                self.events[self.index[i]]["compaction"]["end"],
            )
            for i in req.get("surviving_ids", [])
            if i in self.index and self.events[self.index[i]]["compaction"] is not None
        ]
        sources = req.get("sources")
        for n, c in enumerate(req["contents"]):
            if sources is not None:
                what = self._source(sources[n], existing, raw, summaries)
                if what is not None:
                    parts = [p for p in c["parts"] if p is not None]
                    out.append((c["role"], what, [_digest(p) for p in parts] if what[0] == "event" else []))
                    continue
            parts = [p for p in c["parts"] if p is not None]
            what: Any = None
            for p in parts:
                k = json.dumps(p)
                if k in self.summary_key:
                    cands = [i for i in self.summary_key[k] if i in existing and i not in summaries]
                    # Summaries sharing one text (empty ones): the one ADK's own ranges kept.
                    kept = {self.index[i] for i in req.get("surviving_ids", []) if i in self.index}
                    cands = [i for i in cands if i in kept] or cands
                    what = ("summary", (cands or self.summary_key[k])[0])
                    summaries.append(what[1])
                    break
                cands = [i for i in self.by_key.get(k, []) if i in existing]
                if cands:
                    # Events sharing a payload (every transfer's call and response): one outside
                    # the ranges of the summaries ADK kept (its own choice, recorded), not shown
                    # yet, following the previous content shown.
                    free = [i for i in cands if i not in raw]
                    later = [i for i in free if not raw or i > raw[-1]]
                    outside = [
                        i
                        for i in later
                        if not any(a <= self.events[i]["timestamp"] <= b for a, b in kept_ranges)
                    ]
                    what = ("event", (outside or later or free or cands)[0])
                    raw.append(what[1])
                    break
            if what is None:
                what = ("context", None)  # another agent's turn, as user-role text
            out.append((c["role"], what, [_digest(p) for p in parts] if what[0] == "event" else []))
        return out, raw, summaries


def _digest(p: list[Any]) -> tuple[Any, ...]:
    return (p[0], p[1]) if p[0] != "text" else ("text", p[1])


def _ours(led: Any, rep: Any, context_events: bool) -> list[tuple[str, Any, list[Any]]]:
    out: list[tuple[str, Any, list[Any]]] = []
    for it in rep.context:
        rec = led.records[it.seq] if it.seq is not None else None
        role = "model" if it.role == "assistant" else "user"
        if it.kind == "summary":
            out.append((role, ("summary", it.seq), []))
            continue
        if rec is None or rec.message is None:
            out.append((role, ("unknown", it.seq), []))
            continue
        if it.role == "user" and rec.role != "user":
            out.append((role, ("context", it.seq if context_events else None), []))
            continue
        parts: list[Any] = []
        for b in rec.message.blocks:
            if b.type in ("text", "thinking"):  # (an agent's own thoughts are sent back as they are)
                parts.append(("text", _sha(b.text or "")))
            elif b.type == "tool_call" and b.call_id in it.tool_call_ids:
                parts.append(("call", b.name))
            elif b.type == "tool_result":
                parts.append(("response", b.name))
        out.append((role, ("event", it.seq), parts))
    return out


def _question(facts: Facts, req: dict[str, Any], at: int) -> int | None:
    """The user's input that started this run of the invocation: its question, or (a resumed
    long-running invocation) the function response the user sent."""
    for i in range(at - 1, -1, -1):
        e = facts.events[i]
        if (
            e["author"] == "user"
            and e["invocation_id"] == req["invocation_id"]
            and e["compaction"] is None
            and any(e["keys"])
        ):
            return i
    return None


def check_requests(d: Path, facts: Facts, out: Outcome) -> None:
    db = str(d / "session.db")
    order = [e["id"] for e in facts.events]
    for n, req in enumerate(facts.requests):
        if req["kind"] != "agent":
            continue
        at = len(req["event_ids"])
        if set(order[:at]) != set(req["event_ids"]):
            out.calls_skipped += 1
            continue
        led = load(db, upto_line=at)
        _as_parallel_sibling(led, req, any(e["author"] == req["agent"] for e in facts.events[:at]))
        rep = analyze(led)
        theirs, raw, summaries = facts.sent(req)
        ours = _ours(led, rep, "sources" in req)
        where = {"request": n, "at": at, "turn": req["turn"], "agent": req["agent"]}
        ours, theirs = facts.as_one_summary(ours), facts.as_one_summary(theirs)
        if [(r, w) for r, w, _ in ours] != [(r, w) for r, w, _ in theirs]:
            out.disagree("next request", **where, ours=_show(ours), theirs=_show(theirs))
        else:
            for o, t in zip(ours, theirs, strict=True):
                if o[1][0] == "event" and o[2] != t[2]:
                    out.disagree("parts", **where, event=o[1][1], ours=o[2], theirs=t[2])
        # Coverage of every earlier event ADK could have sent.
        summarized: set[int] = set()
        ranges = []
        for s in summaries:
            summarized |= facts.covered.get(s, set())
            c = facts.events[s]["compaction"]
            ranges.append((c["start"], c["end"]))
        live = set(req["live_ids"]) if "live_ids" in req else None
        for i, e in enumerate(facts.events[:at]):
            if e["compaction"] is not None or not any(e["keys"]):
                continue
            state = rep.states[i]
            if live is not None and e["id"] not in live:
                want: tuple[str, ...] = ("inactive",)  # a rewind dropped it: ADK never sends it
            elif i in raw:
                want: tuple[str, ...] = ("live", "retained")
            elif i in summarized:
                want = ("summarized",)
            elif any(a <= e["timestamp"] <= b for a, b in ranges):
                want = ("hole",)
            else:
                continue  # not shown for another reason (an orphaned call, another branch)
            if state not in want:
                out.disagree("coverage", **where, event=i, ours=state, theirs=want[0])
        q = _question(facts, req, at)
        lost = q is not None and q not in raw
        fired = any(f.code == "live_question_summarized" and q in f.records for f in rep.findings)
        if lost != fired:
            out.disagree("live question", **where, question=q, adk_lost=lost, we_report=fired)
        out.calls_checked += 1


def _as_parallel_sibling(led: Any, req: dict[str, Any], seen: bool) -> None:
    """A parallel agent's sub-agents run concurrently (agents/parallel_agent.py), each on its own
    branch: which of those that have not replied calls the model first is decided by the event
    loop (each awaits its compaction check and the session service first), not by anything the
    session holds; nor does the session name a sub-agent before its first event (`seen`: the
    caller has an event in the prefix). Where we predict one sub-agent and another of the same
    parallel agent made this call, or the caller is a sub-agent the session has not seen yet, the
    call is compared with our prediction for that sub-agent and branch."""
    hdr = led.header if isinstance(led.header, dict) else None
    if hdr is None or hdr.get("next_agent") == req["agent"]:
        return
    mine = _parallel_parent(req.get("branch"))
    if mine is not None and (not seen or _parallel_parent(hdr.get("next_agent_branch")) == mine):
        hdr["next_agent"], hdr["next_agent_branch"] = req["agent"], req["branch"]
        hdr["next_call_in_run"] = True  # that sub-agent's call: the parallel agent's run goes on


def _parallel_parent(branch: Any) -> str | None:
    """The parallel agent's branch a sub-agent's branch lies under (None: not a sub-branch)."""
    return branch.rsplit(".", 1)[0] if isinstance(branch, str) and "." in branch else None


def _show(items: list[tuple[str, Any, list[Any]]]) -> list[str]:
    return [f"{r}:{w[0]}{'' if w[1] is None else w[1]}" for r, w, _ in items]


def recorded_compactions(facts: Facts) -> list[dict[str, Any]]:
    """ADK's compactions as the simulator reports its own: moment (the event appended just before),
    trigger, when, summarizer input (session events), seed (which earlier one), timestamp range
    over the events that existed then."""
    out = []
    made_index = {facts.index[a["event_id"]]: k for k, a in enumerate(facts.made)}
    for a in facts.made:
        ci = facts.index[a["event_id"]]
        r = facts.rank[a["event_id"]]
        before = [
            eid
            for eid in facts.appended[:r]
            if eid in facts.index and facts.events[facts.index[eid]]["compaction"] is None
        ]
        if "seed_id" in a:
            seeds = [made_index[cj] for cj in made_index if facts.events[cj]["id"] == a["seed_id"]]
        else:
            seeds = [
                made_index[cj]
                for cj in made_index
                if cj != ci and facts.covered.get(cj) and _is_seed(facts, a, cj)
            ]
        out.append(
            {
                "after": facts.index[before[-1]] if before else None,
                "trigger": a["trigger"],
                "when": a["when"],
                "inputs": sorted(facts.index[i] for i in a["input_ids"] if i in facts.index),
                "seed": seeds[0] if seeds else None,
                "range": sorted(
                    facts.index[eid]
                    for eid in before
                    if a["start"] <= facts.events[facts.index[eid]]["timestamp"] <= a["end"]
                ),
            }
        )
    return out


def _one_seed(facts: Facts, series: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The series with each seed named by the first of its twins (`Facts._twins`)."""
    made = [facts.index[a["event_id"]] for a in facts.made]
    first = {ci: k for k, ci in reversed(list(enumerate(made)))}
    out = []
    for c in series:
        s = c["seed"]
        if isinstance(s, int) and 0 <= s < len(made):
            c = dict(c, seed=first.get(facts.twin.get(made[s], made[s]), s))
        out.append(c)
    return out


def _is_seed(facts: Facts, a: dict[str, Any], cj: int) -> bool:
    keys = facts.events[cj]["compaction"]["keys"]
    h = next((k[1] for k in keys if k and k[0] == "text"), None)
    return h is not None and h in a["seed_texts"]


def _replayed(series: Any) -> list[dict[str, Any]]:
    return [
        {
            "after": c.after_seq,
            "trigger": c.trigger,
            "when": c.when,
            "inputs": sorted(c.summarized_seqs),
            "seed": c.seeded_from,
            "range": sorted(c.range_seqs),
        }
        for c in series.compactions
    ]


def check_replay(d: Path, facts: Facts, out: Outcome) -> None:
    want = _one_seed(facts, recorded_compactions(facts))
    out.compactions = len(want)
    if any(a["failed"] for a in facts.attempts):
        return  # a failed summarizer call: the replay does not model the summarizer's failures
    led = load(str(d / "session.db"))
    known = sim.AdkPolicy(**facts.scenario["compaction"])
    result = sim.simulate(led, known)
    got = _one_seed(facts, _replayed(result.whatif))
    out.replay_checked = True
    if got != want:
        out.disagree("replay (known settings)", policy=known.params(), ours=got, theirs=want)
    pol, why = sim.recorded_policy(led)
    if isinstance(pol, sim.AdkPolicy) and pol != known:
        # The session does not say which trigger made a compaction (an unseeded one can be either
        # a sliding window's or a first token threshold's): the inferred settings must make the
        # same compactions (moment, summarizer input, seed, range), whichever trigger fires.
        rec = [dict(c, trigger=None) for c in _one_seed(facts, _replayed(sim.simulate(led, pol).whatif))]
        if rec != [dict(c, trigger=None) for c in want]:
            out.disagree("replay (recorded policy)", policy=pol.params(), why=why, ours=rec, theirs=want)


def check(d: Path) -> Outcome:
    facts = Facts(d)
    out = Outcome(d.name)
    check_requests(d, facts, out)
    check_replay(d, facts, out)
    return out
