#!/usr/bin/env python3
"""Resume a session of an OpenClaw store with the real OpenClaw (./install.sh) for one turn, offline.

    python3 resume.py STORE.sqlite --session-id s1 --message TEXT [--scratch DIR]

The store is copied into a throwaway HOME (`~/.openclaw/agents/main/agent/openclaw-agent.sqlite`),
`openclaw agent --local --session-id ID --message TEXT` runs once against fake_model.py, and every
request the model received is printed as JSON lines (`{"seq", "kind", "turn", "step", "body"}`,
fake_model.py's log), the first agent request being what OpenClaw built from the stored session.
The tests call `resume()`; the scratch folder is left for the caller to read or remove.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import NODE, OPENCLAW, STORE_IN_HOME, offline_openclaw, run_turn  # noqa: E402


class NotInstalled(RuntimeError):
    """OpenClaw is not in runtime/ (run install.sh)."""


def resume(store: Path, session_id: str, message: str, scratch: Path) -> tuple[int, list[dict[str, Any]]]:
    """(OpenClaw's exit code, every request it sent) for one turn on a copy of `store`. Run once
    more, on a fresh copy, where node itself aborted in its zlib stream as the process exited (seen
    once in a CI run with three processes on two cores: "CompressionStream" in node's own assertion,
    SIGABRT, after the reply was received): a crash of node's, no verdict on the store; and where
    OpenClaw refused while rebuilding the transcript index without that rebuild failing
    (`PROJECTION_REBUILDING`)."""
    if not NODE.exists() or not OPENCLAW.exists():
        raise NotInstalled(f"OpenClaw 2026.9.6 is not installed at {OPENCLAW.parent}: run {HERE / 'install.sh'}")
    rc, reqs = _resume_once(store, session_id, message, scratch)
    log = scratch / "openclaw.stderr.log"
    err = log.read_text(encoding="utf-8", errors="replace") if rc != 0 and log.exists() else ""
    if (rc == -signal.SIGABRT and NODE_ZLIB_ABORT in err) or (PROJECTION_REBUILDING in err and RECONCILE_FAILED not in err):
        shutil.copyfile(log, scratch.with_name(f"{scratch.name}.first-run.log"))
        rc, reqs = _resume_once(store, session_id, message, scratch)
    return rc, reqs


NODE_ZLIB_ABORT = "CompressionStream"
# OpenClaw refusing a session whose transcript index it is rebuilding, with no failure of the
# rebuild itself: seen once in 190 probe runs (two at a time), on a store it resumed on each of two
# runs after; a race of OpenClaw's, run once more. (A rebuild that fails, "reconcile failed", is a
# verdict on the store: a row it cannot read.)
PROJECTION_REBUILDING = "Session transcript projection is rebuilding"
RECONCILE_FAILED = "reconcile failed"


def _resume_once(store: Path, session_id: str, message: str, scratch: Path) -> tuple[int, list[dict[str, Any]]]:
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    with offline_openclaw(scratch, {"turns": {}}) as (env, ws, raw):
        target = scratch / "home" / STORE_IN_HOME
        target.parent.mkdir(parents=True)
        shutil.copyfile(store, target)
        rc = run_turn(env, ws, message, scratch / "openclaw.stderr.log", session_id=session_id)
    reqs = [json.loads(x) for x in raw.read_text(encoding="utf-8").splitlines()] if raw.exists() else []
    return rc, reqs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store")
    ap.add_argument("--session-id", required=True)
    ap.add_argument("--message", required=True)
    ap.add_argument("--scratch", default=str(HERE / "scratch" / "resume"))
    a = ap.parse_args()
    try:
        rc, reqs = resume(Path(a.store), a.session_id, a.message, Path(a.scratch))
    except NotInstalled as e:
        print(f"resume: {e}", file=sys.stderr)
        return 2
    for r in reqs:
        print(json.dumps(r))
    print(f"resume: openclaw exited {rc} after {len(reqs)} request(s)", file=sys.stderr)
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
