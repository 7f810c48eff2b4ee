"""The campaign: generate cases by seed, run them on a pool of workers, deduplicate, minimize, report.

The parent never runs a command itself: it feeds each case to a worker subprocess (tests/fuzz/
worker.py), kills and restarts a worker whose case passes the timeout (a hang) or the RSS cap,
reads the case's peak RSS from /proc/PID/status, and restarts a worker that grew too big.
"""

from __future__ import annotations

import json
import os
import random
import selectors
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fuzz import mutations
from tests.fuzz.corpus import KINDS, REPO, SPECIALS, SQLITE_KINDS, Seed, load_corpus
from tests.fuzz.runner import APP_KEYS, materialize, out_target

RSS_LIMIT_KB = 1 << 20  # no case above 1 GB
RSS_KILL_KB = 3 << 19  # 1.5 GB: stop a runaway case before it hurts the machine
RESTART_ABOVE_KB = 600 << 10  # a worker that kept this much after a case starts afresh
SPECIAL_RATE = 0.02
STRATEGIES: tuple[str, ...] = ("compact", "resummarize", "recover")
POLICIES: tuple[str, ...] = ("pi", "adk-sliding", "adk-token", "adk-both", "recorded")
OUT_TARGETS: tuple[str, ...] = ("device", "directory", "missing_dir", "existing")  # besides a new path
FORMAT_CHOICES: tuple[str, ...] = (*KINDS, "special")  # what --formats may name
NUMBERS: tuple[str, ...] = ("1", "100", "4096", "2147483648", "9223372036854775808", "99999999999999999999")


# ---------------------------------------------------------------------------------------- cases


def commands() -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = [
        ("analyze", ["analyze", "{FILE}"]),
        ("analyze --json", ["analyze", "--json", "{FILE}"]),
        ("context --json", ["context", "--json", "{FILE}"]),
    ]
    out += [(f"plan --strategy {s}", ["plan", "--strategy", s, "{FILE}"]) for s in STRATEGIES]
    out += [("simulate", ["simulate", "{FILE}"]), ("simulate --json", ["simulate", "--json", "{FILE}"])]
    out += [(f"repair --strategy {s} --out", ["repair", "--strategy", s, "--out", "{OUT}", "{FILE}"]) for s in STRATEGIES]
    # The report reads every message of the session (the commands above read what the analysis needs).
    out += [("export --markdown", ["export", "--markdown", "{OUT}", "{FILE}"]), ("export --html --redact", ["export", "--html", "{OUT}", "--redact", "{FILE}"])]
    return out


def _argv(rng: random.Random) -> tuple[str, list[str]]:
    label, argv = rng.choice(commands())
    argv = list(argv)
    if argv[0] == "simulate":
        argv[1:1] = ["--policy", rng.choice(POLICIES)]
        if rng.random() < 0.1:
            argv[1:1] = [rng.choice(("--context-window", "--token-threshold", "--event-retention-size")), rng.choice(NUMBERS)]
        return label, argv
    if "{OUT}" in argv and rng.random() < 0.15:
        argv[argv.index("{OUT}")] = "{OUT:" + rng.choice(OUT_TARGETS) + "}"
    if rng.random() < 0.12 and argv[0] != "export":  # (a report is of the whole session)
        argv[1:1] = ["--at", str(rng.choice((1, 2, 3, 5, 10, 40, 200, 100000)))]
    if rng.random() < 0.08:
        argv[1:1] = [rng.choice(("--window", "--reserve")), rng.choice(NUMBERS)]
    return label, argv


