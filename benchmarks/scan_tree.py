"""A 100k-session tree (issue 18 point 6): the scan's memory stays bounded and its progress moves.
A report, not a test: exits 0.

    python -m benchmarks.scan_tree                    # 100,000 small sessions (generated once into benchmarks/out/)
    python -m benchmarks.scan_tree --sessions 10000   # a tenth, for a quicker look

Each session is a small pi ledger (the first lines of sample_sessions/pi/healthy_chained.jsonl under a
fresh session id), 100 to a folder. Measured with an empty index: the walk, the first scan through
`store.scan.Scanner` with its worker processes, the largest number of files in flight at once, the
scanning process's peak resident memory before and after (its growth is what the rows and the walk's
path list cost, not the sessions), and the progress calls (the bar moves: done rises by one per file
to the total).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import time
import uuid

if __package__ in (None, ""):  # `python benchmarks/scan_tree.py`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(REPO, "sample_sessions", "pi", "healthy_chained.jsonl")
LINES = 12  # of the source: a header and a few turns
PER_FOLDER = 100


def generate(root: str, n: int) -> None:
    with open(SOURCE, encoding="utf-8") as f:
        head = "".join(f.readline() for _ in range(LINES))
    sid = _session_id(head)
    tmp = root + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    for i in range(n):
        folder = os.path.join(tmp, f"d{i // PER_FOLDER:05}")
        if i % PER_FOLDER == 0:
            os.makedirs(folder)
        text = head.replace(sid, str(uuid.uuid4())) if sid else head
        with open(os.path.join(folder, f"s{i:06}.jsonl"), "w", encoding="utf-8") as out:
            out.write(text)
    os.replace(tmp, root)


def _session_id(text: str) -> str | None:
    import orjson

    first = orjson.loads(text.split("\n", 1)[0])
    sid = first.get("id") if isinstance(first, dict) else None
    return sid if isinstance(sid, str) else None


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=100_000)
    ap.add_argument("--out", default=os.path.join(REPO, "benchmarks", "out", "scan_tree"))
    args = ap.parse_args()
    root = os.path.join(args.out, f"tree-{args.sessions}")
    if not os.path.isdir(root):
        print(f"generating {args.sessions:,} sessions into {root} ...", file=sys.stderr)
        generate(root, args.sessions)
    cache = os.path.join(args.out, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["INSPECTOR_CACHE_DIR"] = cache

    from inspector.store.index import SessionIndex
    from inspector.store.places import session_files
    from inspector.store.scan import Scanner

    t = time.perf_counter()
    n = sum(1 for _ in session_files([root]))
    walk = time.perf_counter() - t
    before = rss_mb()
    calls = 0
    last = 0
    monotonic = True

    def progress(done: int, total: int) -> None:
        nonlocal calls, last, monotonic
        calls += 1
        monotonic = monotonic and done == last + 1 and done <= total
        last = done

    t = time.perf_counter()
    rows = 0
    with SessionIndex() as index:
        scanner = Scanner(index, progress=progress)
        for _row in scanner.rows([root]):
            rows += 1
    first = time.perf_counter() - t
    after = rss_mb()
    print(f"{n:,} sessions in {n // PER_FOLDER:,} folders, {scanner.workers} workers")
    print(f"walk           {walk:7.2f} s")
    print(f"first scan     {first:7.2f} s   {rows / first:8.0f} sessions/s  ({scanner.stats.read:,} read)")
    print(f"in flight      {scanner.most_in_flight:7,}   files at most (bound: {scanner.workers} workers x 4)")
    print(f"peak memory    {after:7.1f} MB  (before the scan {before:.1f} MB: +{after - before:.1f} MB for {n:,} rows)")
    verdict = "moves" if monotonic and last == n and calls == n else "STUCK"
    print(f"progress       {calls:7,}   calls, done 1..{last:,} of {n:,} one file at a time: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
