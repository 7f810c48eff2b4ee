"""Drive the real google-adk 2.13 Runner through generated scenarios (run under the ADK venv).

    .adk-venv/bin/python -m tests.differential.adk_driver SCENARIOS.json OUT_DIR

SCENARIOS.json is a list of scenarios from tests/differential/space.py. For each one this writes
OUT_DIR/<name>/: `session.db` (SqliteSessionService, or DatabaseSessionService schema v1 when the
scenario says `backend: database_v1`), `session.json` (the session as reloaded),
`requests.jsonl` (every model call, agent and summarizer: the event ids that existed, the
contents ADK sent, one key per part) and `compactions.jsonl` (what each summarizer was handed and
by which trigger). Only the model is scripted; the Runner, the compaction code, the summarizer
(`LlmEventSummarizer`) and the session services are ADK's own. The clock and ids are ADK's own
providers (`google.adk.platform.time` / `.uuid`) set to a tick clock and a seeded generator, so a
seed gives the same session every time. Nothing here uses the network.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import inspect
import json
import logging
import random
import sys
import traceback
import uuid
import warnings
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)

from google.adk.agents.llm_agent import LlmAgent  # noqa: E402
from google.adk.agents.parallel_agent import ParallelAgent  # noqa: E402
from google.adk.apps.app import App, EventsCompactionConfig  # noqa: E402
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer  # noqa: E402
from google.adk.apps.compaction import _get_compaction_ranges, _latest_compaction_event  # noqa: E402
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer  # noqa: E402
from google.adk.events._rewind_events import _apply_rewinds  # noqa: E402
from google.adk.events.event import Event  # noqa: E402
from google.adk.flows.llm_flows.context import _contents as adk_contents  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.platform import time as adk_time  # noqa: E402
from google.adk.platform import uuid as adk_uuid  # noqa: E402
from google.adk.plugins.base_plugin import BasePlugin  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions.database_session_service import DatabaseSessionService  # noqa: E402
from google.adk.sessions.sqlite_session_service import SqliteSessionService  # noqa: E402
from google.adk.tools.long_running_tool import LongRunningFunctionTool  # noqa: E402
from google.genai import types  # noqa: E402

from tests.differential import space  # noqa: E402

USER = "user-1"
BASE_TS = 1767225600.0
TICK = 0.125  # a power of two: every timestamp is exact in binary


def sha(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def part_key(part: types.Part) -> list[Any] | None:
    """What identifies a part's payload (shared by request parts and session events)."""
    if part.text is not None:
        return ["text", sha(part.text)]
    if part.function_call is not None:
        return ["call", part.function_call.name, sha(canon(part.function_call.args or {}))]
    if part.function_response is not None:
        return ["response", part.function_response.name, sha(canon(part.function_response.response or {}))]
    return None


class Clock:
    """ADK's time provider: each read advances one tick unless frozen (a timestamp tie)."""

    def __init__(self) -> None:
        self.n = 0
        self.frozen = False
        self.thaw_on_model_call = False

    def __call__(self) -> float:
        t = BASE_TS + self.n * TICK
        if not self.frozen:
            self.n += 1
        return t

    def wait(self, seconds: float) -> None:
        self.n += int(seconds / TICK)


class Ids:
    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def __call__(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))


# Another agent's events reach a model as new "For context" text (`_present_other_agent_message`,
# flows/llm_flows/context/_fencing.py): ADK's own function, wrapped to note which event each
# presented text stands for (the text objects are kept until the next model call reads them).
PRESENTED: dict[int, tuple[str, str]] = {}  # id(text) -> (text, event id)
_present_other_agent_message = adk_contents._present_other_agent_message


def _noting_presentation(event: Event, **kw: Any) -> Event | None:
    shown = _present_other_agent_message(event, **kw)
    if shown is not None and shown.content is not None:
        for p in (shown.content.parts or [])[1:]:  # the first is the shared preamble
            if p.text is not None:
                PRESENTED[id(p.text)] = (p.text, event.id)
    return shown


adk_contents._present_other_agent_message = _noting_presentation


def _payload(part: types.Part) -> Any:
    """The object a request part shares with the session event it was copied from
    (`_copy_content_for_request` copies parts shallowly: payloads are shared by reference)."""
    if part.text is not None:
        return part.text
    if part.function_call is not None:
        return part.function_call.args
    if part.function_response is not None:
        return part.function_response.response
    return None


