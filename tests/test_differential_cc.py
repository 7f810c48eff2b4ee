"""Differential testing against the real Claude Code 2.1.328 (issue 16): for every request it
sent on generated scenarios, our next request on the transcript as it stood (the records in
order, roles, tool-call ids, texts) and our holes; for every summarizer request, what the
checkpoint it made represents by its own call.

Every regression fixture tests/differential/fixtures/cc-* (a scenario that once disagreed, with the
transcript the CLI wrote, its bulky request records cut, and every request it sent) must now agree;
a few fixed seeds are run live through the CLI. A campaign:
`python -m tests.differential --runtime claude_code --scenarios 30 --seed 7`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.differential import campaign, cc_driver
from tests.differential.check_cc import check

FIXTURES = sorted(p for p in campaign.FIXTURES.glob("cc-*") if (p / "session.jsonl").exists())


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_fixture_agrees_with_what_claude_code_did(fixture: Path) -> None:
    outcome = check(fixture)
    recorded = json.loads((fixture / "disagreements.json").read_text())
    assert outcome.calls_checked > 0
    if not recorded or any(d.get("what") != "next_request" for d in recorded):  # (but one kept for a main request)
        assert outcome.compactions > 0
    assert outcome.disagreements == [], json.dumps(outcome.disagreements, indent=1)[:3000]


# Seeds covering an auto-compaction mid tool loop at a turn's first round (and before a new prompt),
# a /compact after a turn --max-turns stopped, parallel calls and failing commands.
LIVE = [("claude_code", 3, i) for i in (4, 6, 18)]


def test_fixed_seeds_against_the_real_claude_code(tmp_path: Path) -> None:
    if why := cc_driver.available():
        pytest.fail(f"Claude Code cannot run, so nothing is checked against it: {why}", pytrace=False)
    scs = [cc_driver.scenario(seed, i) for _, seed, i in LIVE]
    checked = compactions = 0
    for res in campaign.run_claude_code(scs, tmp_path):
        assert "crash" not in res, res
        o = check(tmp_path / res["name"])
        assert o.disagreements == [], (res["name"], json.dumps(o.disagreements, indent=1)[:3000])
        checked += o.calls_checked
        compactions += o.compactions
    assert checked >= 8 and compactions >= 3


def test_a_refused_summarizer_request_is_no_compaction() -> None:
    """Claude Code refused by its summarizer (HTTP 400) twelve times: an auto-compaction's attempts
    all fail, then a `/compact` succeeds on its fifth try. Only that one made a checkpoint; the
    refused requests are not compared with a boundary written after a later request."""
    fixture = campaign.FIXTURES / "cc-summarizer-refused-12-times"
    reqs = [json.loads(x) for x in (fixture / "requests.jsonl").read_text().splitlines()]
    assert sum(1 for r in reqs if r.get("summarizer_failed") == "http_400") == 12
    outcome = check(fixture)
    assert (outcome.compactions, outcome.disagreements) == (1, [])
