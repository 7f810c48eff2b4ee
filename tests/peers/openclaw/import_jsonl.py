#!/usr/bin/env python3
"""Import a legacy OpenClaw session JSONL into a 2026.9.6 store with the real `openclaw doctor --fix`, offline.

    python3 import_jsonl.py SESSION.jsonl OUT.sqlite [--scratch DIR]

OpenClaw 2026.9.6 runs no JSONL transcript (docs/runtimes/openclaw.md §9: "Persisted legacy session
transcripts require doctor/import migration"); its doctor imports `agents/<agent>/sessions/*.jsonl`
listed in `sessions.json` into the agent's SQLite store. The file goes into a throwaway HOME as the
session `agent:main:explicit:<its id>`, the doctor runs once, and the store it wrote is copied to
OUT (a `VACUUM INTO` copy, as generate.py makes the corpus). Then `resume.py OUT --session-id <id>`
shows what OpenClaw sends from it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import NODE, OPENCLAW, SLIM_JS, STORE_IN_HOME, offline_openclaw  # noqa: E402


def import_jsonl(jsonl: Path, out: Path, scratch: Path) -> int:
    """The doctor's exit code; OUT holds the store it wrote (when it wrote one)."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    sid = jsonl.stem
    with offline_openclaw(scratch, {"turns": {}}) as (env, ws, _raw):
        sessions = scratch / "home" / ".openclaw" / "agents" / "main" / "sessions"
        sessions.mkdir(parents=True)
        shutil.copyfile(jsonl, sessions / jsonl.name)
        (sessions / "sessions.json").write_text(json.dumps({f"agent:main:explicit:{sid}": {"sessionId": sid, "updatedAt": 0}}))
        with open(scratch / "doctor.log", "wb") as log:
            cmd = [str(NODE), str(OPENCLAW), "doctor", "--fix", "--non-interactive"]
            rc = subprocess.run(cmd, cwd=ws, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=600).returncode
    store = scratch / "home" / STORE_IN_HOME
    if store.exists():
        out.unlink(missing_ok=True)
        subprocess.run([str(NODE), "-e", SLIM_JS, str(store), str(out)], check=True)
    return rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jsonl")
    ap.add_argument("out")
    ap.add_argument("--scratch", default=str(HERE / "scratch" / "import"))
    a = ap.parse_args()
    if not NODE.exists() or not OPENCLAW.exists():
        print("import_jsonl: OpenClaw is not installed: run ./install.sh first", file=sys.stderr)
        return 2
    rc = import_jsonl(Path(a.jsonl), Path(a.out), Path(a.scratch))
    print(f"import_jsonl: openclaw doctor --fix exited {rc}; store: {a.out if Path(a.out).exists() else 'none written'}", file=sys.stderr)
    return 0 if rc == 0 and Path(a.out).exists() else 1


if __name__ == "__main__":
    sys.exit(main())
