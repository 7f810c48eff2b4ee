"""Repair every damaged session of the type probe, and hold the repaired store to the real ADK.

    python -m tests.peers.adk_resume.repair_probe [--strategies compact,recover] [--as-written]

The type probe (`type_probe.py`) adds a damaged event and a clean one after it to the ADK peer
corpus's `token_threshold.db` (SqliteSessionService), or damages its last compaction, 160-odd ways,
one copy per probe. Each copy is repaired in place (`inspector repair --write`, the extractive
summarizer, the accepts test's budgets) with each strategy; a noop plan or a refusal is shown with
its reason. Then the real google-adk 2.13 (`tests/adk_resume.py` under `.adk-venv`, one process
for every copy) opens each repaired store with its own session service and runs one turn: the
contents of its first request must be exactly what `inspector context --json` predicted of the
repaired store, then the judge's message (`resumed_as_predicted` of tests/test_adk_accepts.py).
A copy ADK refuses to open is as predicted when `analyze` says `resume_refused`. Prints one row
per copy and the count that differ; exits 1 when any does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.peers import repair_campaign
from tests.peers.adk_resume import type_probe

BUDGETS = ["--window", "8000", "--reserve", "1000"]
STRATEGIES = {s: ["--keep-recent", "400", *BUDGETS] for s in ("compact", "recover", "resummarize")}
NAMES = [p.name for p in type_probe.PROBES]


def _expected(f: Path) -> Any:
    """What inspector predicts ADK does with F: "refused", or the contents of its next request and
    whether the judge's message is in it (not when the next message goes to a task in progress:
    a `file_structure` finding `next_message_scoped`)."""
    from inspector.analysis import analyze
    from inspector.formats import load
    from tests.test_adk_accepts import predicted_contents

    findings = analyze(load(str(f))).findings
    if any(x.code == "resume_refused" for x in findings):
        return "refused"
    judge_sent = not any(x.code == "file_structure" and x.data.get("problem") == "next_message_scoped" for x in findings)
    return predicted_contents(f, repair_campaign.predicted_messages(f)), judge_sent


def _job(label: str, f: Path) -> dict[str, Any]:
    """The driver's job: the agent that runs is the one inspector predicts (`next_agent`, as the
    accepts test's `_job`): which agent an app runs is the app's, not the store's."""
    from inspector.formats import load

    try:
        agent = (load(str(f)).header or {}).get("next_agent") or type_probe.AGENT
    except Exception:  # (a store inspector cannot read: its row says so)
        agent = type_probe.AGENT
    return {"name": label, "path": str(f), "backend": "sqlite", "app": type_probe.APP, "user": type_probe.USER,
            "session": type_probe.SESSION, "agent": agent}


def check(written: list[tuple[str, Path]], scratch: Path) -> list[tuple[str, str | None]]:
    """(label, None or the first difference) for each copy ADK resumed (it writes its turn to the
    store: the predictions are made first)."""
    from tests.test_adk_accepts import resumed_as_predicted

    expected: dict[str, Any] = {}
    for label, f in written:
        try:
            expected[label] = _expected(f)
        except Exception as e:  # a row the comparison cannot make is a row to look at, not the end of the run
            expected[label] = f"comparison failed: {type(e).__name__}: {str(e)[:200]}"
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "jobs.json").write_text(json.dumps([_job(label, f) for label, f in written]))
    r = subprocess.run([str(type_probe.ADK_PYTHON), str(type_probe.DRIVER), str(scratch / "jobs.json"), str(scratch / "out.json")],
                       capture_output=True, text=True, timeout=1200, check=False)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-3000:])
    got = json.loads((scratch / "out.json").read_text())
    rows: list[tuple[str, str | None]] = []
    for label, _ in written:
        want, sent = expected[label], got[label]
        if isinstance(want, str) and want != "refused":
            rows.append((label, want))
        elif want == "refused" or (isinstance(sent, dict) and sent.get("stage") == "get_session"):
            refused = isinstance(sent, dict) and sent.get("stage") == "get_session"
            rows.append((label, None if refused == (want == "refused") else
                         f"ADK {'refused: ' + sent['error'].splitlines()[0][:120] if refused else 'resumed'}, inspector predicted {'refused' if want == 'refused' else 'a request'}"))
        else:
            why = resumed_as_predicted(sent, *want)
            rows.append((label, None if why is None else json.dumps(why, default=str)[:400]))
    return rows


def main(argv: list[str] | None = None) -> int:
    return repair_campaign.main(argv, __doc__, "google-adk 2.13", NAMES, STRATEGIES, type_probe.write_probes,
                                lambda written, out: check(written, out / "resume"), type_probe.need_adk)  # fmt: skip

if __name__ == "__main__":
    sys.exit(main())
