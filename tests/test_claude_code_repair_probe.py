"""A repair of a damaged Claude Code session is one the real Claude Code resumes as predicted.

`tests/peers/claude_code_resume/repair_probe.py` repairs every damaged copy of the type probe (the
peer corpus's `manual_compact.jsonl` with a damaged line and a clean one under it, 70-odd ways)
and has the pinned Claude Code (2.1.328) resume each repaired file: its first request must be
exactly what `inspector context --json` predicts (every item in order, our summary first, the new
prompt, no orphaned result or unanswered call). Here: every probe repaired with `compact` (every
other one in the test command, all with INSPECTOR_FULL_PROBES: tests/scope.py), and with `recover`
the ones that once failed. `python -m tests.peers.claude_code_resume.repair_probe
--as-written` runs every strategy on every probe, and the damaged copies themselves.

Before: a session whose last reply makes a call no result answers, with a user line after it
(Claude Code leaves such a reply out), could not be repaired: the retained tail began at that
reply, and the written file, read again, no longer left it out (the rule looked only after the
newest checkpoint, not at the messages it keeps), so the verification took the write back ("not
what the plan promised"); `--out` wrote it unverified. Now the messages a boundary keeps are read
as sent, as Claude Code sends them after the summary.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.formats import load
from tests.peers.claude_code_resume import repair_probe, type_probe
from tests.scope import probe_cases
from tests.test_claude_code_line_rule import NOT_MIRRORED, _need_claude_code

# The probes whose reply makes a call no result answers, a user line after it.
UNANSWERED = ("reply call, clean, unanswered", "reply call input a string", "reply call without a name")


def _index(name: str) -> int:
    return next(i for i, p in enumerate(type_probe.PROBES) if p.name == name)


def test_a_reply_claude_code_leaves_out_stays_out_when_a_repair_keeps_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No runtime needed: the repaired file reads as the plan promised (the reply still left out)."""
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    files = type_probe.write_probes(tmp_path)
    for name in UNANSWERED:
        f = files[_index(name)]
        for strategy in ("compact", "recover"):
            copy = tmp_path / f"{f.stem}.{strategy}.jsonl"
            shutil.copyfile(f, copy)
            args = ["--strategy", strategy, *repair_probe.STRATEGIES[strategy], "--write"]
            code, _, err = repair_probe._inspector(["repair", str(copy), *args])
            assert code == 0, err  # (before: "the written session is not what the plan promised")
            report = analyze(load(str(copy)))
            assert not any(it.unanswered for it in report.context), (name, strategy)
            reply = next(r for r in report.ledger.records if r.kind == "message" and r.role == "assistant" and "toolu_probe" in r.call_ids)
            assert reply.never_sent, (name, strategy)


def test_every_repaired_damaged_session_is_what_claude_code_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _need_claude_code(type_probe.BASE)
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "probes").mkdir()
    files = type_probe.write_probes(tmp_path / "probes")
    every = range(len(files))
    picked = {i: ["compact"] for i in probe_cases(every, [i for i in every if i % 2 == 0])}  # (tests/scope.py)
    for name in UNANSWERED:
        picked[_index(name)] = ["compact", "recover"]
    (tmp_path / "repaired").mkdir()
    written, skipped = repair_probe.repair_all(files, tmp_path / "repaired", [], picked)
    # Refused, nothing written: only sessions whose parent links do not walk (a line without a uuid).
    assert all("parent links do not walk" in line for line in skipped), skipped
    assert len(written) >= len(picked) - 3 + len(UNANSWERED)
    rows = repair_probe.check(written, tmp_path)
    differ = {label.rsplit(" [", 1)[0]: why for label, why in rows if why is not None}
    unexpected = {name: why for name, why in differ.items() if name not in NOT_MIRRORED}
    assert not unexpected, unexpected
    assert set(differ) == set(NOT_MIRRORED), differ


def test_a_copy_that_is_not_what_the_plan_promised_is_not_left_to_resume_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`repair --out` reads its copy back against the plan's promise, as `--write` does: before, it
    wrote the probe's copy (an unanswered call the plan did not promise) and exited 0. A broken
    promise (forced here) removes a copy that made a new file, names it for one that replaced a file
    the user named, and exits 2; the session is untouched."""
    import inspector.compaction.plan as plan_module

    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(plan_module, "broken_promises", lambda promised, actual: ["unanswered tool calls: 1, promised 0"])
    f = type_probe.write_probes(tmp_path)[_index(UNANSWERED[0])]
    before = f.read_bytes()
    args = ["--strategy", "compact", *repair_probe.STRATEGIES["compact"]]
    new = tmp_path / "new-copy.jsonl"
    code, _, err = repair_probe._inspector(["repair", str(f), *args, "--out", str(new)])
    assert code == 2 and "not what the plan promised (unanswered tool calls: 1, promised 0)" in err and "removed again" in err, err
    assert not new.exists() and f.read_bytes() == before
    mine = tmp_path / "mine.jsonl"
    mine.write_text("old\n")
    code, _, err = repair_probe._inspector(["repair", str(f), *args, "--out", str(mine)])
    assert code == 2 and "do not resume from it" in err, err
    assert f.read_bytes() == before
