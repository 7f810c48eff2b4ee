"""A fuzz worker: reads cases (JSON lines) on stdin, runs each in-process, answers on its own pipe.

The protocol goes over a duplicate of the original stdout, and file descriptor 1 then points at
/dev/null, so nothing a command prints outside Python's sys.stdout can corrupt it. Before each
case the worker resets its peak RSS (/proc/self/clear_refs), so the parent reads the case's own
peak from /proc/PID/status when the answer arrives.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path


def reset_peak_rss() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:  # pragma: no cover - not Linux: the parent then sees the lifetime peak
        pass


def main() -> None:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.environ.setdefault("INSPECTOR_FORCE_OFFLINE_TOKENIZER", "1")
    work = Path(tempfile.mkdtemp(prefix="inspector-fuzz-", dir=os.environ.get("INSPECTOR_FUZZ_WORK")))
    # Nothing a case does may write into the user's own data dir (backups).
    os.environ["INSPECTOR_DATA_DIR"] = str(work / "data")
    os.environ["XDG_DATA_HOME"] = str(work / "xdg")

    # Warm up (imports, tokenizer) so the first case is timed like the others.
    import inspector.cli.main
    import inspector.tui.app  # noqa: F401
    from tests.fuzz.runner import run_case

    print(json.dumps({"ready": os.getpid()}), file=proto)
    for line in sys.stdin:
        case = json.loads(line)
        reset_peak_rss()
        try:
            result = run_case(case, work, app_wait=float(case.get("app_wait", 20.0)))
        except Exception as e:
            import traceback

            trace = traceback.format_exc()
            result = {"id": case["id"], "code": None, "seconds": 0, "violations": [
                {"kind": "harness", "key": f"fuzzer fault: {type(e).__name__}: {e}"[:200], "detail": str(e), "trace": trace}
            ]}
        print(json.dumps(result), file=proto)


if __name__ == "__main__":
    main()
