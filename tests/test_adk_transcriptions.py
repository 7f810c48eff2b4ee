"""A live ADK session's speech: events without content whose input or output transcription has a
text (what `Runner.run_live` saves, runners.py:1754-1770). google-adk 2.13 sends each as a user
(model) turn of that text, joined with the transcriptions of the same kind right after it
(flows/llm_flows/context/_contents.py:569-605). Before, inspector read such an event as having no
message: a voice agent's whole conversation was missing from its next request.

Each case is the ADK peer corpus's `token_threshold.db` with events appended after its last one,
and the same session as a `model_dump()` JSON file, resumed for one turn by the real ADK
(tests/adk_resume.py); the contents it sends must be the ones inspector predicts, the joined texts
to the character.
"""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.formats import load
from tests.peers.adk_resume import type_probe as tp
from tests.peers.adk_resume.voice_corpus import CORPUS, IN, OUT, as_dump, spoken_session, store
from tests.peers.adk_resume.voice_corpus import said as _said
from tests.peers.adk_resume.voice_corpus import typed as _typed
from tests.test_adk_accepts import DRIVER, _job, adk_python, predicted_contents, resumed_as_predicted

__all__ = ["adk_python"]  # (the fixture, used by name)

CASES: dict[str, list[dict[str, Any]]] = {
    # Consecutive transcriptions of one kind: one turn each, their texts joined.
    "joined": [_said(IN, "hello ", "a", 1), _said(IN, "world", "b", 2), _said(OUT, "hi ", "c", 3, "assistant"), _said(OUT, "there", "d", 4, "assistant")],
    # Alternating: each its own turn.
    "alternating": [_said(IN, "q1", "a", 1), _said(OUT, "a1", "b", 2, "assistant"), _said(IN, "q2", "c", 3)],
    # The next event has content and a transcription: the text waits for the next turn sent.
    "waiting across content": [_said(IN, "a ", "a", 1), _typed("[typed]", "b", 2, input_transcription={"text": "x"}), _said(IN, "b", "c", 3)],
    # ... and is never sent when none follows.
    "waiting, none after": [_said(IN, "lost", "a", 1), _typed("[typed]", "b", 2, input_transcription={"text": "x"})],
    # Content wins over a transcription beside it.
    "content beside a transcription": [_typed("[typed]", "a", 1, output_transcription={"text": "spoken"})],
    # An empty transcription between two: it ends the first's turn (its text is empty), sent as nothing.
    "an empty one between": [_said(IN, "a", "a", 1), _said(IN, "", "b", 2), _said(IN, "b", "c", 3)],
    # Another agent's speech: the user-role context text, as its other events.
    "another agent's speech": [_said(OUT, "from the helper", "a", 1, "helper")],
    # Another agent's speech, joined, then presented as context.
    "another agent's joined speech": [
        _said(OUT, "from ", "a", 1, "helper"),
        _said(OUT, "the helper", "b", 2, "helper"),
        _typed("r", "c", 3, author="assistant", content={"role": "model", "parts": [{"text": "reply"}]}),
        _typed("next", "d", 4),
    ],
    # An event holding a transcription is never empty to ADK (`_contains_empty_content`): its content
    # is sent as it is, of thoughts only, of no parts, of empty text or without a role (ADK sends
    # none: inspector's item has its author's role, see `_predicted`); without a transcription,
    # a content of no role is not sent.
    "thoughts beside a transcription": [_said(OUT, "spoken", "a", 1, "assistant", {"role": "model", "parts": [{"text": "hmm", "thought": True}]}), _typed("next", "b", 2)],
    "thoughts beside an input transcription": [_said(IN, "spoken", "a", 1, "user", {"role": "user", "parts": [{"text": "hmm", "thought": True}]}), _typed("next", "b", 2)],
    "no role beside a transcription": [_said(OUT, "spoken", "a", 1, "assistant", {"parts": [{"text": "said"}]}), _typed("next", "b", 2)],
    "no parts beside a transcription": [_said(OUT, "spoken", "a", 1, "assistant", {"role": "model", "parts": []}), _typed("next", "b", 2)],
    "parts null beside a transcription": [_said(OUT, "spoken", "a", 1, "assistant", {"role": "model"}), _typed("next", "b", 2)],
    "empty content beside a transcription": [_said(IN, "spoken", "a", 1, "user", {}), _typed("next", "b", 2)],
    "empty text beside an empty transcription": [_said(OUT, "", "a", 1, "assistant", {"role": "model", "parts": [{"text": ""}]}), _typed("next", "b", 2)],
    "thoughts beside a transcription, from another agent": [_said(OUT, "spoken", "a", 1, "helper", {"role": "model", "parts": [{"text": "hmm", "thought": True}]}), _typed("next", "b", 2)],
    # ... and another agent's of thoughts only is left out (`_present_other_agent_message`: nothing left).
    "another agent's thoughts beside a transcription": [
        _said(OUT, "spoken", "a", 1, "helper", {"role": "model", "parts": [{"text": "hmm", "thought": True}]}),
        _typed("r", "c", 2, author="assistant", content={"role": "model", "parts": [{"text": "reply"}]}),
        _typed("next", "b", 3),
    ],
    # ... and another agent's of no parts is sent as it is, not presented (`_present_other_agent_message`).
    "another agent's no parts beside a transcription": [
        _said(OUT, "spoken", "a", 1, "helper", {"role": "model", "parts": []}),
        _typed("r", "c", 2, author="assistant", content={"role": "model", "parts": [{"text": "reply"}]}),
        _typed("next", "b", 3),
    ],
    # Another agent's event with nothing to present (blank text; a call marked a thought; a part
    # of nothing ADK relays) is left out.
    "another agent's blank text": [
        _typed("q", "x", 1, author="helper", content={"role": "model", "parts": [{"text": "  "}]}),
        _typed("r", "c", 2, author="assistant", content={"role": "model", "parts": [{"text": "reply"}]}),
        _typed("next", "b", 3),
    ],
    "another agent's part of no content ADK relays": [
        _typed("q", "x", 1, author="helper", content={"role": "model", "parts": [{"text": "x"}, {"video_metadata": {"fps": 1}}]}),
        _typed("q", "y", 2, author="helper", content={"role": "model", "parts": [{"video_metadata": {"fps": 1}, "text": ""}]}),
        _typed("r", "c", 3, author="assistant", content={"role": "model", "parts": [{"text": "reply"}]}),
        _typed("next", "b", 4),
    ],
    # Without a transcription, a part is visible to ADK as `_is_part_invisible` says: an empty one, one
    # of nothing it sends and a thought's data are not; a file and a thought signature are.
    **{
        f"a part of {what}": [_typed("x", "a", 1, author="assistant", content={"role": "model", "parts": [part]}), _typed("next", "b", 2)]
        for what, part in {
            "nothing": {},
            "video metadata only": {"video_metadata": {"fps": 1}},
            "a thought's image": {"inline_data": {"mime_type": "image/png", "data": "AAAA"}, "thought": True},
            "a file": {"file_data": {"file_uri": "gs://x", "mime_type": "text/plain"}},
            "a thought signature and empty text": {"text": "", "thought_signature": "AAAA"},
            "a server-side tool call marked a thought": {"tool_call": {"id": "t1"}, "thought": True},
        }.items()
    },
    "no role, no transcription": [_typed("x", "a", 1, content={"parts": [{"text": "said"}]}), _typed("next", "b", 2)],
}


