"""A repair of a damaged pi session is one the real pi resumes as predicted.

`tests/peers/pi_resume/repair_probe.py` repairs every damaged copy of the type probe (the pi peer
corpus's `normal.jsonl` with a damaged entry and a clean one under it, or one of its own lines
damaged, 120 ways) and has the pinned pi (0.73.1) resume each repaired file in one process: its
whole first request must be what `inspector context --json` predicts (every message's role, text
and tool call ids, in order), or pi must send nothing where `analyze` says it stops. Here: every
probe repaired with `compact`, and with `recover` the ones that once failed. `python -m
tests.peers.pi_resume.repair_probe --as-written` runs both strategies on every probe, and the
damaged copies themselves.

Before: a session whose errored (or aborted) reply pi-ai cannot convert (content null, a block
null) was still said to make pi send nothing (`request_fails`) once a `recover` checkpoint had
taken that reply out of the request (the kept entry after it): the rule counted a reply dropped for
its stop reason as converted wherever it sat on the path. pi converts only what its context holds
after the compaction (`buildSessionContext`, pi-coding-agent dist/core/session-manager.js:162-195),
and resumed the repaired copy; now a reply a checkpoint took out is not counted.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.formats import load
from tests.peers import repair_campaign
from tests.peers.pi_resume import repair_probe, type_probe
from tests.test_pi_line_rule import NOT_MIRRORED as LINE_RULE
from tests.test_pi_line_rule import _need_pi

# Where the repaired session is not sent as predicted, by design.
NOT_MIRRORED = {
    **{k: LINE_RULE[k] for k in ("reply call id a number", "reply call without id", "result content a string", "branch_summary a number")},
    # A result whose text block's text is a number: pi-ai joins it into the result's text ("5");
    # inspector reads the block without it (`fields.PI` types it a string), as for a branch summary.
    "result text a number": "a typed field of another type is set aside",
}
# Damaged copies whose request differs as written only (a repair's checkpoint replaces what differs;
# `--as-written`): a result's call id a number (as "reply call id a number"), and a compaction summary
# that is no string (pi writes its JavaScript string, "5", "null", "undefined").
AS_WRITTEN = ("result toolCallId a number", "compaction appended, summary a number", "compaction appended, summary missing",
              "base compaction summary a number", "base compaction summary null", "base compaction summary missing")
CONVERTED_OUT = ("errored reply content null", "aborted reply block null")


def _index(name: str) -> int:
    return repair_probe.NAMES.index(name)


def test_a_reply_a_checkpoint_took_out_does_not_stop_pi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No runtime needed: once `recover` keeps only the entry after an errored reply pi-ai cannot
    convert, the repaired session is no longer said to make pi send nothing (pi resumes it)."""
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    files = type_probe.write_probes(tmp_path / "probes", tmp_path / "ws")
    for name in CONVERTED_OUT:
        f = tmp_path / f"{_index(name)}.recover.jsonl"
        shutil.copyfile(files[_index(name)], f)
        assert [x.code for x in analyze(load(str(f))).findings if x.code == "request_fails"] == ["request_fails"], name
        code, _, err = repair_campaign.inspector(["repair", str(f), "--strategy", "recover", *repair_probe.STRATEGIES["recover"], "--write"])
        assert code == 0, err
        report = analyze(load(str(f)))
        assert not any(x.code == "request_fails" for x in report.findings), name
        assert [report.ledger.records[it.seq].id for it in report.context if it.kind == "message"] == [f"pc{_index(name):03d}"], name


def test_every_repaired_damaged_session_is_what_pi_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _need_pi()
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    files = type_probe.write_probes(tmp_path / "probes", tmp_path / "resume" / "run" / "ws")
    picked = {i: ["compact"] for i in range(len(files))}
    for name in CONVERTED_OUT:
        picked[_index(name)] = ["compact", "recover"]
    written, skipped = repair_campaign.repair_all(files, repair_probe.NAMES, tmp_path / "repaired", repair_probe.STRATEGIES, picked)
    # Not written: a noop plan (nothing to summarize after a damaged line the reader cannot place),
    # or a refusal naming why (pi cannot open the session whatever is appended, or a compaction
    # would keep the entry it stops on).
    assert all(": plan noop" in x or "pi cannot open this session" in x for x in skipped), skipped
    assert len(written) >= 95, (len(written), skipped)
    rows = repair_probe.check(written, tmp_path / "resume")
    named, unexpected = repair_campaign.not_mirrored(rows, list(NOT_MIRRORED))
    assert not unexpected, unexpected
    assert set(named) == set(NOT_MIRRORED), rows
