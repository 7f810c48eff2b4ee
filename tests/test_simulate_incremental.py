"""ADK's sliding window replayed without a pass over the whole session at each invocation's end.

`simulate --policy adk-sliding` on a 36 MB ADK store (24,439 events, 6,929 invocations) took about
five minutes: at every invocation's end the replay read the whole session to find the window
(`_sliding_range`), passed over the window twice and the session once to find its self-contained
prefix (`_self_contained`), and twice over every event for the worth-compacting gate
(`_compacted_chars`); and every model call priced its context by passing over the events one
context sends raw and the other does not. Now 3 s: the invocations, the window's calls and the
times are kept up to date as the replay goes (`_Invocations`, `_WindowCalls`, `_ByTime`), and a
context's raw tokens are counted once, by the tracker that builds it.

The two readings are held equal here: on real ADK stores and generated sessions, and by
Hypothesis over event sequences with calls, answers, long-running calls and odd times.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import gen_formats
from inspector.analysis import simulate as sim
from inspector.cli.output import json_bytes
from inspector.formats import load
from tests.conftest import SHARED, need_shared

CORPUS = SHARED / "peers" / "adk" / "corpus"
ADK_GO = Path(__file__).parent / "peers" / "adk_go" / "corpus"
POLICIES = [
    sim.AdkPolicy(compaction_interval=3, overlap_size=1),
    sim.AdkPolicy(compaction_interval=1, overlap_size=0),
    sim.AdkPolicy(compaction_interval=2, overlap_size=2, progress_gate=False),
    sim.AdkPolicy(compaction_interval=2, overlap_size=1, token_threshold=3000, event_retention_size=2),
]


def _simulated(path: Path, pol: sim.AdkPolicy) -> sim.Simulation:
    led = load(str(path))
    return sim.simulate(led, pol, sim.SummarySize(None, None), session=sim.prepare(led))


def _series(path: Path, pol: sim.AdkPolicy) -> bytes:
    return json_bytes(sim.simulation_json(_simulated(path, pol)))


def _both(path: Path, pol: sim.AdkPolicy, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, bytes]:
    fast = _series(path, pol)
    with monkeypatch.context() as m:
        m.setattr(sim, "_INCREMENTAL", False)
        whole = _series(path, pol)
    return fast, whole


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated ADK store (real events, fresh ids): long enough for many windows."""
    path = tmp_path_factory.mktemp("adk") / "adk.db"
    gen_formats.generate("adk_sqlite", 0.6, path=str(path))
    return path


@pytest.mark.parametrize("pol", POLICIES, ids=["sliding-3-1", "sliding-1-0", "sliding-2-2-no-gate", "both"])
def test_the_peer_stores_replay_the_same(pol: sim.AdkPolicy, monkeypatch: pytest.MonkeyPatch) -> None:
    need_shared(CORPUS)
    stores = sorted(CORPUS.glob("*.db")) + [p for p in sorted(CORPUS.glob("*.json")) if p.name.count(".") == 1 and p.stem != "INDEX"]
    stores += sorted(ADK_GO.glob("*/after.db"))  # (what the real adk-go wrote, recorded in the repository)
    assert len(stores) >= 40
    for path in stores:
        fast, whole = _both(path, pol, monkeypatch)
        assert fast == whole, path.name


