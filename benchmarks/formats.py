"""Every format against its parse floor (issue 15, target 1). A report, not a test: always exits 0.

    python -m benchmarks.formats                       # every format, 100 MB files
    python -m benchmarks.formats --mb 20 --formats pi,codex
    python -m benchmarks.formats --json

Per format, on a file from `benchmarks.gen_formats` (generated into benchmarks/out/ when missing),
each measurement in a fresh interpreter, best of `--repeat` (3):

  floor          the parse floor of the same bytes: orjson.loads of every line (JSONL), of the whole
                 document (ADK's and adk-go's JSON dumps), or of every row's JSON read with sqlite3
                 (SQLite stores: every JSON column of adk-go's events, every JSON column of maka's
                 event, run and ledger tables; OpenClaw's zstd rows decompressed first)
  load           inspector.formats.load(path)
  load+analyze   the same, then inspector.analysis.analyze(ledger)

Both as `inspector analyze FILE` runs them: a one-shot process, whose loaded ledger is moved out
of the cyclic collector's sight (`whole_lines.freeze_what_loads`, then `gc.freeze()` after the
load, as `cli.main` does), so analysis does not pay for the collector walking the ledger again; and
the analysis runs with the collector paused, as `cli.main` runs it (`whole_lines.collector_paused`).

CPU is the process's own (all its threads) plus its children's: a forked helper's CPU counts, and
is shown on its own too. Peak RSS is ru_maxrss of the measuring process (its helper's shown apart).
Targets: load+analyze CPU <= 1.5x the floor's CPU (the figure of merit), peak RSS <= 2.5x the file.
The wall ratio is printed beside the CPU ratio, against the same 1.5.

    python -m benchmarks.formats --instructions --mb 20 --formats codex,maka

counts instructions instead of seconds (valgrind's callgrind, one run per kind: the same count for
the same bytes whatever else the machine does, so an A/B of a change is exact on these noisy
machines; PYTHONHASHSEED is fixed, else string hashing moves counts by a few percent). Each count is
net of the imports: the same process run again with the work left out.
The ratio is load+analyze over the floor, against the same 1.5; about 50x slower than a timed run.
"""

from __future__ import annotations

import argparse
import gc
import json
import mmap
import os
import platform
import re
import resource
import subprocess
import sys
import time
from typing import Any

if __package__ in (None, ""):  # `python benchmarks/formats.py`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_TARGET = 1.5
WALL_TARGET = 1.5
RSS_TARGET = 2.5
MB = 1_000_000
KINDS = ("floor", "load", "pipeline")


# ------------------------------------------------------------------------- in the fresh process


def _maxrss(who: int = resource.RUSAGE_SELF) -> int:
    r = resource.getrusage(who).ru_maxrss
    return r if sys.platform == "darwin" else r * 1024  # Linux reports KiB


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


# The SQLite stores whose rows hold JSON in several columns (or tables): what each row's JSON is.
SQLITE_JSON = {
    "adk_go_sqlite": (  # the events table's JSON columns (storage_session.go:73-113)
        "SELECT actions, content, usage_metadata, long_running_tool_ids_json, routes_json, output_json, node_info_json, "
        "requested_input_json, grounding_metadata, custom_metadata, citation_metadata FROM events",
    ),
    "maka": (  # the runtime events, the run headers, the run ledgers, the projections
        "SELECT payload_json FROM runtime_events",
        "SELECT record_json FROM core_agent_runs",
        "SELECT record_json FROM core_agent_run_events",
        "SELECT event_json FROM core_agent_run_projections",
    ),
}


