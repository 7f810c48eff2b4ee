"""Resume repaired ADK sessions with the real google-adk 2.13 (run under the ADK venv; issue 14).

    .adk-venv/bin/python tests/adk_resume.py JOBS.json OUT.json

JOBS.json is a list of {"name", "path", "backend" (sqlite | v1 | json), "app", "user", "session",
"agent"}. For each job the session is opened with ADK's own session service
(`SqliteSessionService`, `DatabaseSessionService` over aiosqlite, or for a `model_dump()` file
ADK's `Session` model replayed into an `InMemorySessionService`), and one more turn is run through
a `Runner` whose root `LlmAgent` is the session's next agent. Only the model is scripted: it records
the first `LlmRequest.contents` ADK sends and answers "ok". OUT.json maps each job's name to those
contents (role; per part: text, function_call, function_response), or to {"error": ...} (with
"stage": "get_session" when ADK could not load the session at all: one event its `Event` model
refuses makes the whole session unreadable, `sessions/sqlite_session_service.py:368-371`). The App has
no compaction config: nothing but the stored events decides what ADK sends. No network is used.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import sys
import traceback
import warnings
from collections.abc import AsyncGenerator
from typing import Any

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

from google.adk.agents.llm_agent import LlmAgent  # noqa: E402
from google.adk.apps.app import App  # noqa: E402
from google.adk.events.event import Event  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions.database_session_service import DatabaseSessionService  # noqa: E402
from google.adk.sessions.in_memory_session_service import InMemorySessionService  # noqa: E402
from google.adk.sessions.session import Session  # noqa: E402
from google.adk.sessions.sqlite_session_service import SqliteSessionService  # noqa: E402
from google.genai import types  # noqa: E402

JUDGE_MESSAGE = "[judge] please continue."


def part_json(p: types.Part) -> dict[str, Any]:
    if p.function_call is not None:
        fc = p.function_call
        return {"function_call": {"id": fc.id, "name": fc.name, "args": fc.args}}
    if p.function_response is not None:
        fr = p.function_response
        return {"function_response": {"id": fr.id, "name": fr.name, "response": fr.response}}
    if p.text is not None:
        return {"text": p.text, "thought": bool(p.thought)}
    return {"other": p.model_dump(mode="json", exclude_none=True)}


class RecordingLlm(BaseLlm):
    """Records the first request it is sent; answers every request with "ok"."""

    seen: list[Any] = []

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        if not self.seen:
            self.seen.append([{"role": c.role, "parts": [part_json(p) for p in c.parts or []]} for c in llm_request.contents])
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))


async def _service(job: dict[str, Any]) -> Any:
    if job["backend"] == "sqlite":
        return SqliteSessionService(job["path"])
    if job["backend"] == "v1":
        return DatabaseSessionService(f"sqlite+aiosqlite:///{job['path']}")
    svc = InMemorySessionService()
    with open(job["path"], encoding="utf-8") as f:
        dump = Session.model_validate_json(f.read())
    s = await svc.create_session(app_name=dump.app_name, user_id=dump.user_id, session_id=dump.id, state=dump.state)
    for ev in dump.events:
        await svc.append_event(s, Event.model_validate(ev.model_dump()))
    return svc


async def _close(svc: Any) -> None:
    close = getattr(svc, "close", None)
    if close is not None:
        res = close()
        if inspect.isawaitable(res):
            await res
    engine = getattr(svc, "db_engine", None) or getattr(svc, "_db_engine", None)
    if engine is not None:
        await engine.dispose()


async def resume(job: dict[str, Any]) -> Any:
    llm = RecordingLlm(model="judge-fake", seen=[])
    agent = LlmAgent(name=job["agent"], model=llm, instruction="")
    app = App(name=job["app"], root_agent=agent)
    svc = await _service(job)
    try:
        try:  # (the Runner reads it again: this tells a session ADK cannot load from a run that fails)
            await svc.get_session(app_name=job["app"], user_id=job["user"], session_id=job["session"])
        except Exception as e:
            return {"error": f"{type(e).__name__}: {e}", "stage": "get_session"}
        runner = Runner(app=app, session_service=svc)
        msg = types.Content(role="user", parts=[types.Part(text=JUDGE_MESSAGE)])
        async for _ev in runner.run_async(user_id=job["user"], session_id=job["session"], new_message=msg):
            if llm.seen:
                break
    finally:
        await _close(svc)
    if not llm.seen:
        return {"error": "the runner made no model call"}
    return llm.seen[0]


async def main(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for job in jobs:
        try:
            out[job["name"]] = await resume(job)
        except Exception as e:  # reported per job: the test names it
            out[job["name"]] = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]}
    return out


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        todo = json.load(f)
    result = asyncio.run(main(todo))
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(result, f)
