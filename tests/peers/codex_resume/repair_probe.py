"""Repair every damaged rollout of the type probe, and hold the repaired file to the real Codex.

    python -m tests.peers.codex_resume.repair_probe [--strategies compact,recover] [--as-written]

The type probe (`type_probe.py`) appends a damaged line (and a clean one under it, as Codex needs
the last line numbered) to the peer corpus's `auto_compact.jsonl`, a hundred-odd ways; here each
probe is a rollout of its own. Each is repaired in place (`inspector repair --write`, the
extractive summarizer, small budgets so there is something to summarize) with each strategy; a
noop plan or a refusal is shown with its reason. Then the pinned Codex resumes every repaired copy
(two at a time), and its first request must be exactly what `inspector context --json` predicts of
the repaired file (`resumed_as_predicted` of tests/test_codex_accepts.py: every item in order and
to the character, then only the new turn). Prints one row per copy and the count that differ;
exits 1 when any does.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.peers import repair_campaign
from tests.peers.codex_resume import resume as harness
from tests.peers.codex_resume import type_probe

PROMPT = "[R1] Carry on from the checkpoint."
BUDGETS = ["--window", "16000", "--reserve", "2000"]
STRATEGIES = {"compact": ["--keep-recent", "50", *BUDGETS], "recover": BUDGETS, "resummarize": ["--keep-recent", "50", *BUDGETS]}
NAMES = [p.name for p in type_probe.PROBES]


def write_probes(out: Path) -> list[Path]:
    """One rollout per probe: the base, the damaged line(s), a clean numbered line."""
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for i, p in enumerate(type_probe.PROBES):
        f = out / f"p{i:03d}.jsonl"
        type_probe.probe_rollout(type_probe.BASE, f, [p])
        files.append(f)
    return files


def check(written: list[tuple[str, Path]], scratch: Path) -> list[tuple[str, str | None]]:
    """(label, None or the first difference) for each repaired copy resumed by Codex."""
    from tests.test_codex_accepts import resumed_as_predicted

    def run(k: int) -> harness.Resumed:
        return harness.resume(written[k][1], PROMPT, scratch / f"run{k:03d}")

    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(run, range(len(written))))
    rows: list[tuple[str, str | None]] = []
    for (label, f), r in zip(written, runs, strict=True):
        if not r.requests:
            rows.append((label, f"no request (exit {r.returncode}): {r.stderr.strip()[-200:]}"))
            continue
        try:
            why = resumed_as_predicted(f, r.requests[0], PROMPT, repair_campaign.predicted_messages(f))
        except Exception as e:  # a row the comparison cannot make is a row to look at, not the end of the run
            why = f"comparison failed: {type(e).__name__}: {str(e)[:200]}"
        rows.append((label, why))
    return rows


def _need_codex() -> str | None:
    if harness.installed_version() != harness.CODEX_VERSION:
        return f"Codex {harness.CODEX_VERSION} is not installed at {harness.CODEX}: run tests/install_codex.sh"
    return None


def main(argv: list[str] | None = None) -> int:
    return repair_campaign.main(argv, __doc__, f"Codex {harness.CODEX_VERSION}", NAMES, STRATEGIES, write_probes,
                                lambda written, out: check(written, out / "resume"), _need_codex)  # fmt: skip

if __name__ == "__main__":
    sys.exit(main())
