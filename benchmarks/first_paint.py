"""Time to first paint of the session view on a big ledger (issue 3, point 8).

    python -m benchmarks.first_paint [--file PATH] [--json]

Measured in fresh processes, in the same run: (a) reading the file's bytes (the baseline), (b) the
app, headless at 160x50, from `create_app` to the first paint of the timeline (the file indexed,
the rows drawn; the analysis still running in its worker), and (c) until the analysis landed.
Target: first paint <= 1.0 s. Prints the ratio of (b) to (a). Exits 0 either way.

Issue 15 point 3 (the app's analysis never slower than the CLI's), on the same file in the same
run, both from the moment the process was started (interpreter start and imports included): (d)
`inspector analyze FILE --json` until it exited, against (e) the app until its analysis landed;
wall seconds and CPU seconds (all threads; the CPU figure is the one a busy machine leaves fair).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_S = 1.0


def _read_bytes(path: str) -> dict[str, float]:
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        n = len(f.read())
    return {"seconds": time.perf_counter() - t0, "bytes": n}


def _paint(path: str, spawned: float | None = None, deadline_s: float = 120) -> dict[str, float | None]:
    import asyncio

    from inspector.tui.app import create_app

    out: dict[str, float | None] = {"first_paint": None, "analysed": None, "analysed_from_spawn": None, "analysed_cpu": None}

    async def run() -> None:
        t0 = time.perf_counter()
        app = create_app([path])
        async with app.run_test(size=(160, 50)) as pilot:
            deadline = t0 + deadline_s
            while time.perf_counter() < deadline:
                screen = app.screen
                fp = getattr(screen, "first_paint", None)
                if fp is not None and out["first_paint"] is None:
                    out["first_paint"] = fp + (screen.started - t0)
                if getattr(screen, "report", None) is not None:
                    out["analysed"] = time.perf_counter() - t0
                    if spawned is not None:
                        out["analysed_from_spawn"] = time.time() - spawned
                    out["analysed_cpu"] = time.process_time()
                    break
                await pilot.pause(0.01)

    asyncio.run(run())
    return out


def _cli(path: str) -> dict[str, float]:
    """`inspector analyze FILE --json` in a fresh process: spawn to exit."""
    t0 = time.time()
    c0 = _children_cpu()
    p = subprocess.run(
        [sys.executable, "-m", "inspector", "analyze", path, "--json"], capture_output=True, cwd=REPO, check=False, timeout=600
    )
    if p.returncode not in (0, 1):
        return {"error": (p.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]}  # type: ignore[dict-item]
    return {"seconds": time.time() - t0, "cpu": _children_cpu() - c0}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _fresh(kind: str, path: str, deadline_s: float) -> dict:
    p = subprocess.run(
        [sys.executable, "-m", "benchmarks.first_paint", "--worker", kind, "--file", path, "--spawned", repr(time.time()),
         "--deadline", repr(deadline_s)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        timeout=deadline_s + 180,
    )
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", help="ledger to open (default: the 100k-record benchmark ledger, generated if missing)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--deadline", type=float, default=120, help="seconds the app is given to land its analysis (a loaded machine, a 500 MB file)")
    ap.add_argument("--worker", choices=("read", "paint"), help=argparse.SUPPRESS)
    ap.add_argument("--spawned", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        res = _read_bytes(args.file) if args.worker == "read" else _paint(args.file, args.spawned, args.deadline)
        print(json.dumps(res))
        sys.stdout.flush()
        os._exit(0)
    path = args.file
    if path is None:
        from benchmarks.gen_pi_ledger import DEFAULT_RECORDS, DEFAULT_SEED, default_path, generate

        path = default_path(DEFAULT_RECORDS, DEFAULT_SEED)
        if not os.path.exists(path):
            print(f"generating {path} ...", file=sys.stderr)
            generate(path, DEFAULT_RECORDS, DEFAULT_SEED)
    reads = [_fresh("read", path, args.deadline) for _ in range(args.repeat)]
    paints = [_fresh("paint", path, args.deadline) for _ in range(args.repeat)]
    clis = [_cli(path) for _ in range(args.repeat)]
    read_s = min((r["seconds"] for r in reads if "seconds" in r), default=None)
    fps = [r["first_paint"] for r in paints if r.get("first_paint") is not None]
    ans = [r["analysed"] for r in paints if r.get("analysed") is not None]
    fp = min(fps) if fps else None
    app_s = min((r["analysed_from_spawn"] for r in paints if r.get("analysed_from_spawn") is not None), default=None)
    cli_s = min((r["seconds"] for r in clis if "seconds" in r), default=None)
    app_cpu = min((r["analysed_cpu"] for r in paints if r.get("analysed_cpu") is not None), default=None)
    cli_cpu = min((r["cpu"] for r in clis if "cpu" in r), default=None)
    result = {
        "file": os.path.relpath(path, REPO),
        "file_bytes": os.path.getsize(path),
        "read_bytes_seconds": read_s,
        "first_paint_seconds": fp,
        "analysed_seconds": min(ans) if ans else None,
        "ratio_to_read": (fp / read_s) if fp and read_s else None,
        "target_seconds": TARGET_S,
        "pass": fp is not None and fp <= TARGET_S,
        "cli_analyze_seconds": cli_s,
        "app_analysed_from_start_seconds": app_s,
        "cli_analyze_cpu_seconds": cli_cpu,
        "app_analysed_cpu_seconds": app_cpu,
        "app_not_slower_than_cli": app_s is not None and cli_s is not None and app_s <= cli_s,
        "errors": [r["error"] for r in (*reads, *paints, *clis) if "error" in r],
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    mb = result["file_bytes"] / 1e6
    print(f"first paint of the session view: {result['file']} ({mb:.1f} MB)")
    print(f"  read the file's bytes   {read_s:.3f} s (best of {args.repeat})" if read_s else "  read: n/a")
    if fp is not None:
        verdict = "PASS" if result["pass"] else "MISS"
        print(f"  first paint             {fp:.3f} s  target <= {TARGET_S} s  {verdict}")
        print(f"  ratio to reading bytes  {result['ratio_to_read']:.1f} x")
    if result["analysed_seconds"] is not None:
        print(f"  analysis landed         {result['analysed_seconds']:.3f} s (timeline usable meanwhile)")
    if app_s is not None and cli_s is not None:
        verdict = "PASS" if result["app_not_slower_than_cli"] else "MISS"
        print(f"  from process start: app analysis landed {app_s:.3f} s, CLI analyze --json {cli_s:.3f} s  app <= CLI {verdict}")
    if app_cpu is not None and cli_cpu is not None:
        verdict = "PASS" if app_cpu <= cli_cpu else "MISS"
        print(f"  CPU seconds:        app analysis landed {app_cpu:.3f} s, CLI analyze --json {cli_cpu:.3f} s  app <= CLI {verdict}")
    for e in result["errors"]:
        print(f"  error: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
