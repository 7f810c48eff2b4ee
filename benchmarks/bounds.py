"""What a format's output requires beyond parsing it, against the parse floor (issue 15: "where a
format's structure makes the target impossible, say why"). A report, not a test: always exits 0.

    python -m benchmarks.bounds                      # every format, the 100 MB files
    python -m benchmarks.bounds --formats nextclaw,maka --mb 100 --repeat 3

`benchmarks.formats` compares load+analyze with the parse floor (orjson.loads of the same bytes).
Some outputs need work that no parse does, whatever the reader is written in:

  tokens   the cl100k_base count of every text the analysis counts (the items of the next request
           no provider usage covers: a runtime that records no usage has all of them counted).
           The count is in the output, so a reader must tokenize those texts; measured as
           tiktoken's Rust encoder counting the distinct texts (a text met twice counted once),
           its encoding's build beside it (once per process).
  digest   maka only: a checkpoint applies when the SHA-256 over the stable JSON of the events it
           covers equals its `coverage.sourceDigest` (history-compact-checkpoint.ts:728-738), so the
           covered events are serialized again, keys sorted, and hashed: measured as the
           adapter's own digest pass (`maka.PrefixDigests.feed`) over the events it was fed.

Each is measured in a fresh process (the texts and events found first, not timed, then the work
timed alone), best of `--repeat`; the floor as `benchmarks.formats` measures it. The bound is
(floor + tokens + digest) / floor: the ratio a reader that parsed at the floor and did nothing else
but what the output requires would reach. Above the 1.5x target, the target cannot be met on that
file by any reader that gives the same output; below it, what is above the bound is ours.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

if __package__ in (None, ""):  # `python benchmarks/bounds.py`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.formats import (
    CPU_TARGET,
    REPO,
    add_file_arguments,
    format_files,
    fresh,
    progress,
    worker_reply,
)

PARTS = ("tokens", "tokens_build", "digest")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _texts_counted(path: str) -> tuple[list[str], list[Any]]:
    """The analysis of `path` run once, as `inspector analyze` runs it, with the tokenizer's and
    maka's digest entry points watched: the texts it counted and the events its digest pass fed."""
    from inspector.analysis import analyze, tokens
    from inspector.formats import load, maka

    texts: list[str] = []
    fed: list[Any] = []
    count, count_many, feed = tokens.Tokenizer.count, tokens.Tokenizer.count_many, maka.PrefixDigests.feed

    inside = [False]  # (count_many calls count for a short batch: each text captured once)

    def counted(self: Any, text: str) -> int:
        if not inside[0]:
            texts.append(text)
        return count(self, text)

    def counted_many(self: Any, batch: list[str]) -> list[int]:
        texts.extend(batch)
        inside[0] = True
        try:
            return count_many(self, batch)
        finally:
            inside[0] = False

    def fed_one(self: Any, ev: Any, safe: bool = False) -> None:
        if self.count < self.last:
            fed.append((ev, safe))
        feed(self, ev, safe)

    tokens.Tokenizer.count, tokens.Tokenizer.count_many, maka.PrefixDigests.feed = counted, counted_many, fed_one  # type: ignore[method-assign]
    try:
        analyze(load(path, fingerprint=False))
    finally:
        tokens.Tokenizer.count, tokens.Tokenizer.count_many, maka.PrefixDigests.feed = count, count_many, feed  # type: ignore[method-assign]
    return texts, fed


def measure_here(path: str) -> dict[str, Any]:
    """In the fresh process: what the output requires of `path`, each part timed alone."""

    from inspector.analysis.tokens import SMALL_TEXT_CHARS, encoded_len, get_tokenizer
    from inspector.formats.maka import PrefixDigests

    texts, fed = _texts_counted(path)
    distinct = list(dict.fromkeys(t for t in texts if t))
    out: dict[str, Any] = {"texts": len(texts), "distinct_texts": len(distinct), "chars": sum(map(len, distinct)), "events_digested": len(fed)}
    tok = get_tokenizer()
    tok._enc = None  # (a fresh encoding: its build is timed below)
    c0 = _cpu()
    enc = tok.encoding if distinct else None
    c1 = _cpu()
    n = sum(encoded_len(enc, t) for t in distinct) if distinct else 0
    c2 = _cpu()
    if 0 < out["chars"] <= SMALL_TEXT_CHARS:  # as the tokenizer counts so few: its pure-Python counter, if cheaper
        small = _small_count_cpu(distinct)
        if small < c2 - c0:
            c0, c1, c2 = c2 - small, c2 - small, c2
    digests = PrefixDigests({len(fed)})  # (the loader's own pass: every event fed, the last prefix's digest taken)
    d0 = _cpu()
    for ev, safe in fed:
        digests.feed(ev, safe)
    out.update(tokens_build=c1 - c0, tokens=c2 - c1, digest=_cpu() - d0, token_count=n)
    return out


