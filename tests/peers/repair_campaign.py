"""What the repair campaigns share (`tests/peers/<runtime>_resume/repair_probe.py`): each damaged
session of a runtime's type probe repaired with each strategy, in process, the way a user would
(`inspector plan`, then `inspector repair --write` on a copy), a noop plan or a refusal recorded
with its reason; then the runtime resumes each repaired copy and its first request is held whole
to `inspector context --json` on that copy. The runtime's part (how it resumes, what it sends) is
each campaign's own; the rows it prints are alike.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any


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
