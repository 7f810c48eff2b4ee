"""Which damaged event rows google-adk 2.13 reads: inspector's prediction held to the real ADK.

`tests/peers/adk_resume/type_probe.py` adds a damaged event and a clean one after it to the peer
corpus's `token_threshold.db` (SqliteSessionService), one copy per probe, or damages the session's
last compaction or its stored state in place; the real ADK (`.adk-venv`, installed by tests/install_adk.sh) opens each
copy and runs one turn through a Runner against a scripted model (tests/adk_resume.py). Per probe:
did ADK refuse the session (one event its own `Event` model cannot validate makes `get_session`
raise: nothing is sent), else was the damaged event sent, the clean one, the history before them,
the last compaction's summary, an event inside its range. `inspector` must say the same of every
probe but those named below (a `resume_refused` finding where ADK refuses). Before this rule, 86 of
162 probes differed (every session ADK refuses over one event or a stored state it cannot read was
read and predicted as if sent; a content without a role was sent; a compaction's end written as a
numeric string was ignored). Rewinds (`actions.rewind_before_invocation_id`, events/_rewind_events.py:
22-61): 14 probes (one older, 13 added with the rule); before inspector modelled them, 9 of the
14 differed (the rewound events, a rewind's own content, were predicted as sent).

A missing ADK fails the test, naming the cause (never a skip).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.conftest import need_shared
from tests.peers.adk_resume import type_probe

# Probes on which inspector and ADK part, on purpose: none (before, "an output transcription
# without content": a live session's speech, now a message, tests/test_adk_transcriptions.py).
NOT_MIRRORED: dict[str, str] = {}


def test_inspector_predicts_what_the_real_adk_sends_of_damaged_events() -> None:
    need_shared(type_probe.BASE)
    why = type_probe.need_adk()
    if why is not None:
        pytest.fail(f"the real ADK cannot be run, so its reading cannot be checked: {why}", pytrace=False)
    with tempfile.TemporaryDirectory() as tmp:
        rows = type_probe.run(Path(tmp))
    differ = {p.name: (str(got), why, str(want)) for p, got, why, want in rows if str(got) != str(want)}
    assert set(differ) == set(NOT_MIRRORED), differ
    # Every verdict occurs: sessions refused, events sent, events ADK loads and does not send,
    # compactions used and not.
    verdicts = [str(got) for _, got, _, _ in rows]
    assert verdicts.count("refused") >= 40 and verdicts.count("DCHS-") >= 30, verdicts
    assert "-CHS-" in verdicts and "--HS-" in verdicts and "--H-I" in verdicts
    # Rewinds: the last invocation dropped (its answer H), an earlier one (the summary S too: its
    # compaction event was inside), one across a compaction (the older range then: I sent raw).
    assert "-C-S-" in verdicts and "-C---" in verdicts and "-C--I" in verdicts