def _small_count_cpu(texts: list[str]) -> float:
    """CPU of `SmallBpe` (the tokenizer's counter for a few texts) built and counting `texts`;
    infinite where it declines them."""
    from inspector.analysis.tokens import MERGE_BUDGET, Declined, SmallBpe, _read_offline_copy

    c0 = _cpu()
    small = SmallBpe(_read_offline_copy()[0])
    small.merge_budget = MERGE_BUDGET
    try:
        for t in texts:
            small.count(t)
    except Declined:
        return float("inf")
    return _cpu() - c0


def _fresh_bounds(path: str, timeout: float) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "benchmarks.bounds", "--worker", "--file", path]
    try:
        p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"error": f"exit {p.returncode}: {(p.stderr.strip().splitlines() or ['no output'])[-1]}"}
    return dict(json.loads(lines[-1]))


def bound_format(fmt: str, path: str, repeat: int, timeout: float, say: Any) -> dict[str, Any]:
    floors, parts = [], []
    for i in range(repeat):
        say(f"  {fmt}: floor and required work {i + 1}/{repeat} ...")
        floors.append(fresh("floor", fmt, path, timeout))
        parts.append(_fresh_bounds(path, timeout))
    ok = [p for p in parts if "error" not in p]
    floor = min((r["cpu"] for r in floors if "error" not in r), default=None)
    res: dict[str, Any] = {"format": fmt, "file": os.path.relpath(path, REPO), "floor_cpu": floor}
    res["errors"] = [r["error"] for r in floors + parts if "error" in r]
    if not ok or floor is None:
        return res
    for k in PARTS:
        res[k] = min(p[k] for p in ok)
    for k in ("texts", "distinct_texts", "chars", "token_count", "events_digested"):
        res[k] = ok[0][k]
    required = sum(res[k] for k in PARTS)
    res["bound_ratio"] = (floor + required) / floor
    res["reachable"] = res["bound_ratio"] <= CPU_TARGET
    return res


def render(results: list[dict[str, Any]], repeat: int) -> str:
    rows = [
        f"required work beyond the parse: CPU seconds, best of {repeat} fresh processes; the bound is "
        f"(floor + tokens + build + digest) / floor, against the {CPU_TARGET}x target",
        f"{'format':<16}{'floor':>7}{'tokens':>8}{'build':>7}{'digest':>8}  {'bound':>7}  {'target':<16}{'texts counted':>26}",
    ]
    for r in results:
        if "bound_ratio" not in r:
            rows.append(f"{r['format']:<16}n/a: {'; '.join(r['errors']) or 'no figure'}")
            continue
        verdict = "reachable" if r["reachable"] else "out of reach"
        texts = f"{r['distinct_texts']:,} ({r['chars'] / 1e6:.1f}M chars)"
        rows.append(
            f"{r['format']:<16}{r['floor_cpu']:7.2f}{r['tokens']:8.2f}{r['tokens_build']:7.2f}{r['digest']:8.2f}  "
            f"{r['bound_ratio']:6.2f}x  {verdict:<16}{texts:>26}"
        )
        if r["events_digested"]:
            rows.append(f"{'':<16}{r['events_digested']:,} events serialized again and hashed for the checkpoint's digest")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_file_arguments(ap)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    if ns.worker:
        worker_reply(measure_here(ns.file))
    say = progress(ns)
    files = format_files(ns, say)
    if files is None:
        return 0
    results = []
    for fmt, path in files:
        t0 = time.perf_counter()
        results.append(bound_format(fmt, path, max(1, ns.repeat), ns.timeout, say))
        say(f"  {fmt}: {time.perf_counter() - t0:.0f} s")
    print(json.dumps(results, indent=2) if ns.json else render(results, max(1, ns.repeat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
