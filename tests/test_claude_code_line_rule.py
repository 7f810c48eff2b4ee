"""Which damaged transcript lines Claude Code sends: inspector's prediction held to the real CLI.

`tests/peers/claude_code_resume/type_probe.py` appends a damaged line and a clean line under it to
the peer corpus's /compact session, one copy per probe, and the pinned Claude Code (2.1.328,
installed by tests/peers/claude_code_hook/install.sh) resumes each against the scripted Messages
API on 127.0.0.1. Per probe: was the damaged line sent, the clean line after it, the history before
them. `inspector context --json` must say the same of every probe but those named below, each
for its reason. Before this rule was followed, 21 of 72 probes differed (a line whose message
content Claude Code cannot read, a gap in the parent chain, a value after a line's first, a lone
surrogate, an API error naming a real model, a reply whose calls never got a result, ...). A line
whose content is an empty list holds no marker: the probe looks for what Claude Code sends of it
instead (`Probe.sent_as`: nothing of a user line's, "(no content)" for a reply's), and before
inspector followed that rule both probes differed (it predicted an item with no text for each).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.peers.claude_code_resume import type_probe

# Probes on which inspector and Claude Code part, on purpose: none (before, "reply call id a
# number": a tool_use id that is a number, now a call as any other, `claude_code._call_key`).
NOT_MIRRORED: dict[str, str] = {}


def _need_claude_code(base: Path) -> None:
    """Fail, naming the cause, when the pinned CLI cannot run or the probe's base session is missing."""
    from tests.test_claude_code_accepts import _harness

    harness = _harness()
    try:
        harness.cli.check_installed()
    except harness.HarnessError as e:
        pytest.fail(f"Claude Code cannot be run, so its reading cannot be checked: {e}", pytrace=False)
    if not base.exists():
        pytest.fail(f"{base} is missing (the checkout expects ../shared next to it)", pytrace=False)


def test_inspector_predicts_what_the_real_claude_code_sends_of_damaged_lines() -> None:
    _need_claude_code(type_probe.BASE)
    with tempfile.TemporaryDirectory() as tmp:
        rows = type_probe.run(Path(tmp))
    differ = {p.name: (str(got), str(want)) for p, got, want in rows if str(got) != str(want)}
    assert set(differ) == set(NOT_MIRRORED), differ
    # Both ways occur: lines sent and lines Claude Code does not send, histories kept and lost.
    verdicts = [str(got) for _, got, _ in rows]
    assert verdicts.count("DCH") >= 30 and sum(v.startswith("-") for v in verdicts) >= 8 and "--H" in verdicts


# Damaged compaction lines on which inspector and Claude Code part (the compaction probe): none.
COMPACTION_NOT_MIRRORED: dict[str, str] = {}


def test_inspector_predicts_what_the_real_claude_code_sends_of_a_damaged_compaction() -> None:
    """The peer session's /compact lines damaged 21 ways (`compaction_probe`): the items Claude
    Code's first request carries, in order, are the items `context` predicts. Before this rule,
    9 of 22 differed (a preserved message listed by a uuid no line has, with an empty list or an
    anchor naming nothing, or under a summary Claude Code drops, is not sent; one reached without
    the boundary's logicalParentUuid is; a summary line not marked as one is sent before what it
    preserves; a summary whose parent names nothing is sent all the same)."""
    from tests.peers.claude_code_resume import compaction_probe

    _need_claude_code(compaction_probe.BASE)
    with tempfile.TemporaryDirectory() as tmp:
        rows = compaction_probe.run(Path(tmp))
    differ = {p.name for p, got, want in rows if got != want}
    assert differ == set(COMPACTION_NOT_MIRRORED), differ
    # Claude Code sends a preserved message in some and not in others: both occur.
    preserved = "31f62534-deb9-47a8-967a-7771c3ce0590"
    sent = [isinstance(got, list) and any(g[0] == preserved for g in got) for _, got, _ in rows]
    assert any(sent) and not all(sent)


# One order probe per rule (`order_probe`; all 46: `python -m tests.peers.claude_code_resume.order_probe`):
# a result after a user's text, a line holding both, the made-up result first, results answering
# no call of the reply before (alone, beside text, twice), a message left with nothing, one opening
# the request, a reply's call lines none of whose calls is answered left out (`lre`; before, the 5
# "parallel calls" probes differed, tests/test_claude_code_unanswered_lines.py). The 20 probes of
# tests/test_claude_code_pairing_rules.py's rules (10 differed before) run outside CI (its 15 minutes).
ORDER_PROBES = {
    "text then result",
    "line with text and result, then result",
    "text, then a line with text and result",
    "missing result, text before",
    "result answering no call, own line",
    "result answering no call, beside text",
    "result twice",
    "result of an earlier reply, alone",
    "a result opening the request",
    "parallel calls, one line answered in part",
}


def test_inspector_predicts_the_order_the_real_claude_code_sends_a_joined_user_message_in() -> None:
    """Claude Code joins consecutive user lines into one message, its tool results first (`NU` /
    `fXo`), the results it makes up ahead of them, without the results whose call the reply right
    before does not make (`Pqi`): the items its first request carries, in order, and the results it
    sends without their call (none), are what `context` predicts. Before, 18 of the 21 probes
    differed (8 of these 9): inspector sent the lines in file order, its made-up result last, and
    such results as orphans."""
    from tests.peers.claude_code_resume import order_probe

    _need_claude_code(order_probe.BASE)
    with tempfile.TemporaryDirectory() as tmp:
        rows = order_probe.run(Path(tmp), ORDER_PROBES)
    assert {p.name for p, _, _ in rows} == ORDER_PROBES
    differ = {p.name: (got, want) for p, got, want in rows if got != want}
    assert not differ, differ
    # Both ways occur: a line sent ahead of one written before it, a line not sent at all.
    moved = removed = False
    for p, got, _ in rows:
        assert not isinstance(got, str), (p.name, got)
        ids = [i[0] for i in got[0] if i[0].startswith("0e4d1a9e-")]  # (the probe's own lines, in the order sent)
        moved |= ids != sorted(ids)
        removed |= len(ids) < len(p.steps) + (0 if p.alone else 1)
    assert moved and removed
