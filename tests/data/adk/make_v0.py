"""Writes token_threshold.v0.db: the peer corpus's token_threshold session (a real google-adk 2.13
run) stored through ADK's own legacy v0 schema (google.adk.sessions.schemas.v0: `actions` as a
pickled EventActions, content and usage as JSON columns, timestamps as DATETIME).

Needs google-adk 2.13.0 and SQLAlchemy (see ../../../../shared/peers/adk/requirements.txt), which
the project itself does not depend on:

    .venv-adk/bin/python tests/data/adk/make_v0.py ../shared/peers/adk/corpus/token_threshold.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from google.adk.events.event import Event
from google.adk.sessions.schemas import v0
from google.adk.sessions.session import Session
from sqlalchemy import create_engine
from sqlalchemy.orm import Session as DbSession


def main(src: str) -> None:
    dump = json.loads(Path(src).read_text())
    session = Session.model_validate(dump)
    out = Path(__file__).with_name("token_threshold.v0.db")
    out.unlink(missing_ok=True)
    engine = create_engine(f"sqlite:///{out}")
    v0.Base.metadata.create_all(engine)
    with DbSession(engine) as db:
        db.add(v0.StorageSession(app_name=session.app_name, user_id=session.user_id, id=session.id, state={}))
        for e in session.events:
            db.add(v0.StorageEvent.from_event(session, Event.model_validate(e.model_dump())))
        db.commit()
    engine.dispose()
    print(out, len(session.events), "events")


if __name__ == "__main__":
    main(sys.argv[1])
