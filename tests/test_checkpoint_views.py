"""What checkpoint views look up, answered without an index of every record: a seq's position on
the active path (PathPositions: by bisection on a path in file order, a dict on one that is not)
and the ids the checkpoints name (Ledger.ids_to_seqs, `named_ids`), as the full indexes would."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import engine
from inspector.analysis.engine import PathPositions
from inspector.formats import load, registry
from inspector.ledger.model import Ledger
from tests.conftest import SHARED

SAMPLES = Path(__file__).resolve().parent.parent / "sample_sessions"
SESSIONS = sorted(SAMPLES.glob("*/*.jsonl")) + sorted((SHARED / "real_sessions").glob("*/*.jsonl"))


@pytest.mark.parametrize("shuffle", [False, True])
def test_positions_are_the_dicts(shuffle: bool) -> None:
    rng = random.Random(15)
    path = sorted(rng.sample(range(500), 200))
    if shuffle:
        rng.shuffle(path)
    pos, want = PathPositions(path), {s: i for i, s in enumerate(path)}
    assert (pos._at is None) is not shuffle
    for s in [*range(-2, 505), None, "x", 3.5]:
        assert (s in pos) == (s in want), s
        if s in want:
            assert pos[s] == want[s]
        elif isinstance(s, int):
            with pytest.raises(KeyError):
                pos[s]


def test_an_empty_path_holds_nothing() -> None:
    pos = PathPositions([])
    assert 0 not in pos and None not in pos
    with pytest.raises(KeyError):
        pos[0]


def _views(led: Ledger, indexed: bool) -> list[tuple[Any, ...]]:
    rt = registry.get(led.format).runtime
    path, _ = engine.active_path(led, rt)  # a tree's walk builds the full index
    if indexed:
        led.by_id()
    else:
        led._by_id = None
    return [
        (v.seq, v.cut, v.keep, v.rep, v.own, v.first_kept_seq, v.first_kept_found, v.carried_forward, v.empty_summary)
        for v in engine.checkpoint_views(led, path, rt)
    ]


def test_views_from_the_named_ids_are_the_full_indexs(monkeypatch: pytest.MonkeyPatch) -> None:
    with_views = 0
    for p in SESSIONS:
        led = load(str(p))
        scanned = _views(led, False)  # one pass over the records for the named ids
        indexed = _views(led, True)  # read from the full index
        with monkeypatch.context() as m:
            m.setattr(Ledger, "ids_to_seqs", lambda self, ids: self.by_id())
            full = _views(led, True)
        assert scanned == indexed == full, p
        with_views += bool(full)
    assert with_views >= 10


def test_ids_to_seqs_resolves_as_by_id() -> None:
    led = load(str(next(p for p in SESSIONS if "codex" in str(p))))
    ids = [r.id for r in led.records if r.id is not None]
    wanted = {*ids[::7], "not-an-id"}
    led._by_id = None
    got = led.ids_to_seqs(wanted)
    full = led.by_id()
    assert got == {i: full[i] for i in wanted if i in full} and "not-an-id" not in got
    assert led.ids_to_seqs(wanted) == got and led.ids_to_seqs(set()) == {}


def test_ranges_a_repair_states_are_looked_up_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint this tool's repair wrote states what it represents (`details.represents`)."""
    led = load(str(SAMPLES / "pi" / "healthy_chained.jsonl"))
    rt = registry.get(led.format).runtime
    path, _ = engine.active_path(led, rt)
    ci = max(i for i, s in enumerate(path) if led.records[s].kind == "checkpoint")
    ids = [led.records[s].id for s in path[1:ci]]
    cp = led.records[path[ci]].checkpoint
    assert cp is not None and len(ids) >= 4
    cp.details = {"producer": "inspector", "represents": [[ids[0], ids[0]], [ids[2], ids[-1]]]}
    with monkeypatch.context() as m:
        m.setattr(Ledger, "ids_to_seqs", lambda self, ids: self.by_id())
        full = _views(led, True)
    assert _views(led, False) == full and full[-1][3] == [(1, 2), (3, ci)]
