"""Two ADK rules read in google-adk 2.13's source and confirmed by the real ADK
(tests/test_adk_repair_probe.py, probes "no timestamp" and "isolation_scope a string"); here
without the runtime, on copies of the ADK peer corpus's `token_threshold.db` (it holds compactions)
with rows added after its last event.

- An event whose JSON has no `timestamp` (SqliteSessionService): ADK's `Event` stamps it with the
  time it loads the session (events/event.py:153), so it lies in no compaction range and, the
  session holding a compaction, is sent after every other event (flows/llm_flows/context/
  _compaction.py:138-144). Before, inspector sent it at its timestamp column's place.
- An isolation scope no `finish_task` result closed and no abort sealed: the runner stamps the
  user's next message with it (runners.py:94-151, 727-734) and the unscoped agent leaves it out
  (flows/llm_flows/context/_contents.py:377-379). Before, inspector said nothing of it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.formats import load
from tests.conftest import need_shared
from tests.peers.adk_resume import type_probe as tp


def _store(tmp: Path, *events: dict[str, Any], columns: list[float] | None = None) -> Path:
    """BASE with EVENTS appended (each at its JSON timestamp's column time, or COLUMNS')."""
    need_shared(tp.BASE)
    f = tmp / "s.db"
    shutil.copyfile(tp.BASE, f)
    os.chmod(f, 0o644)
    with sqlite3.connect(f) as con:
        for k, o in enumerate(events):
            ts = columns[k] if columns is not None else o["timestamp"]
            tp._insert(con, json.dumps(o).encode(), ts, o["id"], o["invocation_id"])
    return f


def _user(text: str, eid: str, ts: float, **more: Any) -> dict[str, Any]:
    o = tp._user(text, 0)
    o.update(id=eid, invocation_id=f"inv-{eid}", timestamp=ts, **more)
    return o


def _sent_texts(f: Path) -> list[str]:
    led = load(str(f))
    rep = analyze(led)
    out = []
    for it in rep.context:
        r = led.records[it.seq] if it.seq is not None else None
        m = r.message if r is not None else None
        out.append(m.text() if m is not None else it.kind)
    return out


def _structure(f: Path, problem: str) -> list[Any]:
    return [x for x in analyze(load(str(f))).findings if x.code == "file_structure" and x.data.get("problem") == problem]


def test_an_event_without_a_timestamp_is_sent_after_every_other(tmp_path: Path) -> None:
    d = _user("UNTIMED", "d", tp.LAST_TS + 10)
    del d["timestamp"]
    c = _user("AFTER", "c", tp.LAST_TS + 20)
    f = _store(tmp_path, d, c, columns=[tp.LAST_TS + 10, tp.LAST_TS + 20])
    assert _sent_texts(f)[-2:] == ["AFTER", "UNTIMED"]
    led = load(str(f))
    assert (led.header or {})["stamped_at_load"] == [len(led.records) - 2]
    (x,) = _structure(f, "stamped_at_load")
    assert x.severity == "warning" and "events/event.py:153" in x.message


def test_an_event_without_a_timestamp_lies_in_no_compaction_range(tmp_path: Path) -> None:
    """Its column time inside the last compaction's range: ADK reads it at load time, outside it."""
    d = _user("UNTIMED", "d", 0.0)
    del d["timestamp"]
    f = _store(tmp_path, d, columns=[1767225700.0])  # (S1 runs 1767225630.125 .. 1767225815.125)
    led = load(str(f))
    rep = analyze(led)
    seq = next(r.seq for r in led.records if r.id == "d")
    assert rep.states[seq] != "hole" and _sent_texts(f)[-1] == "UNTIMED"


def test_an_event_with_a_timestamp_keeps_its_place(tmp_path: Path) -> None:
    """The control: the same rows with a JSON timestamp are sent in their order."""
    f = _store(tmp_path, _user("TIMED", "d", tp.LAST_TS + 10), _user("AFTER", "c", tp.LAST_TS + 20))
    assert _sent_texts(f)[-2:] == ["TIMED", "AFTER"]
    assert "stamped_at_load" not in (load(str(f)).header or {}) and not _structure(f, "stamped_at_load")


def _finish(scope: str, eid: str, ts: float, result: str) -> dict[str, Any]:
    o = _user("", eid, ts, isolation_scope=scope)
    o["author"] = tp.AGENT
    o["content"] = {"role": "user", "parts": [{"function_response": {"id": "fc-1", "name": "finish_task", "response": {"result": result}}}]}
    return o


@pytest.mark.parametrize(
    ("later", "scoped"),
    [
        ([], True),  # a task in progress: the next message is the task's
        ([_finish("task-1", "f", tp.LAST_TS + 15, "Task completed.")], False),  # finished
        ([_finish("task-1", "f", tp.LAST_TS + 15, "Task failed.")], False),  # finished too
        ([_finish("task-1", "f", tp.LAST_TS + 15, "try again")], True),  # not a final result: still in progress
        ([{**_user("", "a", tp.LAST_TS + 15), "invocation_id": "inv-d", "error_code": "INVOCATION_ABORTED"}], False),  # aborted
        ([{**_user("", "a", tp.LAST_TS + 15), "invocation_id": "inv-x", "error_code": "INVOCATION_ABORTED"}], True),  # another's abort
    ],
)
def test_a_task_in_progress_takes_the_next_message(tmp_path: Path, later: list[dict[str, Any]], scoped: bool) -> None:
    d = _user("SCOPED", "d", tp.LAST_TS + 10, isolation_scope="task-1")
    f = _store(tmp_path, d, *later, _user("AFTER", "c", tp.LAST_TS + 20))
    found = _structure(f, "next_message_scoped")
    assert bool(found) == scoped, found
    assert (load(str(f)).header or {}).get("next_message_scoped") == ("task-1" if scoped else None)
    if scoped:
        assert "'task-1'" in found[0].message and "runners.py:94-151" in found[0].message
    assert "SCOPED" not in _sent_texts(f)  # (a scoped event is never the unscoped agent's, either way)
