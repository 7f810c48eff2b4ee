"""Which agent makes ADK's next model call, and on which branch (formats/adk.py `next_agent`),
following google-adk 2.13's router (agents/_agent_router.py `find_agent_to_run`) and its
parallel agent; the differential fixtures adk-s1-0037 and adk-s21-0016 hold real sessions."""

from __future__ import annotations

from typing import Any

from inspector.formats import adk_compaction as rules
from inspector.formats.adk import next_agent, next_call_in_run


def _ev(author: str, inv: str, *, text: str | None = None, call: str | None = None, resp: str | None = None,
        branch: str | None = None, transfer: str | None = None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append({"text": text})
    if call is not None:
        parts.append({"function_call": {"id": call, "name": "transfer_to_agent" if transfer else "t", "args": {}}})
    if resp is not None:
        parts.append({"function_response": {"id": resp, "name": "transfer_to_agent" if transfer else "t", "response": {}}})
    o: dict[str, Any] = {"author": author, "invocation_id": inv, "content": {"role": "user", "parts": parts}}
    if branch:
        o["branch"] = branch
    if transfer:
        o["actions"] = {"transfer_to_agent": transfer}
    return o


def _events(objs: list[dict[str, Any]]) -> list[rules.Ev]:
    for i, o in enumerate(objs):
        o.setdefault("timestamp", float(i))
        o.setdefault("id", f"e{i}")
    return rules.make_events(objs, list(range(len(objs))))


PANEL_RUN = [
    _ev("user", "i1", text="q1"),
    _ev("coordinator", "i1", call="c1", transfer=None),
    _ev("coordinator", "i1", resp="c1", transfer="panel"),
    _ev("critic_a", "i1", text="a", branch="panel.critic_a"),
    _ev("critic_b", "i1", text="b", branch="panel.critic_b"),
]


def test_a_new_run_after_a_parallel_agent_goes_back_to_the_agent_that_transferred() -> None:
    # panel is a workflow agent (its sub-agents' events carry branches): not transferable, so the
    # router falls back to the transfer's author.
    agent, branch, _ = next_agent(_events([*PANEL_RUN, _ev("user", "i2", text="q2")]))
    assert (agent, branch) == ("coordinator", None)


def test_a_transfer_to_a_parallel_agent_runs_its_first_sub_agent_on_its_branch() -> None:
    run = [*PANEL_RUN, _ev("user", "i2", text="q2"), _ev("coordinator", "i2", call="c2"),
           _ev("coordinator", "i2", resp="c2", transfer="panel")]
    agent, branch, _ = next_agent(_events(run))
    assert (agent, branch) == ("critic_a", "panel.critic_a")


def test_a_sub_agent_that_has_not_replied_in_the_run_calls_next() -> None:
    run = [*PANEL_RUN, _ev("user", "i2", text="q2"), _ev("coordinator", "i2", call="c2"),
           _ev("coordinator", "i2", resp="c2", transfer="panel"), _ev("critic_b", "i2", text="b2", branch="panel.critic_b")]
    agent, branch, _ = next_agent(_events(run))
    assert (agent, branch) == ("critic_a", "panel.critic_a")


def test_a_long_running_answer_goes_back_to_the_agent_that_made_the_call() -> None:
    run = [_ev("user", "i1", text="q"), _ev("math_agent", "i1", call="lr"), _ev("math_agent", "i1", text="waiting"),
           _ev("weather_agent", "i2", text="other"), _ev("user", "i1", resp="lr")]
    agent, _, why = next_agent(_events(run))
    assert agent == "math_agent", why


def test_a_sub_agent_still_to_reply_keeps_the_run_going() -> None:
    # critic_b replied in run i2; critic_a (seen in i1) has not: the next call is in the same run,
    # so critic_b's final reply does not end the turn (its live question is still the run's).
    run = [*PANEL_RUN, _ev("user", "i2", text="q2"), _ev("coordinator", "i2", call="c2"),
           _ev("coordinator", "i2", resp="c2", transfer="panel"), _ev("critic_b", "i2", text="b2", branch="panel.critic_b")]
    assert next_call_in_run(_events(run))
    assert next_call_in_run(_events(run[:-1]))  # the transfer: the panel runs next, in this run
    assert not next_call_in_run(_events(PANEL_RUN))  # both replied: the run is over
    assert not next_call_in_run(_events([*PANEL_RUN, _ev("user", "i2", text="q2")]))