def floor(fmt: str, path: str) -> int:
    """The parse floor: every record's JSON decoded, nothing kept. Returns the records decoded."""
    import orjson

    loads = orjson.loads
    n = 0
    if fmt in ("adk_sqlite", "openclaw", "adk_go_sqlite", "maka"):
        import sqlite3

        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        if fmt in SQLITE_JSON:  # every JSON column of every row, the NULLs skipped
            for sql in SQLITE_JSON[fmt]:
                for row in con.execute(sql):
                    for v in row:
                        if v is not None:
                            loads(v)
                    n += 1
        elif fmt == "adk_sqlite":
            for (data,) in con.execute("SELECT event_data FROM events"):
                loads(data)
                n += 1
        else:
            import zstandard

            unzip = zstandard.ZstdDecompressor().decompress
            for ej, z, size in con.execute("SELECT event_json, event_zstd, event_utf8_bytes FROM transcript_events"):
                loads(ej if ej is not None else unzip(z, max_output_size=size))
                n += 1
        con.close()
    elif fmt == "adk_json":
        with open(path, "rb") as f:
            n = len(loads(f.read()).get("events", []))
    elif fmt == "adk_go_json":  # one JSON document, a list of events
        with open(path, "rb") as f:
            n = len(loads(f.read()))
    else:
        with open(path, "rb") as f:
            for line in f:
                if not line.isspace():
                    loads(line)
                    n += 1
    return n


def measure_here(kind: str, fmt: str, path: str, imports_only: bool = False) -> dict[str, Any]:
    """One measurement. `imports_only`: the same process with the work left out (what the
    instruction counts subtract)."""
    out: dict[str, Any] = {"kind": kind}
    if kind == "floor":
        import orjson  # noqa: F401 - imported before the clock starts
    else:
        from inspector.analysis import analyze
        from inspector.formats import load
        from inspector.formats.whole_lines import collector_paused, freeze_what_loads

        freeze_what_loads()  # a one-shot process, as the console script is
    c0, h0, t0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    own0 = resource.getrusage(resource.RUSAGE_SELF)
    if imports_only:
        return out
    if kind == "floor":
        out["records"] = floor(fmt, path)
    else:
        led = load(path, fingerprint=False)  # as `inspector analyze` reads it: a read-only command hashes nothing
        gc.freeze()  # as cli.main does once a one-shot command has loaded its session
        out["records"] = len(led.records)
        if kind == "pipeline":
            out["load_wall"] = time.perf_counter() - t0
            with collector_paused():  # as cli.main runs the analysis
                report = analyze(led)
            out["findings"] = len(report.findings)
    t1 = time.perf_counter()
    out["wall"] = t1 - t0
    out["self_cpu"] = _cpu(resource.RUSAGE_SELF) - c0
    own1 = resource.getrusage(resource.RUSAGE_SELF)
    # The kernel's share of the CPU, and the pages first touched: memory kept costs a page fault a
    # page (a few microseconds each on a virtual machine), which the floor, keeping nothing, never pays.
    out["self_sys"] = own1.ru_stime - own0.ru_stime
    out["faults"] = own1.ru_minflt - own0.ru_minflt
    out["helper_cpu"] = _cpu(resource.RUSAGE_CHILDREN) - h0
    out["cpu"] = out["self_cpu"] + out["helper_cpu"]
    out["peak_rss"] = _maxrss()
    out["helper_peak_rss"] = _maxrss(resource.RUSAGE_CHILDREN)
    return out


# ----------------------------------------------------------------------------------- the harness


def fresh(kind: str, fmt: str, path: str, timeout: float) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("PYTHONTRACEMALLOC", None)
    cmd = [sys.executable, "-m", "benchmarks.formats", "--worker", kind, "--formats", fmt, "--file", path]
    try:
        p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"kind": kind, "error": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return {"kind": kind, "error": f"exit {p.returncode}: {tail}"}
    return json.loads(lines[-1])


