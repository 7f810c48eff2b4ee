"""A hole's cause: the first checkpoint that removes it without representing it. Found a slice of
path positions at a time (`CheckpointView.split_unrepresented`): it must give what the rule gives
position by position, and `hole_causes` what the checkpoint-by-checkpoint walk gives."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import HOLE, CheckpointView, Report
from inspector.analysis.findings import hole_causes
from inspector.formats import load
from tests.conftest import SHARED

SAMPLES = Path(__file__).resolve().parent.parent / "sample_sessions"
SESSIONS = sorted(SAMPLES.glob("*/*.jsonl")) + sorted((SHARED / "real_sessions").glob("*/*.jsonl"))


def _by_rule(v: CheckpointView, positions: list[int]) -> tuple[list[int], list[int]]:
    gone = [i for i in positions if v.is_removed(i) and not v.is_represented(i)]
    return gone, [i for i in positions if not (v.is_removed(i) and not v.is_represented(i))]


def _causes_by_rule(report: Report) -> dict[int, CheckpointView]:
    holes = [i for i, s in enumerate(report.path) if report.states[s] == HOLE]
    cause: dict[int, CheckpointView] = {}
    for v in report.checkpoints:
        left = []
        for i in holes:
            if v.is_removed(i) and not v.is_represented(i):
                cause[report.path[i]] = v
            else:
                left.append(i)
        holes = left
    return cause


@pytest.fixture(scope="module")
def reports() -> list[Report]:
    out = [analyze(load(str(p))) for p in SESSIONS]
    return [r for r in out if r.checkpoints]


def test_split_unrepresented_is_the_rule_position_by_position(reports: list[Report]) -> None:
    rng = random.Random(15)
    seen_keep = 0
    for r in reports:
        every = list(range(len(r.path)))
        for v in r.checkpoints:
            seen_keep += bool(v.keep)
            for positions in (every, sorted(rng.sample(every, len(every) // 3)), [], every[v.cut :], every[: v.cut]):
                assert v.split_unrepresented(positions) == _by_rule(v, positions), (r.ledger.path, v.index)
    assert len(reports) >= 10 and seen_keep  # views that keep records ahead of their cut among them


def test_split_unrepresented_with_records_kept_ahead_of_the_cut(reports: list[Report]) -> None:
    """A view keeps raw some records before its cut (native's explicit retains): those stay."""
    r = next(r for r in reports if any(v.rep and v.cut > 2 for v in r.checkpoints))
    v = next(v for v in r.checkpoints if v.rep and v.cut > 2)
    every = list(range(len(r.path)))
    for k in range(v.cut):
        kept = CheckpointView(
            v.index, v.record, v.pos, v.cut, frozenset({r.path[k], r.path[v.cut - 1]}), v.rep, v.own,
            v.first_kept_seq, v.first_kept_found, v.carried_forward, v.empty_summary, r.path, r.ledger.records,
        )  # fmt: skip
        assert kept.split_unrepresented(every) == _by_rule(kept, every)


def test_hole_causes_are_the_walks(reports: list[Report]) -> None:
    with_holes = [r for r in reports if HOLE in r.states]
    assert with_holes
    for r in with_holes:
        got, want = hole_causes(r), _causes_by_rule(r)
        assert list(got.items()) == list(want.items())
