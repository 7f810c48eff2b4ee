"""The minimap's cells read each cell's slice of kinds and states in C (issue 15.2): the same cells
as the loop over every record they replace, on sessions of every format read from disk, before
the analysis (pending) and after it, at widths from one cell to more cells than records."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.formats import load
from inspector.ledger.model import Ledger
from inspector.tui.minimap import PRIORITY, Cell, coverage_cells, record_kinds
from tests.conftest import SAMPLES, need_shared

SHARED = need_shared(Path(__file__).resolve().parents[2] / "shared")


def _loop_cells(ledger: Ledger, report: Report | None, width: int) -> list[Cell]:
    """The cells as one pass over the records computed them (the reference)."""
    records = ledger.records
    start = 1 if records and records[0].kind == "header" else 0
    n = len(records) - start
    if n <= 0 or width <= 0:
        return []
    width = min(width, n)
    rank = {s: i for i, s in enumerate(PRIORITY)}
    worst = [len(PRIORITY)] * width
    has_cp = [False] * width
    first = [-1] * width
    states = report.states if report is not None else None
    for i in range(n):
        seq = start + i
        c = i * width // n
        if first[c] < 0:
            first[c] = seq
        r = records[seq]
        if r.kind == "checkpoint":
            has_cp[c] = True
        elif r.kind == "message":
            st = (states[seq] or "inactive") if states is not None else "pending"
            k = rank.get(st, len(PRIORITY))
            if k < worst[c]:
                worst[c] = k
    return [(PRIORITY[w] if w < len(PRIORITY) else "inactive", cp, f) for w, cp, f in zip(worst, has_cp, first, strict=True)]


def _sessions() -> list[Path]:
    here = Path(__file__).parent
    roots = [SAMPLES, SHARED / "real_sessions", *sorted((SHARED / "peers").glob("*/corpus")), here / "differential" / "fixtures",
             here / "peers" / "codex_resume" / "sessions", here / "peers" / "adk_go" / "corpus"]  # fmt: skip
    out = [p for root in roots for p in sorted(root.rglob("*")) if p.suffix in (".jsonl", ".json", ".db", ".sqlite")]
    return [p for p in out if not p.name.endswith(NOT_SESSIONS) and p.name not in NOT_SESSION_NAMES]


# What lies beside the sessions and is none: what a runtime sent, its oracles and notes, the
# differential fixtures' scenario, events and compactions, the corpora's indexes, adk-go's scenario specs.
NOT_SESSIONS = ("requests.jsonl", ".stream.jsonl", ".oracle.json", ".notes.json", ".context.json", ".events.jsonl", ".meta.json")
NOT_SESSION_NAMES = ("scenario.json", "spec.json", "disagreements.json", "events.json", "compactions.jsonl", "INDEX.json", "manifest.json", "edge_check.json", "verify.json")


@pytest.mark.parametrize("path", _sessions(), ids=lambda p: p.name[:50])
def test_the_cells_are_the_loops_over_every_record(path: Path) -> None:
    led = load(str(path))  # (every file listed is a session: `_sessions`)
    report = analyze(led)
    n = len(led.records)
    kinds = record_kinds(led)  # (as the loading worker reads them once for the view)
    for width in sorted({1, 2, 3, 7, 40, 160, max(1, n - 1), n, n + 5}):
        assert coverage_cells(led, None, width) == _loop_cells(led, None, width)
        assert coverage_cells(led, report, width) == _loop_cells(led, report, width)
        assert coverage_cells(led, None, width, kinds) == _loop_cells(led, None, width)
        assert coverage_cells(led, report, width, kinds) == _loop_cells(led, report, width)


def test_kinds_of_another_length_are_read_again() -> None:
    """Kinds read before the ledger grew (a follow read) are not used: the cells are the ledger's.
    Kinds of its length are (they are the loading worker's, read once for the view)."""
    led = load(str(SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"))
    n = len(led.records)
    assert coverage_cells(led, None, 40, ["checkpoint"] * (n - 1)) == _loop_cells(led, None, 40)
    assert coverage_cells(led, None, 40, ["checkpoint"] * n) != _loop_cells(led, None, 40)
