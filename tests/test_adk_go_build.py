"""adk-go's ledger build shares one filter across its requests (issue 15): `adk_go.build` builds a
request per compaction record, each over the events up to it, from one `Flow` (the visible
events, their indexes, timestamps, record positions and foreign events, found once; each event's
item made once and sent in every request that sends it) with `request_upto`. Each such request
must be the one `build_request` builds from scratch over the events up to that record: checked on
random streams with calls, responses, long-running calls, foreign agents, zero-valued events,
records that subsume others, holes by record, records without content or inverted, in timestamp
order and out of it."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from inspector.formats import adk_go


def _event(rng: random.Random, i: int, ts: int, open_calls: list[str]) -> adk_go.GoEvent:
    author = rng.choice(("coder", "coder", "coder", "helper", "user"))
    inv = f"inv-{rng.randrange(4)}"
    parts: list[dict[str, Any]] = []
    calls: list[str] = []
    responses: list[str] = []
    if rng.random() < 0.3:
        cid = f"c{i}"
        calls.append(cid)
        open_calls.append(cid)
        parts.append({"function_call": {"id": cid, "name": "ls", "args": {"n": i}}})
    elif open_calls and rng.random() < 0.4:
        rid = rng.choice(open_calls)
        responses.append(rid)
        parts.append({"function_response": {"id": rid, "name": "ls", "response": {"out": i}}})
    else:
        parts.append({"text": f"text {i}" if rng.random() < 0.9 else ""})
    role = "user" if author == "user" or responses else "model"
    long_running = [c for c in calls if rng.random() < 0.5]
    obj = {"content": {"role": role, "parts": parts}}
    e = adk_go.GoEvent(i, None, f"e{i}", inv, author, "", "", ts, obj, long_running)
    e.role, e.has_content, e.calls, e.responses = role, True, calls, responses
    e.zero = not any(parts[0].values()) or parts[0] == {"text": ""}
    return e


def _stream(seed: int) -> tuple[list[adk_go.GoEvent], bool]:
    rng = random.Random(seed)
    events: list[adk_go.GoEvent] = []
    open_calls: list[str] = []
    ts = 1_000_000_000
    for i in range(rng.randrange(2, 70)):
        ts += rng.choice((0, 1, 999, 1000, 250_000, 3_000_000))
        if rng.random() < 0.15 and events:
            lo = rng.randrange(1_000_000_000, ts + 1)
            hi = rng.randrange(lo - 10_000, ts + 2_000_000) if rng.random() < 0.9 else lo - 1
            picks = [x for x in events if rng.random() < 0.1]
            refs = [adk_go.Ref(x.invocation_id, x.ts + rng.choice((0, 1, 500))) for x in picks]
            content = {"role": "model", "parts": [{"text": f"summary {i}"}]} if rng.random() < 0.9 else None
            e = adk_go.GoEvent(i, None, f"r{i}", f"inv-{i}", "user", "", "", ts, {}, [])
            e.compaction = adk_go.Compaction(lo, hi, content, refs)
        else:
            e = _event(rng, i, ts, open_calls)
        events.append(e)
    ordered = rng.random() < 0.7
    if not ordered:  # (timestamps out of order: the requests scan instead of bisecting)
        for e in rng.sample(events, max(1, len(events) // 5)):
            e.ts -= rng.randrange(0, 5_000_000)
        ordered = all(a.ts <= b.ts for a, b in itertools.pairwise(events))
    return events, ordered


def _shown(req: adk_go.Request) -> Any:
    items = [(it.kind, it.seq, it.role, it.text, it.calls, it.responses, it.ts, it.invocation_id, it.reinjected) for it in req.items]
    return items, req.covered, req.surviving, req.subsumed, req.dropped_orphans, req.error


@pytest.mark.parametrize("seed", range(120))
def test_each_records_request_is_the_one_built_from_scratch(seed: int) -> None:
    events, ordered = _stream(seed)
    agent, branch, scope, _ = adk_go.next_agent(events)
    visible = {e.index for e in events if adk_go.visible_to(e, branch, scope)}
    fl = adk_go.flow_of(events, agent, branch, scope, visible)
    full = adk_go.request_upto(fl, None, events, ordered)  # (as `build` does: the full one first)
    assert _shown(full) == _shown(adk_go.build_request(events, agent, branch, scope, None, ordered))
    for i in [e.index for e in events if e.compaction is not None]:
        got = adk_go.request_upto(fl, i, events, ordered)
        want = adk_go.build_request(events[: i + 1], agent, branch, scope, None, ordered)
        assert _shown(got) == _shown(want), i


def test_the_streams_reach_what_the_requests_do() -> None:
    """The random streams exercise the paths: summaries, subsumption, re-injected calls, foreign
    events, holes, dropped responses, both orders."""
    seen: dict[str, int] = {}
    for seed in range(120):
        events, ordered = _stream(seed)
        agent, branch, scope, _ = adk_go.next_agent(events)
        req = adk_go.build_request(events, agent, branch, scope, None, ordered)
        kinds = {it.kind for it in req.items} | {f"ordered={ordered}"}
        flags = {"reinjected": any(it.reinjected for it in req.items), "subsumed": bool(req.subsumed), "dropped": bool(req.dropped_orphans)}
        kinds |= {k for k, on in flags.items() if on}
        for k in kinds:
            seen[k] = seen.get(k, 0) + 1
    for k in ("summary", "foreign", "event", "continue", "reinjected", "subsumed", "dropped", "ordered=True", "ordered=False"):
        assert seen.get(k, 0) >= 3, (k, seen)


@pytest.mark.parametrize("seed", range(60))
def test_flow_from_the_visible_set_is_the_filters(seed: int) -> None:
    """`adk_go.flow_of` from the visible indexes found once (every event visible: the events as
    they are) gives the flow the filter gives event by event, with none, one or several events
    hidden (no content, or excluded)."""
    events, _ = _stream(seed)
    rng = random.Random(seed)
    hide = rng.choice((0, 1, 2, len(events) // 3))
    for e in rng.sample([e for e in events if e.compaction is None], min(hide, sum(e.compaction is None for e in events))):
        e.has_content = False
    agent, branch, scope, _ = adk_go.next_agent(events)
    got = adk_go.flow_of(events, agent, branch, scope, adk_go._visible(events, branch, scope))
    want = adk_go.flow_of(events, agent, branch, scope)
    assert (got.events, got.index, got.ts, got.records, got.foreign) == (want.events, want.index, want.ts, want.records, want.foreign)


def test_visible_inline_equals_visible_to() -> None:
    """`adk_go._visible` (the filter's tests inlined where the next agent has no branch) gives the
    indexes `visible_to` gives, over every combination of what it reads."""
    usable = adk_go.Compaction(1, 2, {"role": "model", "parts": [{"text": "s"}]})
    unusable = adk_go.Compaction(None, 2, None)
    events = []
    for k, (content, comp, scope, excluded, br) in enumerate(
        itertools.product((True, False), (None, usable, unusable), ("", "s1"), (False, True), ("", "root", "root.a"))
    ):
        e = adk_go.GoEvent(k, k, f"e{k}", "inv", "a", br, scope, k, None, [], comp)
        e.has_content, e.excluded_call = content, excluded
        events.append(e)
    for branch, scope in itertools.product(("", "root", "other"), ("", "s1", "s2")):
        want = {e.index for e in events if adk_go.visible_to(e, branch, scope)}
        assert adk_go._visible(events, branch, scope) == want, (branch, scope)
    assert adk_go._visible(events, "", "")  # (some are visible)


def _plain_state(cp: Any, req: adk_go.Request, records: list[Any], lost: set[int]) -> None:
    """`adk_go._set_state` as it was: every record before the boundary walked for the retained ones."""
    covered = {s for s in req.covered if records[s].kind == "message"}
    if not covered:
        return
    last = max(covered)
    sent = {it.seq for it in req.items if it.seq is not None and it.kind in ("event", "foreign")}
    cp.explicit_boundary = records[last].id
    cp.explicit_represents = adk_go._runs(covered - lost - sent, records)
    cp.explicit_retains = [r.id for r in records[:last] if r.kind == "message" and r.seq in sent and r.id is not None]


@pytest.mark.parametrize("seed", range(80))
def test_each_records_state_is_the_plain_walks(seed: int) -> None:
    """A record's boundary, represented runs and retained messages, from the message seqs found once
    (`_message_seqs`) and the sent messages alone, are those of the walk over every record before
    it: on random streams, with ids missing, messages lost and re-injected, meta events among them."""
    from inspector.ledger.model import Checkpoint

    events, ordered = _stream(seed)
    rng = random.Random(seed)
    for e in events:
        if e.compaction is None and rng.random() < 0.1:
            e.id = None
        if e.compaction is None and rng.random() < 0.1:
            e.has_content = False  # (a meta record)
        elif e.compaction is None:
            e.head = ("assistant", None, e.author, tuple(e.calls), None, ())  # (a message record)
    agent, branch, scope, _ = adk_go.next_agent(events)
    visible = adk_go._visible(events, branch, scope)
    others: list[int] = []
    records = adk_go._records(events, visible, others)
    fl = adk_go.flow_of(events, agent, branch, scope, visible)
    messages = adk_go._message_seqs(records)
    assert set(range(len(records))).difference(others) == messages  # (as `build` finds them: the records not messages)
    for i in [e.index for e in events if e.compaction is not None]:
        req = adk_go.request_upto(fl, i, events, ordered)
        again = rng.sample(range(len(events)), min(3, len(events)))  # (sent again: any record, the boundary too)
        covered = sorted(s for s in req.covered if records[s].kind == "message")
        again += [covered[-1], *(s for s in range(covered[-1]) if records[s].kind != "message")] if covered else []
        req.items += [adk_go.Sent("event", s, "model", reinjected=True) for s in again]
        lost = set(rng.sample(sorted(req.covered), min(2, len(req.covered))))
        got, want = Checkpoint(), Checkpoint()
        adk_go._set_state(got, req, records, lost, messages)
        _plain_state(want, req, records, lost)
        assert (got.explicit_boundary, got.explicit_represents, got.explicit_retains) == (
            want.explicit_boundary, want.explicit_represents, want.explicit_retains,
        )  # fmt: skip
