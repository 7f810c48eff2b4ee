"""Inferring the policy an ADK session was recorded with (`simulate --policy recorded`, the app's
simulate screen) stops each tried setting's replay as soon as its compactions part from the
recorded ones, and infers exactly what replaying every setting to the end infers.

Before: every setting tried (up to 13 retentions for each recorded threshold, with a sliding window
too for short sessions) was replayed over the whole session: 76 s on a 1,782-event session no
setting reproduces (a generated 4 MB ADK dump), 0.6 s now.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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