def content_sources(events: list[Event], contents: list[types.Content]) -> list[list[Any]]:
    """Which session event each part of each request content came from, by identity:
    ["event", id] (the event's own part, or a compaction's summary), ["context", id] (another
    agent's event as "For context" text), or null (the preamble, or a payload several events share)."""
    owners: dict[int, set[str]] = {}
    keep: list[Any] = []
    for e in events:
        comp = e.actions.compaction if e.actions else None
        content = comp.compacted_content if comp is not None else e.content
        for p in content.parts if content and content.parts else []:
            obj = _payload(p)
            if obj is not None:
                keep.append(obj)
                owners.setdefault(id(obj), set()).add(e.id)
    out = []
    for c in contents:
        row: list[Any] = []
        for p in c.parts or []:
            obj = _payload(p)
            shown = PRESENTED.get(id(obj)) if obj is not None else None
            if shown is not None and shown[0] is obj:
                row.append(["context", shown[1]])
            elif obj is not None and len(owners.get(id(obj), ())) == 1:
                row.append(["event", next(iter(owners[id(obj)]))])
            else:
                row.append(None)
        out.append(row)
    PRESENTED.clear()
    return out


CALLER: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("caller", default=None)


class Watch(BasePlugin):
    """Reads (never changes) who calls the model and which events exist then."""

    def __init__(self) -> None:
        super().__init__(name="differential_watch")
        self.session: Any = None  # the session the current run appends to

    async def before_run_callback(self, *, invocation_context: Any) -> None:
        self.session = invocation_context.session
        return None

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        ic = callback_context._invocation_context
        live = _apply_rewinds(ic.session.events)
        CALLER.set(
            {
                "agent": callback_context.agent_name,
                "invocation_id": callback_context.invocation_id,
                "branch": ic.branch,
                "event_ids": [e.id for e in ic.session.events],
                # the events no rewind drops (ADK's own `_apply_rewinds`): the others it never sends
                "live_ids": [e.id for e in live],
                # ADK's own choice of the summaries it sends (several can share one text): the
                # ranges of the events no rewind drops, as the request reads them (_contents.py:509-556)
                "surviving_ids": [live[i].id for i, _, _ in _get_compaction_ranges(live)],
                "sources": content_sources(ic.session.events, llm_request.contents),
            }
        )
        return None


class Run:
    """One scenario's state shared by the scripted models and tools."""

    def __init__(self, sc: dict[str, Any], clock: Clock) -> None:
        self.sc = sc
        self.clock = clock
        self.calls: list[dict[str, Any]] = []
        self.compactions: list[dict[str, Any]] = []
        self.turn = 0
        self.steps: dict[tuple[int, str], int] = {}
        self.summaries = 0

    def plan(self, agent: str) -> list[dict[str, Any]]:
        t = self.sc["turns"][self.turn]
        plans = t.get("plans") or {}
        return plans.get(agent) or plans.get("*") or [{"text": 80}]


WORDS = [
    "window",
    "budget",
    "summary",
    "ledger",
    "event",
    "compaction",
    "overlap",
    "invocation",
    "response",
    "branch",
    "weather",
    "pressure",
    "cloud",
    "archive",
    "index",
    "range",
    "queue",
    "ticket",
    "approval",
]


def prose(tag: str, n: int) -> str:
    return space.prose(tag, n, WORDS)


