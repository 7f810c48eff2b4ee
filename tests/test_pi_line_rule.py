"""Which damaged session entries pi sends, and which stop it: inspector's prediction held to the real pi.

`tests/peers/pi_resume/type_probe.py` appends a damaged entry and a clean one under it to the pi
peer corpus's `normal.jsonl` (or damages one of its own lines), one copy per probe, and the pinned
pi (0.73.1, installed by tests/install_pi.sh) resumes every copy in one process against a
chat-completions server on 127.0.0.1. Per probe: did pi refuse (it could not open the session or
build its request: a TypeError, or a walk that never ends), and if not, was the damaged entry sent,
the clean one after it, the history before them, how many messages. `inspector analyze` must say
the same of every probe but those named below, each for its reason. Before this rule was
followed, 29 of 109 probes differed: pi stops on 24 shapes (a line that is JSON null, a message
entry without a message on the active path, a user's content that is not text or a list, a block
that is null, a text that is not a string, an answer's content that is not a list, ...) where
inspector predicted a request; pi leaves out a message whose content is an empty list; a second
session header is no entry to it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.peers.pi_resume import type_probe

# Probes on which inspector and pi part, on purpose.
NOT_MIRRORED = {
    # A toolCall whose id is a number or missing: pi-ai gives it a synthetic "No result provided"
    # result; inspector's index keeps only string call ids, so it sees no call to answer.
    "reply call id a number": "call id not a string",
    "reply call without id": "call id not a string",
    # A tool result whose content is a string: pi-ai iterates it as characters for a model without
    # image input (its text is lost) and fails on it for one with image input; which model the
    # next request uses is not in the file. inspector sends the text.
    "result content a string": "depends on the model's input types",
    # A branch summary that is a number: pi writes its JavaScript string into the text; inspector
    # reads the entry without the field (`fields.PI` types it a string) and sends nothing for it.
    "branch_summary a number": "a typed field of another type is set aside",
}


def _need_pi() -> None:
    """Fail, naming the cause, when the pinned pi cannot run or the probe's base session is missing."""
    from tests.peers.pi_hook import pi_harness

    try:
        pi_harness.check_installed()
    except pi_harness.HarnessError as e:
        pytest.fail(f"pi cannot be run, so its reading cannot be checked: {e}", pytrace=False)
    if not type_probe.BASE.exists():
        pytest.fail(
            f"{type_probe.BASE} is missing (the checkout expects ../shared next to it)", pytrace=False
        )


def test_inspector_predicts_what_the_real_pi_sends_of_damaged_entries_and_when_it_stops() -> None:
    _need_pi()
    with tempfile.TemporaryDirectory() as tmp:
        rows = type_probe.run(Path(tmp))
    differ = {p.name: (str(got), str(want), why) for p, got, want, why in rows if str(got) != str(want)}
    assert set(differ) == set(NOT_MIRRORED), differ
    verdicts = {p.name: str(got) for p, got, _, _ in rows}
    # Every way occurs: refused, sent whole, the damaged entry left out, the history lost.
    assert list(verdicts.values()).count(type_probe.REFUSED) >= 20
    assert verdicts["clean"] == "DCH 27" and verdicts["message role unknown"] == "-CH 26"
    assert verdicts["entry without parentId"] == "DC- 2"
    # Where a shape pi fails on stops it: on the active path (opening) or in the request (sending),
    # not beside the path nor summarized away.
    assert verdicts["summarized message null"] == verdicts["errored reply content null"] == type_probe.REFUSED
    assert verdicts["message null, beside the path"] != type_probe.REFUSED
    assert verdicts["summarized reply content null"] != type_probe.REFUSED


def test_every_session_pi_cannot_send_is_sent_once_inspector_repairs_it() -> None:
    """The probes whose every request pi fails on (a message pi-ai cannot convert is in it): each
    repaired with `inspector repair --strategy compact` (its retained tail starts after that
    message, which the summary stands for) and resumed again with the real pi: pi sends every one,
    as inspector predicts the repaired file."""
    _need_pi()
    with tempfile.TemporaryDirectory() as tmp:
        rows = type_probe.run_repaired(Path(tmp))
    assert len(rows) >= 15
    assert [(p.name, why) for p, got, _, why in rows if got == type_probe.REFUSED] == []
    assert {p.name: (str(got), str(want)) for p, got, want, _ in rows if str(got) != str(want)} == {}
