"""Compare our reading of a generated Codex rollout with what Codex sent (issue 16, point 2).

For every request: our next request on the rollout as it stood when the request arrived
(`load(..., upto_line=N)`, what `context --at N` shows) against the request's input, item for item
(a message by its role and exact text, the text digest; a function call and its output by call id),
in order; and no message our analysis calls a hole may be in it. A summarizer request is Codex's
history followed by its compaction prompt: the history is checked the same way, and the messages it
gave the summarizer against what the checkpoint Codex then wrote represents by its own call
(`own_range`, DESIGN §2; the user messages Codex keeps verbatim included, issue 16 point 4); a
summarizer request that failed must leave no checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.formats import load
from inspector.ledger.model import Record
from tests.differential.campaign import Outcome
from tests.differential.codex_driver import digest as _digest
from tests.peers.codex_resume.fake_model import input_text, is_compaction

Key = tuple[str, ...]


def sent_key(item: dict[str, Any]) -> Key:
    """A request input item as the comparison sees it."""
    t = item.get("type", "message")
    if t == "message":
        role = {"developer": "system"}.get(item.get("role", ""), item.get("role", ""))
        return ("message", role, _digest(input_text(item)))
    if t.endswith("_output"):
        out = item.get("output")
        text = out if isinstance(out, str) else input_text({"content": out})
        return ("result", str(item.get("call_id")), _digest(text))
    if t == "reasoning":
        parts = [*(item.get("summary") or []), *(item.get("content") or [])]
        return ("reasoning", _digest("\n".join(x["text"] for x in parts if isinstance(x, dict) and isinstance(x.get("text"), str))))
    if t.endswith("_call"):
        args: Any = item.get("arguments")
        with contextlib.suppress(ValueError):
            args = json.loads(args) if isinstance(args, str) else args
        return ("call", str(item.get("call_id")), str(item.get("name")), _args_digest(args))
    return (t,)


def _args_digest(args: Any) -> str:
    return _digest(args if isinstance(args, str) else json.dumps(args, sort_keys=True))


def record_key(rec: Record) -> Key | None:
    """A message record as Codex sends it, or None."""
    m = rec.message
    if m is None:
        return None
    for b in m.blocks:
        if b.type == "tool_call" and b.call_id:
            return ("call", b.call_id, str(b.name), _args_digest(b.args))
        if b.type == "tool_result" and b.call_id:
            return ("result", b.call_id, _digest(b.text))
    if m.source_role == "reasoning":
        return ("reasoning", _digest("\n".join(b.text for b in m.blocks if b.type == "thinking")))
    role = "user" if m.role == "tool" else m.role
    return ("message", role, _digest(m.text()))


def predicted(rollout: Path) -> tuple[list[Key], list[Key], Any]:
    """Our next request on ROLLOUT (its keys, in order), the keys of its holes, the report."""
    rep = analyze(load(str(rollout)))
    led = rep.ledger
    out: list[Key] = []
    for it in rep.context:
        if it.on_resume:
            continue
        if it.synthetic and it.tool_result_id:
            out.append(("result", it.tool_result_id, _digest(it.text)))  # Codex's own "aborted"
        elif it.seq is not None and it.kind == "message" and led.records[it.seq].message is not None:
            k = record_key(led.records[it.seq])
            out.append(k if k is not None else ("message", it.role, _digest(it.text)))
        else:
            out.append(("message", it.role, _digest(it.text)))
    holes = [k for r in led.records if rep.states[r.seq] == "hole" and (k := record_key(r)) is not None]
    return out, holes, rep


def sent(body: dict[str, Any]) -> list[Key]:
    items = [sent_key(x) for x in body.get("input") or []]
    if body.get("instructions_digest"):
        items.insert(0, ("message", "system", body["instructions_digest"]))
    return items


def _prefix(session: Path, n: int, tmp: Path) -> Path:
    p = tmp / f"upto{n}.jsonl"
    p.write_bytes(b"".join(session.read_bytes().splitlines(keepends=True)[:n]))
    return p


def check_request(o: Outcome, k: int, req: dict[str, Any], session: Path, tmp: Path) -> None:
    n = req["rollout_lines"]
    got = sent(req["body"])
    if req["kind"] != "main":
        got = got[:-1]  # Codex's compaction prompt, no line of the rollout
    want, holes, _ = predicted(_prefix(session, n, tmp))
    where = {"request": k, "kind": req["kind"], "at_line": n}
    if got != want:
        first = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
        o.disagree("next_request", **where, first_difference=first, sent=got[first:first + 4],
                   predicted=want[first:first + 4], sent_len=len(got), predicted_len=len(want))
    if set(holes) & set(got):
        o.disagree("hole_sent", **where, holes=sorted(set(holes) & set(got)))


def check_summarizer(o: Outcome, k: int, req: dict[str, Any], session: Path, tmp: Path) -> None:
    """The messages the summarizer was given against what the checkpoint it made represents."""
    n = req["rollout_lines"]
    rows = session.read_bytes().splitlines()
    line = next((i + 1 for i in range(n, len(rows)) if json.loads(rows[i]).get("type") == "compacted"), None)
    if line is None:
        o.disagree("summary_not_written", request=k, at_line=n)
        return
    rep = analyze(load(str(_prefix(session, line, tmp))))
    view = next((v for v in rep.checkpoints if v.record.line == line), None)
    if view is None:
        o.disagree("checkpoint_not_read", request=k, line=line)
        return
    o.compactions += 1
    if not view.own_range and (view.empty_summary or view.fallback):
        return  # an empty or stale summary stands for nothing new, whatever it was given
    led = rep.ledger
    by_key = {kk: r for r in led.records if (kk := record_key(r)) is not None}
    given = {x for x in sent(req["body"])[:-1] if x in by_key and by_key[x].kind == "message"}
    ours = {kk for s in view.own_range if rep.states[s] != "excluded" and (kk := record_key(led.records[s]))}
    if given != ours:
        o.disagree("summarizer_input", request=k, checkpoint_line=line,
                   given_not_represented=sorted(_show(by_key, x) for x in given - ours),
                   represented_not_given=sorted(_show(by_key, x) for x in ours - given))


def check_failed_summarizer(o: Outcome, k: int, at: int, upto: int | None, session: Path) -> None:
    """A summarizer request that failed makes no checkpoint: none may be written before the
    next request (or the end of the rollout)."""
    rows = session.read_bytes().splitlines()[at:upto]
    made = [at + i + 1 for i, raw in enumerate(rows) if json.loads(raw).get("type") == "compacted"]
    if made:
        o.disagree("checkpoint_of_failed_summarizer", request=k, at_line=at, compacted_lines=made)


def _show(by_key: dict[Key, Record], k: Key) -> str:
    r = by_key.get(k)
    return f"line {r.line} {r.role}:{'/'.join(k)}" if r is not None else "/".join(k)


def check(d: Path) -> Outcome:
    o = Outcome(d.name)
    session = d / "session.jsonl"
    reqs = [json.loads(x) for x in (d / "requests.jsonl").read_text().splitlines() if x.strip()]
    with tempfile.TemporaryDirectory(prefix="check-codex-") as t:
        tmp = Path(t)
        for k, req in enumerate(reqs, 1):
            assert (req["kind"] != "main") == is_compaction(req["body"])
            o.calls_checked += 1
            check_request(o, k, req, session, tmp)
            if req["kind"] == "compact":
                check_summarizer(o, k, req, session, tmp)
            elif req["kind"] == "compact_failed":
                upto = reqs[k]["rollout_lines"] if k < len(reqs) else None
                check_failed_summarizer(o, k, req["rollout_lines"], upto, session)
    return o