def make_cases(
    seed: int,
    n: int,
    n_app: int,
    corpus: dict[str, list[Seed]],
    *,
    allow_huge: bool,
    app_wait: float,
    specials: bool = True,
) -> list[dict[str, Any]]:
    """The campaign's cases: a function of the seed and the corpus's kinds alone (specials: the
    non-regular inputs too)."""
    kinds = [k for k in KINDS if k in corpus]
    out: list[dict[str, Any]] = []
    for i in range(n + n_app):
        app = i >= n
        rng = random.Random(f"{'app' if app else 'case'}:{seed}:{i}")
        case: dict[str, Any] = {"id": i, "raw": None, "special": None, "app": app, "app_wait": app_wait}
        if rng.random() < SPECIAL_RATE * (0 if app or not specials else 1):
            case |= {"kind": "special", "special": rng.choice(SPECIALS), "seed": "special", "mutations": []}
        else:
            kind = rng.choice(kinds)
            s = rng.choice(corpus[kind])
            case |= {"kind": kind, "seed": s.path, "seed_name": s.name, "mutations": mutations.choose(rng, kind, allow_huge=allow_huge)}
        if app:
            case |= {"label": "app", "argv": ["{FILE}"]}
        else:
            case["label"], case["argv"] = _argv(rng)
        out.append(case)
    return out


# ---------------------------------------------------------------------------------------- workers


