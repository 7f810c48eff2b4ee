"""The benchmark files of `benchmarks.gen_formats`: deterministic, loadable, fresh ids, an unbroken chain."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks import formats as bench
from benchmarks.gen_formats import COMPACTIONS, SPECS, generate
from inspector.formats import load

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared")
pytestmark = pytest.mark.skipif(not os.path.isdir(os.path.join(SHARED, "real_sessions")), reason="needs ../shared")


@pytest.mark.parametrize("fmt", list(SPECS))
def test_generated_file_loads_clean_with_its_compactions(tmp_path, fmt):
    path = generate(fmt, 1.0, seed=7, path=str(tmp_path / f"a.{SPECS[fmt].ext}"))
    again = generate(fmt, 1.0, seed=7, path=str(tmp_path / f"b.{SPECS[fmt].ext}"))
    if SPECS[fmt].writer == "jsonl":
        assert Path(path).read_bytes() == Path(again).read_bytes()
    led = load(path)
    assert [d for d in led.diagnostics if d.severity != "info"] == []
    assert sum(1 for r in led.records if r.checkpoint is not None) == COMPACTIONS
    ids = [r.id for r in led.records if r.id]
    assert len(ids) == len(set(ids))
    assert bench.floor(fmt, path) > 0


@pytest.mark.parametrize("fmt", ["pi", "claude_code", "openclaw"])
def test_parent_chain_runs_from_the_header_to_the_last_record(tmp_path, fmt):
    led = load(generate(fmt, 0.3, seed=3, path=str(tmp_path / f"x.{SPECS[fmt].ext}")))
    by_id = {r.id: r for r in led.records if r.id}
    roots = [r for r in led.records if r.id and not r.parent_id]
    dangling = [r for r in led.records if r.parent_id and r.parent_id not in by_id]
    assert dangling == []
    assert len(roots) <= 2  # pi/OpenClaw: the first entry; Claude Code: the first record and each compact boundary
