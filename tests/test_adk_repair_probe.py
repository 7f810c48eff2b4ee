"""A repair of a damaged ADK session is one the real google-adk 2.13 resumes as predicted.

`tests/peers/adk_resume/repair_probe.py` repairs every damaged copy of the type probe (the ADK peer
corpus's `token_threshold.db` with a damaged event and a clean one after it, or its last compaction
damaged, 179 ways) and has the real ADK open each repaired store with its SqliteSessionService and
run one turn: the contents of its first request must be exactly what `inspector context --json`
predicts, then the judge's message (`resumed_as_predicted` of tests/test_adk_accepts.py), or ADK
must refuse the store where `analyze` says it does. Here: every probe repaired with `compact` (a
store ADK refuses whatever is inserted is refused by the repair, naming why), and with `recover`
the one that once failed. `python -m tests.peers.adk_resume.repair_probe --as-written` runs both
strategies on every probe, and the damaged copies themselves.

Before: an event without an author (read as "") was taken for the agent that runs next (`next_agent`
''), so the prediction sent it as the user's own text; ADK's agent names are identifiers
(agents/base_agent.py:728) and its router passes over an event of an agent it does not know
(agents/_agent_router.py:253-260): the root agent runs and sends that event as another agent's
("For context: [] said: ..."). Now an author that is no identifier names no agent.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.formats import load
from tests.conftest import need_shared
from tests.peers import repair_campaign
from tests.peers.adk_resume import repair_probe, type_probe
from tests.test_adk_line_rule import NOT_MIRRORED as LINE_RULE

# Where the repaired store is not sent as predicted: by design, or found by this campaign and left
# open (each with what ADK does).
NOT_MIRRORED = {
    **LINE_RULE,
    # ADK sends a content's role as it is written; inspector reads a role it does not know as the
    # user's (as for Codex's "a made-up role").
    "role made up": "a made-up role sent as written",
    # As written only (`--as-written`; a repair's checkpoint takes its place): the base's compaction
    # content with a null role, sent by ADK with no role; inspector sends the summary as the model's.
    "compaction summary role null": "a compaction content's null role sent as written",
}


def _index(name: str) -> int:
    return repair_probe.NAMES.index(name)


def test_an_event_of_no_agent_name_does_not_choose_the_next_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No runtime needed: with an event without an author last but the user's, the next agent is
    the one before it (ADK's root here), and that event is sent as another agent's context."""
    need_shared(type_probe.BASE)
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "probes").mkdir()
    f = type_probe.write_probes(tmp_path / "probes")[_index("no author")]
    for strategy in ("as written", "compact"):
        g = tmp_path / f"{strategy}.db"
        shutil.copyfile(f, g)
        os.chmod(g, 0o644)
        if strategy != "as written":
            code, _, err = repair_campaign.inspector(["repair", str(g), "--strategy", strategy, *repair_probe.STRATEGIES[strategy], "--write"])
            assert code == 0, err
        led = load(str(g))
        assert (led.header or {}).get("next_agent") == type_probe.AGENT, strategy
        report = analyze(led)
        d = next(it for it in report.context if it.seq is not None and "PROBE-009" in str(led.records[it.seq].message and led.records[it.seq].message.text()))
        assert d.role == "user" and d.text == "", (strategy, d)  # converted: another agent's event, as context


def test_every_repaired_damaged_session_is_what_adk_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_shared(type_probe.BASE)
    why = type_probe.need_adk()
    if why is not None:
        pytest.fail(f"the real ADK cannot be run, so its reading cannot be checked: {why}", pytrace=False)
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "probes").mkdir()
    files = type_probe.write_probes(tmp_path / "probes")
    picked = {i: ["compact"] for i in range(len(files))}
    picked[_index("no author")] = ["compact", "recover"]
    written, skipped = repair_campaign.repair_all(files, repair_probe.NAMES, tmp_path / "repaired", repair_probe.STRATEGIES, picked)
    # Not written: a store ADK refuses to open whatever is inserted (the repair says so), a noop
    # plan, and a row whose timestamp column is text (refused before writing, naming the event).
    others = [x for x in skipped if "ADK refuses to load this session whatever is inserted" not in x and ": plan noop" not in x]
    assert all(x.startswith("column timestamp a string [") and "its timestamp column is 'later'" in x for x in others), others
    assert not any("not what the plan promised" in x for x in skipped), skipped
    assert len(written) >= 80, (len(written), len(skipped))
    rows = repair_probe.check(written, tmp_path / "resume")
    named, unexpected = repair_campaign.not_mirrored(rows, list(NOT_MIRRORED))
    assert not unexpected, unexpected
    assert "role made up" in named, named  # (the compaction's null role shows only as written)


def test_a_store_whose_event_has_a_text_timestamp_is_refused_before_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No runtime needed. SQLite sorts a text timestamp after every number, and ADK reads the events
    ORDER BY timestamp (sqlite_session_service.py:348): a compaction inserted now would read back
    before that event. Before, the write happened, failed its verification ("not what the plan
    promised") and was taken back; now it is refused before anything is written, naming the event."""
    need_shared(type_probe.BASE)
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    f = type_probe.write_probes(tmp_path)[_index("column timestamp a string")]
    before = f.read_bytes()
    for strategy in ("compact", "recover"):
        args = ["--strategy", strategy, *repair_probe.STRATEGIES[strategy], "--write"]
        code, _, err = repair_campaign.inspector(["repair", str(f), *args])
        assert code == 2, (strategy, err)
        assert "its timestamp column is 'later', not a number: ADK orders it after" in err and "not what the plan promised" not in err, err
        assert f.read_bytes() == before
