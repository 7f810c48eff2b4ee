"""ADK's compaction rules over a long session (issue 15): `adk_compaction.analyze_compactions` looks
at the events once for the compactions among them, orders what a summarizer held by two stable
sorts in C and finds each window's possible ends once. Its facts must be exactly those of the
plain rules it replaced (kept here as the reference: the held order as one Python key per
event, `is_compaction` asked of every event, the ends looked for from each start), on every ADK
store and dump of the fixtures and the peer corpus, and on random sessions made to tie:
timestamps repeated at the ranges' ends, append ranks out of timestamp order and repeated,
runs started by several user inputs, compactions without start, end or summary, seeded ones."""

from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from operator import attrgetter
from pathlib import Path
from typing import Any

import pytest

from inspector.formats import adk, load
from inspector.formats import adk_compaction as rules
from tests.conftest import REPO, SHARED

_RANK_REF = attrgetter("rank")
_TS_RANK_REF = attrgetter("ts", "rank")


def _reference(events: list[rules.Ev]) -> dict[int, rules.CompactionFacts]:
    """Facts for every compaction event, in append order (each can depend on earlier ones)."""
    facts: dict[int, rules.CompactionFacts] = {}
    surviving_now = {e.index for e in rules.surviving_ranges(events)}
    by_rank = sorted(events, key=_RANK_REF)
    raw_by_ts = sorted((e for e in events if not e.is_compaction), key=_TS_RANK_REF)
    raw_ts = [e.ts for e in raw_by_ts]
    input_ranks = sorted(e.rank for e in raw_by_ts if e.author == "user")  # (`is_run_input`)
    by_invocation: dict[Any, list[rules.Ev]] | None = (
        None  # the raw events of each invocation (at the first need)
    )
    prior_comps: list[rules.Ev] = []  # valid compactions appended so far
    by_start: dict[float, list[rules.Ev]] = {}
    max_end: dict[float, float] = {}
    for pos, c in enumerate(by_rank):
        if not c.is_compaction:
            continue
        f = rules.CompactionFacts(c)
        facts[c.index] = f
        if not c.valid_compaction:
            f.inference = "not a usable compaction (missing start, end or summary): ADK ignores it"
            continue
        assert c.start is not None and c.end is not None
        f.surviving = c.index in surviving_now
        span = raw_by_ts[bisect_left(raw_ts, c.start) : bisect_right(raw_ts, c.end)]
        f.range_events = sorted(e.index for e in span)
        # ADK's _latest_compaction_event then: the newest range no other earlier one drops.
        # Only a previous range with the same start can have been folded in as a seed, so the
        # search (quadratic in the worst case) runs only when one exists.
        seeds: list[rules.Ev] = []
        run_seeds_all_known = False
        if c.start in by_start:
            prev = next((p for p in reversed(prior_comps) if not rules._dropped(p, by_start, max_end)), None)
            run = rules._compactions_just_before(by_rank, pos)
            concurrent = rules._seeds_before_concurrent(prior_comps, run)
            run_seeds_all_known = prev is not None and all(p is not None for p in concurrent)
            seeds = rules._with_twins([p for p in [prev, *concurrent] if p is not None], by_start)
        prior_comps.append(c)
        by_start.setdefault(c.start, []).append(c)
        max_end[c.start] = max(max_end.get(c.start, -math.inf), c.end)
        usage = c.obj.get("usage_metadata")
        ptc = usage.get("prompt_token_count") if isinstance(usage, dict) else None
        f.usage_prompt_tokens = ptc if isinstance(ptc, int) and not isinstance(ptc, bool) else None
        held = _ref_held_order(c, input_ranks)
        in_range = sorted((e for e in span if e.rank < c.rank), key=held)
        # Where a window can start: which of the events stamped start_timestamp opens its
        # invocation (in the order ADK held the events then); only their invocations are looked at.
        if by_invocation is None:
            by_invocation = {}
            for e in raw_by_ts:
                by_invocation.setdefault(e.invocation_id, []).append(e)
        opening = {e.invocation_id for e in in_range if e.ts == c.start}
        held_then = (x for inv in opening for x in by_invocation[inv] if x.rank < c.rank)
        first_of_inv = rules._first_events_of_invocations(sorted(held_then, key=held))
        candidates = _ref_selections(c, in_range, first_of_inv, seeds, facts)
        if not candidates:
            f.inference = "no event appended before it ends at its end_timestamp: nothing it summarized can be identified"
            continue
        f.hypotheses = len(candidates)
        chosen = rules._choose(
            f, candidates, facts, bool(seeds) and run_seeds_all_known and rules._made_mid_run(by_rank, pos)
        )
        seed, inputs = chosen
        f.seed = seed.index if seed is not None else None
        f.inputs = [e.index for e in inputs]
        f.represents = rules._represents(chosen, facts)
        f.estimated_prompt_tokens = rules.prompt_chars(inputs, seed) // 4
    rules._name_subsumers(facts, surviving_now)
    return facts


