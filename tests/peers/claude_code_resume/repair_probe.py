"""Repair every damaged session of the type probe, and hold the repaired file to the real Claude Code.

    python -m tests.peers.claude_code_resume.repair_probe [--strategies compact,recover]

The type probe (`type_probe.py`) appends a damaged line and a clean one under it to the peer
corpus's `manual_compact.jsonl`, 70-odd ways. Here each of those copies is repaired in place
(`inspector repair --write`, the extractive summarizer, small budgets so there is something to
summarize) with each strategy; a repair may refuse (exit 2, nothing written: the reason is shown).
Then the pinned Claude Code resumes every repaired copy, and its first request must be exactly
what `inspector context --json` predicts of the repaired file (`resumed_as_predicted`: every item
in order, our summary first to the character, the new prompt, no orphaned result or unanswered
call): a repair is only as good as the runtime's reading of what it wrote, on files nobody made
tidy. Prints one row per repaired copy and the count that differ; exits 1 when any does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.peers import repair_campaign
from tests.peers.claude_code_resume import type_probe

BUDGETS = ["--window", "16000", "--reserve", "2000"]
_STRATEGIES = {"compact": ["--keep-recent", "50"], "recover": [], "resummarize": ["--keep-recent", "50"]}
_inspector = repair_campaign.inspector
STRATEGIES = {name: [*args, *BUDGETS] for name, args in _STRATEGIES.items()}
NAMES = [p.name for p in type_probe.PROBES]


def repair_all(
    files: list[Path], out: Path, strategies: list[str], picked: dict[int, list[str]] | None = None
) -> tuple[list[tuple[str, Path]], list[str]]:
    """Each probe copy repaired with each strategy (`repair_campaign.repair_all`)."""
    return repair_campaign.repair_all(files, NAMES, out, STRATEGIES if picked is not None else {s: STRATEGIES[s] for s in strategies}, picked)


def check(written: list[tuple[str, Path]], out: Path) -> list[tuple[str, str | None]]:
    """(label, None or the first difference) for each repaired copy resumed by Claude Code."""
    from inspector.analysis import analyze
    from inspector.formats import load
    from tests.test_claude_code_accepts import _harness, resumed_as_predicted

    harness = _harness()
    runs = harness.resume_many([str(f) for _, f in written], str(out / "resume"))
    rows: list[tuple[str, str | None]] = []
    for (label, f), run in zip(written, runs, strict=True):
        code, ctx, err = _inspector(["context", str(f), "--json"])
        try:
            body = run.first_main()
        except harness.HarnessError as e:
            rows.append((label, f"no request: {str(e)[:200]}"))
            continue
        if code != 0:
            rows.append((label, f"context exit {code}: {err.strip()[-160:]}"))
            continue
        try:
            why = resumed_as_predicted(harness, body, run.transcript, analyze(load(str(f))), json.loads(ctx)["messages"])
        except Exception as e:  # a row the comparison cannot make is a row to look at, not the end of the run
            why = f"comparison failed: {type(e).__name__}: {str(e)[:160]}"
        rows.append((label, why))
    return rows


def main(argv: list[str] | None = None) -> int:
    return repair_campaign.main(argv, __doc__, "Claude Code", NAMES, STRATEGIES, type_probe.write_probes, check)

if __name__ == "__main__":
    sys.exit(main())