_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def instructions(kind: str, fmt: str, path: str, imports_only: bool, timeout: float) -> int | None:
    """Instructions a fresh worker process executes under callgrind (None: valgrind missing or failed)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONHASHSEED"] = "0"  # (string hashes, hence dict probes and set orders, the same in every run)
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-m", "benchmarks.formats"]
    cmd += ["--worker", kind, "--formats", fmt, "--file", path] + (["--imports-only"] if imports_only else [])
    try:
        p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = _COLLECTED.findall(p.stderr)
    return int(m[-1]) if p.returncode == 0 and m else None


def count_format(fmt: str, path: str, timeout: float, say: Any) -> dict[str, Any]:
    """Net instructions of the floor, the load and load+analyze of one file."""
    net: dict[str, int | None] = {}
    for kind in KINDS:
        say(f"  {fmt}: {kind} under callgrind ...")
        work, base = instructions(kind, fmt, path, False, timeout), instructions(kind, fmt, path, True, timeout)
        net[kind] = work - base if work is not None and base is not None else None
    ratio = _ratio(net["pipeline"], net["floor"])
    return {
        "format": fmt,
        "file": os.path.relpath(path, REPO),
        "file_bytes": os.path.getsize(path),
        "floor_instructions": net["floor"],
        "load_instructions": net["load"],
        "pipeline_instructions": net["pipeline"],
        "instruction_ratio": ratio,
        "instruction_pass": ratio is not None and ratio <= CPU_TARGET,
    }


def render_counts(results: list[dict[str, Any]]) -> str:
    def g(x: int | None) -> str:
        return "n/a" if x is None else f"{x / 1e6:,.1f}M"

    rows = [
        f"formats benchmark, instructions (callgrind, net of imports); target load+analyze <= {CPU_TARGET}x floor",
        f"{'format':<14}{'MB':>7}  {'floor':>10}  {'load':>10}  {'load+an':>10}  ratio",
    ]
    for r in results:
        rows.append(
            f"{r['format']:<14}{r['file_bytes'] / MB:7.1f}  {g(r['floor_instructions']):>10}  {g(r['load_instructions']):>10}  "
            f"{g(r['pipeline_instructions']):>10}  {_x(r['instruction_ratio'], r['instruction_pass'])}"
        )
    rows.append(f"python {platform.python_version()}, {platform.system()} {platform.machine()}")
    return "\n".join(rows)


def _best(runs: list[dict[str, Any]], key: str) -> float | None:
    vals = [r[key] for r in runs if key in r]
    return min(vals) if vals else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def measure_format(fmt: str, path: str, repeat: int, timeout: float, say: Any) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
    for i in range(repeat):  # interleaved, so a noisy neighbour hurts every kind alike
        for kind in KINDS:
            say(f"  {fmt}: {kind} {i + 1}/{repeat} ...")
            runs[kind].append(fresh(kind, fmt, path, timeout))
    ok = {k: [r for r in v if "error" not in r] for k, v in runs.items()}
    size = os.path.getsize(path)
    floor_cpu, floor_wall = _best(ok["floor"], "cpu"), _best(ok["floor"], "wall")
    pipe_cpu, pipe_wall = _best(ok["pipeline"], "cpu"), _best(ok["pipeline"], "wall")
    peak = max((r["peak_rss"] for r in ok["pipeline"]), default=None)
    res = {
        "format": fmt,
        "file": os.path.relpath(path, REPO),
        "file_bytes": size,
        "records": next((r["records"] for r in ok["pipeline"]), None),
        "findings": next((r["findings"] for r in ok["pipeline"]), None),
        "floor_cpu": floor_cpu,
        "floor_wall": floor_wall,
        "load_cpu": _best(ok["load"], "cpu"),
        "load_wall": _best(ok["load"], "wall"),
        "pipeline_cpu": pipe_cpu,
        "pipeline_wall": pipe_wall,
        "pipeline_helper_cpu": _best(ok["pipeline"], "helper_cpu"),
        "floor_sys": _best(ok["floor"], "self_sys"),
        "pipeline_sys": _best(ok["pipeline"], "self_sys"),
        "pipeline_faults": _best(ok["pipeline"], "faults"),
        "peak_rss": peak,
        "helper_peak_rss": max((r["helper_peak_rss"] for r in ok["pipeline"]), default=None) or None,
        "cpu_ratio": _ratio(pipe_cpu, floor_cpu),
        "wall_ratio": _ratio(pipe_wall, floor_wall),
        "rss_ratio": _ratio(peak, size),
        "errors": [f"{r['kind']}: {r['error']}" for v in runs.values() for r in v if "error" in r],
    }
    res["cpu_pass"] = res["cpu_ratio"] is not None and res["cpu_ratio"] <= CPU_TARGET
    res["wall_pass"] = res["wall_ratio"] is not None and res["wall_ratio"] <= WALL_TARGET
    res["rss_pass"] = res["rss_ratio"] is not None and res["rss_ratio"] <= RSS_TARGET
    return res


FAULT_PROBE_BYTES = 64 << 20


def page_fault_seconds(repeat: int = 3) -> float | None:
    """What one page fault costs on this machine (CPU seconds, the best of `repeat`): the first touch
    of each page of fresh anonymous memory. A ledger kept in memory pays it for every page it fills
    and the floor, which keeps nothing, does not: on a virtual machine whose host backs the guest's
    memory lazily it costs several times what it does on bare metal, and the same code's CPU ratio
    moves with it (the instruction counts of `--instructions` do not)."""
    best: float | None = None
    for _ in range(repeat):
        m = mmap.mmap(-1, FAULT_PROBE_BYTES)
        f0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, _cpu(resource.RUSAGE_SELF)
        for i in range(0, FAULT_PROBE_BYTES, mmap.PAGESIZE):
            m[i] = 1
        t, faults = _cpu(resource.RUSAGE_SELF) - t0, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
        m.close()
        if faults > 0:
            best = min(best, t / faults) if best is not None else t / faults
    return best


def _s(x: float | None) -> str:
    return "    n/a" if x is None else f"{x:7.2f}"


def _x(x: float | None, ok: bool) -> str:
    return "   n/a     " if x is None else f"{x:5.2f}x {'PASS' if ok else 'MISS'}"


def render(results: list[dict[str, Any]], repeat: int, fault: float | None = None) -> str:
    rows = [
        f"formats benchmark: CPU and wall seconds, best of {repeat} fresh processes; "
        f"targets CPU <= {CPU_TARGET}x floor, RSS <= {RSS_TARGET}x file (wall against {WALL_TARGET}x, for reference)",
        f"{'format':<12}{'MB':>7}{'records':>9}  {'floor cpu':>9}{'wall':>7}  {'load cpu':>8}{'wall':>7}  "
        f"{'load+an cpu':>11}{'helper':>7}{'wall':>7}  {'CPU ratio':<11}  {'wall ratio':<11}  {'peak RSS':>8}  {'RSS/file':<11}",
    ]
    for r in results:
        peak = "n/a" if r["peak_rss"] is None else f"{r['peak_rss'] / MB:.0f} MB"
        rows.append(
            f"{r['format']:<12}{r['file_bytes'] / MB:7.1f}{r['records'] or 0:9,}  {_s(r['floor_cpu']):>9}{_s(r['floor_wall'])}  "
            f"{_s(r['load_cpu']):>8}{_s(r['load_wall'])}  {_s(r['pipeline_cpu']):>11}{_s(r['pipeline_helper_cpu'])}"
            f"{_s(r['pipeline_wall'])}  {_x(r['cpu_ratio'], r['cpu_pass']):<11}  {_x(r['wall_ratio'], r['wall_pass']):<11}  "
            f"{peak:>8}  {_x(r['rss_ratio'], r['rss_pass']):<11}"
        )
        if r.get("pipeline_sys") is not None and r.get("floor_sys") is not None:
            rows.append(
                f"{'':<12}of the CPU, the kernel's: load+an {r['pipeline_sys']:.2f} s ({r['pipeline_faults']:,} page faults: "
                f"the memory the ledger keeps{_fault_share(r['pipeline_faults'], r['pipeline_cpu'], fault)}), floor {r['floor_sys']:.2f} s"
            )
        if r["helper_peak_rss"]:
            rows.append(f"{'':<12}forked helper peaked at {r['helper_peak_rss'] / MB:.0f} MB (not in the RSS ratio)")
        rows += [f"{'':<12}error: {e}" for e in r["errors"]]
    rows.append(f"python {platform.python_version()}, {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs")
    if fault is not None:
        rows.append(f"this machine: a page fault (first touch of fresh memory) costs {fault * 1e6:.2f} us of CPU")
    return "\n".join(rows)


def _fault_share(faults: int | None, cpu: float | None, fault: float | None) -> str:
    """What the ledger's page faults cost at this machine's price of one, and their share of the CPU."""
    if not faults or not cpu or fault is None:
        return ""
    return f", about {faults * fault:.2f} s at this machine's {fault * 1e6:.1f} us a fault, {faults * fault / cpu:.0%} of its CPU"


def add_file_arguments(ap: argparse.ArgumentParser) -> None:
    """The options every per-format benchmark takes: which files, how many runs, the output."""
    from benchmarks.gen_formats import DEFAULT_MB, DEFAULT_SEED, SPECS

    ap.add_argument("--mb", type=float, default=DEFAULT_MB, help=f"size of each generated file (default {DEFAULT_MB:g})")
    ap.add_argument("--formats", default=",".join(SPECS), help=f"comma list (default all: {','.join(SPECS)})")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800, help="seconds allowed per measurement process")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")


def worker_reply(out: dict[str, Any]) -> None:
    """A measuring process's figures, one JSON line on stdout, then its exit (freeing what it
    loaded is no part of any measurement)."""
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    os._exit(0)


def progress(ns: argparse.Namespace) -> Any:
    """What a benchmark says while it runs: on stderr, unless --json."""

    def say(msg: str) -> None:
        if not ns.json:
            print(msg, file=sys.stderr, flush=True)

    return say


def format_files(ns: argparse.Namespace, say: Any) -> list[tuple[str, str]] | None:
    """(format, file) for each format asked for, each file generated first where missing (in a
    process of its own); None for an unknown format (said on stderr)."""
    from benchmarks import generate_apart, precompile
    from benchmarks.gen_formats import SPECS, default_path

    fmts = [f for f in ns.formats.split(",") if f]
    unknown = [f for f in fmts if f not in SPECS]
    if unknown:
        print(f"unknown format {', '.join(unknown)}; formats: {', '.join(SPECS)} (nothing measured)", file=sys.stderr)
        return None
    precompile(REPO)  # no measured process compiles source (its lazy imports included)
    out = []
    for fmt in fmts:
        path = default_path(fmt, ns.mb, ns.seed)
        if not os.path.exists(path):
            say(f"generating {os.path.relpath(path, REPO)} ...")
            try:  # (in a process of its own: see generate_apart)
                generate_apart("gen_formats", "--format", fmt, "--mb", str(ns.mb), "--seed", str(ns.seed))
            except subprocess.CalledProcessError as e:  # a missing source: report it, measure the rest
                say(f"  {fmt}: not generated: {e}")
                continue
        out.append((fmt, path))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_file_arguments(ap)
    ap.add_argument(
        "--instructions", action="store_true", help="count instructions under valgrind's callgrind instead of timing (use --mb 20)"
    )
    ap.add_argument("--worker", choices=KINDS, help=argparse.SUPPRESS)
    ap.add_argument("--imports-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    if ns.worker:
        worker_reply(measure_here(ns.worker, ns.formats, ns.file, ns.imports_only))
    say = progress(ns)
    files = format_files(ns, say)
    if files is None:
        return 0
    results = []
    for fmt, path in files:
        if ns.instructions:
            results.append(count_format(fmt, path, ns.timeout, say))
        else:
            results.append(measure_format(fmt, path, max(1, ns.repeat), ns.timeout, say))
    fault = None if ns.instructions else page_fault_seconds()
    for r in results:
        r["page_fault_seconds"] = fault
    table = render_counts(results) if ns.instructions else render(results, max(1, ns.repeat), fault)
    print(json.dumps(results, indent=2) if ns.json else table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