class ScriptedModel(BaseLlm):
    """The agents' model: answers from the scenario's plan and records each request."""

    run: Any = None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        run: Run = self.run
        who = CALLER.get() or {}
        agent = who.get("agent", "?")
        if run.clock.thaw_on_model_call:
            run.clock.frozen = False
            run.clock.thaw_on_model_call = False
        key = (run.turn, agent)
        n = run.steps.get(key, 0)
        run.steps[key] = n + 1
        plan = run.plan(agent)
        step = plan[n] if n < len(plan) else {"text": 60}
        contents = [
            {"role": c.role, "parts": [part_key(p) for p in (c.parts or [])]} for c in llm_request.contents
        ]
        run.calls.append(
            {
                "kind": "agent",
                "turn": run.turn,
                "step": n,
                "agent": agent,
                "invocation_id": who.get("invocation_id"),
                "branch": who.get("branch"),
                "event_ids": who.get("event_ids", []),
                "live_ids": who.get("live_ids", []),
                "surviving_ids": who.get("surviving_ids", []),
                "sources": who.get("sources"),
                "contents": contents,
            }
        )
        if step.get("error"):
            raise RuntimeError(f"scripted model error (turn {run.turn}, step {n})")
        tag = f"t{run.turn}.{agent}.{n}"
        parts: list[types.Part] = []
        for k, call in enumerate(step.get("calls") or []):
            args = dict(call.get("args") or {}, nonce=f"{tag}.{k}")
            parts.append(types.Part(function_call=types.FunctionCall(name=call["name"], args=args)))
        if step.get("transfer"):
            parts.append(
                types.Part(
                    function_call=types.FunctionCall(
                        name="transfer_to_agent", args={"agent_name": step["transfer"]}
                    )
                )
            )
        if not parts:
            text = f"[{tag}] " + prose(tag, int(step.get("text", 80)))
            if step.get("reply") == "thought_only":
                parts.append(types.Part(text=text, thought=True))
            elif step.get("reply") == "blank":
                parts.append(types.Part(text="  "))
            else:
                if step.get("thought"):
                    parts.append(types.Part(text=f"[{tag}] thinking " + prose(tag + "/t", int(step["thought"])), thought=True))
                parts.append(types.Part(text=text))
        prompt = 40 + request_chars(llm_request) // 4  # what the token threshold reads
        out = sum(len(p.text or "") for p in parts) // 4 + 1
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=prompt, candidates_token_count=out, total_token_count=prompt + out
            ),
            turn_complete=True,
        )


def request_chars(req: LlmRequest) -> int:
    n = 0
    for c in req.contents:
        for p in c.parts or []:
            n += len(p.text or "")
            if p.function_call:
                n += len(canon(p.function_call.args or {}))
            if p.function_response:
                n += len(canon(p.function_response.response or {}))
    return n


class SummaryModel(BaseLlm):
    """The summarizer's model: a short summary, a truncated one, nothing, or an error."""

    run: Any = None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        run: Run = self.run
        modes = run.sc.get("summarizer") or ["good"]
        mode = modes[run.summaries % len(modes)]
        run.summaries += 1
        text = llm_request.contents[0].parts[0].text or ""
        run.calls.append({"kind": "summarizer", "turn": run.turn, "mode": mode, "prompt_sha": sha(text)})
        if mode == "error":
            raise RuntimeError("scripted summarizer failure")
        body = f"[SUMMARY {run.summaries}] " + prose(f"s{run.summaries}", 240)
        if mode == "truncated":
            body = body[:40]
        elif mode == "empty":
            body = ""
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=body)]),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=len(text) // 4, candidates_token_count=len(body) // 4
            ),
        )


def trigger_now() -> dict[str, str]:
    names = {f.function for f in inspect.stack(context=0)}
    return {
        "trigger": "token_threshold"
        if "_run_compaction_for_token_threshold_config" in names
        else "sliding_window",
        "when": "post_invocation" if "_run_post_invocation_compaction" in names else "pre_request",
    }


class Recording(BaseEventsSummarizer):
    """ADK's LlmEventSummarizer, wrapped to record what it was handed."""

    def __init__(self, run: Run, watch: Watch) -> None:
        self.run = run
        self.watch = watch
        self.inner = LlmEventSummarizer(llm=SummaryModel(model="scripted-summarizer", run=run))

    def seed(self, events: list[Event]) -> dict[str, Any]:
        """The summary folded in as the seed (ADK's own `_latest_compaction_event` over the session
        then, its rewinds applied first as the compactor applies them, apps/compaction.py:683-690)
        and whether the summarizer's prompt shows any of it (ADK's own formatter)."""
        session = self.watch.session
        known = {e.id for e in session.events} if session is not None else set()
        if not events or events[0].id in known or session is None:
            return {"seed_id": None, "seed_shown": None}
        scoped = [e for e in _apply_rewinds(session.events) if e.isolation_scope == events[0].isolation_scope]
        latest = _latest_compaction_event(scoped)
        return {
            "seed_id": latest.id if latest is not None else None,
            "seed_shown": bool(self.inner._format_events_for_prompt(events[:1])),
        }

    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        info = trigger_now()
        who = CALLER.get() or {}
        seed = self.seed(events)
        failed = None
        try:
            out = await self.inner.maybe_summarize_events(events=events)
        except Exception as e:  # ADK catches it and goes on uncompacted; recorded, then re-raised
            out, failed = None, str(e)
        self.run.compactions.append(
            {
                **info,
                "turn": self.run.turn,
                "during_invocation": who.get("invocation_id") if info["when"] == "pre_request" else None,
                "input_ids": [e.id for e in events],
                "seed_texts": [
                    sha(p.text)
                    for e in events
                    if e.author == "model" and e.content and e.content.parts
                    for p in e.content.parts
                    if p.text and p.text.startswith("[SUMMARY")
                ],
                **seed,
                "event_id": out.id if out is not None else None,
                "start": out.actions.compaction.start_timestamp if out is not None else None,
                "end": out.actions.compaction.end_timestamp if out is not None else None,
                "failed": failed,
            }
        )
        if failed is not None:
            raise RuntimeError(failed)
        return out


