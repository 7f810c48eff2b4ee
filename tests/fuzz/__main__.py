"""`python -m tests.fuzz --cases 10000 --seed S --out DIR`: a long fuzz campaign (see __init__)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tests.fuzz.campaign import FORMAT_CHOICES, run_campaign
from tests.fuzz.corpus import CorpusError


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    p.add_argument("--cases", type=int, default=10000, help="command cases (default 10000)")
    p.add_argument("--app-cases", type=int, default=None, help="headless app runs (default: cases / 40)")
    p.add_argument("--seed", type=int, default=1, help="the campaign is a function of this seed")
    p.add_argument("--out", type=Path, default=Path("fuzz-out"), help="report and minimized reproducers")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per case before it counts as a hang")
    p.add_argument("--no-huge", action="store_true", help="leave out the tens-of-MB lines")
    p.add_argument("--minimize-budget", type=int, default=150, help="runs spent shrinking each distinct violation")
    p.add_argument(
        "--formats", type=lambda v: tuple(x.strip() for x in v.split(",") if x.strip()), default=None,
        help=f"comma-separated seed kinds to fuzz (default all): {', '.join(FORMAT_CHOICES)}",
    )  # fmt: skip
    args = p.parse_args(argv)
    unknown = sorted(set(args.formats or ()) - set(FORMAT_CHOICES))
    if unknown or (args.formats is not None and not set(args.formats) - {"special"}):
        p.error(f"--formats: unknown {', '.join(unknown) or '(no seed kind)'}; choose from {', '.join(FORMAT_CHOICES)}")
    try:
        summary = run_campaign(
            cases=args.cases, seed=args.seed, out=args.out, app_cases=args.app_cases, workers=args.workers,
            timeout=args.timeout, allow_huge=not args.no_huge, minimize_budget=args.minimize_budget,
            formats=args.formats,
        )  # fmt: skip
    except CorpusError as e:
        print(f"fuzz: {e}", file=sys.stderr)
        return 2
    print(summary.text())
    return 1 if summary.findings else 0


if __name__ == "__main__":
    sys.exit(main())
