"""What the side campaigns (`tests.fuzz_heads`, `tests.fuzz_live`, `tests.fuzz_write`, `tests.fuzz_scan`,
`tests.fuzz_parallel`) share: their cases, their command line, their progress line."""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.fuzz.corpus import Seed, load_corpus


def campaign_main(
    argv: list[str] | None, prog: str, doc: str | None, kinds: tuple[str, ...], cases: int, run: Callable[[int, int, tuple[str, ...]], int]
) -> int:
    """`--cases N --seed S --kinds a,b`: `run(cases, seed, kinds)` (its disagreements); exit 1 when
    there is one, 2 for an unknown kind."""
    p = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", type=int, default=cases)
    p.add_argument("--seed", type=int, default=1, help="the campaign is a function of this seed")
    p.add_argument("--kinds", default=",".join(kinds), help=f"corpus kinds, comma-separated (default: {', '.join(kinds)})")
    args = p.parse_args(argv)
    chosen = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    unknown = [k for k in chosen if k not in kinds]
    if unknown or not chosen:
        p.error(f"unknown kind(s) {', '.join(unknown) or '(none)'}; known: {', '.join(kinds)}")
    return 1 if run(args.cases, args.seed, chosen) else 0


def seeded_cases(cases: int, seed: int, kinds: tuple[str, ...], prefix: str) -> Iterator[tuple[int, str, Seed, random.Random, Path]]:
    """The campaign's cases, a function of `seed`: (its number, its kind (each kind in turn), the
    corpus seed it starts from, the campaign's random source, a scratch folder of its own). The
    corpus (`tests.fuzz.corpus`) is built in a temporary folder, removed at the end."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        seeds = load_corpus(Path(tmp) / "built", kinds=kinds)
        scratch = Path(tmp) / "cases"
        for i in range(cases):
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir()
            kind = kinds[i % len(kinds)]
            yield i, kind, rng.choice(seeds[kind]), rng, scratch


def progress(i: int, cases: int, found: int, t0: float, every: int, what: str = "disagreements") -> None:
    """Every `every` cases, a line: how many ran, how many found something, the seconds since `t0`."""
    if (i + 1) % every == 0:
        print(f"  {i + 1}/{cases} cases, {found} {what} ({time.perf_counter() - t0:.0f} s)", flush=True)


@contextlib.contextmanager
def environ(name: str, value: str | None) -> Iterator[None]:
    """An environment variable set for the duration (None: left as it is), then put back."""
    saved = os.environ.get(name)
    if value is not None:
        os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved
