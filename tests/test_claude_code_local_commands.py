"""A local command run after a turn stopped: where Claude Code 2.1.328 puts its reply on resume.

A local command (`/model`, `/mcp`, ...) writes `system` lines of subtype `local_command`, which the
request builder sends as user text. The resume's rules look back past every system line (`iKn`):
whether the turn is unfinished, and which calls the conversation ends on, are judged from the last
line that is not one, and the "No response requested." reply is spliced in right after that line
(`Hr.splice(_d+1,0,...)`, offset 319247653), before the command's lines, unless the calls it ends on
are answered "[Tool call interrupted ...]" on resume: that answer is a line appended last, and the
reply follows it. Found on a real transcript (marot/spotter's test/fixtures/transcripts/short.jsonl,
Claude Code 2.1.38: "[Request interrupted by user for tool use]", then `/model` and its output),
resumed by the real CLI; checked by the order probes "... local command ..." (10 probes, 5 of which
differed before: `python -m tests.peers.claude_code_resume.order_probe`).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.export import context_json
from inspector.formats import load_bytes
from tests.test_claude_code import _jsonl, _line
from tests.test_incremental import grow_and_compare

MODEL = "<command-name>/model</command-name>\n            <command-message>model</command-message>\n            <command-args></command-args>"
MODEL_OUT = "<local-command-stdout>Kept model as Default (recommended)</local-command-stdout>"
INTERRUPTED = "[Tool call interrupted"


def _note(uuid: str, parent: str, text: str) -> dict[str, Any]:
    o = _line("system", uuid, parent, subtype="local_command", level="info", isMeta=False)
    o["content"] = text
    return o


def _call(uuid: str, parent: str, *ids: str, mid: str | None = None) -> dict[str, Any]:
    blocks = [{"type": "tool_use", "id": i, "name": "Bash", "input": {"command": "ls"}} for i in ids]
    return _line("assistant", uuid, parent, blocks, stop="tool_use", **({"mid": mid} if mid else {}))


def _result(uuid: str, parent: str, call: str, text: str = "ok") -> dict[str, Any]:
    return _line("user", uuid, parent, [{"type": "tool_result", "tool_use_id": call, "content": text}])


def _sent(objs: list[dict[str, Any]]) -> list[str]:
    """The request's items: a record's id, "resume" for the reply added on resume, "interrupted:ID"
    for the result made up for call ID as the session ended, "missing:ID" for another made up."""
    out = []
    for m in context_json(analyze(load_bytes(_jsonl(objs), "local.jsonl")))["messages"]:
        if m.get("on_resume"):
            out.append("resume")
        elif m["synthetic"]:
            out.append(("interrupted:" if m["preview"].startswith(INTERRUPTED) else "missing:") + m["tool_call_id"])
        else:
            out.append(m["record_id"])
    return out


def _prompt() -> list[dict[str, Any]]:
    return [_line("user", "u1", None, "start the server")]


def test_the_resume_reply_goes_before_a_local_command_that_ends_the_conversation() -> None:
    """The real transcript's ending: a call the user rejected, the interruption, then `/model`."""
    objs = [
        *_prompt(),
        _call("a1", "u1", "t1"),
        _result("r1", "a1", "t1", "The user doesn't want to proceed with this tool use."),
        _line("user", "i1", "r1", [{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
        _note("n1", "i1", MODEL),
        _note("n2", "n1", MODEL_OUT),
    ]
    assert _sent(objs) == ["u1", "a1", "r1", "i1", "resume", "n1", "n2"]
    # A prompt left unanswered, then a command: the same.
    assert _sent([*_prompt(), _note("n1", "u1", MODEL), _note("n2", "n1", MODEL_OUT)]) == ["u1", "resume", "n1", "n2"]
    # A reply ends the turn: nothing is added.
    objs = [*_prompt(), _line("assistant", "a1", "u1", [{"type": "text", "text": "done"}]), _note("n1", "a1", MODEL)]
    assert _sent(objs) == ["u1", "a1", "n1"]


def test_a_call_before_a_local_command_is_still_the_conversation_s_last() -> None:
    """The command's lines do not go on with the conversation: the call's line is sent, answered
    "[Tool call interrupted ...]" on resume (a line appended last, so the reply follows it)."""
    objs = [*_prompt(), _call("a1", "u1", "t1"), _note("n1", "a1", MODEL), _note("n2", "n1", MODEL_OUT)]
    assert _sent(objs) == ["u1", "a1", "interrupted:t1", "n1", "n2", "resume"]
    # A reply's parallel calls a line each, one answered: the other answered on resume, after it.
    objs = [*_prompt(), _call("a1", "u1", "t1", mid="m1"), _call("a2", "a1", "t2", mid="m1"), _result("r1", "a2", "t1")]
    objs.append(_note("n1", "r1", MODEL_OUT))
    assert _sent(objs) == ["u1", "a1", "r1", "interrupted:t2", "n1", "resume"]
    # A user's text after the command goes on with the conversation: the call's line is left out.
    objs = [*_prompt(), _call("a1", "u1", "t1"), _note("n1", "a1", MODEL_OUT), _line("user", "u2", "n1", "go on")]
    assert _sent(objs) == ["u1", "n1", "u2", "resume"]


def test_a_followed_transcript_ending_on_local_commands_reads_as_the_full_analysis(tmp_path: Path) -> None:
    objs = [*_prompt(), _call("a1", "u1", "t1"), _result("r1", "a1", "t1"), _note("n1", "r1", MODEL), _note("n2", "n1", MODEL_OUT)]
    objs += [_line("assistant", "a2", "n2", [{"type": "text", "text": "on it"}]), _call("a3", "a2", "t3"), _note("n3", "a3", MODEL)]
    objs += [_line("user", "u2", "n3", "again"), _note("n4", "u2", MODEL), _note("n5", "n4", MODEL_OUT)]
    src = tmp_path / "local.jsonl"
    src.write_bytes(_jsonl(objs))
    rng = random.Random(11)
    batches = sum(grow_and_compare(str(src), str(tmp_path), rng)[0] for _ in range(12))
    assert batches > 12
