"""Scan benchmark (issue 18 point 2): many sessions of mixed formats, through the index. A report,
not a test: exits 0.

    python -m benchmarks.scan                  # 1,000 sessions (generated once into benchmarks/out/)
    python -m benchmarks.scan --sessions 200   # fewer, for a quick look

The sessions are copies of real lines: every file of ../shared/real_sessions (pi, Claude Code, Codex)
and of sample_sessions, in turn, each copy with a fresh session id (every occurrence of the file's
own id replaced). Measured, in this order, with an empty index to start:

  parse floor   read every file and orjson.loads every line, nothing kept (one process)
  first scan    `inspector scan`'s engine with its worker processes: load, analyse, index (rows,
                usage, full text), against the floor's throughput
  re-scan       the same tree, nothing changed: target >= 20x faster than the first scan
  grown         one session grown by 100 records, the tree re-scanned: target well under a second
                (the grown file is read again in full for now)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import time
import uuid
from pathlib import Path

if __package__ in (None, ""):  # `python benchmarks/scan.py`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import orjson

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("INSPECTOR_SHARED", os.path.join(os.path.dirname(REPO), "shared"))
RESCAN_TARGET = 20.0  # first scan seconds / re-scan seconds
GROWN_TARGET = 1.0  # seconds
MB = 1_000_000


def sources() -> list[str]:
    out: list[str] = []
    for base in (os.path.join(SHARED, "real_sessions"), os.path.join(REPO, "sample_sessions")):
        for dirpath, _dirs, files in sorted(os.walk(base)):
            out += [os.path.join(dirpath, f) for f in sorted(files) if f.endswith(".jsonl")]
    return out


def session_id_of(path: str) -> str | None:
    from inspector.formats import load

    try:
        return load(path).session_id
    except Exception:
        return None


def generate(root: str, n: int) -> None:
    """`n` sessions under `root`, one folder per source format, each with a fresh id."""
    srcs = sources()
    if not srcs:
        raise SystemExit(f"no source sessions found under {SHARED}/real_sessions or sample_sessions")
    ids = {s: session_id_of(s) for s in srcs}
    blobs = {s: Path(s).read_bytes() for s in srcs}
    os.makedirs(root, exist_ok=True)
    for i in range(n):
        src = srcs[i % len(srcs)]
        data = blobs[src]
        sid = ids[src]
        if sid:
            data = data.replace(sid.encode(), str(uuid.UUID(int=i + 1)).encode())
        kind = os.path.basename(os.path.dirname(src))
        folder = os.path.join(root, kind, f"{i // 100:02}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"s{i:05}-{os.path.basename(src)}"), "wb") as f:
            f.write(data)


def parse_floor(files: list[str]) -> float:
    t = time.perf_counter()
    for p in files:
        with open(p, "rb") as f:
            for line in f:
                if line.strip():
                    with contextlib.suppress(orjson.JSONDecodeError):
                        orjson.loads(line)
    return time.perf_counter() - t


def timed_scan(root: str) -> tuple[float, object]:
    from inspector.store.index import SessionIndex
    from inspector.store.scan import Scanner

    t = time.perf_counter()
    with SessionIndex() as index:
        scanner = Scanner(index)
        for _row in scanner.rows([root]):
            pass
    return time.perf_counter() - t, scanner.stats


def grow(path: str, records: int = 100) -> None:
    """Append `records` copies of the file's own message lines (a pi v1 file has no ids to clash)."""
    with open(path, "rb") as f:
        lines = [ln for ln in f.read().splitlines() if b'"type":"message"' in ln]
    with open(path, "ab") as f:
        for i in range(records):
            f.write(lines[i % len(lines)] + b"\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--out", default=os.path.join(REPO, "benchmarks", "out", "scan"))
    args = ap.parse_args()
    root = os.path.join(args.out, f"sessions-{args.sessions}")
    cache = os.path.join(args.out, "cache")
    if not os.path.isdir(root):
        print(f"generating {args.sessions:,} sessions into {root} ...", file=sys.stderr)
        generate(root, args.sessions)
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["INSPECTOR_CACHE_DIR"] = cache
    from inspector.store.places import session_files

    files = [f.path for f in session_files([root])]
    size = sum(os.path.getsize(p) for p in files)
    print(f"{len(files):,} sessions, {size / MB:,.1f} MB, {os.cpu_count()} cores")

    floor = parse_floor(files)
    first, stats = timed_scan(root)
    rescan, stats2 = timed_scan(root)
    pi_files = sorted(p for p in files if os.sep + "pi" + os.sep in p and "pi-mono" in p)
    grown_file = pi_files[0] if pi_files else files[0]
    grow(grown_file)
    grown, stats3 = timed_scan(root)

    ratio = first / rescan if rescan else float("inf")
    print(f"parse floor    {floor:7.2f} s   {size / MB / floor:8.1f} MB/s  (orjson.loads of every line, one process)")
    print(f"first scan     {first:7.2f} s   {size / MB / first:8.1f} MB/s  = {first / floor:.1f}x the floor"
          f"  ({stats.read:,} read, {stats.unreadable:,} unreadable)")  # type: ignore[attr-defined]
    verdict = "PASS" if ratio >= RESCAN_TARGET else "MISS"
    print(f"re-scan        {rescan:7.3f} s   {ratio:8.1f}x faster than the first  (target >= {RESCAN_TARGET:.0f}x: {verdict})"
          f"  ({stats2.read:,} read)")  # type: ignore[attr-defined]
    verdict = "PASS" if grown < GROWN_TARGET else "MISS"
    print(f"grown by 100   {grown:7.3f} s   (target < {GROWN_TARGET:.0f} s: {verdict})  ({stats3.read:,} read, "  # type: ignore[attr-defined]
          f"{os.path.basename(grown_file)}, read again in full)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
