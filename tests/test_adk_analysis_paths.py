"""The ADK analysis' fast paths (issue 15) against the plain ways they stand for."""

from __future__ import annotations

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
