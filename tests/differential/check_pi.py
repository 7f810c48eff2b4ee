"""Compare our reading of a generated pi session with what pi 0.73.1 did (issue 16, point 2).

For every agent model call: the session file as it was when pi sent it (the lines appended before
the request, by their timestamps) gives our next request (`context --at N --window W`, in-process;
W the scenario's contextWindow, which the session does not record), compared
with the messages pi sent (role, which entry, summary or synthetic result each is, tool-call ids,
text digests, order); every earlier message entry's state (live/retained, summarized, hole)
against what the request and pi's summarizer requests show; the live question. For the whole
session: the simulator replaying the scenario's own settings must make pi's own compactions
(moment, summarizer input, range).

Which entries a summarizer saw is read from its request: pi serializes each message as
`[User]: …`, `[Assistant]: …`, `[Assistant tool calls]: …`, `[Tool result]: …` (pi-coding-agent
dist/core/compaction/utils.js:93-141), and every text the scenario's model writes carries a marker.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis import simulate as sim
from inspector.formats import load
from tests.differential.campaign import Outcome, read_lines

SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:"
TOOL_RESULT_MAX_CHARS = 2000  # utils.js:74: longer tool results are cut for the summarizer
HISTORY_KINDS = ("summary_initial", "summary_update")
SPLIT_TURN = "\n\n---\n\n**Turn Context (split turn):**\n\n"


def _sha(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _ms(iso: str) -> int:
    """An entry's time in whole milliseconds (pi writes milliseconds: no float noise in a tie)."""
    return round(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content or [] if c.get("type") == "text")


class Facts:
    """The session pi wrote and what its requests show."""

    def __init__(self, d: Path) -> None:
        self.path = d / "session.jsonl"
        self.entries = [json.loads(x) for x in self.path.read_text().splitlines() if x.strip()]
        self.requests = read_lines(d / "requests.jsonl")
        self.scenario = json.loads((d / "scenario.json").read_text())
        self.by_id = {e.get("id"): i for i, e in enumerate(self.entries) if e.get("id")}
        self.ms = [_ms(e["timestamp"]) for e in self.entries]
        self.compactions = [i for i, e in enumerate(self.entries) if e["type"] == "compaction"]
        self.summarizer_inputs = {c: self._summarizer_input(c) for c in self.compactions}
        self.represented: dict[int, set[int]] = {}
        for c in self.compactions:
            self.represented[c] = self._represented(c)

    def message(self, i: int) -> dict[str, Any] | None:
        e = self.entries[i]
        return e["message"] if e["type"] == "message" else None

    def path_to(self, i: int) -> list[int]:
        """Entries from the root to entry i (pi's branch)."""
        out = []
        cur: int | None = i
        while cur is not None:
            out.append(cur)
            pid = self.entries[cur].get("parentId")
            cur = self.by_id.get(pid) if pid else None
        return out[::-1]

    def lines_at(self, req: dict[str, Any]) -> int:
        """How many lines the file had when pi sent the request. Both times are whole milliseconds,
        and the scripted model can answer within the millisecond its request came in: a reply
        stamped with the request's own millisecond is that request's answer, written after it (a
        loaded machine showed it: the answer counted into its own request's prefix)."""
        t = round(req["time"] * 1000)
        n = sum(1 for m in self.ms if m < t)
        for i in range(n, len(self.ms)):
            m = self.message(i)
            if self.ms[i] != t or (m is not None and m.get("role") == "assistant"):
                break
            n += 1
        return n

    def serialized(self, i: int) -> str | None:
        """The start of entry i's text in a summarization request (utils.js:93-141), None if none."""
        m = self.message(i)
        if m is None:
            return None
        if m["role"] == "user":
            t = _texts(m["content"])
            return f"[User]: {t}"[:300] if t else None
        if m["role"] == "assistant":
            texts = [b["text"] for b in m["content"] if b.get("type") == "text"]
            if texts:
                return f"[Assistant]: {chr(10).join(texts)}"[:300]
            calls = [b for b in m["content"] if b.get("type") == "toolCall"]
            if calls:
                args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in calls[0]["arguments"].items())
                return f"[Assistant tool calls]: {calls[0]['name']}({args})"[:300]
            return None
        if m["role"] == "toolResult":
            t = _texts(m["content"])
            return f"[Tool result]: {t[:TOOL_RESULT_MAX_CHARS]}"[:300] if t else None
        return None

    def _summarizer_requests(self, c: int) -> list[dict[str, Any]]:
        """The summarization requests of the attempt that made compaction c: the last answered
        ones before it was written, after the compaction before it."""
        prev = max((p for p in self.compactions if p < c), default=None)
        lo = self.ms[prev] if prev is not None else 0.0
        hi = self.ms[c]
        ok = [r for r in self.requests if r["kind"] != "agent" and r["status"] == 200 and lo < r["time"] * 1000 <= hi]
        if not ok:
            return []
        last = ok[-1]["time"]
        return [r for r in ok if last - r["time"] < 0.3]

    def previous(self, c: int) -> int | None:
        """The compaction before c on its path."""
        return next((p for p in reversed(self.path_to(c)[:-1]) if p in self.compactions), None)

    def _summarizer_input(self, c: int, kinds: tuple[str, ...] = (*HISTORY_KINDS, "turn_prefix")) -> list[int]:
        """The entries whose text the summarizers of compaction c were handed: from the previous
        compaction's first kept entry on (boundaryStart, compaction.js:481-486), serialized in
        path order, so each is looked for after the one before it in the same request."""
        path = self.path_to(c)
        prev = self.previous(c)
        start = self.by_id.get(self.entries[prev]["firstKeptEntryId"]) if prev is not None else None
        lo = path.index(start) if start in path else 0
        seen: set[int] = set()
        for r in self._summarizer_requests(c):
            if not r["messages"] or r["kind"] not in kinds:
                continue
            text = _texts(r["messages"][0]["content"]).split("</conversation>")[0]
            at = 0
            for i in path[lo:-1]:
                s = self.serialized(i)
                k = text.find(s, at) if s is not None else -1
                if k >= 0:
                    seen.add(i)
                    at = k + len(s)
        return sorted(seen)

    def _represented(self, c: int) -> set[int]:
        """What compaction c's summary stands for: what each of its summarizers saw, unless that one
        answered nothing, and what the previous summary stood for when the history summarizer was
        handed it (`<previous-summary>`) and answered. The summary is the history answer, for a
        split turn the separator and the turn-prefix answer, then the file lists (compaction.js:
        562-576); with nothing new before the split turn there is no history request and the
        previous summary is handed to no one (:564-566, "No prior history.")."""
        summary = self.entries[c]["summary"]
        answer = summary.split("\n\n<read-files>")[0].split("\n\n<modified-files>")[0]
        history, _, prefix = answer.partition(SPLIT_TURN)
        out: set[int] = set()
        asked = [r for r in self._summarizer_requests(c) if r["kind"] in HISTORY_KINDS and r["messages"]]
        if history.strip() and asked:
            out |= set(self._summarizer_input(c, HISTORY_KINDS))
            prev = self.previous(c)
            if prev is not None and any("<previous-summary>" in _texts(r["messages"][0]["content"]) for r in asked):
                out |= self.represented.get(prev, set())
        if prefix.strip():
            out |= set(self._summarizer_input(c, ("turn_prefix",)))
        return out


