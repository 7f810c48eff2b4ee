"""`inspector watch` over hundreds of sessions: memory stays bounded and a new finding is reported
quickly (issue 17, point 3). A report, not a test: exits 0 when the targets are met, 1 when not.

    python -m benchmarks.watch                      # 100 and 500 sessions
    python -m benchmarks.watch --sessions 200,1000 --rounds 10

For each count, a folder of that many sessions (copies of every pi and Claude Code sample with
fresh names) is watched by a real `inspector watch DIR --json --poll` process. In each round one
record is appended to a tenth of the sessions, one of them a tool result whose call was never made
(an orphan: a new error finding); the time from that append to the watcher's event is the latency.
The watcher's peak RSS (VmHWM) is read after the baseline and after the rounds.

Targets: every orphan reported within 2 s of its append (polling every 0.25 s); peak RSS at the
largest count no more than 1.5x the peak at the smallest (what is kept per session is a summary,
and only the `FOLLOWED` most recently changed sessions keep their ledger).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

if __package__ in (None, ""):  # `python benchmarks/watch.py`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

REPO = Path(__file__).resolve().parent.parent
SAMPLES = [*sorted((REPO / "sample_sessions" / "pi").glob("*.jsonl")), *sorted((REPO / "sample_sessions" / "claude_code").glob("*.jsonl"))]
LATENCY_S = 2.0
RSS_GROWTH = 1.5
INTERVAL = 0.25


def make_folder(root: Path, n: int) -> tuple[list[Path], list[Path]]:
    """`n` sessions, pi samples (the kind appended to here) and Claude Code samples, with fresh
    names: (every session, the pi ones)."""
    pis = [p for p in SAMPLES if p.parent.name == "pi"]
    out: list[Path] = []
    pi_out: list[Path] = []
    for i in range(n):
        src = SAMPLES[i % len(SAMPLES)] if i % 3 else pis[i % len(pis)]
        dst = root / f"s{i:05d}-{src.name}"
        shutil.copyfile(src, dst)
        out.append(dst)
        if src in pis:
            pi_out.append(dst)
    return out, pi_out


def last_id(path: Path) -> str | None:
    for raw in reversed(path.read_bytes().splitlines()):
        try:
            o = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(o, dict) and isinstance(o.get("id"), str):
            return o["id"]
    return None


def orphan_line(parent: str, k: int) -> bytes:
    """A pi tool result answering a call no assistant message made."""
    o = {
        "type": "message",
        "id": f"orph{k:+07d}",
        "parentId": parent,
        "timestamp": "2026-12-01T00:00:00.000Z",
        "message": {"role": "toolResult", "toolCallId": f"ghost-{k}", "toolName": "bash", "content": [{"type": "text", "text": "late"}], "isError": False, "timestamp": 0},
    }
    return orjson.dumps(o) + b"\n"


def user_line(parent: str, k: int) -> bytes:
    o = {"type": "message", "id": f"user{k:06d}", "parentId": parent, "timestamp": "2026-12-01T00:00:00.000Z", "message": {"role": "user", "content": [{"type": "text", "text": f"and then {k}"}], "timestamp": 0}}
    return orjson.dumps(o) + b"\n"


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Events:
    """The watcher's JSON events, read on a thread, each with the time it arrived."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.got: list[tuple[float, dict[str, object]]] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            with self.cond:
                self.got.append((time.monotonic(), orjson.loads(raw)))
                self.cond.notify_all()

    def wait_for(self, path: Path, since: int, timeout: float) -> float | None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for t, ev in self.got[since:]:
                    if str(ev.get("file", "")).endswith(path.name) and "orphan" in str(ev.get("code", "")):
                        return t
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)


def run_one(n: int, rounds: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="inspector-watch-") as tmp:
        files, pis = make_folder(Path(tmp), n)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        cmd = [sys.executable, "-m", "inspector", "watch", tmp, "--json", "--poll", "--interval", str(INTERVAL), "--fail-on", "error"]
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        events = Events(proc)
        try:
            # The baseline is done when an orphan is reported: one appended before it ends is part
            # of the baseline (not an event), so a new one is appended every 2 s until one is.
            first = pis[0]
            ready = None
            k = 0
            while ready is None:
                if time.monotonic() - t0 > 600:
                    raise SystemExit(f"watch over {n} sessions reported nothing in 600 s")
                k += 1
                mark = len(events.got)
                with first.open("ab") as f:
                    f.write(orphan_line(last_id(first) or "", -k))
                ready = events.wait_for(first, mark, 2)
            baseline_s = ready - t0
            rss_base = peak_rss_mb(proc.pid)
            latencies: list[float] = []
            for r in range(1, rounds + 1):
                for f in rng.sample(files, max(1, n // 10)):
                    if f in pis and (pid := last_id(f)) is not None:
                        with f.open("ab") as fh:
                            fh.write(user_line(pid, r))
                target = rng.choice(pis[1:])
                mark = len(events.got)
                with target.open("ab") as fh:
                    fh.write(orphan_line(last_id(target) or "", r))
                appended = time.monotonic()
                seen = events.wait_for(target, mark, 30)
                latencies.append(float("inf") if seen is None else seen - appended)
            rss_end = peak_rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(10)
    return {"sessions": n, "baseline_s": baseline_s, "rss_base_mb": rss_base, "rss_end_mb": rss_end, "latency_max_s": max(latencies), "latency_median_s": sorted(latencies)[len(latencies) // 2]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", default="100,500", help="comma-separated session counts (default 100,500)")
    ap.add_argument("--rounds", type=int, default=8, help="append rounds per count (default 8)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    counts = [int(x) for x in args.sessions.split(",")]
    rows = [run_one(n, args.rounds, args.seed) for n in counts]
    print(f"{'sessions':>9} {'baseline s':>11} {'peak RSS MB':>12} {'after rounds':>13} {'latency max s':>14} {'median s':>9}")
    for r in rows:
        print(f"{r['sessions']:>9} {r['baseline_s']:>11.1f} {r['rss_base_mb']:>12.0f} {r['rss_end_mb']:>13.0f} {r['latency_max_s']:>14.2f} {r['latency_median_s']:>9.2f}")
    growth = rows[-1]["rss_end_mb"] / rows[0]["rss_end_mb"]
    worst = max(r["latency_max_s"] for r in rows)
    ok_rss = growth <= RSS_GROWTH
    ok_lat = worst <= LATENCY_S
    print(f"peak RSS at {counts[-1]} sessions / at {counts[0]}: {growth:.2f}x (target <= {RSS_GROWTH}x) {'met' if ok_rss else 'NOT met'}")
    print(f"slowest orphan reported after {worst:.2f} s (target <= {LATENCY_S} s) {'met' if ok_lat else 'NOT met'}")
    return 0 if ok_rss and ok_lat else 1


if __name__ == "__main__":
    raise SystemExit(main())
