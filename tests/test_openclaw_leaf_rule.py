"""What OpenClaw sends after `leaf` rows (its navigation controls): inspector's prediction held to
the real OpenClaw 2026.9.6.

`tests/peers/openclaw/leaf_probe.py` appends leaf rows (and entries around them) to copies of the
OpenClaw peer corpus's `s1.sqlite`, or has OpenClaw rewind a copy itself, and the installed
OpenClaw resumes each for one turn against fake_model.py. Before the rows were mirrored
(`openclaw_model.Scan`), 14 of its 25 probes differed; now none. `python -m
tests.peers.openclaw.leaf_probe --record` runs all (~4 min here) and records OpenClaw's verdicts
(tests/peers/recorded.py); the test holds inspector's prediction to the recorded verdict of every
probe and resumes those in `LIVE` with the real OpenClaw each run, whose verdicts must still be
the recorded ones. A missing OpenClaw fails the test, naming the cause (never a skip).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.peers import recorded
from tests.peers.openclaw import leaf_probe
from tests.peers.openclaw.resume import NotInstalled
from tests.test_openclaw_line_rule import need_openclaw

# The probes the real OpenClaw resumes on every run (its own rewind cannot be recorded: fresh ids
# each time); every other probe's verdict is the one it gave when recorded (`leaf_probe --record`).
LIVE = (
    "switch to an earlier entry",  # the target is the leaf: the path ends there
    "rewind by OpenClaw, index stale",  # OpenClaw's own leaf row, its index rebuilt from the rows
)


def test_inspector_predicts_what_the_real_openclaw_sends_after_leaf_rows() -> None:
    need_openclaw()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            rows = leaf_probe.run(Path(tmp), live=LIVE)
        except NotInstalled as e:
            pytest.fail(f"{e}: OpenClaw's reading cannot be checked", pytrace=False)
        except recorded.StaleRecord as e:
            pytest.fail(str(e), pytrace=False)
    assert len(rows) == len(leaf_probe.PROBES) - 1  # (all but OpenClaw's own rewind with its index fresh)
    differ = {p.name: (got, want, why) for p, got, want, why in rows if got != want}
    assert not differ
    verdicts = {p.name: got for p, got, _, _ in rows}
    assert verdicts["switch to an earlier entry"] == verdicts["rewind by OpenClaw, index stale"] == "H t5 t7 t7a 4"
    assert verdicts["switch to the root (null)"] == "- 0"
