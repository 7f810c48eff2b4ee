"""How much of the slowest real-runtime probes a test run covers.

CI (the README's test command, `.ci/run`) stays under 15 minutes with a fixed part of each of the
slowest probes, each part chosen to keep every rule the probe checks; the full set runs with

    INSPECTOR_FULL_PROBES=1 .venv/bin/pytest -n auto

(every case of every probe: about three minutes more on two cores). One OpenClaw resume costs
~14 s of a core (~25 s with the rest of the suite beside it), one Claude Code resume under a second.
Scoped: Codex's repaired damaged rollouts (the first half), pi's live differential seeds (1 and 3
left out), OpenClaw's acceptance of repaired stores (compact-4000 and resummarize-800 left out: the
record resummarize writes is compact's; of the store holding failed answers, the compact repair's
only), OpenClaw's damaged rows resumed live (one of three; every
probe's recorded verdict is still checked), its runtime context before a trailing user message (left
out: the stored runtime context itself is resumed), its heartbeat stores (the spans' store; the real
session's shape left out), Claude Code's repaired damaged sessions (every other probe, and every
probe that once failed), the OpenClaw store followed as it grows (two of three seeds; `python -m
tests.fuzz_live` follows every kind far longer).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

FULL = os.environ.get("INSPECTOR_FULL_PROBES", "") not in ("", "0")


def probe_cases(every: Sequence[T], in_ci: Sequence[T]) -> list[T]:
    """`every` case under INSPECTOR_FULL_PROBES, else the ones of `in_ci` (a part of it)."""
    assert set(in_ci) <= set(every), [c for c in in_ci if c not in every]
    return list(every) if FULL else list(in_ci)