# ---------------------------------------------------------------------------------------- tools


def get_weather(city: str, nonce: str = "") -> dict[str, Any]:
    """Returns the weather report for a city."""
    return {"city": city, "nonce": nonce, "report": prose(f"wx-{city}-{nonce}", 120 + len(nonce) * 9)}


def add(a: int, b: int, nonce: str = "") -> dict[str, Any]:
    """Adds two integers."""
    return {"sum": a + b, "nonce": nonce}


def lookup(key: str, nonce: str = "") -> dict[str, Any]:
    """Looks a key up; some keys are missing (an error result)."""
    if key.startswith("missing"):
        return {"error": f"no such key {key}", "nonce": nonce}
    return {"key": key, "value": prose(f"lk-{key}-{nonce}", 400), "nonce": nonce}


def request_approval(ticket: str, nonce: str = "") -> dict[str, Any]:
    """Asks a human to approve; the answer arrives later."""
    return {"status": "pending", "ticket": ticket, "nonce": nonce}


def request_signoff(ticket: str, nonce: str = "") -> None:
    """Asks finance to sign off; returns nothing now."""
    return None


INSTRUCTION = "A terse assistant for a differential test. Use the tools when asked."


def build_agents(sc: dict[str, Any], model: ScriptedModel) -> Any:
    tools: list[Any] = [
        get_weather,
        add,
        lookup,
        LongRunningFunctionTool(request_approval),
        LongRunningFunctionTool(request_signoff),
    ]
    if not sc.get("multi_agent"):
        return LlmAgent(name="assistant", model=model, instruction=INSTRUCTION, tools=tools)
    weather = LlmAgent(
        name="weather_agent",
        model=model,
        instruction=INSTRUCTION,
        description="Weather.",
        tools=[get_weather],
    )
    math = LlmAgent(
        name="math_agent", model=model, instruction=INSTRUCTION, description="Arithmetic.", tools=[add]
    )
    critic_a = LlmAgent(name="critic_a", model=model, instruction=INSTRUCTION, description="First opinion.")
    critic_b = LlmAgent(name="critic_b", model=model, instruction=INSTRUCTION, description="Second opinion.")
    panel = ParallelAgent(name="panel", description="Two critics.", sub_agents=[critic_a, critic_b])
    return LlmAgent(
        name="coordinator",
        model=model,
        instruction=INSTRUCTION,
        description="Routes requests.",
        tools=tools,
        sub_agents=[weather, math, panel],
    )


