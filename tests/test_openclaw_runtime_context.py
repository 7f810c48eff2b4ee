"""OpenClaw's stored runtime-context messages are never sent.

OpenClaw before 2026.9 wrote a `custom_message` entry of customType "openclaw.runtime-context" after
each user message (the sender's metadata, a heartbeat's instructions: "OpenClaw runtime context for
the immediately preceding user message..."); `openclaw doctor --fix` imports such transcripts into the
2026.9.6 store as they are. At send time OpenClaw keeps only the runtime-context messages right before
the last user message (`stripHistoricalRuntimeContextCustomMessages`, openclaw 2026.9.6
dist/internal-runtime-context-BH-o1oq1.mjs:202-221, from `normalizeMessagesForLlmBoundary`,
dist/builtin-openclaw-q1hiFm14.mjs:5914-5920), and that is the prompt being sent: every stored one is
left out, one at the very end of the path too (the real OpenClaw, below). Found on real sessions
(sirdeuce/nucbox-backup, `.openclaw/agents/main/sessions/*.jsonl`, imported and resumed): inspector
sent each as a user message, OpenClaw none.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import EXCLUDED, LIVE
from inspector.formats import load, openclaw_sqlite
from inspector.live.incremental import GROWN, Follower
from tests.peers.openclaw.resume import NotInstalled, resume
from tests.peers.openclaw.type_probe import BASE, LEAF, LEAF_SEQ
from tests.scope import probe_cases
from tests.test_incremental_stores import as_json, full_json
from tests.test_openclaw import sent_as_predicted
from tests.test_openclaw_accepts import _first_agent_request
from tests.test_openclaw_failed_turns import WHEN, answer, append, seq_of, store, user

CONTEXT = "OpenClaw runtime context for the immediately preceding user message.\nSender: RC-MARK"


def runtime_context(eid: str, parent: str, custom_type: str = "openclaw.runtime-context") -> dict[str, Any]:
    """A runtime-context entry as OpenClaw 2026.4 wrote one (real sessions' shape)."""
    return {"type": "custom_message", "customType": custom_type, "content": CONTEXT, "display": False,
            "details": {"source": "openclaw-runtime-context"}, "id": eid, "parentId": parent, "timestamp": WHEN}  # fmt: skip


def as_message(eid: str, parent: str) -> dict[str, Any]:
    """The same context held by a message entry of role "custom"."""
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": WHEN,
            "message": {"role": "custom", "customType": "openclaw.runtime-context", "content": CONTEXT, "display": False,
                        "timestamp": 1796202000000}}  # fmt: skip


def _before_a_trailing_user(entry: Any) -> list[dict[str, Any]]:
    """An answered turn, the runtime context, and a user message left unanswered (OpenClaw merges it
    into the prompt: `mergeOrphanedTrailingUserPrompt`, builtin-openclaw-q1hiFm14.mjs:6982-6999)."""
    return [user("pp1", LEAF, "BEFORE"), answer("pa1", "pp1", [{"type": "text", "text": "an answer"}], "stop"),
            entry("pr2", "pa1"), user("pq1", "pr2", "AFTER")]  # fmt: skip


def _turn(tail: bool) -> list[dict[str, Any]]:
    rows = [user("pp1", LEAF, "BEFORE"), runtime_context("pr1", "pp1"), answer("pa1", "pr1", [{"type": "text", "text": "an answer"}], "stop")]
    return [*rows, runtime_context("pr2", "pa1")] if tail else rows


@pytest.mark.parametrize("tail", [False, True])
def test_stored_runtime_context_is_never_sent(tmp_path: Path, tail: bool) -> None:
    path = store(tmp_path, _turn(tail))
    report = analyze(load(str(path)))
    for eid in ("pr1", "pr2") if tail else ("pr1",):
        r = seq_of(report, eid)
        assert report.states[r] == EXCLUDED and report.ledger.records[r].never_sent, eid
    assert [it.record_id for it in report.context][-3:] == ["042beb07-13e6-4e35-9ebf-48982ea7781c", "pp1", "pa1"]
    assert not [f for f in report.findings if f.code in ("hole", "unanswered_tool_call", "orphan_tool_result")]


def test_a_message_entry_of_role_custom_holding_it_and_other_custom_messages(tmp_path: Path) -> None:
    """A message entry of role "custom" and that customType is left out as well; a custom message of
    another customType is sent (as a user message) as before; the index maps them as the whole parse."""
    rows = [user("pp1", LEAF, "BEFORE"), as_message("pm1", "pp1"), runtime_context("po1", "pm1", "other.context"),
            answer("pa1", "po1", [{"type": "text", "text": "an answer"}], "stop")]  # fmt: skip
    path = store(tmp_path, rows)
    report = analyze(load(str(path)))
    assert report.states[seq_of(report, "pm1")] == EXCLUDED
    assert report.states[seq_of(report, "po1")] == LIVE
    fast, whole = openclaw_sqlite.load(str(path), None, None), openclaw_sqlite.load(str(path), None, None, index=False)
    assert [(r.seq, r.never_sent) for r in fast.records] == [(r.seq, r.never_sent) for r in whole.records]


def test_the_follower_reads_appended_runtime_context_as_a_full_read_does(tmp_path: Path) -> None:
    path = tmp_path / "s1.sqlite"
    shutil.copyfile(BASE, path)
    fol = Follower(str(path))
    fol.poll()
    for k, row in enumerate([*_turn(True), user("pq1", "pr2", "AGAIN"), as_message("pm2", "pq1")]):
        append(path, [row], LEAF_SEQ + 1 + k)
        up = fol.poll()
        assert up is not None and up.whole == GROWN, row["id"]
        assert as_json(fol.report) == full_json(str(path)), row["id"]


def test_openclaw_resumes_a_store_holding_runtime_context_as_predicted(tmp_path: Path) -> None:
    """The real OpenClaw 2026.9.6 on the corpus store with a turn holding a runtime-context message
    after its user message and one more at the very end: it sends neither, as predicted; nor one
    right before a trailing user message, of either entry type (the trailing user message goes into
    the prompt's message, as predicted: `openclaw_turns`; those two under INSPECTOR_FULL_PROBES:
    tests/scope.py)."""
    path = store(tmp_path, _turn(True), "a.sqlite")
    report = analyze(load(str(path)))
    message = "[turn:r1] are you still there?"
    try:
        rc, reqs = resume(path, "s1", message, tmp_path / "scratch")
        kinds = probe_cases((("b", runtime_context), ("c", as_message)), ())  # (tests/scope.py)
        others = [resume(store(tmp_path, _before_a_trailing_user(e), f"{k}.sqlite"), "s1", message, tmp_path / f"scratch-{k}")
                  for k, e in kinds]  # fmt: skip
    except NotInstalled as e:
        pytest.fail(f"{e} (tests/install_runtimes.sh installs it): OpenClaw's reading cannot be checked", pytrace=False)
    assert rc == 0, (tmp_path / "scratch" / "openclaw.stderr.log").read_text()[-2000:]
    sent_as_predicted(_first_agent_request(reqs), report, message)
    assert "RC-MARK" not in repr(_first_agent_request(reqs))
    for (k, _), (rc_k, reqs_k) in zip(kinds, others, strict=True):
        assert rc_k == 0, k
        assert "RC-MARK" not in repr(_first_agent_request(reqs_k)), k
        sent_as_predicted(_first_agent_request(reqs_k), analyze(load(str(tmp_path / f"{k}.sqlite"))), message)