class Worker:
    def __init__(self, index: int, logs: Path) -> None:
        self.index = index
        self.log = logs / f"worker-{index}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.case: dict[str, Any] | None = None
        self.deadline = 0.0
        self.buf = b""

    def start(self) -> None:
        work = self.log.parent.parent / ".work"
        work.mkdir(exist_ok=True)
        env = dict(
            os.environ, PYTHONPATH=str(REPO), INSPECTOR_FORCE_OFFLINE_TOKENIZER="1", PYTHONHASHSEED="0", INSPECTOR_FUZZ_WORK=str(work)
        )
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.fuzz.worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=REPO, env=env,
            )  # fmt: skip
        os.set_blocking(self.proc.stdout.fileno(), False)  # type: ignore[union-attr]
        self.buf = b""
        line = self._read_line(120.0)
        if line is None or b"ready" not in line:
            raise RuntimeError(f"fuzz worker {self.index} did not start: see {self.log}")

    def _read_line(self, timeout: float) -> bytes | None:
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            if time.monotonic() > end or not self.pump(0.05):
                return None
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def pump(self, timeout: float) -> bool:
        """Read what the worker wrote; False once its pipe is closed (it died)."""
        assert self.proc is not None and self.proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            if sel.select(timeout):
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    return False
                self.buf += chunk
        finally:
            sel.close()
        return True

    def send(self, case: dict[str, Any], timeout: float) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.case = case
        self.deadline = time.monotonic() + timeout
        self.proc.stdin.write(json.dumps(case).encode() + b"\n")
        self.proc.stdin.flush()

    def status_kb(self, field_name: str) -> int:
        assert self.proc is not None
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith(field_name + ":"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        self.case = None


class Pool:
    def __init__(self, n: int, logs: Path, timeout: float) -> None:
        logs.mkdir(parents=True, exist_ok=True)
        self.timeout = timeout
        self.workers = [Worker(i, logs) for i in range(n)]
        for w in self.workers:
            w.start()

    def close(self) -> None:
        for w in self.workers:
            w.stop()
        shutil.rmtree(self.workers[0].log.parent.parent / ".work", ignore_errors=True)

    def run(self, cases: list[dict[str, Any]], on_result: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
        """Every case's result, in the cases' order."""
        pending = list(reversed(cases))
        results: dict[int, dict[str, Any]] = {}
        order = [c["id"] for c in cases]

        def done(w: Worker, result: dict[str, Any]) -> None:
            assert w.case is not None
            result["case"] = w.case
            results[w.case["id"]] = result
            w.case = None
            if on_result is not None:
                on_result(result)

        while pending or any(w.case is not None for w in self.workers):
            for w in self.workers:
                if w.case is None and pending:
                    w.send(pending.pop(), self.timeout)
            for w in self.workers:
                if w.case is None:
                    continue
                alive = w.pump(0.05 / len(self.workers))
                if b"\n" in w.buf:
                    line, w.buf = w.buf.split(b"\n", 1)
                    result = json.loads(line)
                    peak = w.status_kb("VmHWM")
                    result["rss_kb"] = peak
                    if peak > RSS_LIMIT_KB:
                        result["violations"].append(_violation("rss", f"RSS above 1 GB: {w.case['label']} on {w.case['kind']}", f"peak {peak >> 10} MB"))
                    done(w, result)
                    if w.status_kb("VmRSS") > RESTART_ABOVE_KB:
                        w.stop()
                        w.start()
                    continue
                why = None
                if not alive:
                    code = w.proc.wait() if w.proc is not None else None
                    why = _violation("died", f"worker died (exit {code}): {w.case['label']} on {w.case['kind']}", f"exit status {code}")
                elif time.monotonic() > w.deadline:
                    why = _violation("hang", f"hang: {_where(w.case)}", f"no answer after {self.timeout:.0f} s")
                elif (rss := w.status_kb("VmRSS")) > RSS_KILL_KB:
                    why = _violation("rss", f"RSS above 1 GB: {w.case['label']} on {w.case['kind']}", f"killed at {rss >> 10} MB")
                if why is not None:
                    peak = w.status_kb("VmHWM")
                    case = w.case
                    w.stop()
                    w.case = case
                    done(w, {"id": case["id"], "code": None, "seconds": None, "rss_kb": peak, "violations": [why]})
                    w.start()
        return [results[i] for i in order]


def _violation(kind: str, key: str, detail: str) -> dict[str, str]:
    return {"kind": kind, "key": key, "detail": detail, "trace": ""}


def _where(case: dict[str, Any]) -> str:
    """A hang has no location: the input deduplicates it (a FIFO; a format and its mutations)."""
    if case["special"]:
        return f"on a {case['special']}"
    muts = "+".join(sorted({m[0] for m in case["mutations"]})) or "no mutation"
    return f"on {case['kind']} ({muts}){' in the app' if case['app'] else ''}"


# ---------------------------------------------------------------------------------------- findings


@dataclass
class Finding:
    kind: str
    key: str
    detail: str
    trace: str
    case: dict[str, Any]
    count: int = 0
    formats: Counter[str] = field(default_factory=Counter)
    commands: Counter[str] = field(default_factory=Counter)
    repro: str = ""
    folder: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "key": self.key, "detail": self.detail, "count": self.count,
            "formats": dict(self.formats), "commands": dict(self.commands), "reproduce": self.repro,
            "folder": self.folder, "case": self.case, "trace": self.trace,
        }  # fmt: skip


@dataclass
class Summary:
    seed: int
    cases: int
    seconds: float
    per_format: Counter[str]
    per_command: Counter[str]
    findings: list[Finding]
    out: Path

    @property
    def crashes(self) -> list[Finding]:
        return [f for f in self.findings if f.kind in ("crash", "died")]

    def text(self) -> str:
        lines = [
            f"fuzz: seed {self.seed}, {self.cases} cases in {self.seconds:.0f} s; output in {self.out}",
            "cases per format:  " + "  ".join(f"{k} {v}" for k, v in sorted(self.per_format.items())),
            "cases per command: " + "  ".join(f"{k}: {v}" for k, v in sorted(self.per_command.items())),
            f"{len(self.findings)} distinct violations ({len(self.crashes)} crash sites, "
            f"{sum(1 for f in self.findings if f.kind == 'hang')} hangs):",
        ]
        for f in self.findings:
            lines.append(f"  [{f.kind}] {f.key}  x{f.count}  ({', '.join(sorted(f.formats))}): {f.detail[:160]}")
            lines.append(f"      reproduce: {f.repro}")
        return "\n".join(lines)


def collect(results: list[dict[str, Any]]) -> dict[str, Finding]:
    found: dict[str, Finding] = {}
    for r in results:
        case = r["case"]
        for v in r["violations"]:
            f = found.get(v["key"])
            if f is None:
                f = found[v["key"]] = Finding(v["kind"], v["key"], v["detail"], v["trace"], case)
            f.count += 1
            f.formats[case["special"] or case["kind"]] += 1
            f.commands[case["label"]] += 1
    return found


# ---------------------------------------------------------------------------------------- minimize

Probe = Generator[dict[str, Any], dict[str, Any], dict[str, Any]]


def _reproduces(result: dict[str, Any], key: str) -> bool:
    return any(v["key"] == key for v in result["violations"])


def minimize(f: Finding, scratch: Path, budget: int) -> Probe:
    """Shrink f's case while the same violation reproduces: drop mutations, then drop lines.
    A generator: it yields cases to run and is sent their results; it returns the smallest case."""
    case = dict(f.case)
    tries = 0
    muts = list(case["mutations"])
    i = len(muts) - 1
    while i >= 0 and tries < budget:
        cand = dict(case, mutations=muts[:i] + muts[i + 1 :])
        tries += 1
        if _reproduces((yield cand), f.key):
            muts, case = cand["mutations"], cand
        i -= 1
    if case["special"] or case["kind"] in SQLITE_KINDS or tries >= budget:
        return case
    # Lines: materialize the input once, then remove chunks of lines while it still reproduces.
    base = scratch / "base"
    base.mkdir(parents=True, exist_ok=True)
    path, _ = materialize(case, base)
    lines = mutations.split_lines(path.read_bytes())
    n = 2
    step = 0
    while len(lines) >= 2 and tries < budget:
        chunk = -(-len(lines) // n)
        shrunk = False
        for start in range(0, len(lines), chunk):
            if tries >= budget:
                break
            cand_lines = lines[:start] + lines[start + chunk :]
            step += 1
            folder = scratch / f"try-{step}"
            folder.mkdir()
            cand_path = folder / path.name
            cand_path.write_bytes(b"".join(cand_lines))
            cand = dict(case, raw=str(cand_path), id=case["id"])
            tries += 1
            if _reproduces((yield cand), f.key):
                lines, case, shrunk = cand_lines, cand, True
                n = max(n - 1, 2)
                break
        if not shrunk:
            if chunk == 1:
                break
            n = min(n * 2, len(lines))
    return case


def run_minimizers(pool: Pool, findings: list[Finding], scratch: Path, budget: int) -> dict[str, dict[str, Any]]:
    """Every finding's minimizer, side by side on the pool (one candidate each per round)."""
    best: dict[str, dict[str, Any]] = {}
    active: dict[str, tuple[Probe, dict[str, Any]]] = {}
    for k, f in enumerate(findings):
        if f.kind in ("hang", "rss", "harness"):
            best[f.key] = f.case  # each try would cost the whole timeout
            continue
        gen = minimize(f, scratch / f"f{k}", budget)
        try:
            active[f.key] = (gen, next(gen))
        except StopIteration as stop:
            best[f.key] = stop.value
    while active:
        batch = [dict(cand, id=n) for n, (_, cand) in enumerate(active.values())]
        results = pool.run(batch)
        for (key, (gen, _)), res in zip(list(active.items()), results, strict=True):
            try:
                active[key] = (gen, gen.send(res))
            except StopIteration as stop:
                best[key] = stop.value
                del active[key]
    return best


# ---------------------------------------------------------------------------------------- output


def _slug(text: str) -> str:
    keep = "".join(c if c.isalnum() else "-" for c in text.lower())
    return "-".join(p for p in keep.split("-") if p)[:60]


def write_reproducer(f: Finding, case: dict[str, Any], folder: Path) -> None:
    """The minimized input and how to reproduce it with the normal CLI."""
    folder.mkdir(parents=True, exist_ok=True)
    case = dict(case)
    raw = case["raw"]
    path, ctx = materialize(case, folder)
    if raw:
        case["raw"] = str(path)
    argv = [
        str(path) if a == "{FILE}" else str(out_target(folder / "out", path.suffix, a[5:-1] or "new")) if a.startswith("{OUT") else a
        for a in case["argv"]
    ]
    cmd = "inspector " + shlex.join(argv)
    notes = []
    if case["app"]:
        notes.append("then press: " + " ".join(APP_KEYS))
    if ctx.hold_lock:
        notes.append(f"while another connection holds a write lock: sqlite3 {shlex.quote(str(path))} 'BEGIN EXCLUSIVE;' (kept open)")
    out_kind = next((a[5:-1] for a in case["argv"] if a.startswith("{OUT:")), None)
    if out_kind is not None:
        notes.append(f"with --out at {OUT_WHAT[out_kind]}")
    if case["special"] == "fifo":
        notes.append(f"(a FIFO with no writer: mkfifo {shlex.quote(str(path))})")
    f.repro = cmd + ("  " + "; ".join(notes) if notes else "")
    f.folder = str(folder)
    text = [
        f"{f.kind}: {f.key}",
        f"seen {f.count} times; formats {dict(f.formats)}; commands {dict(f.commands)}",
        f"detail: {f.detail}",
        "",
        "reproduce:",
        f"  {f.repro}",
        "",
        f"seed file: {case.get('seed_name', case['seed'])}",
        f"mutations: {case['mutations']}" + (" (then lines dropped)" if raw else ""),
        f"case: {json.dumps(case)}",
        "",
        f.trace,
    ]
    (folder / "README.txt").write_text("\n".join(text))


OUT_WHAT = {
    "device": "a character device (mknod repaired c 1 7, like /dev/full)",
    "directory": "an existing directory",
    "missing_dir": "a path in a folder that does not exist",
    "existing": "an existing regular file",
}


def run_campaign(
    *,
    cases: int,
    seed: int,
    out: Path,
    app_cases: int | None = None,
    workers: int = 2,
    timeout: float = 30.0,
    allow_huge: bool = True,
    minimize_budget: int = 150,
    formats: tuple[str, ...] | None = None,
    log: Callable[[str], None] = print,
) -> Summary:
    """`formats`: the seed kinds to fuzz (and "special" for the non-regular inputs); all by default."""
    t0 = time.monotonic()
    wanted = FORMAT_CHOICES if formats is None else formats
    out.mkdir(parents=True, exist_ok=True)
    corpus = load_corpus(out / "seeds", tuple(k for k in KINDS if k in wanted))
    n_app = max(1, cases // 40) if app_cases is None else app_cases
    all_cases = make_cases(
        seed, cases, n_app, corpus, allow_huge=allow_huge, app_wait=max(5.0, timeout - 10), specials="special" in wanted
    )  # fmt: skip
    findings_dir = out / "findings"
    if findings_dir.exists():
        shutil.rmtree(findings_dir)
    log(f"fuzz: seed {seed}: {cases} command cases and {n_app} app runs over "
        f"{sum(len(v) for v in corpus.values())} seed files, {workers} workers")  # fmt: skip
    done = 0
    last = time.monotonic()

    def progress(_: dict[str, Any]) -> None:
        nonlocal done, last
        done += 1
        if time.monotonic() - last > 15 or done == len(all_cases):
            last = time.monotonic()
            log(f"  {done}/{len(all_cases)} cases, {time.monotonic() - t0:.0f} s")

    pool = Pool(workers, out / "logs", timeout)
    try:
        results = pool.run(all_cases, progress)
        found = collect(results)
        order = sorted(found.values(), key=lambda f: (f.kind not in ("crash", "died"), f.kind, -f.count, f.key))
        scratch = out / ".minimize"
        shutil.rmtree(scratch, ignore_errors=True)
        if order:
            log(f"  minimizing {len(order)} distinct violations")
        best = run_minimizers(pool, order, scratch, minimize_budget)
    finally:
        pool.close()
    for n, f in enumerate(order, 1):
        write_reproducer(f, best[f.key], findings_dir / f"{n:02d}-{f.kind}-{_slug(f.key)}")
    shutil.rmtree(out / ".minimize", ignore_errors=True)
    summary = Summary(
        seed=seed,
        cases=len(all_cases),
        seconds=time.monotonic() - t0,
        per_format=Counter((c["special"] and "special") or c["kind"] for c in all_cases),
        per_command=Counter(c["label"] for c in all_cases),
        findings=order,
        out=out,
    )
    report = {
        "seed": seed, "cases": summary.cases, "seconds": round(summary.seconds, 1),
        "per_format": dict(summary.per_format), "per_command": dict(summary.per_command),
        "violations": [f.as_dict() for f in order],
        "slowest": sorted(({"seconds": r["seconds"], "label": r["case"]["label"], "kind": r["case"]["kind"]}
                           for r in results if r["seconds"] is not None), key=lambda x: -x["seconds"])[:10],
        "peak_rss_mb": max((r.get("rss_kb") or 0) for r in results) >> 10,
    }  # fmt: skip
    (out / "report.json").write_text(json.dumps(report, indent=1))
    (out / "summary.txt").write_text(summary.text() + "\n")
    return summary
