"""A live ADK session's speech, for the tests and the fuzz corpus.

`Runner.run_live` saves each finished transcription as an event without content (runners.py:
1754-1770). These helpers append such events (and typed turns, replies, events holding a
transcription beside their content) to a copy of the ADK peer corpus's `token_threshold.db`, and
spell a store's session as a `Session.model_dump()` JSON file.

    python -m tests.peers.adk_resume.voice_corpus

writes `corpus/voice.db` and `corpus/voice.json` next to this file (a voice session of 60 events
after the base's, seed 1): seeds of the fuzz campaigns (tests/fuzz/corpus.py), which damage them.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

from tests.peers.adk_resume import type_probe as tp

IN, OUT = "input_transcription", "output_transcription"
CORPUS = Path(__file__).resolve().parent / "corpus"


def store(folder: Path, *events: dict[str, Any]) -> Path:
    """The base (`type_probe.BASE`) with EVENTS appended, at their JSON timestamps, as `s.db` in FOLDER."""
    f = folder / "s.db"
    shutil.copyfile(tp.BASE, f)
    os.chmod(f, 0o644)
    with sqlite3.connect(f) as con:
        for o in events:
            tp._insert(con, json.dumps(o).encode(), o["timestamp"], o["id"], o["invocation_id"])
    return f


def typed(text: str, eid: str, k: int, **more: Any) -> dict[str, Any]:
    """A user's typed turn, K seconds after the base's last event."""
    o = tp._user(text, 0)
    o.update(id=eid, invocation_id=f"inv-{eid}", timestamp=tp.LAST_TS + k, **more)
    return o


def said(kind: str, text: Any, eid: str, k: int, author: str = "user", content: Any = None) -> dict[str, Any]:
    """An event of no content holding a finished transcription of KIND (IN or OUT)."""
    o = typed("unused", eid, k)
    o.update(author=author, content=content)
    o[kind] = {"text": text, "finished": True}
    return o


def spoken_session(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """N events of a voice session: speech of both kinds (some of no text), typed turns, some
    holding a transcription beside their content, and replies, in a random order."""
    out = []
    for k in range(1, n + 1):
        kind = rng.choice(("in", "in", "out", "out", "empty", "typed", "typed+", "reply"))
        eid = f"v{k}"
        if kind in ("in", "out"):
            out.append(said(IN if kind == "in" else OUT, f"{kind}{k} ", eid, k, "user" if kind == "in" else "assistant"))
        elif kind == "empty":
            out.append(said(rng.choice((IN, OUT)), "", eid, k))
        elif kind == "reply":
            o = typed(f"reply{k}", eid, k)
            o.update(author="assistant", content={"role": "model", "parts": [{"text": f"reply{k}"}]})
            out.append(o)
        else:
            more = {rng.choice((IN, OUT)): {"text": f"beside{k}"}} if kind == "typed+" else {}
            out.append(typed(f"typed{k}", eid, k, **more))
    return out


def as_dump(db: Path, out: Path | None = None) -> Path:
    """The session of store DB as a `Session.model_dump()` JSON file (ADK's JSON backend)."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT event_data FROM events ORDER BY timestamp, rowid").fetchall()
        app, user, sid, state, updated = con.execute("SELECT app_name, user_id, id, state, update_time FROM sessions").fetchone()
    f = out or db.with_suffix(".json")
    doc = {"id": sid, "app_name": app, "user_id": user, "state": json.loads(state or "{}"),
           "events": [json.loads(r[0]) for r in rows], "last_update_time": updated}  # fmt: skip
    f.write_text(json.dumps(doc), encoding="utf-8")
    return f


def main() -> int:
    import tempfile

    CORPUS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = store(Path(tmp), *spoken_session(random.Random(1), 60))
        shutil.copyfile(db, CORPUS / "voice.db")
    as_dump(CORPUS / "voice.db", CORPUS / "voice.json")
    print(f"wrote {CORPUS / 'voice.db'} and {CORPUS / 'voice.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
