"""Incremental analysis of a growing ledger against a full analysis (issue 17, point 1). A report,
not a test: exits 0 when the targets are met, 1 when not.

    python -m benchmarks.incremental                 # pi, 100,000 records (benchmarks.gen_pi_ledger)
    python -m benchmarks.incremental --records 20000
    python -m benchmarks.incremental --format claude_code   # a Claude Code transcript of about 100,000 records (benchmarks.gen_formats)

The ledger (generated into benchmarks/out/ when missing) is cut 1,001 lines before its end and
followed (`inspector.live.incremental.Follower`); then one line is appended and the report
updated, then 1,000 lines. Each update is timed (best of `--repeat`, every repeat from the same
cut), beside a full load+analyze of the grown file, and its analyze_json/context_json is checked
equal to that full analysis. Targets: one record <= 20 ms, 1,000 records <= 1 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

import orjson

if __package__ in (None, ""):  # `python benchmarks/incremental.py`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import gen_formats, gen_pi_ledger
from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import load
from inspector.live.incremental import GROWN, Follower

ONE_MS = 20.0
THOUSAND_MS = 1000.0
# What a generated Claude Code transcript takes per record (gen_formats: 100.1 MB hold 36,639).
CC_BYTES_PER_RECORD = 2_732


def as_json(rep: object) -> bytes:
    rep.ensure_tokens()  # type: ignore[attr-defined]
    return orjson.dumps([analyze_json(rep), context_json(rep)], option=orjson.OPT_SORT_KEYS)  # type: ignore[arg-type]


def line_starts(path: str) -> list[int]:
    with open(path, "rb") as f:
        data = f.read()
    out = [0]
    i = data.find(b"\n")
    while i != -1:
        out.append(i + 1)
        i = data.find(b"\n", i + 1)
    return out


def append(path: str, src: str, lo: int, hi: int) -> None:
    with open(src, "rb") as f:
        f.seek(lo)
        chunk = f.read(hi - lo)
    with open(path, "ab") as f:
        f.write(chunk)


def measure(src: str, repeat: int) -> dict[str, float | int | bool]:
    starts = line_starts(src)
    lines = len(starts) - 1
    cut = starts[lines - 1001]
    one = starts[lines - 1000]
    end = starts[lines]
    tmp = tempfile.mkdtemp(prefix="inspector-incr-")
    path = os.path.join(tmp, os.path.basename(src))
    best = {"one_ms": float("inf"), "thousand_ms": float("inf")}
    equal = True
    grown = True
    try:
        for _ in range(repeat):
            with open(src, "rb") as f, open(path, "wb") as out:
                out.write(f.read(cut))
            fol = Follower(path)
            t0 = time.perf_counter()
            fol.poll()
            first_s = time.perf_counter() - t0
            append(path, src, cut, one)
            t0 = time.perf_counter()
            up1 = fol.poll()
            best["one_ms"] = min(best["one_ms"], (time.perf_counter() - t0) * 1000)
            append(path, src, one, end)
            t0 = time.perf_counter()
            up2 = fol.poll()
            best["thousand_ms"] = min(best["thousand_ms"], (time.perf_counter() - t0) * 1000)
            grown = grown and up1 is not None and up2 is not None and up1.whole == up2.whole == GROWN
        t0 = time.perf_counter()
        full = analyze(load(path))
        full_ms = (time.perf_counter() - t0) * 1000
        equal = fol.report is not None and as_json(fol.report) == as_json(full)
        records = len(full.ledger.records)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "records": records,
        "first_read_s": first_s,
        "full_ms": full_ms,
        "equal": equal,
        "incremental": grown,
        **best,
    }


def ledger_path(fmt: str, records: int) -> str:
    """The benchmark's ledger of about `records` records, generated when missing."""
    if fmt == "claude_code":
        mb = round(records * CC_BYTES_PER_RECORD / 1e6)
        path = gen_formats.default_path(fmt, mb)
        return path if os.path.exists(path) else gen_formats.generate(fmt, mb)
    path = gen_pi_ledger.default_path(records, gen_pi_ledger.DEFAULT_SEED)
    if not os.path.exists(path):
        gen_pi_ledger.generate(path, records, gen_pi_ledger.DEFAULT_SEED)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=gen_pi_ledger.DEFAULT_RECORDS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--format", choices=("pi", "claude_code"), default="pi")
    ns = ap.parse_args(argv)
    src = ledger_path(ns.format, ns.records)
    r = measure(src, ns.repeat)
    full = float(r["full_ms"])
    print(
        f"{ns.format} ledger, {int(r['records']):,} records ({os.path.getsize(src) / 1e6:.1f} MB): {os.path.relpath(src)}"
    )
    print(f"  first read (full load + analysis + follow state)  {float(r['first_read_s']):8.2f} s")
    print(f"  full load + analyze of the grown file              {full:8.1f} ms")
    ok1 = float(r["one_ms"]) <= ONE_MS
    ok1000 = float(r["thousand_ms"]) <= THOUSAND_MS
    print(
        f"  1 record appended:     {float(r['one_ms']):8.1f} ms  (target <= {ONE_MS:.0f} ms: {'met' if ok1 else 'MISSED'}; {full / float(r['one_ms']):.0f}x faster than a full analysis)"
    )
    print(
        f"  1,000 records appended: {float(r['thousand_ms']):7.1f} ms  (target <= {THOUSAND_MS:.0f} ms: {'met' if ok1000 else 'MISSED'}; {full / float(r['thousand_ms']):.0f}x faster)"
    )
    print(f"  read from the last offset (no full read): {'yes' if r['incremental'] else 'NO'}")
    print(
        f"  equal to a full analysis (analyze_json + context_json, byte for byte): {'yes' if r['equal'] else 'NO'}"
    )
    return 0 if ok1 and ok1000 and r["equal"] and r["incremental"] else 1


if __name__ == "__main__":
    sys.exit(main())
