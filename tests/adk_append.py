"""Append events to an ADK session store with the real google-adk's own session service (run
under the ADK venv; issue 17.1's follow tests).

    .adk-venv/bin/python tests/adk_append.py DB BACKEND APP USER SESSION

BACKEND: sqlite (`SqliteSessionService`) or v1 (`DatabaseSessionService` over aiosqlite). The
session is created when missing. Each line on stdin is a JSON list of events (`Event` fields);
they are appended with `append_event`, then "ok" is printed. No network is used.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

from google.adk.events.event import Event  # noqa: E402
from google.adk.sessions.database_session_service import DatabaseSessionService  # noqa: E402
from google.adk.sessions.sqlite_session_service import SqliteSessionService  # noqa: E402


async def main(path: str, backend: str, app: str, user: str, sid: str) -> None:
    svc = SqliteSessionService(path) if backend == "sqlite" else DatabaseSessionService(f"sqlite+aiosqlite:///{path}")
    if await svc.get_session(app_name=app, user_id=user, session_id=sid) is None:
        await svc.create_session(app_name=app, user_id=user, session_id=sid)
    print("ok", flush=True)
    for line in sys.stdin:
        for e in json.loads(line):
            session = await svc.get_session(app_name=app, user_id=user, session_id=sid)
            assert session is not None
            await svc.append_event(session, Event.model_validate(e))
        print("ok", flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
