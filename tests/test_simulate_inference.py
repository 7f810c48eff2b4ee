"""How fast ADK's compactions are replayed. Inferring the policy an ADK session was recorded with (`simulate --policy recorded`, the app's
simulate screen) stops each tried setting's replay as soon as its compactions part from the
recorded ones, and infers exactly what replaying every setting to the end infers.

Before: every setting tried (up to 13 retentions for each recorded threshold, with a sliding window
too for short sessions) was replayed over the whole session: 76 s on a 1,782-event session no
setting reproduces (a generated 4 MB ADK dump), 0.6 s now.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import gen_formats
from inspector.analysis import simulate as sim
from inspector.formats import load
from tests.conftest import SHARED, need_shared

CORPUS = SHARED / "peers" / "adk" / "corpus"


def _inferred(path: Path) -> tuple[object, str]:
    led = load(str(path))
    return sim.recorded_policy(led, sim.prepare(led))


def _replayed_to_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sim._Wanted, "parted", lambda self, comps, upto: False)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated ADK dump (real events, fresh ids) whose recorded compactions no setting makes."""
    path = tmp_path_factory.mktemp("adk") / "adk.json"
    gen_formats.generate("adk_json", 0.15, path=str(path))
    return path


def test_a_session_no_setting_reproduces_is_not_replayed_whole_for_each(
    generated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {"n": 0}
    model_call = sim._AdkReplay.model_call

    def counted(self: sim._AdkReplay, upto: int) -> None:
        calls["n"] += 1
        model_call(self, upto)

    monkeypatch.setattr(sim._AdkReplay, "model_call", counted)
    led = load(str(generated))
    sess = sim.prepare(led)
    policy, how = sim.recorded_policy(led, sess)
    assert policy is None and "no token-threshold setting tried reproduces" in how
    once = sum(1 for e in sess.events if e.is_call)
    tried = calls["n"]
    calls["n"] = 0
    _replayed_to_the_end(monkeypatch)
    sess2 = sim.prepare(led)
    assert sim.recorded_policy(led, sess2) == (policy, how)
    whole = calls["n"]
    assert whole >= 13 * once  # (every retention of at least one threshold, each over every call)
    assert tried * 4 < whole, (tried, whole, once)


def test_the_inference_is_the_one_of_whole_replays(monkeypatch: pytest.MonkeyPatch) -> None:
    need_shared(CORPUS)
    files = sorted(p for p in CORPUS.iterdir() if p.suffix in (".db", ".json") and p.name != "INDEX.json" and ".oracle" not in p.name)
    assert len(files) >= 10
    fast = {p.name: _inferred(p) for p in files}
    assert any(pol is not None and "token threshold" in how for pol, how in fast.values())
    _replayed_to_the_end(monkeypatch)
    assert {p.name: _inferred(p) for p in files} == fast


# ADK's "worth compacting" gate (`_compacted_chars`) asks, of every event, whether a surviving
# compaction's range holds its time: once a range of each of the compactions (R) for each event (N)
# at each gate, which made a sliding-window replay of a 20 MB adk-go session take 86 s (12 s now).

_TIMES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5).map(float))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TIMES, _TIMES), max_size=8), st.lists(_TIMES, max_size=12))
def test_a_time_is_within_the_ranges_as_any_one_range_says(ranges: list[tuple[float, float]], times: list[float]) -> None:
    inside = sim._within_any(ranges)
    for ts in times:
        assert inside(ts) == any(a <= ts <= b for a, b in ranges), (ranges, ts)


class _Counted(float):
    compared = 0

    def __lt__(self, other: object) -> bool:
        _Counted.compared += 1
        return float(self) < other  # type: ignore[operator]

    def __le__(self, other: object) -> bool:
        _Counted.compared += 1
        return float(self) <= other  # type: ignore[operator]

    def __ge__(self, other: object) -> bool:
        _Counted.compared += 1
        return float(self) >= other  # type: ignore[operator]


def test_the_gate_searches_the_ranges_rather_than_trying_each() -> None:
    n, r = 400, 200
    events = [sim.SimEvent(pos=i, seq=i, line=i, ts=_Counted(i), inv=f"i{i}", turn=i, author="a", role="user", tokens=1, chars=10) for i in range(n)]  # fmt: skip
    comps = [sim._AdkComp(2 * k + 1, 2.0 * k, 2.0 * k + 0.5, [2 * k], {2 * k}, 1, "sliding_window", "post_invocation", chars=3) for k in range(r)]  # fmt: skip
    _Counted.compared = 0
    total = sim._compacted_chars(events, comps, n)
    assert total == 10 * (n - r) + 3 * r  # (the even events, one in each range, counted by their summaries)
    assert _Counted.compared < 20 * n, _Counted.compared
