"""The real pi rewrites another model's replies and images as inspector's next request shows them
(`inspector/formats/pi_transform.py`; the probes: `tests/peers/pi_resume/transform_probe.py`, the
whole set with `python -m tests.peers.pi_resume.transform_probe`).

Sessions with replies by another model (signed, redacted, blank and plain thinking, a call with a
thought signature) and images (a user's, an extension's, a tool result's), resumed by the pinned pi
(0.73.1) with models of its own registry (one without image input, one with) and with the user's
own model: pi's first request, message by message, is inspector's next request.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.peers.pi_resume import transform_probe


def test_the_real_pi_sends_what_inspector_shows() -> None:
    from tests.peers.pi_hook import pi_harness

    try:
        pi_harness.check_installed()
    except pi_harness.HarnessError as e:
        pytest.fail(f"pi cannot be run, so its request cannot be checked: {e}", pytrace=False)
    with tempfile.TemporaryDirectory() as tmp:
        rows = transform_probe.run(Path(tmp), quick=True)
    assert len(rows) == len(transform_probe.QUICK) * len(transform_probe.TARGETS)
    assert [r for r in rows if r[1] is not None] == []
