"""Differential testing against the real Codex 0.169.0 (issue 16): for every request it sent on
generated scenarios, our next request on the rollout as it stood (items in order, roles, call ids,
text digests) and our holes; for every summarizer request, what the checkpoint it made represents
by its own call.

Every regression fixture tests/differential/fixtures/codex-* (a scenario that once disagreed, with
the rollout Codex wrote and every request it sent) must now agree; a few fixed seeds are run live
through the CLI. A campaign: `python -m tests.differential --runtime codex --scenarios 30 --seed 7`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.analysis.export import checkpoint_json
from inspector.formats import load
from tests.differential import campaign, codex_driver
from tests.differential.codex_check import check

FIXTURES = sorted(p for p in campaign.FIXTURES.glob("codex-*") if (p / "session.jsonl").exists())


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_fixture_agrees_with_what_codex_did(fixture: Path) -> None:
    outcome = check(fixture)
    assert outcome.calls_checked > 0 and outcome.compactions > 0
    assert outcome.disagreements == [], json.dumps(outcome.disagreements, indent=1)[:3000]


TWO_COMPACTIONS = campaign.FIXTURES / "codex-s1-0004" / "session.jsonl"


def test_the_messages_codex_keeps_and_summarizes_again_are_represented_and_retained() -> None:
    """Codex keeps the developer, context and user messages in its replacement history and gives
    them, with the summary, to its next summarizer: each checkpoint represents them and keeps them,
    and the second one's own call covers them again (lines 3, 4, 8 of the fixture)."""
    report = analyze(load(str(TWO_COMPACTIONS)))
    led = report.ledger
    first, second = report.checkpoints
    kept = [3, 4, 8]
    assert [led.records[s].line for s in first.retains] == kept
    assert set(first.retains) <= first.represents
    assert checkpoint_json(report, first)["represented_and_retained"]["count"] == 3
    assert set(kept) <= {led.records[s].line for s in second.own_range}
    assert checkpoint_json(report, second)["represented_and_retained"]["count"] == 4  # and [P1]
    assert all(report.states[s] == "retained" and report.summarized_by[s] == 1 for s in first.retains)


# Seeds covering an auto-compaction mid tool loop and before a new prompt, two compactions in a
# row (the second summarizer given the user messages the first kept), an empty summarizer reply
# and a kill mid-tool (seed 1/6), a summarizer stream cut short (1/8), parallel calls and failing
# commands.
LIVE = [("codex", 1, i) for i in (4, 6, 8)]


def test_fixed_seeds_against_the_real_codex(tmp_path: Path) -> None:
    if why := codex_driver.available():
        pytest.fail(f"Codex cannot run, so nothing is checked against it: {why}", pytrace=False)
    scs = [codex_driver.scenario(seed, i) for _, seed, i in LIVE]
    checked = compactions = 0
    for res in campaign.RUNNERS["codex"](scs, tmp_path):
        assert "crash" not in res, res
        o = check(tmp_path / res["name"])
        assert o.disagreements == [], (res["name"], json.dumps(o.disagreements, indent=1)[:3000])
        checked += o.calls_checked
        compactions += o.compactions
    assert checked >= 20 and compactions >= 4
