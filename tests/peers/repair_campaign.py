"""What the repair campaigns share (`tests/peers/<runtime>_resume/repair_probe.py`): each damaged
session of a runtime's type probe repaired with each strategy, in process, the way a user would
(`inspector plan`, then `inspector repair --write` on a copy), a noop plan or a refusal recorded
with its reason; then the runtime resumes each repaired copy and its first request is held whole
to `inspector context --json` on that copy. The runtime's part (how it resumes, what it sends) is
each campaign's own; the rows it prints are alike.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Rows = list[tuple[str, str | None]]


def inspector(args: list[str]) -> tuple[int, str, str]:
    """`inspector ARGS` in this process: its exit code, stdout and stderr."""
    from inspector.cli.main import main

    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()  # (--json writes to stdout.buffer)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    out.flush()
    return code, out.buffer.getvalue().decode(), err.getvalue()  # type: ignore[attr-defined]


def predicted_messages(f: Path) -> list[dict[str, Any]]:
    """`inspector context --json`'s messages for F (a RuntimeError naming the exit when it fails)."""
    code, out, err = inspector(["context", str(f), "--json"])
    if code != 0:
        raise RuntimeError(f"context exit {code}: {err.strip()[-160:]}")
    return list(json.loads(out)["messages"])


def _last_line(err: str) -> str:
    return err.strip().splitlines()[-1][:160] if err.strip() else ""


def repair_all(
    files: Sequence[Path],
    names: Sequence[str],
    out: Path,
    strategies: dict[str, list[str]],
    picked: dict[int, list[str]] | None = None,
) -> tuple[list[tuple[str, Path]], list[str]]:
    """Each of FILES (the probe NAMES) repaired with each of STRATEGIES (name: its arguments) into
    OUT (`picked`: only these probes, each with its own strategies): (label, repaired file) of
    those written, and a line for each that was not (a noop plan, a refusal and its reason)."""
    written: list[tuple[str, Path]] = []
    skipped: list[str] = []
    out.mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(files):
        for strategy in list(strategies) if picked is None else picked.get(i, []):
            label = f"{names[i]} [{strategy}]"
            args = ["--strategy", strategy, *strategies[strategy]]
            code, plan, err = inspector(["plan", str(f), *args, "--json"])
            if code != 0 or json.loads(plan)["action"] == "noop":
                skipped.append(f"{label}: plan {'noop' if code == 0 else f'exit {code}: {_last_line(err)}'}")
                continue
            r = out / f"p{i:03d}.{strategy}{f.suffix}"
            shutil.copyfile(f, r)
            code, _, err = inspector(["repair", str(r), *args, "--write"])
            if code != 0:
                skipped.append(f"{label}: repair exit {code}: {_last_line(err)}")
                continue
            written.append((label, r))
    return written, skipped


def report(rows: Sequence[tuple[str, str | None]], skipped: Sequence[str], probes: int, runtime: str) -> int:
    """Print one row per resumed copy, then what was not written, then the count; 1 when any differs."""
    differ = [label for label, why in rows if why is not None]
    for label, why in rows:
        print(f"{'ok  ' if why is None else 'DIFF'} {label}{'' if why is None else ': ' + why}")
    for line in skipped:
        print(f"--   {line}")
    print(f"{probes} damaged sessions, {len(rows)} copies resumed by {runtime}, {len(differ)} differ; {len(skipped)} not written")
    return 1 if differ else 0


def not_mirrored(rows: Sequence[tuple[str, str | None]], named: Sequence[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The rows that differ, by probe name ("name [strategy]" -> "name"): (those NAMED, the others)."""
    differ = {label.rsplit(" [", 1)[0]: why for label, why in rows if why is not None}
    return ({k: v for k, v in differ.items() if k in named}, {k: v for k, v in differ.items() if k not in named})


def main(
    argv: list[str] | None,
    doc: str | None,
    runtime: str,
    names: Sequence[str],
    strategies: dict[str, list[str]],
    write_probes: Callable[[Path], list[Path]],
    check: Callable[[list[tuple[str, Path]], Path], Rows],
    need: Callable[[], str | None] | None = None,
) -> int:
    """A campaign's command line: the probes written (`write_probes` into OUT/probes), each repaired
    with each strategy picked (`repair_all`), with `--as-written` each damaged copy too, every copy
    resumed by the RUNTIME and compared (`check`, given OUT), the rows printed (`report`). `need`:
    why the runtime cannot run (then exit 2)."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument("--strategies", default="compact,recover", help="comma-separated: " + ", ".join(strategies))
    ap.add_argument("--keep", metavar="DIR", help="keep the probe copies, the repaired copies and the runtime's output here")
    ap.add_argument("--as-written", action="store_true", help="also hold each damaged copy itself, unrepaired, to the same whole-request check")
    ns = ap.parse_args(argv)
    why = need() if need is not None else None
    if why is not None:
        print(why, file=sys.stderr)
        return 2
    picked = {s: strategies[s] for s in ns.strategies.split(",") if s}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(ns.keep or tmp)
        os.environ["INSPECTOR_DATA_DIR"] = str(out / "data")  # (the repairs' backups: not the user's data dir)
        (out / "probes").mkdir(parents=True, exist_ok=True)
        files = write_probes(out / "probes")
        written, skipped = repair_all(files, names, out / "repaired", picked)
        if ns.as_written:
            written = [(f"{n} [as written]", f) for n, f in zip(names, files, strict=True)] + written
        rows = check(written, out)
    return report(rows, skipped, len(files), runtime)
