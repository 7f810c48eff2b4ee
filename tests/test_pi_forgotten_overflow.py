"""pi forgets an answer whose usage shows its request over the model's window (issue 16, seed 22).

pi takes such an answer (a "silent overflow", pi-ai utils/overflow.js:114-135) out of its running
messages to compact (agent-session.js:1397-1417); only a written compaction reads the messages
back from the file (:1544-1546). The session is the minimized fixture pi-s22-0000: the answer on
line 16 reported 8,659 input tokens under an 8,192 window, and its compaction failed.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspector.analysis import analyze
from inspector.analysis.engine import HOLE, LIVE, RETAINED
from inspector.analysis.incremental import extend_report
from inspector.formats import load

FIXTURE = Path(__file__).parent / "differential" / "fixtures" / "pi-s22-0000-overflow-forgotten" / "session.jsonl"
WINDOW = 8192
ANSWER_LINE = 16


def _lines() -> list[str]:
    return FIXTURE.read_text().splitlines(keepends=True)


def _write(tmp_path: Path, lines: list[str], name: str = "s.jsonl") -> str:
    p = tmp_path / name
    p.write_text("".join(lines))
    return str(p)


def _answer(led):  # the record of line 16
    return next(r for r in led.records if r.line == ANSWER_LINE)


def _sent(rep) -> set[int]:
    return {it.seq for it in rep.context if it.seq is not None}


def test_the_running_pi_no_longer_sends_an_answer_over_the_window(tmp_path: Path) -> None:
    led = load(_write(tmp_path, _lines()[:17]))  # up to the next question
    rep = analyze(led, window=WINDOW)
    answer = _answer(led)
    assert answer.seq not in _sent(rep)
    assert rep.states[answer.seq] == HOLE


def test_without_the_window_nothing_is_forgotten(tmp_path: Path) -> None:
    led = load(_write(tmp_path, _lines()[:17]))
    rep = analyze(led)
    assert _answer(led).seq in _sent(rep)
    assert rep.states[_answer(led).seq] == LIVE


def test_a_written_compaction_reads_it_back(tmp_path: Path) -> None:
    lines = _lines()[:16]
    answer, kept = json.loads(lines[15]), json.loads(lines[8])
    compaction = {
        "type": "compaction", "id": "c0ffee01", "parentId": answer["id"], "timestamp": answer["timestamp"],
        "summary": "The user asked for work on t00.", "firstKeptEntryId": kept["id"], "tokensBefore": 8659,
    }
    led = load(_write(tmp_path, [*lines, json.dumps(compaction) + "\n"]))
    rep = analyze(led, window=WINDOW)
    assert _answer(led).seq in _sent(rep)
    assert rep.states[_answer(led).seq] == RETAINED


def test_a_followed_session_forgets_it_as_a_full_analysis_does(tmp_path: Path) -> None:
    lines = _lines()
    old = analyze(load(_write(tmp_path, lines[:15], "old.jsonl")), window=WINDOW)
    grown = load(_write(tmp_path, lines[:17], "grown.jsonl"))
    rep = extend_report(old, grown, len(old.ledger.records), window=WINDOW)
    assert _sent(rep) == _sent(analyze(grown, window=WINDOW))
    assert _answer(grown).seq not in _sent(rep)


def test_a_pi_that_reads_the_file_afresh_sends_it_again(tmp_path: Path) -> None:
    # A resume (the hook's session_start) rebuilds the messages from the file, the answer with them.
    led = load(_write(tmp_path, _lines()[:17]))
    rep = analyze(led, window=WINDOW, reloaded=True)
    assert _answer(led).seq in _sent(rep)
