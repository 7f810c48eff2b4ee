"""Load + analysis benchmark on a 100k-record pi ledger (~85 MB). A report, not a test: exits 0.

    python -m benchmarks.run            # or: python benchmarks/run.py
    python -m benchmarks.run --json     # the same figures as JSON

Generates the ledger into benchmarks/out/ when it is missing, then measures, each repetition in a
fresh interpreter so the numbers are independent of one another:

  baseline       read the file and orjson.loads every line, results dropped (the floor), best of
                 N; a naive loader that keeps the parsed lines is shown for reference
  load+analysis  inspector.formats.load(path), then inspector.analysis.analyze(ledger), best of N;
                 load and analysis are also timed on their own. A big pi file is read by this
                 process and a forked helper (two cores): the helper's CPU time and peak RSS are
                 shown too, but the figures and targets are this process's, as before
  peak RSS       ru_maxrss of a fresh process that does only load+analysis, against the file size

Targets: load+analysis <= 1.5 x baseline; peak RSS <= 2.5 x file size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from typing import Any

if __package__ in (None, ""):  # `python benchmarks/run.py`: make the repo root importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import generate_apart
from benchmarks.gen_pi_ledger import DEFAULT_RECORDS, DEFAULT_SEED, default_path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIME_TARGET = 1.5  # load+analysis seconds / baseline seconds
RSS_TARGET = 2.5  # peak RSS bytes / file bytes
MB = 1_000_000


def _worker(kind: str, path: str, timeout: float) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("PYTHONTRACEMALLOC", None)
    try:
        p = subprocess.run(
            [sys.executable, "-m", "benchmarks._worker", kind, path],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"kind": kind, "error": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return {"kind": kind, "error": f"exit {p.returncode}: {tail}"}
    res = json.loads(lines[-1])
    if p.stderr.strip():
        res["stderr_tail"] = p.stderr.strip().splitlines()[-1]
    return res


def measure(path: str, repeat: int, timeout: float, progress: bool) -> dict[str, Any]:
    def say(msg: str) -> None:
        if progress:
            print(msg, file=sys.stderr, flush=True)

    size = os.path.getsize(path)
    base_runs = []
    for i in range(repeat):
        say(f"  baseline {i + 1}/{repeat} ...")
        base_runs.append(_worker("baseline", path, timeout))
    nogc_runs = []
    for i in range(repeat):
        say(f"  naive loader (parsed lines kept) {i + 1}/{repeat} ...")
        nogc_runs.append(_worker("baseline_keep", path, timeout))
    pipe_runs = []
    for i in range(repeat):
        say(f"  load+analysis {i + 1}/{repeat} ...")
        pipe_runs.append(_worker("pipeline", path, timeout))
    say("  peak RSS (load+analysis only) ...")
    rss_run = _worker("rss", path, timeout)

    errors = [r["error"] for r in (*base_runs, *nogc_runs, *pipe_runs, rss_run) if "error" in r]
    base_ok = [r for r in base_runs if "error" not in r]
    pipe_ok = [r for r in pipe_runs if "error" not in r]

    baseline_s = min((r["seconds"] for r in base_ok), default=None)
    load_s = min((r["load_seconds"] for r in pipe_ok), default=None)
    analysis_status = pipe_ok[0]["analysis"] if pipe_ok else "not measured"
    with_analysis = [r for r in pipe_ok if r.get("analysis_seconds") is not None]
    analysis_s = min((r["analysis_seconds"] for r in with_analysis), default=None)
    if with_analysis:
        total_s = min(r["load_seconds"] + r["analysis_seconds"] for r in with_analysis)
    else:
        total_s = load_s  # analysis not available: the figure covers load only
    ratio = total_s / baseline_s if total_s is not None and baseline_s else None

    peak = rss_run.get("peak_rss")
    rss_ratio = peak / size if peak else None
    return {
        "file": os.path.relpath(path, REPO) if path.startswith(REPO) else path,
        "file_bytes": size,
        "records": (pipe_ok[0]["records"] if pipe_ok else None),
        "repeat": repeat,
        "baseline_seconds": baseline_s,
        "baseline_peak_rss_bytes": max((r["peak_rss"] for r in base_ok), default=None),
        "naive_keep_seconds": min((r["seconds"] for r in nogc_runs if "error" not in r), default=None),
        "load_seconds": load_s,
        "analysis": analysis_status,
        "analysis_seconds": analysis_s,
        "findings": next((r["findings"] for r in with_analysis if "findings" in r), None),
        "load_analysis_seconds": total_s,
        "load_analysis_covers": "load+analysis" if with_analysis else "load only",
        "time_ratio": ratio,
        "time_target": TIME_TARGET,
        "time_pass": ratio is not None and ratio <= TIME_TARGET,
        "peak_rss_bytes": peak,
        "helper_peak_rss_bytes": rss_run.get("helper_peak_rss") or None,
        "load_cpu_seconds": min((r["load_cpu_seconds"] for r in pipe_ok), default=None),
        "load_helper_cpu_seconds": min((r.get("load_helper_cpu_seconds") or 0.0 for r in pipe_ok), default=None),
        "rss_before_load_bytes": rss_run.get("rss_before"),
        "rss_ratio": rss_ratio,
        "rss_target": RSS_TARGET,
        "rss_pass": rss_ratio is not None and rss_ratio <= RSS_TARGET,
        "runs": {"baseline": base_runs, "naive_keep": nogc_runs, "pipeline": pipe_runs, "rss": rss_run},
        "errors": errors,
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
    }


def _fmt_s(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f} s"


def _verdict(ok: bool, value: float | None) -> str:
    return "n/a" if value is None else ("PASS" if ok else "MISS")


def render(r: dict[str, Any]) -> str:
    size_mb = r["file_bytes"] / MB
    recs = f"{r['records']:,} records" if r["records"] is not None else "records: n/a"
    analysis_line = (
        f"{_fmt_s(r['analysis_seconds'])}   inspector.analysis.analyze"
        if r["analysis_seconds"] is not None
        else str(r["analysis"])
    )
    covers = (
        "   best single run (load and analysis above are each their own best)"
        if r["load_analysis_covers"] == "load+analysis"
        else "   load only: analysis not available"
    )
    ratio = "n/a" if r["time_ratio"] is None else f"{r['time_ratio']:.2f} x baseline"
    peak = "n/a" if r["peak_rss_bytes"] is None else f"{r['peak_rss_bytes'] / MB:.0f} MB"
    rss_ratio = "n/a" if r["rss_ratio"] is None else f"{r['rss_ratio']:.2f} x file size"
    before = (
        ""
        if r["rss_before_load_bytes"] is None
        else f" ({r['rss_before_load_bytes'] / MB:.0f} MB before load)"
    )
    base_rss = (
        ""
        if r["baseline_peak_rss_bytes"] is None
        else f"; baseline process peaked at {r['baseline_peak_rss_bytes'] / MB:.0f} MB"
    )
    helper = (
        ""
        if not r["load_helper_cpu_seconds"]
        else f"{' ' * 19}CPU: {r['load_cpu_seconds']:.2f} s in this process (its hash thread included), "
        f"{r['load_helper_cpu_seconds']:.2f} s in its forked helper (least of the runs)"
    )
    helper_rss = (
        ""
        if not r["helper_peak_rss_bytes"]
        else f"{' ' * 19}the forked helper process peaked at {r['helper_peak_rss_bytes'] / MB:.0f} MB"
    )
    rows = [
        f"pi ledger benchmark: {r['file']}",
        f"  file size        {size_mb:.1f} MB, {recs}",
        f"  baseline         {_fmt_s(r['baseline_seconds'])}   read + orjson.loads every line, nothing kept (best of {r['repeat']})",
        f"  naive loader     {_fmt_s(r['naive_keep_seconds'])}   the same keeping every parsed line in a list (reference only)",
        f"  load             {_fmt_s(r['load_seconds'])}   inspector.formats.load (best of {r['repeat']})",
        *([helper] if helper else []),
        f"  analysis         {analysis_line}",
        f"  load+analysis    {_fmt_s(r['load_analysis_seconds'])}{covers}",
        f"  time ratio       {ratio:<22} target <= {r['time_target']}   {_verdict(r['time_pass'], r['time_ratio'])}",
        f"  peak RSS         {peak}{before}{base_rss}",
        *([helper_rss] if helper_rss else []),
        f"  RSS / file size  {rss_ratio:<22} target <= {r['rss_target']}   {_verdict(r['rss_pass'], r['rss_ratio'])}",
        f"  python {r['python']}, {r['machine']}",
    ]
    rows += [f"  error: {e}" for e in r["errors"]]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Benchmark inspector load + analysis on a large pi ledger (exits 0)."
    )
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--file", help="benchmark this session file instead of the generated one")
    ap.add_argument(
        "--records",
        type=int,
        default=DEFAULT_RECORDS,
        help="records of the generated ledger (default 100000)",
    )
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--regen", action="store_true", help="regenerate the ledger even if it exists")
    ap.add_argument(
        "--repeat", type=int, default=3, help="fresh-process repetitions for the timings (best of N)"
    )
    ap.add_argument("--timeout", type=float, default=1800, help="seconds allowed per measurement process")
    ns = ap.parse_args(argv)

    path = ns.file or default_path(ns.records, ns.seed)
    if ns.file is None and (ns.regen or not os.path.exists(path)):
        print(f"generating {os.path.relpath(path, REPO)} ...", file=sys.stderr, flush=True)
        generate_apart("gen_pi_ledger", "--records", str(ns.records), "--seed", str(ns.seed), "--out", path)  # (see generate_apart)
    if not os.path.exists(path):
        print(f"{path}: no such file", file=sys.stderr)
        return 0
    result = measure(path, max(1, ns.repeat), ns.timeout, progress=not ns.json)
    if ns.json:
        print(json.dumps(result, indent=2))
    else:
        print(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
