"""Incremental analysis of a growing ledger against a full analysis (issue 17, point 1). A report,
not a test: exits 0 when the targets are met, 1 when not.

    python -m benchmarks.incremental                 # pi, 100,000 records; then an ADK SQLite store
    python -m benchmarks.incremental --records 20000
    python -m benchmarks.incremental --only store    # the store case alone (--only pi: the ledger)
    python -m benchmarks.incremental --only codex    # a Codex rollout of ~100,000 records (benchmarks.gen_formats, 40 MB)
    python -m benchmarks.incremental --only claude_code   # a Claude Code transcript of about 100,000 records (benchmarks.gen_formats)

The ledger (generated into benchmarks/out/ when missing) is cut 1,001 lines before its end and
followed (`inspector.live.incremental.Follower`); then one line is appended and the report
updated, then 1,000 lines. Each update is timed (best of `--repeat`, every repeat from the same
cut), beside a full load+analyze of the grown file, and its analyze_json/context_json is checked
equal to that full analysis. Targets: one record <= 20 ms, 1,000 records <= 1 s.

The store case: an ADK SQLite store (DatabaseSessionService v1 schema, `benchmarks.gen_formats`)
of about `--records` events, its last 1,001 event rows taken out and inserted again as the
runtime inserts them (the row, then the session's update_time): one, then 1,000. Same targets.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable

import orjson

if __package__ in (None, ""):  # `python benchmarks/incremental.py`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import gen_formats, gen_pi_ledger, generate_apart
from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import load
from inspector.live.incremental import GROWN, Follower

ADK_EVENTS_PER_MB = 1220  # what benchmarks.gen_formats writes (102,638 events in 84 MB)

ONE_MS = 20.0
THOUSAND_MS = 1000.0
CODEX_MB = 40  # gen_formats' Codex rollout: about 2,570 records a MB
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
    """A JSONL ledger cut 1,001 lines before its end, followed, grown by one line then 1,000."""
    starts = line_starts(src)
    lines = len(starts) - 1
    cut, one, end = starts[lines - 1001], starts[lines - 1000], starts[lines]

    def cut_copy(path: str) -> None:
        with open(src, "rb") as f, open(path, "wb") as out:
            out.write(f.read(cut))

    return timed_growth(
        os.path.basename(src), repeat, cut_copy, lambda p: append(p, src, cut, one), lambda p: append(p, src, one, end)
    )


def timed_growth(
    name: str,
    repeat: int,
    cut_copy: Callable[[str], None],
    grow_one: Callable[[str], None],
    grow_rest: Callable[[str], None],
) -> dict[str, float | int | bool]:
    """Follow a cut copy of a session (`cut_copy` writes it), grow it by one record then by 1,000
    (best of `repeat`, every repeat from the same cut), and compare the followed report with a
    full load + analysis of the grown file."""
    tmp = tempfile.mkdtemp(prefix="inspector-incr-")
    path = os.path.join(tmp, name)
    best = {"one_ms": float("inf"), "thousand_ms": float("inf")}
    grown = True
    try:
        for _ in range(repeat):
            cut_copy(path)
            fol = Follower(path)
            t0 = time.perf_counter()
            fol.poll()
            # The collector's first full pass over what the read made (the loaders pause it) comes
            # once after any load, whenever the next allocations trigger it: part of the first read.
            gc.collect()
            first_s = time.perf_counter() - t0
            ups = []
            for key, grow in (("one_ms", grow_one), ("thousand_ms", grow_rest)):
                grow(path)
                t0 = time.perf_counter()
                ups.append(fol.poll())
                best[key] = min(best[key], (time.perf_counter() - t0) * 1000)
            grown = grown and all(up is not None and up.whole == GROWN for up in ups)
        t0 = time.perf_counter()
        full = analyze(load(path))
        full_ms = (time.perf_counter() - t0) * 1000
        equal = fol.report is not None and as_json(fol.report) == as_json(full)
        records = len(full.ledger.records)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"records": records, "first_read_s": first_s, "full_ms": full_ms, "equal": equal, "incremental": grown, **best}


def _event_rows(path: str, last: int) -> tuple[list[str], list[tuple[object, ...]]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    cur = con.execute("SELECT rowid, * FROM events ORDER BY rowid DESC LIMIT ?", (last,))
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()[::-1]
    con.close()
    return cols, rows


def insert_events(path: str, cols: list[str], rows: list[tuple[object, ...]]) -> None:
    """As ADK's DatabaseSessionService appends: the event rows, then the session's update_time."""
    con = sqlite3.connect(path)
    names = ", ".join(["rowid", *cols[1:]])
    con.executemany(f"INSERT INTO events ({names}) VALUES ({', '.join('?' * len(cols))})", rows)
    last = dict(zip(cols, rows[-1], strict=True))
    con.execute(
        "UPDATE sessions SET update_time=? WHERE app_name=? AND user_id=? AND id=?",
        (last["timestamp"], last["app_name"], last["user_id"], last["session_id"]),
    )
    con.commit()
    con.close()


def measure_store(src: str, repeat: int) -> dict[str, float | int | bool]:
    """An ADK store without its last 1,001 event rows, followed, given back one row then 1,000."""
    cols, tail = _event_rows(src, 1001)

    def cut_copy(path: str) -> None:
        shutil.copyfile(src, path)
        con = sqlite3.connect(path)
        con.execute("DELETE FROM events WHERE rowid >= ?", (tail[0][0],))
        con.commit()
        con.close()

    return timed_growth(
        os.path.basename(src), repeat, cut_copy, lambda p: insert_events(p, cols, tail[:1]), lambda p: insert_events(p, cols, tail[1:])
    )


def report(title: str, r: dict[str, float | int | bool]) -> bool:
    full = float(r["full_ms"])
    print(title)
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
    return bool(ok1 and ok1000 and r["equal"] and r["incremental"])


def run_case(case: str, ns: argparse.Namespace) -> bool:
    """Generate the case's file when missing, measure it and print the report; its targets met?"""
    if case == "pi":
        src = gen_pi_ledger.default_path(ns.records, gen_pi_ledger.DEFAULT_SEED)
        if not os.path.exists(src):
            generate_apart("gen_pi_ledger", "--records", str(ns.records), "--out", src)  # (see generate_apart)
    else:
        fmt, mb = {
            "claude_code": ("claude_code", round(ns.records * CC_BYTES_PER_RECORD / 1e6)),
            "codex": ("codex", ns.mb),
            "store": ("adk_sqlite", max(1, round(ns.records / ADK_EVENTS_PER_MB))),
        }[case]
        src = gen_formats.default_path(fmt, mb)
        if not os.path.exists(src):
            generate_apart("gen_formats", "--format", fmt, "--mb", str(mb))
    r = measure_store(src, ns.repeat) if case == "store" else measure(src, ns.repeat)
    what = {"pi": "pi ledger", "claude_code": "Claude Code transcript", "codex": "Codex rollout", "store": "ADK SQLite store (v1)"}[case]
    unit = "events" if case == "store" else "records"
    mb_now = os.path.getsize(src) / 1e6
    return report(f"{what}, {int(r['records']):,} {unit} ({mb_now:.1f} MB): {os.path.relpath(src)}", r)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=gen_pi_ledger.DEFAULT_RECORDS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=("pi", "claude_code", "codex", "store"), help="one case (default: all four)")
    ap.add_argument("--mb", type=float, default=CODEX_MB, help=f"the Codex rollout's size (default {CODEX_MB} MB)")
    ns = ap.parse_args(argv)
    ok = True
    for case in ("pi", "claude_code", "codex", "store"):
        if ns.only in (None, case):
            ok = run_case(case, ns) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