def _ref_held_order(c: rules.Ev, input_ranks: list[int]) -> Any:
    k = bisect_left(input_ranks, c.rank) - 1
    start = input_ranks[k] if k >= 0 else -1

    def key(e: rules.Ev) -> tuple[int, int]:
        return (0, e.index) if e.rank < start else (1, e.rank)

    return key


def _ref_selections(
    c: rules.Ev,
    in_range: list[rules.Ev],
    first_of_inv: set[int],
    seeds: list[rules.Ev],
    facts: dict[int, rules.CompactionFacts],
) -> list[Any]:
    """Every selection ADK could have summarized for compaction `c` (its in-range events, in append order)."""
    out: list[Any] = []
    # Sliding window (or a first token compaction): the in-range events from the first event
    # of an invocation stamped start_timestamp to one stamped end_timestamp; with ties at
    # either end, each possible window.
    starts = [j for j, e in enumerate(in_range) if e.ts == c.start and e.index in first_of_inv] or [0]
    for j in starts:
        for k in range(len(in_range), j, -1):
            if in_range[k - 1].ts == c.end:
                out.append((None, in_range[j:k]))
    for n, prev in enumerate(seeds):
        if (
            any(p is prev for p in seeds[:n])
            or prev.start != c.start
            or prev.end is None
            or prev.index not in facts
        ):
            continue
        # Token threshold: the previous summary as a seed, plus events newer than its end.
        newer = [e for e in in_range if e.ts > prev.end]
        for k in range(len(newer), 0, -1):
            if newer[k - 1].ts == c.end:
                out.append((prev, newer[:k]))
    return out


def _facts(facts: dict[int, rules.CompactionFacts]) -> dict[int, tuple[Any, ...]]:
    return {
        i: (f.range_events, f.surviving, f.subsumed_by, f.seed, f.inputs, f.represents, f.inference, f.hypotheses,
            f.usage_prompt_tokens, f.estimated_prompt_tokens)
        for i, f in facts.items()
    }  # fmt: skip


def _stores() -> list[Path]:
    found = sorted((REPO / "tests" / "differential" / "fixtures").glob("adk-*/session.db"))
    corpus = SHARED / "peers" / "adk" / "corpus"
    found += sorted(corpus.glob("*.db")) + sorted(
        p for p in corpus.glob("*.json") if "oracle" not in p.name and p.name != "INDEX.json"
    )
    return found


def _events_of_store(path: Path) -> list[rules.Ev]:
    led = load(str(path))
    out: list[rules.Ev] = []
    ranks = (led.header or {}).get("append_ranks") or list(range(len(led.records)))
    for r in led.records:
        src = r._source
        if type(src) is adk._RowLater:
            o = src.whole()
        elif r.kind == "checkpoint":
            o = {
                "id": r.id,
                "timestamp": r.timestamp,
                "invocation_id": r.run_id,
                "actions": {
                    "compaction": {
                        "start_timestamp": r.checkpoint.details.get("start_timestamp"),
                        "end_timestamp": r.checkpoint.details.get("end_timestamp"),
                        "compacted_content": {"parts": [{"text": r.checkpoint.summary}]},
                    }
                },
            }
        else:
            o = {"id": r.id, "timestamp": r.timestamp, "invocation_id": r.run_id, **adk.event_fields(r)}
        out.append(o)
    return rules.make_events(out, ranks)