def _wire_items(facts: Facts, upto: int, msgs: list[dict[str, Any]]) -> list[tuple[str, Any, str]]:
    """The messages pi sent, each as (role, what it is, text digest): the summary, an entry of the
    path (matched in path order: the same text can be answered twice), or a synthetic result."""
    path = facts.path_to(upto - 1) if upto > 0 else []
    out: list[tuple[str, Any, str]] = []
    at = 0  # where in the path the next match may start
    for msg in msgs:
        role = msg["role"]
        text = _texts(msg.get("content"))
        what: tuple[str, Any] = ("unknown", None)
        if role == "user" and text.startswith(SUMMARY_PREFIX):
            c = next((c for c in reversed(path) if c in facts.compactions and facts.entries[c]["summary"] in text), None)
            what = ("summary", c)
            kept = facts.by_id.get(facts.entries[c]["firstKeptEntryId"]) if c is not None else None
            at = path.index(kept) if kept in path else at  # what follows it is kept from there on
        else:
            for k in range(at, len(path)):
                if _same(facts.message(path[k]), role, msg, text):
                    what, at = ("entry", path[k]), k + 1
                    break
            else:
                if role == "tool":
                    what = ("synthetic", msg["tool_call_id"])
        out.append((role, what, _sha(text)))
    return out


def _same(m: dict[str, Any] | None, role: str, msg: dict[str, Any], text: str) -> bool:
    """Is the session message `m` the one sent as `msg`?"""
    if m is None:
        return False
    if role == "tool":
        return m["role"] == "toolResult" and m["toolCallId"] == msg["tool_call_id"]
    if m["role"] != role:
        return False
    ids = [tc["id"] for tc in msg.get("tool_calls") or []]
    mine = [b["id"] for b in m["content"] if b.get("type") == "toolCall"] if isinstance(m["content"], list) else []
    if ids or mine:
        return mine[:1] == ids[:1]
    return _texts(m["content"]) == text


def _ours(led: Any, rep: Any) -> list[tuple[str, Any, str]]:
    out: list[tuple[str, Any, str]] = []
    for it in rep.context:
        if it.kind == "summary":
            out.append((it.role, ("summary", it.seq), _sha(it.text)))
        elif it.synthetic:
            out.append((it.role, ("synthetic", it.tool_result_id), ""))
        else:
            rec = led.records[it.seq]
            text = "".join(b.text or "" for b in rec.message.blocks if b.type in ("text", "tool_result"))
            out.append((it.role, ("entry", it.seq), _sha(text)))
    return out


def _calls(msg: dict[str, Any]) -> list[str]:
    return [tc["id"] for tc in msg.get("tool_calls") or []]


