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

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from tests.peers.claude_code_resume import type_probe

BUDGETS = ["--window", "16000", "--reserve", "2000"]
STRATEGIES = {"compact": ["--keep-recent", "50"], "recover": [], "resummarize": ["--keep-recent", "50"]}


def _inspector(args: list[str]) -> tuple[int, str, str]:
    from inspector.cli.main import main

    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()  # (--json writes to stdout.buffer)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    out.flush()
    return code, out.buffer.getvalue().decode(), err.getvalue()  # type: ignore[attr-defined]


def repair_all(
    files: list[Path], out: Path, strategies: list[str], picked: dict[int, list[str]] | None = None
) -> tuple[list[tuple[str, Path]], list[str]]:
    """Each probe copy repaired with each strategy (`picked`: only these probes, each with its own
    strategies): (label, repaired file) of those written, and a line for each that was not (a noop
    plan, a refusal and its reason)."""
    written, skipped = [], []
    out.mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(files):
        for strategy in strategies if picked is None else picked.get(i, []):
            label = f"{type_probe.PROBES[i].name} [{strategy}]"
            args = ["--strategy", strategy, *STRATEGIES[strategy], *BUDGETS]
            code, plan, err = _inspector(["plan", str(f), *args, "--json"])
            if code != 0 or json.loads(plan)["action"] == "noop":
                skipped.append(f"{label}: plan {'noop' if code == 0 else f'exit {code}: {err.strip()[-120:]}'}")
                continue
            r = out / f"p{i:03d}.{strategy}.jsonl"
            shutil.copyfile(f, r)
            code, _, err = _inspector(["repair", str(r), *args, "--write"])
            if code != 0:
                skipped.append(f"{label}: repair exit {code}: {err.strip().splitlines()[-1][:160] if err.strip() else ''}")
                continue
            written.append((label, r))
    return written, skipped


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
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strategies", default="compact,recover", help="comma-separated: compact, recover, resummarize")
    ap.add_argument("--keep", metavar="DIR", help="keep the probe copies, repaired files and resumes here")
    ap.add_argument("--as-written", action="store_true", help="also hold each damaged copy itself, unrepaired, to the same whole-request check")
    ns = ap.parse_args(argv)
    strategies = [s for s in ns.strategies.split(",") if s]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(ns.keep or tmp)
        os.environ["INSPECTOR_DATA_DIR"] = str(out / "data")  # (the repairs' backups: not the user's data dir)
        (out / "probes").mkdir(parents=True, exist_ok=True)
        (out / "repaired").mkdir(exist_ok=True)
        files = type_probe.write_probes(out / "probes")
        written, skipped = repair_all(files, out / "repaired", strategies)
        if ns.as_written:
            written = [(f"{p.name} [as written]", f) for p, f in zip(type_probe.PROBES, files, strict=True)] + written
        rows = check(written, out)
    differ = [(label, why) for label, why in rows if why is not None]
    for label, why in rows:
        print(f"{'ok  ' if why is None else 'DIFF'} {label}{'' if why is None else ': ' + why}")
    for line in skipped:
        print(f"--   {line}")
    print(f"{len(files)} damaged sessions, {len(rows)} repaired copies resumed by Claude Code, {len(differ)} differ; {len(skipped)} not written")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
