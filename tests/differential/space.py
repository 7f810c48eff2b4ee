"""The seeded random space of scenarios (issue 16, point 1). Pure data: the drivers run them.

A scenario is a JSON object; the same (runtime, seed, index) always gives the same scenario.
"""

from __future__ import annotations

import random
from typing import Any

CITIES = ["Paris", "Rome", "Oslo", "Lima", "Cairo", "Tokyo", "Quito", "Perth", "Dakar", "Bern", "Riga"]


def _adk_calls(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        kind = rng.choice(["get_weather", "add", "lookup", "lookup"])
        if kind == "get_weather":
            out.append({"name": kind, "args": {"city": rng.choice(CITIES)}})
        elif kind == "add":
            out.append({"name": kind, "args": {"a": rng.randint(1, 99), "b": rng.randint(1, 99)}})
        else:
            key = rng.choice(["alpha", "beta", "missing-gamma"])  # a missing key: an error result
            out.append({"name": kind, "args": {"key": key}})
    return out


def _adk_steps(rng: random.Random) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [{"calls": _adk_calls(rng)} for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
    steps.append({"text": rng.choice([40, 120, 400, 900, 1600])})
    if rng.random() < 0.06:  # the model fails mid-invocation (the run raises; ADK keeps what it wrote)
        steps.insert(rng.randrange(len(steps)), {"error": True})
    return steps


def _adk_compaction(rng: random.Random) -> dict[str, Any]:
    strategy = rng.choice(["sliding", "sliding", "token", "token", "both"])
    cfg: dict[str, Any] = {}
    if strategy in ("sliding", "both"):
        interval = rng.randint(1, 4)
        cfg["compaction_interval"] = interval
        cfg["overlap_size"] = rng.choice([0, 1, interval, rng.randint(0, interval)])
    if strategy in ("token", "both"):
        cfg["token_threshold"] = rng.choice([200, 350, 500, 800, 1200, 2000])
        cfg["event_retention_size"] = rng.choice([0, 1, 2, 3, 5])
    return cfg


def _adk_rewinds(seed: int, index: int, turns: list[dict[str, Any]]) -> None:
    """Some scenarios rewind (`Runner.rewind_async`, before a turn: `rewind` names the earlier
    turn whose invocation goes, and every later one with it). Drawn from a generator of their
    own, so the rest of every scenario is what it was before rewinds were drawn."""
    rng = random.Random(f"adk/{seed}/{index}/rewind")
    for i in range(2, len(turns)):
        if rng.random() < 0.07:
            turns[i]["rewind"] = rng.randrange(i)


def _adk_thoughts(seed: int, index: int, turns: list[dict[str, Any]]) -> None:
    """Some replies think (a thought part before the text, as a model asked to include its
    thoughts writes them), some are thoughts only, some a blank text: what ADK sends of each, an
    agent's own and another's (flows/llm_flows/context/_contents.py `_is_part_invisible`,
    _fencing.py `_present_other_agent_message`). Drawn from a generator of their own, so the rest
    of every scenario is what it was before thoughts were drawn."""
    rng = random.Random(f"adk/{seed}/{index}/thoughts")
    for turn in turns:
        for plan in turn["plans"].values():
            for step in plan:
                if "text" not in step:
                    continue
                r = rng.random()
                if r < 0.12:
                    step["thought"] = rng.choice([40, 200])
                elif r < 0.16:
                    step["reply"] = "thought_only"
                elif r < 0.20:
                    step["reply"] = "blank"


def thinking_marks(rng: random.Random, steps: list[list[Any]], kinds: tuple[tuple[float, str], ...], only: float) -> dict[str, str]:
    """How each step's reply thinks, by its index as a string (none: it does not): the first of
    `kinds` (share, kind) whose running share the step's draw falls under, else "only" (an answer
    of thinking only) for a text step with the next `only` share. One draw per step, whatever it is."""
    marks: dict[str, str] = {}
    for k, step in enumerate(steps):
        r, upto = rng.random(), 0.0
        for share, kind in kinds:
            upto += share
            if r < upto:
                marks[str(k)] = kind
                break
        else:
            if r < upto + only and step[0] == "text":
                marks[str(k)] = "only"
    return marks


def adk_scenario(seed: int, index: int) -> dict[str, Any]:
    rng = random.Random(f"adk/{seed}/{index}")
    multi = rng.random() < 0.2
    turns: list[dict[str, Any]] = []
    open_approval = False
    for i in range(rng.randint(3, 10)):
        turn: dict[str, Any] = {"ask": f"question {i} " + "detail " * rng.choice([0, 2, 20, 80])}
        r = rng.random()
        if open_approval and r < 0.35:
            turn["answer"] = "request_approval"  # the long-running call's real answer, later
            turn["plans"] = {"*": [{"text": rng.choice([60, 300])}]}
            open_approval = False
        elif multi:
            target = rng.choice(["weather_agent", "math_agent", "panel", "coordinator"])
            plans: dict[str, Any] = {
                a: [{"transfer": target}]
                for a in ("coordinator", "weather_agent", "math_agent", "critic_a", "critic_b")
                if a != target
            }
            if target == "weather_agent":
                plans[target] = [
                    {"calls": [{"name": "get_weather", "args": {"city": rng.choice(CITIES)}}]},
                    {"text": 300},
                ]
            elif target == "math_agent":
                plans[target] = [{"calls": [{"name": "add", "args": {"a": i, "b": 2 * i}}]}, {"text": 200}]
            elif target == "panel":
                plans["critic_a"] = [{"text": rng.choice([100, 500])}]
                plans["critic_b"] = [{"text": rng.choice([100, 500])}]
            else:
                plans[target] = _adk_steps(rng)
            turn["plans"] = plans
        elif r < 0.12 and not open_approval:
            turn["plans"] = {
                "*": [{"calls": [{"name": "request_approval", "args": {"ticket": f"T-{i}"}}]}, {"text": 80}]
            }
            open_approval = True
        elif r < 0.17:
            turn["plans"] = {
                "*": [{"calls": [{"name": "request_signoff", "args": {"ticket": f"S-{i}"}}]}, {"text": 80}]
            }
        else:
            turn["plans"] = {"*": _adk_steps(rng)}
        t = rng.random()
        if t < 0.08:
            turn["freeze"] = "invocation"  # every event of the invocation shares one timestamp
        elif t < 0.14:
            turn["freeze"] = "until_model"
            turn["gap_s"] = 0.0  # stamped like the previous invocation's end (and its compaction)
        if rng.random() < 0.08 and "freeze" not in turn:
            turn["gap_s"] = 0.0
        turns.append(turn)
    _adk_rewinds(seed, index, turns)
    _adk_thoughts(seed, index, turns)
    summ = rng.random()
    if summ < 0.7:
        summarizer = ["good"]
    else:
        summarizer = [rng.choice(["good", "good", "error", "truncated", "empty"]) for _ in range(4)]
    return {
        "runtime": "adk",
        "name": f"adk-s{seed}-{index:04d}",
        "seed": seed,
        "index": index,
        "multi_agent": multi,
        "backend": "database_v1" if rng.random() < 0.2 else "sqlite",
        "compaction": _adk_compaction(rng),
        "summarizer": summarizer,
        "turns": turns,
    }


# ---------------------------------------------------------------------------------------------- pi
# Every text the scripted model writes and every tool result carries a marker (turn, step, call)
# so that each message's serialization in a summarization request names one session entry.


def _pi_call(rng: random.Random, mark: str) -> dict[str, Any]:
    kind = rng.choice(["echo", "echo", "read", "missing", "write", "big"])
    if kind == "echo":
        return {"name": "bash", "arguments": {"command": f"echo {mark} && wc -l src/mod0{rng.randint(1, 9)}.py"}}
    if kind == "read":  # a file's whole text: a large result
        return {"name": "bash", "arguments": {"command": f"echo {mark} && head -n {rng.choice([5, 20, 44])} src/mod1{rng.randint(0, 9)}.py"}}
    if kind == "missing":  # an error result (exit code 1)
        return {"name": "bash", "arguments": {"command": f"echo {mark} && cat no_such_{mark}.txt"}}
    if kind == "write":
        return {"name": "write", "arguments": {"path": f"out/{mark}.md", "content": f"# {mark}\n" + "x" * rng.choice([10, 400])}}
    # (under pi's 2000-line cut of a bash output, which keeps the tail; the summarizer sees the head)
    return {"name": "bash", "arguments": {"command": f"echo {mark} && seq 1 {rng.choice([200, 800, 1500])} && echo {mark}"}}


def _pi_turn(rng: random.Random, tag: str) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """One prompt: its script (steps the model takes) and the driver's action."""
    steps: list[dict[str, Any]] = []
    for s in range(rng.choice([0, 1, 1, 2, 2, 3, 4])):
        calls = [_pi_call(rng, f"{tag}s{s}k{k}") for k in range(rng.choice([1, 1, 1, 2, 3]))]
        step: dict[str, Any] = {"text": f"{tag} step {s}: running {len(calls)} tool(s).", "tool_calls": calls}
        if rng.random() < 0.3:
            step["pad_chars"] = rng.choice([100, 600, 2000])
        if rng.random() < 0.06:  # the model call fails, pi retries (maxRetries 2): 1..3 failed attempts
            step["fail"] = ["http500"] * rng.choice([1, 1, 3])
        steps.append(step)
    final: dict[str, Any] = {"text": f"{tag} finished.", "pad_chars": rng.choice([0, 80, 400, 1500, 3000])}
    if rng.random() < 0.05:
        final["fail"] = ["http500"] * rng.choice([1, 3])
    steps.append(final)
    ask = f"[turn:{tag}] Work on {tag}." + (" Please be thorough." * rng.choice([0, 2, 30, 120]))
    turn: dict[str, Any] = {"steps": steps}
    r = rng.random()
    if r < 0.05 and len(steps) > 1:
        # pi is aborted while the model streams this step (the driver waits for its request, so
        # no failed call may end the turn before it)
        at = rng.randrange(min(2, len(steps)))
        for st in steps:
            st.pop("fail", None)
        steps[at] = dict(steps[at], chunk_delay_s=0.4, pad_chars=max(steps[at].get("pad_chars", 0), 400))
        return turn, ("prompt_abort", ask, {"turn": tag, "step": at})
    return turn, ("prompt", ask)


def _pi_summary_mode(rng: random.Random, failures: bool) -> Any:
    """How the summarizer answers: a summary, cut (finish_reason length) or empty; in a scenario
    with failures, also errors (a failed compaction writes nothing, so its replay is not checked)."""
    r = rng.random()
    if r < 0.75:
        return "good"
    if r < 0.87 or not failures:
        return rng.choice(["length", "empty"])
    return rng.choice([["http500", "good"], "http500", "http401", ["http401", "good"]])


KILL_SLEEP_S = 4  # a slow tool's run time: pi is killed 0.5 s, aborted about 1 s after it starts


def _pi_kill(turn: dict[str, Any], rng: random.Random) -> None:
    """pi is SIGKILLed while the turn's first tool call runs, then restarted on the session
    (`--session`): the assistant's call is in the file with no result. The first step makes that
    one slow bash call alone (the harness kills at the first bash start) and nothing before it may
    fail or be aborted."""
    tag = turn["tag"]
    steps = turn["script"]["steps"]
    for st in steps:
        st.pop("fail", None)
        st.pop("chunk_delay_s", None)
    first = steps[0] if len(steps) > 1 else None
    killed = {"text": f"{tag} step 0: running 1 tool(s).", "tool_calls": [_slow_call(f"{tag}s0k0")]}
    if first is not None and rng.random() < 0.5:
        killed["pad_chars"] = first.get("pad_chars", 0)
    if first is None:
        steps.insert(0, killed)
    else:
        steps[0] = killed
    turn["action"] = ["prompt_kill", turn["action"][1], {"tool": "bash"}]


def _slow_call(mark: str) -> dict[str, Any]:
    return {"name": "bash", "arguments": {"command": f"echo {mark} && sleep {KILL_SLEEP_S} && echo {mark}"}}


def _pi_abort_tool(turn: dict[str, Any], rng: random.Random) -> None:
    """pi is aborted while a tool call of one of the turn's first two steps runs: that step's first
    call is slow, and the harness aborts a second after the model was asked for the step."""
    tag = turn["tag"]
    steps = turn["script"]["steps"]
    at = rng.randrange(min(2, len(steps) - 1))
    for st in steps:
        st.pop("fail", None)
        st.pop("chunk_delay_s", None)
    calls = steps[at]["tool_calls"]
    steps[at] = dict(steps[at], tool_calls=[_slow_call(f"{tag}s{at}k0"), *calls[1:]])
    turn["action"] = ["prompt_abort", turn["action"][1], {"turn": tag, "step": at}]


def pi_scenario(seed: int, index: int) -> dict[str, Any]:
    sc = _pi_base_scenario(seed, index)
    # Kills and aborts mid-tool (issue 16 point 1) are drawn apart, so that the rest of a seed's
    # scenarios stay what they were before they were added. A refused request could end the turn
    # before its tool runs: not with overflow errors.
    if sc["overflow_errors"]:
        return sc
    kills = random.Random(f"pi-kill/{seed}/{index}")
    aborts = random.Random(f"pi-abort-tool/{seed}/{index}")
    for t in sc["turns"]:
        if kills.random() < 0.04:
            _pi_kill(t, kills)
        elif aborts.random() < 0.06 and t["action"][0] == "prompt" and len(t["script"]["steps"]) > 1:
            _pi_abort_tool(t, aborts)
    return sc


def _pi_base_scenario(seed: int, index: int) -> dict[str, Any]:
    rng = random.Random(f"pi/{seed}/{index}")
    window = rng.choice([4096, 6144, 8192, 12288])
    reserve = rng.choice([512, 1024, 2048])
    keep = rng.choice([200, 600, 1200, 2500, 4000])
    failures = rng.random() < 0.3
    manual = rng.random() < 0.3
    turns: list[dict[str, Any]] = []
    for i in range(rng.randint(3, 9)):
        tag = f"t{i:02d}"
        script, action = _pi_turn(rng, tag)
        script["summary"] = _pi_summary_mode(rng, failures)
        if rng.random() < 0.8:
            script["summary_prefix"] = script["summary"]
        else:
            script["summary_prefix"] = _pi_summary_mode(rng, failures)
        turn: dict[str, Any] = {"tag": tag, "script": script, "action": list(action)}
        if manual and rng.random() < 0.3:  # a manual /compact after the prompt, sometimes with instructions
            turn["compact"] = rng.choice([None, f"Keep {tag} in focus."])
        turns.append(turn)
    overflow = rng.random() < 0.3  # the model refuses a request above the window (400)
    if overflow:
        for t in turns:  # a refused step may never be streamed: nothing to abort then
            if t["action"][0] == "prompt_abort":
                t["action"] = ["prompt", t["action"][1]]
                for st in t["script"]["steps"]:
                    st.pop("chunk_delay_s", None)
    return {
        "runtime": "pi",
        "name": f"pi-s{seed}-{index:04d}",
        "seed": seed,
        "index": index,
        "pi": {"contextWindow": window, "maxTokens": min(4096, window // 2), "reserveTokens": reserve,
               "keepRecentTokens": keep},
        "overflow_errors": overflow,
        "turns": turns,
    }


def prose(tag: str, n: int, words: list[str]) -> str:
    """About n characters of words drawn from `words`, the same for the same tag (a scripted
    model's text, a file's content)."""
    rng = random.Random(tag)
    out: list[str] = []
    size = 0
    while size < n:
        w = rng.choice(words)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)