def check_requests(facts: Facts, out: Outcome) -> None:
    for req in facts.requests:
        if req["kind"] != "agent":
            continue
        at = facts.lines_at(req)
        led = load(str(facts.path), upto_line=at)
        rep = analyze(led, window=facts.scenario["pi"]["contextWindow"])  # the model's: not in the file
        theirs = _wire_items(facts, at, req["messages"])
        ours = _ours(led, rep)
        where = {"request": req["seq"], "at": at, "turn": req["turn"], "step": req["step"]}
        if [(r, w) for r, w, _ in ours] != [(r, w) for r, w, _ in theirs]:
            out.disagree("next request", **where, ours=_show(ours), theirs=_show(theirs))
        else:
            for o, t, m in zip(ours, theirs, req["messages"], strict=True):
                if o[2] and o[2] != t[2]:
                    out.disagree("text", **where, item=_show([o])[0])
                if o[1][0] == "entry" and m["role"] == "assistant":
                    seq = o[1][1]
                    mine = next((it.tool_call_ids for it in rep.context if it.seq == seq), [])
                    if mine != _calls(m):
                        out.disagree("tool calls", **where, entry=seq, ours=mine, theirs=_calls(m))
        check_coverage(facts, rep, at, theirs, where, out)
        out.calls_checked += 1


def check_coverage(facts: Facts, rep: Any, at: int, theirs: list[tuple[str, Any, str]], where: dict[str, Any],
                   out: Outcome) -> None:
    """Every earlier message entry on the path: sent (live/retained), seen by the summarizer of a
    compaction in effect (summarized) or neither (a hole); and the live question."""
    raw = {w[1] for _, w, _ in theirs if w[0] == "entry"}
    summaries = [w[1] for _, w, _ in theirs if w[0] == "summary" and w[1] is not None]
    path = facts.path_to(at - 1)
    summarized: set[int] = set()
    for c in summaries:
        summarized |= facts.represented[c]
    for i in path:
        m = facts.message(i)
        if m is None or facts.serialized(i) is None:
            continue
        if i in raw:
            want: tuple[str, ...] = ("live", "retained")
        elif i in summarized:
            want = ("summarized",)
        elif m["role"] == "assistant" and m.get("stopReason") in ("error", "aborted"):
            continue  # dropped at send time (pi-ai transform-messages.js), a state of its own
        else:
            want = ("hole",)
        if rep.states[i] not in want:
            out.disagree("coverage", **where, entry=i, ours=rep.states[i], theirs=want[0])
    question = next((i for i in reversed(path) if (m := facts.message(i)) and m["role"] == "user"), None)
    lost = question is not None and question not in raw
    fired = any(f.code == "live_question_summarized" and question in f.records for f in rep.findings)
    if lost != fired:
        out.disagree("live question", **where, question=question, pi_lost=lost, we_report=fired)


def _show(items: list[tuple[str, Any, str]]) -> list[str]:
    return [f"{r}:{w[0]}{'' if w[1] is None else w[1]}" for r, w, _ in items]


def recorded_compactions(facts: Facts) -> list[dict[str, Any]]:
    """pi's compactions as the simulator reports its own: moment (the entry it hangs under),
    summarizer input, range (the message entries it takes out of the context)."""
    out = []
    start: int | None = None  # where the context began: the previous compaction's first kept entry
    for c in facts.compactions:
        e = facts.entries[c]
        path = facts.path_to(c)
        kept = facts.by_id.get(e["firstKeptEntryId"])
        lo = path.index(start) if start in path else 0
        hi = path.index(kept) if kept in path else len(path) - 1
        out.append(
            {
                "after": facts.by_id.get(e["parentId"]),
                "inputs": facts.summarizer_inputs[c],
                "range": [p for p in path[lo:hi] if facts.message(p) is not None],
            }
        )
        start = kept
    return out


def check_replay(facts: Facts, out: Outcome) -> None:
    want = recorded_compactions(facts)
    out.compactions = len(want)
    if any(r["kind"] != "agent" and r["status"] != 200 for r in facts.requests):
        return  # a failed summarizer call writes nothing: the replay cannot know it happened
    if any("compact" in t for t in facts.scenario["turns"]):
        return  # a manual /compact is no policy's decision
    cfg = facts.scenario["pi"]
    pol = sim.PiPolicy(cfg["contextWindow"], cfg["reserveTokens"], cfg["keepRecentTokens"])
    led = load(str(facts.path))
    got = [
        {
            "after": c.after_seq,
            "inputs": sorted(s for s in c.summarized_seqs if facts.serialized(s) is not None),
            "range": sorted(c.range_seqs),
        }
        for c in sim.simulate(led, pol).whatif.compactions
    ]
    out.replay_checked = True
    if got != want:
        out.disagree("replay (known settings)", policy=pol.params(), ours=got, theirs=want)


def check(d: Path) -> Outcome:
    facts = Facts(d)
    out = Outcome(d.name)
    check_requests(facts, out)
    check_replay(facts, out)
    return out
