"""Which damaged transcript rows OpenClaw sends, and which stop it: inspector's prediction held to
the real OpenClaw 2026.9.6.

`tests/peers/openclaw/type_probe.py` appends a damaged row and a clean one after it to the
OpenClaw peer corpus's `s1.sqlite` (or damages one of its own rows), one copy per probe, and the
installed OpenClaw (tests/peers/openclaw/install.sh) resumes each for one turn against
fake_model.py. Per probe: did OpenClaw refuse (it could not rebuild its transcript index, load the
session or convert its request: it sent nothing), and if not, was the damaged entry sent, the clean
one after it, the history before them, how many messages. `inspector analyze` must say the same of
every probe but those named below, each for its reason. Before OpenClaw's own rules were mirrored
(inspector/formats/openclaw_model.py), 95 of 150 probes differed: every row JSON.parse fails on
and every zstd payload on the path that does not decode stops OpenClaw, where inspector skipped
the row; an entry whose parent is no earlier entry hangs under OpenClaw's leaf, where inspector
lost the history; entries its schema does not take are set aside (never sent, no boundary), where
inspector applied pi's TypeErrors; it drops orphan tool results and user messages of blank text;
its own conversion fails on blocks pi converts; it refuses a session without a version-3 header.
A failed answer with a text is sent as OpenClaw's marker text where inspector left it out, as pi
does (9 of the 17 failed-answer probes differed before `openclaw_model.dropped_answer` and
`Runtime.failed_turn_marker`; none now).

One OpenClaw run takes ~10-25 s (two at a time here), all 165 ~22 min: `python -m
tests.peers.openclaw.type_probe --record` runs them and records OpenClaw's verdicts
(tests/peers/recorded.py), each under the key of the store's rows, the prompt and the harness. The
test holds inspector's prediction to the recorded verdict of every probe, and resumes the probes in
`LIVE` with the real OpenClaw each run: their verdicts must still be the recorded ones. A probe not
recorded for its input as it is now fails the test, naming the command that records it. A missing
OpenClaw fails the test, naming the cause (never a skip).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.peers import recorded
from tests.peers.openclaw import type_probe
from tests.peers.openclaw.generate import NODE, OPENCLAW
from tests.peers.openclaw.resume import NotInstalled
from tests.scope import probe_cases

# Probes on which inspector and OpenClaw part, on purpose.
NOT_MIRRORED = {
    # SQLite's JSON functions refuse the row (invalid UTF-8 in its TEXT; nesting over their 1,000
    # levels), which OpenClaw's bounded reader of the session then trips over: it sent only the
    # rows after it, as a fresh session (observed). inspector reads the row (with U+FFFD in the
    # first case; the second nests deeper than it reads) and the history.
    "row invalid UTF-8": "SQLite's JSON functions, not the entry, decide",
    "row nested 3000 deep": "SQLite's JSON functions, not the entry, decide",
    # An entry reusing the leaf's id: OpenClaw's tree takes the later entry for that id, whose
    # parent is that id: a cycle, so its path is empty and it projects every row (observed: it sent
    # two messages). inspector reports the cycle (broken_tree) and predicts nothing sent.
    "entry id the leaf's": "a cycle through a reused id",
    # An extension's message (custom_message) whose content is an empty list: OpenClaw sends a
    # message for it (observed; a user message of empty content it leaves out); inspector leaves
    # it out, as pi does.
    "custom_message content empty": "an empty extension message is sent",
}

# The probes the real OpenClaw resumes on every run (refused, sent whole, an entry hung under the
# leaf): its verdicts must still be the recorded ones; every other probe's verdict is the one it
# gave when recorded (`type_probe --record`, tests/peers/recorded.py).
# The test command resumes one of them (a verdict a broken harness cannot give by chance: sent
# whole, the history kept); all three under INSPECTOR_FULL_PROBES (tests/scope.py).
LIVE = tuple(
    probe_cases(
        (
            "clean",
            "row cut short",  # a plain row JSON.parse fails on: refused
            "entry parentId unknown",  # a parent that is no earlier entry: hung under the leaf
        ),
        ("entry parentId unknown",),
    )
)


def need_openclaw() -> None:
    if not NODE.exists() or not OPENCLAW.exists():
        pytest.fail(
            f"OpenClaw 2026.9.6 is not installed at {OPENCLAW.parent} (tests/peers/openclaw/install.sh, run by "
            "tests/install_runtimes.sh), so its reading cannot be checked",
            pytrace=False,
        )


def _check(rows: list[tuple[type_probe.Probe, object, object, str]]) -> dict[str, str]:
    differ = {p.name: (str(got), str(want), why) for p, got, want, why in rows if str(got) != str(want)}
    assert set(differ) <= set(NOT_MIRRORED), {k: v for k, v in differ.items() if k not in NOT_MIRRORED}
    return {p.name: str(got) for p, got, _, _ in rows}


def test_inspector_predicts_what_the_real_openclaw_sends_of_damaged_rows() -> None:
    need_openclaw()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            rows = type_probe.run(Path(tmp), live=LIVE)
        except NotInstalled as e:
            pytest.fail(f"{e}: OpenClaw's reading cannot be checked", pytrace=False)
        except recorded.StaleRecord as e:
            pytest.fail(str(e), pytrace=False)
    assert len(rows) == len(type_probe.PROBES)
    verdicts = _check(rows)
    # Every way occurs: refused, sent whole, the damaged entry left out with the history kept.
    assert verdicts["clean"] == "DCH 8"
    assert verdicts["row cut short"] == verdicts["user text null"] == verdicts["header null"] == type_probe.REFUSED
    assert verdicts["row null"] == verdicts["user content a number"] == "-CH 6"
    assert verdicts["entry parentId unknown"] == "DCH 8"
    # A failed answer without a text to replay: left out whole.
    assert verdicts["errored reply fallback text"] == "-CH 7"
