"""What OpenClaw sends after `leaf` rows (its navigation controls): inspector's prediction held to
the real OpenClaw 2026.9.6.

`tests/peers/openclaw/leaf_probe.py` appends leaf rows (and entries around them) to copies of the
OpenClaw peer corpus's `s1.sqlite`, or has OpenClaw rewind a copy itself, and the installed
OpenClaw resumes each for one turn against fake_model.py. Before the rows were mirrored
(`openclaw_model.Scan`), 14 of its 25 probes differed; now none. CI runs one probe per rule
(`CI_PROBES`); `python -m tests.peers.openclaw.leaf_probe` runs all (~4 min here). A missing
OpenClaw fails the test, naming the cause (never a skip).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.peers.openclaw import leaf_probe
from tests.peers.openclaw.resume import NotInstalled
from tests.test_openclaw_line_rule import need_openclaw

CI_PROBES = (
    "switch to an earlier entry",  # the target is the leaf: the path ends there
    "switch, then a turn under the leaf row",  # an entry under a leaf row hangs under its target
    "leaf appendParentId, then an entry under it",  # an entry under the append parent hangs under the leaf
    "leaf naming an unknown id",  # an invalid control is ignored
    "leaf after a reset",  # a control may not lead back past a reset
    "switch to the root (null)",  # no leaf: no history
    "rewind by OpenClaw, index stale",  # OpenClaw's own leaf row, its index rebuilt from the rows
)


def test_inspector_predicts_what_the_real_openclaw_sends_after_leaf_rows() -> None:
    need_openclaw()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            rows = leaf_probe.run(Path(tmp), only=CI_PROBES)
        except NotInstalled as e:
            pytest.fail(f"{e}: OpenClaw's reading cannot be checked", pytrace=False)
    differ = {p.name: (got, want, why) for p, got, want, why in rows if got != want}
    assert not differ
    verdicts = {p.name: got for p, got, _, _ in rows}
    assert verdicts["switch to an earlier entry"] == verdicts["rewind by OpenClaw, index stale"] == "H t5 t7 t7a 4"
    assert verdicts["switch to the root (null)"] == "- 0"
