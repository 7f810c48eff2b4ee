"""One measurement in a fresh interpreter; prints one JSON object on stdout. Used by benchmarks/run.py.

    python -m benchmarks._worker baseline|baseline_keep|pipeline|rss PATH

Imports only what the measurement needs, so peak RSS is the tool's, not the harness's.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import traceback


def _maxrss_bytes(who: int = resource.RUSAGE_SELF) -> int:
    # Linux reports KiB, macOS bytes.
    r = resource.getrusage(who).ru_maxrss
    return r if sys.platform == "darwin" else r * 1024


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _import_analyze() -> tuple[object | None, str]:
    try:
        from inspector.analysis import analyze
    except ImportError as e:
        return None, f"not available yet ({e})"
    return analyze, "ok"


def baseline(path: str, keep: bool = False) -> dict:
    """The floor: read the file and `orjson.loads` every line, results dropped at once (the target's
    baseline). `keep` is a naive loader that keeps every parsed line in a list (for reference: the
    cyclic GC rescanning those dicts is about half of its time)."""
    import orjson

    loads = orjson.loads
    rss0 = _maxrss_bytes()
    c0, t0 = time.process_time(), time.perf_counter()
    n = 0
    with open(path, "rb") as f:
        if keep:
            objs = [loads(line) for line in f if not line.isspace()]
            n = len(objs)
        else:
            for line in f:
                loads(line)
                n += 1
    c1, t1 = time.process_time(), time.perf_counter()
    return {
        "seconds": t1 - t0,
        "cpu_seconds": c1 - c0,
        "records": n,
        "rss_before": rss0,
        "peak_rss": _maxrss_bytes(),
    }


def pipeline(path: str) -> dict:
    from inspector.formats import load

    analyze, status = _import_analyze()
    rss0 = _maxrss_bytes()
    c0, t0 = time.process_time(), time.perf_counter()
    led = load(path)
    c1, t1 = time.process_time(), time.perf_counter()
    out: dict = {
        "load_seconds": t1 - t0,
        "load_cpu_seconds": c1 - c0,
        # A big pi file is also read by a forked helper process: its CPU time, and its peak RSS
        # below, are not in this process's figures.
        "load_helper_cpu_seconds": _children_cpu(),
        "records": len(led.records),
        "analysis": status,
        "analysis_seconds": None,
        "analysis_cpu_seconds": None,
    }
    if analyze is not None:
        try:
            report = analyze(led)  # type: ignore[operator]
            c2, t2 = time.process_time(), time.perf_counter()
            out["analysis_seconds"] = t2 - t1
            out["analysis_cpu_seconds"] = c2 - c1
            findings = getattr(report, "findings", None)
            if isinstance(findings, list):
                out["findings"] = len(findings)
        except Exception as e:
            out["analysis"] = f"failed ({type(e).__name__}: {e})"
            traceback.print_exc(file=sys.stderr)
    out["rss_before"] = rss0
    out["peak_rss"] = _maxrss_bytes()
    out["helper_peak_rss"] = _maxrss_bytes(resource.RUSAGE_CHILDREN)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("baseline", "baseline_keep", "pipeline", "rss"):
        print(__doc__, file=sys.stderr)
        return 2
    kind, path = argv
    # `rss` is `pipeline` alone in its own process: nothing else ran there before it.
    if kind.startswith("baseline"):
        res = baseline(path, keep=kind == "baseline_keep")
    else:
        res = pipeline(path)
    res["kind"] = kind
    sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip freeing hundreds of thousands of objects at exit: it is not part of any measurement.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