def test_a_long_session_replays_the_same_without_the_whole_readings(generated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails on the per-invocation passes: with the kept-up indexes, the replay never reads the
    whole session for the window, its self-contained prefix or the gate; and what it finds is
    what those readings find."""
    for pol in (POLICIES[0], POLICIES[3]):
        with monkeypatch.context() as m:
            m.setattr(sim, "_INCREMENTAL", False)
            whole = _series(generated, pol)

        def never(*_: object, **__: object) -> None:
            raise AssertionError("a pass over the whole session at an invocation's end or a token pass")

        with monkeypatch.context() as m:
            for name in ("_sliding_range", "_self_contained", "_compacted_chars"):
                m.setattr(sim, name, never)
            fast = _series(generated, pol)
        assert fast == whole
        assert len(_simulated(generated, pol).whatif.compactions) >= 3  # the window moved several times


# ----------------------------------------------------------------------------- the pieces, by Hypothesis

_IDS = ["a", "b", "c", "d", "e"]
_INVS = ["i1", "i2", "i3", "i4"]


@st.composite
def _events(draw: st.DrawFn) -> list[sim.SimEvent]:
    n = draw(st.integers(1, 24))
    out = []
    t = 0.0
    inv = 0
    for p in range(n):
        inv = min(len(_INVS) - 1, inv + draw(st.sampled_from([0, 0, 1])))
        t += draw(st.sampled_from([0.0, 1.0, 1.0, 2.5, -3.0]))
        out.append(
            sim.SimEvent(
                pos=p, seq=p, line=p + 1, ts=t, inv=draw(st.sampled_from([_INVS[inv], _INVS[inv], _INVS[0]])), turn=inv + 1,
                author="agent", role="model", tokens=draw(st.integers(0, 9)),
                calls=frozenset(draw(st.lists(st.sampled_from(_IDS), max_size=2))),
                results=frozenset(draw(st.lists(st.sampled_from(_IDS), max_size=2))),
                long_running=frozenset(draw(st.lists(st.sampled_from(_IDS), max_size=1))),
                chars=draw(st.integers(0, 50)),
            )
        )
    return out


def _window_the_whole_way(ev: list[sim.SimEvent], upto: int, first: int, last: int) -> int:
    present = ev[:upto]
    return len(sim._self_contained(present[first : last + 1], present))


@settings(max_examples=60, deadline=None)
@given(_events(), st.data())
def test_the_window_and_its_self_contained_prefix_as_the_whole_reading(ev: list[sim.SimEvent], data: st.DataObject) -> None:
    """Fails on a wrong span merge, a wrong blocker or a dead call taken from the wrong
    invocation: each step's window and prefix equal `_sliding_range` and `_self_contained`."""
    pol = sim.AdkPolicy(compaction_interval=data.draw(st.integers(1, 3)), overlap_size=data.draw(st.integers(0, 2)))
    inv = sim._Invocations(ev)
    last_end = 0.0
    comps: list[sim._AdkComp] = []
    for _ in range(data.draw(st.integers(1, 10))):
        upto = data.draw(st.integers(1, len(ev)))  # (mostly growing, as the replay goes; any order held too)
        if data.draw(st.booleans()):  # a compaction was added: a new last end
            last_end = data.draw(st.sampled_from([-1.0, 0.0, 1.0, 2.0, 4.0, 7.5]))
            comps = [sim._AdkComp(0, last_end - 1.0, last_end, [], set(), 0, "", "")]
        want = sim._sliding_range(ev[:upto], comps, None, pol)
        got = inv.window(upto, comps[-1].end if comps else 0.0, pol)
        assert got == want
        if got is not None:
            assert inv.self_contained(*got) == _window_the_whole_way(ev, upto, *got)


@settings(max_examples=60, deadline=None)
@given(_events(), st.data())
def test_the_gate_counts_what_the_two_whole_passes_count(ev: list[sim.SimEvent], data: st.DataObject) -> None:
    """Fails on an open range end, on a dropped range's summary left in, or on counting an event
    already inside a surviving range."""
    times = st.sampled_from([-2.0, 0.0, 1.0, 2.0, 2.5, 3.0, 5.0, 8.0, math.inf, -math.inf])
    comps = [
        sim._AdkComp(0, a, b, [], set(), 0, "", "", chars=data.draw(st.integers(0, 40)))
        for a, b in data.draw(st.lists(st.tuples(times, times), max_size=4))
    ]
    start, end = data.draw(times), data.draw(times)
    w = sim._AdkComp(0, start, end, [], set(), 0, "", "", chars=sim._EMPTY_SUMMARY_CHARS)
    upto = data.draw(st.integers(0, len(ev)))
    want = sim._compacted_chars(ev, comps, upto) - sim._compacted_chars(ev, [*comps, w], upto)
    if sim._finite_ranges([*comps, w]):
        assert sim._removable_chars(ev, comps, w, upto, sim._ByTime(ev)) == want


@settings(max_examples=60, deadline=None)
@given(_events(), st.data())
def test_the_token_candidates_and_their_self_contained_prefix_as_the_whole_reading(ev: list[sim.SimEvent], data: st.DataObject) -> None:
    """Fails on a candidate list not kept in order, a prefix read past where it is asked, or a
    split read from the wrong end: each step's candidates (the events after the last summary's
    end), their split and its self-contained prefix equal `token_pass`'s whole reading."""
    later = sim._Later(ev, sim._ByTime(ev))
    seen = sim._Invocations(ev)
    bar = 0.0
    for _ in range(data.draw(st.integers(1, 10))):
        upto = data.draw(st.integers(0, len(ev)))  # (mostly growing, as the replay goes; any order held too)
        if data.draw(st.booleans()):
            bar = data.draw(st.sampled_from([-4.0, 0.0, 1.0, 2.0, 3.5, 6.0]))
        ps = later.after(bar, upto)
        cands = [e for e in ev[:upto] if e.ts > bar]
        assert [ev[p] for p in ps] == cands
        retention = data.draw(st.integers(0, 3))
        n = len(ps) if retention == 0 else later.split(retention)
        assert n == (len(cands) if retention == 0 else sim._safe_split(cands, retention))
        seen.advance(upto)
        assert later.contained(n, seen) == len(sim._self_contained(cands[:n], ev[:upto]))