def test_the_rules_over_every_store_are_the_plain_ones() -> None:
    stores = _stores()
    assert len(stores) >= 30
    compactions = 0
    for path in stores:
        events = _events_of_store(path)
        want = _facts(_reference(events))
        assert _facts(rules.analyze_compactions(events)) == want, path
        compactions += len(want)
    assert compactions >= 40


BRANCHES: list[Any] = [None, "", "root", "panel.critic_a", "panel@1.critic_b@2", ["panel"], 5, {"a": "b"}]


def _random_session(rng: random.Random) -> list[rules.Ev]:
    n = rng.randint(1, 60)
    stamps = sorted(rng.sample(range(1, 40), rng.randint(1, 12)))
    objs: list[dict[str, Any]] = []
    invocation = "i0"
    for k in range(n):
        if rng.random() < 0.25:
            invocation = f"i{k}"
        o: dict[str, Any] = {"id": f"e{k}", "timestamp": float(rng.choice(stamps)), "invocation_id": invocation,
             "author": rng.choice(["user", "user", "agent", "helper"]),
             "content": {"role": "model", "parts": [{"text": "t" * rng.randint(0, 40)}]}}  # fmt: skip
        if rng.random() < 0.3:
            o["branch"] = rng.choice(BRANCHES)
        if rng.random() < 0.2:
            a, b = sorted(rng.sample(stamps, 2) if len(stamps) > 1 else stamps * 2)
            comp: dict[str, Any] = {"start_timestamp": float(a), "end_timestamp": float(b),
                                    "compacted_content": {"parts": [{"text": "s" * rng.randint(0, 30)}]}}  # fmt: skip
            if rng.random() < 0.15:
                for key in rng.sample(
                    ["start_timestamp", "end_timestamp", "compacted_content"], rng.randint(1, 2)
                ):
                    comp.pop(key)  # (a summary alone is a compaction too, ADK ignores it)
            o["actions"] = {"compaction": comp}
            if rng.random() < 0.6:
                o["usage_metadata"] = {"prompt_token_count": rng.randint(0, 300)}
        objs.append(o)
    objs.sort(key=lambda o: o["timestamp"])
    ranks = list(range(n))
    if rng.random() < 0.7:
        rng.shuffle(ranks)  # appended out of timestamp order
    if rng.random() < 0.2:
        ranks = [
            rng.randint(0, n // 2) for _ in ranks
        ]  # repeated ranks (not a store's, but the rules' inputs)
    return rules.make_events(objs, ranks)


@pytest.mark.parametrize("seed", range(8))
def test_the_rules_over_random_tied_sessions_are_the_plain_ones(seed: int) -> None:
    rng = random.Random(seed)
    hypotheses = 0
    for _ in range(300):
        events = _random_session(rng)
        want = _facts(_reference(events))
        assert _facts(rules.analyze_compactions(events)) == want
        hypotheses += sum(f[7] > 1 for f in want.values())
    assert hypotheses >= 5  # (ties at the ends: several selections fit)


@pytest.mark.parametrize("seed", range(4))
def test_the_rules_over_sessions_appended_in_list_order_are_the_plain_ones(seed: int) -> None:
    """Ranks rising along the list (`_orders` sorts nothing then), the timestamps in order or, in
    half the sessions, two of them swapped (then the raw events are sorted after all)."""
    rng = random.Random(100 + seed)
    swapped = 0
    for _ in range(300):
        events = _random_session(rng)
        for i, e in enumerate(events):
            e.rank = i
        if rng.random() < 0.5 and len(events) > 1:
            i, j = rng.sample(range(len(events)), 2)
            swapped += events[i].ts != events[j].ts
            events[i].ts, events[j].ts = events[j].ts, events[i].ts
        assert _facts(rules.analyze_compactions(events)) == _facts(_reference(events))
    assert swapped >= 50


def _reference_workflow_agents(evs: list[rules.Ev]) -> set[str]:
    out: set[str] = set()
    for e in evs:
        b = e.obj.get("branch")
        if isinstance(b, str) and b:
            out.add(e.author)
            out.update(seg.split("@", 1)[0] for seg in b.split("."))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_the_router_over_random_sessions_is_the_plain_one(seed: int) -> None:
    """`adk.next_agent` and `adk.run_input_seq` leave the compactions out (`is_compaction` inline:
    a summary alone makes one); the workflow agents are looked for among the events on a branch only."""
    rng = random.Random(seed)
    workflows = 0
    for _ in range(300):
        events = _random_session(rng)
        if rng.random() < 0.5:  # the newest event a compaction (a summary alone, at times)
            last = rules.make_events([{"id": "c", "timestamp": 99.0, "author": "agent", "actions": {"compaction": {
                "compacted_content": {"parts": [{"text": "s"}]}}}}], [len(events)])[0]  # fmt: skip
            last.index = len(events)
            events.append(last)
        evs = [e for e in events if not e.is_compaction]
        found = _reference_workflow_agents(evs)
        assert adk._workflow_agents(evs) == found
        assert adk.next_agent(events) == adk._next_agent(evs, found)
        inputs = [e for e in events if rules.is_run_input(e)]
        assert adk.run_input_seq(events, -1) == (max(inputs, key=lambda e: e.rank).index if inputs else -1)
        workflows += bool(found)
    assert workflows >= 50


def _view_state(views: list[Any]) -> list[Any]:
    return [
        (v.index, v.seq, v.pos, v.cut, v.keep, v.rep, v.own, v.removed, v.surviving, v.summary_rep)
        for v in views
    ]


def test_the_views_look_up_only_the_ids_the_checkpoints_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """`analysis.adk.views` maps to path positions only the event ids its checkpoints' details name
    (`_positions_by_id`): the same views as with every event's id mapped."""
    from inspector.analysis import adk as analysis_adk
    from inspector.analysis.engine import active_path, registry

    def every_id(recs: list[Any], path: list[int], on_path: list[Any], checkpoints: list[Any]) -> dict[Any, int]:
        pos_of = dict(zip(path, range(len(path)), strict=True))
        return {r.id: pos_of[r.seq] for r in recs if r.id is not None and r.seq in pos_of}

    named = 0
    for path in _stores():
        led = load(str(path))
        on_path, _ = active_path(led, registry.get(led.format).runtime)
        got = _view_state(analysis_adk.views(led, on_path))
        with monkeypatch.context() as m:
            m.setattr(analysis_adk, "_positions_by_id", every_id)
            assert got == _view_state(analysis_adk.views(led, on_path)), path
        named += sum(bool(v[5]) and bool(v[6]) for v in got)
    assert named >= 30


def test_the_next_requests_calls_are_their_events_own() -> None:
    """Each item of ADK's next request keeps only calls its event made (a reply without a call
    keeps none: `_context_items` does not look for the calls of an event that makes none)."""
    from inspector.analysis import adk as analysis_adk

    calls = 0
    for path in _stores():
        led = load(str(path))
        header = led.header or {}
        ctx, _ = analysis_adk.next_request(led, header.get("next_agent"), header.get("next_agent_branch"))
        assert [it.index for it in ctx] == list(range(len(ctx)))
        for it in ctx:
            if it.kind == "message":
                assert set(it.tool_call_ids) <= set(led.records[it.seq].call_ids), path
                calls += len(it.tool_call_ids)
    assert calls >= 30


def _lines_reference(author: Any, content: Any) -> tuple[int, int]:
    """What `prompt_chars` adds up for an event: its `_format_lines`, built."""
    lines = rules._format_lines(f"{author}", content)
    return sum(map(len, lines)), len(lines)


_VALUES: list[Any] = [None, "", "x", "é" * 3, 0, 7, 1.5, True, False, [], ["a", {"b": 1}], {}, {"k": "v", "n": [1, 2]},
                      "y" * 2500, "w" * 2000, "v" * 2001, {"long": "z" * 2100}, "\ud800"]  # fmt: skip


def _random_content(rng: random.Random) -> Any:
    if rng.random() < 0.05:
        return rng.choice([None, "text", [1], 3])
    parts: list[Any] = []
    for _ in range(rng.randint(0, 5)):
        if rng.random() < 0.1:
            parts.append(rng.choice(_VALUES))
            continue
        p: dict[str, Any] = {}
        for key in ("text", "thought", "function_call", "function_response"):
            if rng.random() < 0.5:
                p[key] = rng.choice(_VALUES)
        for key in ("function_call", "function_response"):
            if rng.random() < 0.3:
                p[key] = {"name": rng.choice(_VALUES), "args": rng.choice(_VALUES), "response": rng.choice(_VALUES)}
        parts.append(p)
    return {"role": "model", "parts": parts if rng.random() < 0.95 else rng.choice([None, []])}  # (the adapter's parts: a list)


def test_the_prompts_size_is_the_length_of_its_lines_built() -> None:
    """`prompt_chars` adds up each event's lines without building them (`_lines_size`): the sizes
    are those of `_format_lines`' lines, on every event of every store and on random parts of every
    JSON type (long arguments truncated, thoughts, texts that are no string, authors that are none),
    and the prompt is their join's length."""
    rng = random.Random("prompt-size")
    checked = 0
    for path in _stores():
        for e in _events_of_store(path):
            assert rules._lines_size(f"{e.author}", e.content()) == _lines_reference(e.author, e.content()), path
            checked += 1
    for _ in range(4000):
        author, content = rng.choice([None, "user", "model", "", 5, "ü"]), _random_content(rng)
        assert rules._lines_size(f"{author}", content) == _lines_reference(author, content), content
    events = _random_session(random.Random(1))
    for seed in (None, *(e for e in events if e.is_compaction)):
        lines = rules._format_lines("model", seed.summary_content) if seed is not None else []
        for e in events:
            lines += rules._format_lines(f"{e.author}", e.content())
        joined = len(rules.SUMMARIZER_TEMPLATE) - len("{conversation_history}") + len("\n".join(lines))
        assert rules.prompt_chars(events, seed) == joined
    assert checked > 1000


def test_outside_ivs_is_not_in_ivs_of_each() -> None:
    """`outside_ivs` (a compaction's in-range events its summary does not represent, by bisecting
    the events at the ranges' ends) is `not in_ivs` of each event, in order."""
    rng = random.Random(15)
    for _ in range(3000):
        n = rng.randrange(0, 40)
        xs = sorted(rng.sample(range(n + 10), rng.randrange(0, n + 1)))
        ivs = rules.ivs_of(rng.sample(range(n + 10), rng.randrange(0, n + 1)))
        assert rules.outside_ivs(xs, ivs) == [x for x in xs if not rules.in_ivs(x, ivs)], (xs, ivs)


def test_ivs_of_is_the_runs_of_its_indexes() -> None:
    """The runs found in C (indexes each once) and the plain walk (an index twice) alike."""
    import random

    from inspector.formats.adk_compaction import ivs_of

    def plain(indexes: list[int]) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for i in sorted(indexes):
            if out and out[-1][1] == i:
                out[-1] = (out[-1][0], i + 1)
            else:
                out.append((i, i + 1))
        return out

    rng = random.Random(17)
    for _ in range(500):
        n = rng.randrange(0, 40)
        xs = rng.sample(range(50), n) if rng.random() < 0.7 else [rng.randrange(20) for _ in range(n)]
        assert ivs_of(xs) == plain(xs), xs
        assert ivs_of(set(xs)) == plain(sorted(set(xs)))