def _predicted(f: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    """The contents inspector's next request says ADK sends, a joined turn as its own text."""
    rep = analyze(load(str(f)))
    items = [{"seq": it.seq, "kind": it.kind, "role": it.role, "tool_call_ids": list(it.tool_call_ids)} for it in rep.context]
    out = predicted_contents(f, items)
    for k, it in enumerate(rep.context):
        if it.kind == "message" and out[k][1] != [{"other_agent": ["helper"]}] and not _stored_role(f, rep.ledger.records[it.seq].id):
            out[k] = (None, out[k][1])  # type: ignore[assignment]  # (sent as stored: without a role)
        if it.kind == "message" and it.text and out[k][1] != [{"other_agent": ["helper"]}]:
            out[k] = (out[k][0], [{"text": it.text}])
    return out


def _stored_role(f: Path, event_id: str | None) -> Any:
    """The role of the content event EVENT_ID of F stores ("user" where it has no content: a
    transcription ADK sends as a turn of the role it gives it; None: a content without one)."""
    if f.suffix == ".json":
        o = next(e for e in json.loads(f.read_bytes())["events"] if e.get("id") == event_id)
    else:
        with contextlib.closing(sqlite3.connect(f"file:{f}?mode=ro", uri=True)) as con:
            (data,) = con.execute("SELECT event_data FROM events WHERE id = ?", (event_id,)).fetchone()
        o = json.loads(data)
    content = o.get("content")
    return content.get("role") if isinstance(content, dict) else "user" if content is None else None


def test_the_real_adk_sends_a_live_sessions_transcriptions_as_predicted(adk_python: str, tmp_path: Path) -> None:
    files: dict[str, tuple[Path, str]] = {}
    for k, (name, events) in enumerate(CASES.items()):
        (tmp_path / f"case{k}").mkdir()
        db = store(tmp_path / f"case{k}", *events)
        files[f"{name} (json)"] = (as_dump(db), "json")
        files[name] = (db, "sqlite")
    for name in ("voice.db", "voice.json"):  # (the fuzz campaigns' voice seeds, as committed)
        (tmp_path / name).write_bytes((CORPUS / name).read_bytes())
        files[f"corpus {name}"] = (tmp_path / name, "json" if name.endswith(".json") else "sqlite")
    for seed in range(3):  # (and random voice sessions: 60 of them agreed when this was written)
        (tmp_path / f"voice{seed}").mkdir()
        files[f"voice {seed}"] = (store(tmp_path / f"voice{seed}", *spoken_session(random.Random(seed), 50)), "sqlite")
    want = {name: _predicted(f) for name, (f, _) in files.items()}  # (before ADK appends its turn to each)
    jobs = [_job(name, f, backend) for name, (f, backend) in files.items()]
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    r = subprocess.run([adk_python, str(DRIVER), str(tmp_path / "jobs.json"), str(tmp_path / "out.json")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads((tmp_path / "out.json").read_text())
    wrong = {name: p for name in files if (p := resumed_as_predicted(got[name], want[name])) is not None}
    assert not wrong, json.dumps(wrong, indent=1, default=str)[:6000]
    # The joined texts, as ADK sent them.
    tail = [c["parts"][0].get("text") for c in got["joined"][-3:-1]]
    assert tail == ["hello world", "hi there"]
    assert [c["parts"][0].get("text") for c in got["waiting across content"][-3:-1]] == ["[typed]", "a b"]
    assert "lost" not in json.dumps(got["waiting, none after"])
    # Another agent's joined speech: ADK presents the joined text; inspector's item is that text.
    (presented,) = [c for c in got["another agent's joined speech"] if any("[helper] said" in (p.get("text") or "") for p in c["parts"])]
    assert any("from the helper" in (p.get("text") or "") for p in presented["parts"])
    f = files["another agent's joined speech"][0]
    (item,) = [it for it in analyze(load(str(f))).context if it.note and "transcriptions of 2 events" in it.note]
    assert (item.role, item.text) == ("user", "from the helper")


@pytest.fixture(autouse=True)
def _shared() -> None:
    from tests.conftest import need_shared

    need_shared(tp.BASE)


@pytest.mark.parametrize("seed", range(4))
def test_a_voice_session_followed_as_it_grows_reads_as_a_full_read(seed: int, tmp_path: Path) -> None:
    """Followed live (the report extended append by append, `incremental.extend_adk`), a voice
    session must read as a full read of it: a turn joins the speech before it, so the turn in
    progress is never cut at or after one."""
    from tests.test_incremental_stores import grow_and_compare

    rng = random.Random(seed)
    (tmp_path / "src").mkdir()
    src = store(tmp_path / "src", *spoken_session(rng, 40))
    joined = sum(1 for it in analyze(load(str(src))).context if it.note and "transcriptions" in it.note)
    assert joined >= 1
    (tmp_path / "grow").mkdir()
    batches, _grown = grow_and_compare(str(src), str(tmp_path / "grow"), rng)
    assert batches >= 1
