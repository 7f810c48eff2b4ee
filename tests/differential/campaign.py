"""Run generated scenarios through a real runtime and check every model call (issue 16).

    python -m tests.differential --runtime adk|pi|claude_code|codex --scenarios N --seed S [--out DIR]

Prints, per runtime, the scenarios run and the model calls checked, and every disagreement; a
disagreement's scenario is minimized (turns dropped while the same disagreement remains) and kept
with its session files and requests under tests/differential/fixtures/<name>/. Exit 1 when any
disagreement was found, 2 when the runtime is not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.differential import space

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURES = HERE / "fixtures"
ADK_PYTHON = Path(os.environ.get("INSPECTOR_ADK_PYTHON", REPO / ".adk-venv" / "bin" / "python"))
FIXTURE_FILES = ("scenario.json", "session.db", "session.jsonl", "events.json", "requests.jsonl", "compactions.jsonl")


@dataclass
class Outcome:
    """What a runtime's checker found in one scenario's session (check_adk, check_pi)."""

    name: str
    calls_checked: int = 0
    calls_skipped: int = 0  # tied events reloaded in another order: no prefix is the session then
    compactions: int = 0
    replay_checked: bool = False
    disagreements: list[dict[str, Any]] = field(default_factory=list)

    def disagree(self, what: str, **detail: Any) -> None:
        self.disagreements.append({"what": what, **detail})


def read_lines(path: Path) -> list[dict[str, Any]]:
    """A JSON-lines file the driver wrote (requests, compaction attempts)."""
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def adk_available() -> str | None:
    """None when the pinned ADK can be run, else why not."""
    if not ADK_PYTHON.exists():
        return f"{ADK_PYTHON} not found: run tests/install_adk.sh"
    return None


def run_adk(scenarios: list[dict[str, Any]], out: Path) -> Iterator[dict[str, Any]]:
    """Drive ADK through the scenarios (one process for all), yielding each one's result line."""
    out.mkdir(parents=True, exist_ok=True)
    spec = out / "scenarios.json"
    spec.write_text(json.dumps(scenarios))
    proc = subprocess.Popen(
        [str(ADK_PYTHON), "-m", "tests.differential.adk_driver", str(spec), str(out)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.strip():
                yield json.loads(line)
    finally:
        proc.stdout.close()
        proc.wait(timeout=60)


def run_pi(scenarios: list[dict[str, Any]], out: Path) -> Iterator[dict[str, Any]]:
    from tests.differential.pi_driver import run_pi as run

    return run(scenarios, out)


def run_claude_code(scenarios: list[dict[str, Any]], out: Path) -> Iterator[dict[str, Any]]:
    """Drive Claude Code through the scenarios (its CLI runs per turn), yielding each one's result line."""
    import traceback

    from tests.differential import cc_driver

    for sc in scenarios:
        try:
            yield cc_driver.run(sc, out)
        except Exception:
            yield {"name": sc["name"], "crash": traceback.format_exc()}


# Each runtime's driver: scenarios in, one result line per scenario out.
RUNNERS: dict[str, Callable[[list[dict[str, Any]], Path], Iterator[dict[str, Any]]]] = {
    "adk": run_adk,
    "pi": run_pi,
    "claude_code": run_claude_code,
    "codex": lambda scs, out: _codex().run_all(scs, out),
}


def _codex() -> Any:
    from tests.differential import codex_driver

    return codex_driver


def runtime_available(runtime: str) -> str | None:
    """Why the runtime cannot be driven here, or None."""
    if runtime == "adk":
        return adk_available()
    if runtime == "pi":
        from tests.differential.pi_driver import pi_available

        return pi_available()
    if runtime == "codex":
        return _codex().available()
    from tests.differential import cc_driver

    return cc_driver.available()


def check_dir(runtime: str, d: Path) -> Any:
    if runtime == "codex":
        from tests.differential.codex_check import check as check_codex

        return check_codex(d)
    if runtime == "claude_code":
        from tests.differential.check_cc import check as check_cc

        return check_cc(d)
    if runtime == "adk":
        from tests.differential.check_adk import check

        return check(d)
    from tests.differential.check_pi import check as check_pi

    return check_pi(d)


def _kinds(outcome: Any) -> set[str]:
    return {x["what"] for x in outcome.disagreements}


def minimize(
    runtime: str,
    sc: dict[str, Any],
    kinds: set[str],
    run: Callable[[list[dict[str, Any]], Path], Iterator[dict[str, Any]]],
) -> tuple[dict[str, Any], Path, Any]:
    """Drop turns (last first) while a disagreement of the same kind remains."""
    work = Path(tempfile.mkdtemp(prefix="differential-min-"))
    best = sc
    i = len(sc["turns"]) - 1
    while i >= 0 and len(best["turns"]) > 1:
        cand = dict(best, turns=best["turns"][:i] + best["turns"][i + 1 :], name=best["name"])
        d = work / f"try{i}"
        res = list(run([cand], d))
        if res and "crash" not in res[0]:
            o = check_dir(runtime, d / cand["name"])
            if _kinds(o) & kinds:
                best = cand
        i -= 1
    d = work / "final"
    list(run([best], d))
    return best, d / best["name"], check_dir(runtime, d / best["name"])


def keep_fixture(src: Path, outcome: Any) -> Path:
    dst = FIXTURES / src.name
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    for f in FIXTURE_FILES:
        if (src / f).exists():
            shutil.copyfile(src / f, dst / f)
    for f in src.iterdir():  # pi: the session file and the raw request log
        if f.suffix in (".jsonl",) and not (dst / f.name).exists():
            shutil.copyfile(f, dst / f.name)
    if src.name.startswith("cc-"):  # Claude Code's transcript: its bulky request records cut
        from tests.differential.cc_driver import trim_for_fixture

        trim_for_fixture(dst / "session.jsonl")
    (dst / "disagreements.json").write_text(json.dumps(outcome.disagreements, indent=1) + "\n")
    return dst


def scenarios_for(runtime: str, seed: int, n: int, start: int = 0) -> list[dict[str, Any]]:
    if runtime == "claude_code":
        from tests.differential import cc_driver

        return [cc_driver.scenario(seed, i) for i in range(start, start + n)]
    if runtime == "codex":
        return [_codex().scenario(seed, i) for i in range(start, start + n)]
    make = space.adk_scenario if runtime == "adk" else space.pi_scenario
    return [make(seed, i) for i in range(start, start + n)]


def campaign(
    runtime: str, n: int, seed: int, out: Path, keep: bool = True, log: Callable[[str], None] = print
) -> dict[str, Any]:
    run = RUNNERS[runtime]
    scs = scenarios_for(runtime, seed, n)
    by_name = {s["name"]: s for s in scs}
    totals = {
        "runtime": runtime,
        "scenarios": 0,
        "model_calls": 0,
        "skipped_calls": 0,
        "compactions": 0,
        "replays": 0,
        "crashed": [],
        "disagreements": [],
    }
    for res in run(scs, out):
        name = res["name"]
        if "crash" in res:
            totals["crashed"].append(name)
            log(f"{name}: the driver crashed:\n{res['crash']}")
            continue
        try:
            o = check_dir(runtime, out / name)
        except Exception:  # the check itself failed: reported, and the campaign goes on
            import traceback

            totals["crashed"].append(name)
            log(f"{name}: the check crashed:\n{traceback.format_exc()}")
            continue
        totals["scenarios"] += 1
        totals["model_calls"] += o.calls_checked
        totals["skipped_calls"] += o.calls_skipped
        totals["compactions"] += o.compactions
        totals["replays"] += int(o.replay_checked)
        if o.disagreements:
            entry: dict[str, Any] = {"scenario": name, "kinds": sorted(_kinds(o))}
            if keep:
                small, d, mo = minimize(runtime, by_name[name], _kinds(o), run)
                if mo.disagreements:
                    entry["fixture"] = str(keep_fixture(d, mo).relative_to(REPO))
                    entry["turns"] = f"{len(small['turns'])} of {len(by_name[name]['turns'])}"
                    o = mo
            entry["first"] = o.disagreements[0]
            totals["disagreements"].append(entry)
            log(f"DISAGREE {name}: {json.dumps(entry)[:1500]}")
    log(
        f"{runtime}: {totals['scenarios']} scenarios, {totals['model_calls']} model calls checked "
        f"({totals['skipped_calls']} unorderable), {totals['compactions']} compactions "
        f"({totals['replays']} sessions replayed), {len(totals['disagreements'])} with disagreements, "
        f"{len(totals['crashed'])} crashed"
    )
    return totals


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.differential", description=__doc__.split("\n")[0])
    ap.add_argument("--runtime", choices=tuple(RUNNERS), required=True)
    ap.add_argument("--scenarios", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="where the sessions go (default: a temporary folder, removed)")
    ap.add_argument("--no-fixtures", action="store_true", help="do not minimize and keep disagreements")
    args = ap.parse_args(argv)
    if why := runtime_available(args.runtime):
        print(f"differential: {why}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="differential-"))
    try:
        totals = campaign(args.runtime, args.scenarios, args.seed, out, keep=not args.no_fixtures)
    finally:
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)
    return 1 if totals["disagreements"] or totals["crashed"] else 0