async def run_one(sc: dict[str, Any], out: Path) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    clock = Clock()
    adk_time.set_time_provider(clock)
    adk_uuid.set_id_provider(Ids(sc["name"]))
    run = Run(sc, clock)
    model = ScriptedModel(model="scripted-agent", run=run)
    watch = Watch()
    cfg = EventsCompactionConfig(summarizer=Recording(run, watch), **sc["compaction"])
    app = App(
        name="differential",
        root_agent=build_agents(sc, model),
        events_compaction_config=cfg,
        plugins=[watch],
    )
    db = out / "session.db"
    if db.exists():
        db.unlink()
    if sc.get("backend") == "database_v1":
        svc: Any = DatabaseSessionService(f"sqlite+aiosqlite:///{db}")
    else:
        svc = SqliteSessionService(f"sqlite:///{db}")
    appended: list[str] = []  # append order (DatabaseSessionService reloads ties by id)
    append = svc.append_event

    async def logged_append(session: Any, event: Event) -> Event:
        appended.append(event.id)
        return await append(session=session, event=event)

    svc.append_event = logged_append
    runner = Runner(app=app, session_service=svc)
    sid = "differential-session"
    await svc.create_session(app_name=app.name, user_id=USER, session_id=sid)
    pending: dict[str, tuple[str, int]] = {}  # long-running tool name -> (call id, its turn)
    invocations: dict[int, str] = {}  # turn -> the invocation its run wrote
    errors: list[str] = []
    for i, turn in enumerate(sc["turns"]):
        run.turn = i
        clock.wait(turn.get("gap_s", 30.0))
        await _rewind(runner, sid, turn, invocations, pending)
        answer = turn.get("answer")
        if answer and answer in pending:
            msg = types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=pending.pop(answer)[0], name=answer, response={"status": "approved", "turn": i}
                        )
                    )
                ],
            )
        else:
            msg = types.Content(
                role="user", parts=[types.Part(text=f"[U{i:02d}] {turn.get('ask', 'Go on.')}")]
            )
        clock.frozen = turn.get("freeze") is not None
        clock.thaw_on_model_call = turn.get("freeze") == "until_model"
        try:
            async for ev in runner.run_async(user_id=USER, session_id=sid, new_message=msg):
                invocations.setdefault(i, ev.invocation_id)
                for fc in ev.get_function_calls():
                    if fc.id in (ev.long_running_tool_ids or set()):
                        pending[fc.name] = (fc.id, i)
        except Exception as e:  # a scripted model error ends the invocation; ADK keeps what it wrote
            errors.append(f"turn {i}: {type(e).__name__}: {e}")
        finally:
            clock.frozen = False
            clock.thaw_on_model_call = False
    session = await svc.get_session(app_name=app.name, user_id=USER, session_id=sid)
    close = getattr(svc, "close", None)
    if close is not None:
        res = close()
        if inspect.isawaitable(res):
            await res
    engine = getattr(svc, "db_engine", None)
    if engine is not None:
        await engine.dispose()
    adk_time.reset_time_provider()
    adk_uuid.reset_id_provider()
    events = []
    for e in session.events:
        keys = [part_key(p) for p in (e.content.parts if e.content and e.content.parts else [])]
        comp = e.actions.compaction if e.actions else None
        events.append(
            {
                "id": e.id,
                "timestamp": e.timestamp,
                "author": e.author,
                "invocation_id": e.invocation_id,
                "branch": e.branch,
                "keys": keys,
                "compaction": None
                if comp is None
                else {
                    "start": comp.start_timestamp,
                    "end": comp.end_timestamp,
                    "keys": [part_key(p) for p in (comp.compacted_content.parts or [])]
                    if comp.compacted_content
                    else [],
                },
            }
        )
    (out / "session.json").write_text(json.dumps(session.model_dump(mode="json"), sort_keys=True) + "\n")
    (out / "events.json").write_text(json.dumps({"events": events, "appended": appended}) + "\n")
    with open(out / "requests.jsonl", "w") as f:
        for c in run.calls:
            f.write(json.dumps(c) + "\n")
    with open(out / "compactions.jsonl", "w") as f:
        for c in run.compactions:
            f.write(json.dumps(c) + "\n")
    (out / "scenario.json").write_text(json.dumps(sc, indent=1) + "\n")
    return {"name": sc["name"], "events": len(events), "calls": len(run.calls), "errors": errors}


async def _rewind(
    runner: Runner, sid: str, turn: dict[str, Any], invocations: dict[int, str], pending: dict[str, tuple[str, int]]
) -> None:
    """The turn's `rewind`: ADK's own `Runner.rewind_async` to the invocation of that earlier turn
    (it appends the rewind event, sessions/_rewind_utils.py:153-210); a long-running call it takes
    back is no longer waited on. Nothing when that turn wrote no event."""
    k = turn.get("rewind")
    if k is None or k not in invocations:
        return
    await runner.rewind_async(user_id=USER, session_id=sid, rewind_before_invocation_id=invocations[k])
    for name in [n for n, (_, t) in pending.items() if t >= k]:
        del pending[name]


async def main_async(scenarios: list[dict[str, Any]], out: Path) -> int:
    for sc in scenarios:
        try:
            info = await run_one(sc, out / sc["name"])
        except Exception:  # recorded for the campaign, which reports the scenario as not run
            adk_time.reset_time_provider()
            adk_uuid.reset_id_provider()
            info = {"name": sc["name"], "crash": traceback.format_exc(limit=8)}
        print(json.dumps(info), flush=True)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: adk_driver SCENARIOS.json OUT_DIR", file=sys.stderr)
        return 2
    scenarios = json.loads(Path(argv[0]).read_text())
    return asyncio.run(main_async(scenarios, Path(argv[1])))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
