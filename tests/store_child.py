"""A process that writes a repair into a session (or undoes one), for the crash-safety tests.

    python -m tests.store_child write|undo SESSION KILL_AT [--hold SECONDS]

Counts the store's steps and SIGKILLs itself at step KILL_AT (0: never); prints the number of
steps it went through. `--hold` sleeps at the first step, for tests that race another process.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from inspector.analysis import analyze
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.formats import load
from inspector.store.writeback import install, undo


def main(argv: list[str]) -> int:
    action, session, kill_at = argv[0], argv[1], int(argv[2])
    hold = float(argv[argv.index("--hold") + 1]) if "--hold" in argv else 0.0
    seen = 0

    def step(name: str) -> None:
        nonlocal seen
        seen += 1
        if seen == 1 and hold:
            print("holding", flush=True)
            time.sleep(hold)
        if seen == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    if action == "write":
        report = analyze(load(session))
        res = repair(plan(report, "recover", Budgets()), entry_id="c0ffee00", timestamp="2026-01-01T00:00:00.000Z")
        assert res.entry is not None
        install(report, res.entry, what="crash test", step=step)
    else:
        undo(session, step=step)
    print(seen, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
