"""`python -m tests.fuzz_parallel --cases 300 --seed S`: the two-process read against the serial one.

A big pi, Claude Code or Codex file is read by this process and a forked helper together (`formats.parallel`),
which only files of 256 MB and more take, so the fuzz campaign (small files) never reaches it. Here
each case is a seed of the fuzz corpus (`tests.fuzz.corpus`: the real sessions and peer corpora of
these formats), damaged by one to three of the campaign's own mutations (`tests.fuzz.mutations`),
then read twice in this process: serially, and by two processes with a chunk of a few hundred
bytes to a few KB (so most lines of a small file fall in the helper's chunks, wherever the two
meet). The two ledgers must be the same record for record (`test_parallel_load._snapshot`), and so
must their analysis (`analyze --json`), or both loads must refuse the file with the same message.
Prints each disagreement and a summary; exits 1 when there is one. Deterministic by seed.
"""

from __future__ import annotations

import argparse
import operator
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json
from inspector.formats import LoadError, load
from inspector.formats import parallel as par
from inspector.ledger.jsontext import deep, dumps
from tests.fuzz.corpus import load_corpus
from tests.fuzz.mutations import Context, apply, choose
from tests.fuzz.side import progress
from tests.test_parallel_load import _snapshot

KINDS = ("pi", "claude_code", "codex")
SERIAL = 1 << 62


def _read(path: Path, *, chunk: int | None) -> tuple[str, Any]:
    """("ok", (snapshot, analysis JSON)) or ("refused", message), serially (`chunk` None) or by
    two processes with chunks of about `chunk` bytes."""
    par.PARALLEL_MIN_BYTES = SERIAL if chunk is None else 1
    par.CHUNK_BYTES = chunk or par.CHUNK_BYTES
    try:
        led = load(str(path), fingerprint=False)
        snap = _snapshot(led)
        report = dumps(analyze_json(analyze(load(str(path), fingerprint=False))))  # (a lone surrogate: escaped)
    except LoadError as e:
        return "refused", str(e)
    return "ok", (snap, report)


def _case(seed_path: str, kind: str, rng: random.Random, scratch: Path) -> tuple[Path, list[tuple[str, int]]]:
    path = scratch / f"case{Path(seed_path).suffix or '.jsonl'}"
    shutil.copyfile(seed_path, path)
    muts = choose(rng, kind, allow_huge=False)
    apply(path, muts, Context())
    return path, muts


_MADE: list[Any] = []  # the helpers the last read forked (None: it forked none)
_FORK = par.fork_helper


def _counted_fork(*args: Any, **kw: Any) -> Any:
    helper = _FORK(*args, **kw)
    _MADE.append(helper)
    return helper


def run(cases: int, seed: int) -> int:
    rng = random.Random(seed)
    par._single_threaded = lambda: True  # (this process runs no other thread)
    par.fork_helper = _counted_fork
    chunk_default = par.CHUNK_BYTES
    with tempfile.TemporaryDirectory(prefix="fuzz-parallel-") as tmp:
        scratch = Path(tmp)
        seeds = load_corpus(scratch / "built", kinds=KINDS)
        disagreements = forked = 0
        t0 = time.perf_counter()
        for i in range(cases):
            kind = KINDS[i % len(KINDS)]
            seed_file = rng.choice(seeds[kind])
            path, muts = _case(seed_file.path, kind, rng, scratch)
            chunk = rng.choice((200, 500, 1000, 4096))
            serial = _read(path, chunk=None)
            _MADE.clear()
            try:
                both = _read(path, chunk=chunk)
            finally:
                par.CHUNK_BYTES = chunk_default
            forked += any(h is not None for h in _MADE)
            if deep(operator.ne, serial, both):  # (values nested up to 1024 deep: compared with room to recurse)
                disagreements += 1
                what = "refusals differ" if "refused" in (serial[0], both[0]) else (
                    "ledgers differ" if deep(operator.ne, serial[1][0], both[1][0]) else "analyses differ"
                )  # fmt: skip
                print(f"case {i}: {what}: {seed_file.name} {muts} chunk {chunk}", flush=True)
            progress(i, cases, disagreements, t0, 50)
    print(f"{cases} cases ({forked} read by two processes) over {', '.join(KINDS)}, seed {seed}: {disagreements} disagreements")
    return 1 if disagreements else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz_parallel", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", type=int, default=300)
    p.add_argument("--seed", type=int, default=1, help="the campaign is a function of this seed")
    args = p.parse_args(argv)
    return run(args.cases, args.seed)


if __name__ == "__main__":
    sys.exit(main())
