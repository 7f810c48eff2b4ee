"""The ADK analysis' fast paths (issue 15) against the plain ways they stand for."""

from __future__ import annotations

import json
import random
from pathlib import Path

from inspector.analysis import adk as adk_analysis
from inspector.analysis.intervals import merge
from inspector.formats import load

FIXTURES = Path(__file__).parent / "differential" / "fixtures"


def test_runs_are_the_merged_unit_intervals() -> None:
    rng = random.Random(5)
    for n in (0, 1, 2, 7, 50):
        for _ in range(40):
            ps = [rng.randrange(n) for _ in range(rng.randrange(n + 1))] if n else []
            assert adk_analysis._runs(iter(ps), n) == merge([(p, p + 1) for p in ps])


def _slow_positions(recs, path, named):  # type: ignore[no-untyped-def]
    pos_of = dict(zip(path, range(len(path)), strict=True))
    return {r.id: pos_of[r.seq] for r in recs if r.id in named and r.seq in pos_of}


def test_positions_by_id_in_path_order_match_the_plain_lookup() -> None:
    """Duplicate ids (the last on the path wins), ids off the path, and an unsorted path."""
    led = load(str(FIXTURES / "adk-s26-0177-mid-run-seed" / "session.db"))
    recs = led.records
    cps = [r for r in recs if r.kind == "checkpoint"]
    assert cps
    for r in recs[::3]:
        r.id = recs[0].id  # (a repeated id)
    named = {r.id for r in recs if r.id is not None}
    for c in cps:
        c.checkpoint.details["summarizer_input_ids"] = sorted(named)
    for path in (list(range(len(recs))), list(range(0, len(recs), 2)), list(range(len(recs)))[::-1]):
        on_path = [recs[s] for s in path]
        got = adk_analysis._positions_by_id(recs, path, on_path, cps)
        assert got == _slow_positions(recs, path, named)


def _stores() -> list[Path]:
    return sorted(FIXTURES.glob("adk-*/session.db"))


def test_coverage_by_runs_is_coverage_by_position() -> None:
    """On every ADK fixture store (whose path is its records in order, by timestamp), with the
    re-injected seqs as the analysis finds them and as random sets."""
    from inspector.analysis import adk as a
    from inspector.analysis.engine import active_path, registry
    from inspector.formats import adk_compaction as rules

    rng = random.Random(3)
    checked = 0
    for store in _stores():
        led = load(str(store))
        path, _ = active_path(led, registry.get(led.format).runtime)
        recs = led.records
        vs = a.views(led, path)
        header = led.header or {}
        _, found = a.next_request(led, header.get("next_agent"), header.get("next_agent_branch"))
        alive = [v for v in vs if isinstance(v, a.AdkCheckpointView) and v.surviving]
        cover = rules.union([(v.checkpoint.details["start_timestamp"], v.checkpoint.details["end_timestamp"]) for v in alive])
        represented = bytearray(len(path))
        for lo, hi in merge([iv for v in alive for iv in v.summary_rep]):
            represented[lo:hi] = b"\x01" * (hi - lo)
        on_path = [recs[s] for s in path]
        ts = [float(r.timestamp or 0.0) for r in on_path]
        if path != list(range(len(recs))) or ts != sorted(ts):
            continue
        for r in rng.sample(recs, len(recs) // 5):
            r.never_sent = True  # (excluded, whatever else it is)
        for reinjected in (found, set(rng.sample(range(len(recs)), len(recs) // 3))):
            want = a._coverage_by_position(recs, path, ts, vs, alive, cover, represented, reinjected)
            got = a._coverage_by_runs(on_path, ts, vs, alive, cover, represented, reinjected)
            assert got == want, store
            assert a.coverage(led, path, vs, reinjected) == want
            checked += 1
    assert checked >= 40


def test_first_reps_are_the_first_summarizer_to_see_each_position() -> None:
    from types import SimpleNamespace

    from inspector.analysis import adk as a

    rng = random.Random(7)
    for _ in range(200):
        n = rng.randrange(1, 40)
        vs = []
        for k in range(rng.randrange(5)):
            ivs = merge([(lo, rng.randrange(lo, n + 1)) for lo in (rng.randrange(n) for _ in range(rng.randrange(4)))])
            vs.append(SimpleNamespace(index=k + 1, own=ivs))
        want = [0] * n
        for v in vs:
            for lo, hi in v.own:
                for i in range(lo, hi):
                    if not want[i]:
                        want[i] = v.index
        assert a._first_reps(vs, n) == want  # type: ignore[arg-type]


def _timeline_case(rng: random.Random) -> tuple[list, list[float], list, list]:  # type: ignore[type-arg]
    """Events in timestamp order (many ties), some compactions, a random set of them surviving."""
    from types import SimpleNamespace

    from inspector.formats import adk_compaction as rules

    n = rng.randrange(0, 30)
    ts = sorted(float(rng.randrange(8)) for _ in range(n))
    filt = [SimpleNamespace(kind=rng.choice(("message", "message", "checkpoint")), timestamp=t or None) for t in ts]
    ts = [float(r.timestamp or 0.0) for r in filt]
    alive = []
    for i in [i for i, r in enumerate(filt) if r.kind == "checkpoint" and rng.random() < 0.7]:
        e = rules.Ev(i, i, None, ts[i], "", None, {})
        e.start = float(rng.randrange(-1, 8))
        e.end = float(rng.randrange(int(e.start), 9))
        alive.append(e)
    cover = rules.union([(e.start, e.end) for e in alive])
    return filt, ts, alive, cover


def test_timeline_in_order_is_the_sorted_timeline() -> None:
    """Summaries whose ends tie with messages' timestamps (before and after them in the list), and
    ranges over none, some or all of the events; then every fixture store as the analysis reads it."""
    from inspector.analysis import adk as a

    rng = random.Random(11)
    for _ in range(2000):
        filt, ts, alive, cover = _timeline_case(rng)
        got = a._timeline_in_order(filt, ts, alive, cover)  # type: ignore[arg-type]
        assert got == a._timeline_sorted(filt, ts, alive, cover)  # type: ignore[arg-type]
    in_order = 0
    for store in _stores():
        led = load(str(store))
        filt = a._memory_order(led, a.event_heads(led.records))
        ts = [float(r.timestamp or 0.0) for r in filt]
        if ts == sorted(ts):
            in_order += 1
        alive, cover = a._surviving_summaries(filt)
        want = a._timeline_sorted(filt, ts, alive, cover)
        assert a._compacted_timeline(filt, ts) == want, store
        if ts == sorted(ts):
            assert a._timeline_in_order(filt, ts, alive, cover) == want, store
    assert in_order > 10


def test_answers_compacted_call_only_for_a_call_compacted_away() -> None:
    """A sent response to a call made by a message that was sent too, or by a checkpoint, needs no
    search; one to a call whose message was compacted away does."""
    from types import SimpleNamespace

    from inspector.analysis import adk as a

    call = SimpleNamespace(seq=0, kind="message", call_ids=("c",))
    other = SimpleNamespace(seq=1, kind="checkpoint", call_ids=("d",))
    answer = SimpleNamespace(seq=2, kind="message", call_ids=())
    filt = [call, other, answer]
    assert not a._answers_compacted_call(filt, {0, 2}, {2: ("c",)})  # type: ignore[arg-type]
    assert not a._answers_compacted_call(filt, {2}, {2: ("d",)})  # type: ignore[arg-type]
    assert not a._answers_compacted_call(filt, {0}, {2: ("c",)})  # type: ignore[arg-type]
    assert a._answers_compacted_call(filt, {2}, {2: ("c",)})  # type: ignore[arg-type]


def _plain_memory_order(led, heads):  # type: ignore[no-untyped-def]
    """`_memory_order` as it read before its in-order shortcut."""
    from inspector.analysis import adk as a

    recs = a._sendable_events(led, heads)
    hdr = led.header or {}
    ranks = hdr.get("append_ranks")
    if not isinstance(ranks, list) or len(ranks) != len(led.records):
        return recs
    inputs = [ranks[r.seq] for r in recs if r.kind == "message" and heads[r.seq].get("author") == "user"]
    if not inputs:
        return recs
    msgs = [r for r in recs if r.kind == "message"]
    msg_ranks = [ranks[r.seq] for r in msgs]
    if a._final_reply(msgs[msg_ranks.index(max(msg_ranks))]) and hdr.get("next_call_in_run") is not True:
        return recs
    start = max(inputs)
    before = [r for r in recs if ranks[r.seq] < start]
    return before + sorted((r for r in recs if ranks[r.seq] >= start), key=lambda r: ranks[r.seq])


def test_memory_order_of_events_appended_in_order_is_theirs() -> None:
    """Every fixture store with its own append ranks, ranks in order (ties too), and shuffled."""
    from inspector.analysis import adk as a

    rng = random.Random(13)
    reordered = 0
    for store in _stores():
        led = load(str(store))
        heads = a.event_heads(led.records)
        n = len(led.records)
        for ranks in (led.header["append_ranks"], list(range(n)), sorted(rng.randrange(5) for _ in range(n)), rng.sample(range(n), n)):
            led.header["append_ranks"] = ranks
            for in_run in (False, True):
                led.header["next_call_in_run"] = in_run
                want = _plain_memory_order(led, heads)
                assert a._memory_order(led, heads) == want, store
                reordered += want != a._sendable_events(led, heads)
    assert reordered > 5


def test_unsent_or_scoped_is_excluded_of_each(tmp_path: Path) -> None:
    """`adk.unsent_or_scoped` (`event_head` inline) picks the records `_excluded` picks: events in
    an isolation scope (read from their heads, and read whole: a scope of another type), framework
    calls never sent, and the others."""
    from inspector.formats import adk as adk_format

    rng = random.Random(11)
    events = []
    for k in range(400):
        e: dict[str, object] = {"id": f"e{k}", "invocation_id": f"i{k // 4}", "author": rng.choice(["user", "agent"]),
             "timestamp": 1000.0 + k, "actions": {}, "content": {"role": "model", "parts": [{"text": f"t{k}"}]}}  # fmt: skip
        roll = rng.random()
        if roll < 0.2:
            e["isolation_scope"] = rng.choice(["s1", "", 5, ["s"]])
        elif roll < 0.3:
            call = {"id": f"c{k}", "name": "adk_framework", "args": {}}
            e["content"] = {"role": "model", "parts": [{"function_call": call}]}
        events.append(e)
    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"app_name": "a", "user_id": "u", "id": "s", "events": events}))
    recs = load(str(path)).records
    msgs = [i for i in range(len(recs)) if recs[i].kind == "message"]
    want = [i for i in msgs if adk_analysis._excluded(recs[i])]
    assert len(want) >= 60
    assert adk_format.unsent_or_scoped(recs, msgs) == want
