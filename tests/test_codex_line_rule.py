"""Codex skips a rollout line it cannot read into its own types; inspector's prediction skips the
same lines (`inspector/formats/codex_lines.py`), checked against the real Codex.

One rollout (the peer corpus's `auto_compact.jsonl`) gets a hundred damaged lines appended, each a
user message, call, output or reasoning item carrying a marker of its own
(`tests/peers/codex_resume/type_probe.py`); the pinned Codex resumes it once against the scripted
model on 127.0.0.1, and the markers in its first request are the lines it read. `inspector context
--json` must send exactly those. A missing Codex fails the test, naming the cause (installed by
tests/install_codex.sh).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import need_shared
from tests.peers.codex_resume import resume as harness
from tests.peers.codex_resume import type_probe as probe

# Where we knowingly part from Codex (the module doc of `codex_lines` says why): an integer past 64
# bits or a value nested 128 deep in a field no mirrored type names (telling would cost every line
# a walk of its bytes), and a message of a role Codex never writes (Codex sends it as it is).
NOT_MIRRORED = frozenset({
    "a 70-bit integer",
    "2**64",
    "-2**63 - 1",
    "a big integer in an unknown object",
    "a value nested 126 deep (line 128)",
    "a top-level value nested 127 deep (line 128)",
    "a made-up role",
})


def test_inspector_sends_the_lines_the_real_codex_reads(tmp_path: Path) -> None:
    need_shared(probe.BASE)
    have = harness.installed_version()
    if have != harness.CODEX_VERSION:
        pytest.fail(f"Codex {harness.CODEX_VERSION} is not installed at {harness.CODEX} (found {have}): run tests/install_codex.sh", pytrace=False)
    rollout = tmp_path / probe.BASE.name
    markers = probe.probe_rollout(probe.BASE, rollout)
    theirs = probe.sent_by_codex(rollout, markers, tmp_path / "run")
    ours = probe.sent_by_inspector(rollout, markers)
    assert set(markers.values()) >= NOT_MIRRORED
    # The probes reach both verdicts: Codex reads some and skips many (a harness that lost every
    # line, or kept them all, would agree with anything).
    assert len(markers) >= 100 and 30 <= len(theirs) <= len(markers) - 40, (len(theirs), len(markers))
    differ = sorted(f"{m} {name}: Codex {'sends' if m in theirs else 'skips'} it, inspector {'sends' if m in ours else 'skips'} it"
                    for m, name in markers.items() if (m in theirs) != (m in ours) and name not in NOT_MIRRORED)
    assert not differ, "\n".join(differ)
