"""What the real Claude Code sends of a joined user message: the order of its lines, the results it removes.

Claude Code joins consecutive user lines into one API user message (`NU` / `fXo`, offsets
322793647 / 322796584): the tool results first, in order, then the other blocks. `Pqi`
(`ensureToolResultPairing`, offset 322914102) then puts the "[Tool result missing due to internal
error]" results it makes up ahead of all of them and removes from that message every result whose
call the reply right before it does not make (a second result for the same call too).

Each probe is (but two, which are the whole transcript) the peer corpus's `manual_compact.jsonl` with a short turn appended under its leaf: a
prompt, a reply making calls, then user lines in some order (a text typed while a tool ran, the
results, a line holding both, a result no call of that reply asks for, ...), most closed by a last
reply. Claude Code 2.1.328 resumes each copy (`harness.resume_many`: the pinned CLI against the
scripted Messages API on 127.0.0.1) and its first request is mapped back to the transcript's lines
block by block (`tests/test_claude_code_accepts._sent_items`): the items sent, in order, must be
the items `inspector context --json` predicts, and a result sent without its call (an orphan) must
be one it predicts as one.

    python -m tests.peers.claude_code_resume.order_probe     # prints each probe's verdict
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import SHARED

BASE = SHARED / "peers" / "claude_code" / "corpus" / "manual_compact.jsonl"
LEAF_LINE = 84  # the base's leaf: its last reply
_Block = dict[str, Any]
# ("u": a user line | "a": a reply, with a message.id of its own | "A": another line of the reply
# before, its message.id: Claude Code writes a reply's blocks a line each | "n": a reply line without
# a message.id (a transcript another tool wrote) | "N": the same without a requestId either | "E": the reply Claude Code writes for a failed
# request, `isApiErrorMessage` | "S": the same, its model "<synthetic>"; its content | "L": a local
# command's `system` line, subtype local_command, its content one text block's text)
_Step = tuple[str, list[_Block]]


def _call(k: int) -> _Block:
    return {"type": "tool_use", "id": f"toolu_ord_{k}", "name": "Bash", "input": {"command": f"echo {k}"}}


def _res(k: int, text: str = "") -> _Block:
    return {"type": "tool_result", "tool_use_id": f"toolu_ord_{k}", "content": text or f"output of {k}"}


def _text(t: str) -> _Block:
    return {"type": "text", "text": t}


def _think(k: int | str) -> _Block:
    return {"type": "thinking", "thinking": f"THINK {k}" if k != "" else "", "signature": "sig" + "s" * 40}


_REDACTED = {"type": "redacted_thinking", "data": "RDTxxxxxxxx"}
_IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
_NOWHERE = {"type": "tool_result", "tool_use_id": "toolu_ord_nowhere", "content": "a result no call asks for"}
_DONE: _Step = ("a", [_text("ORD done")])
_MODEL: _Step = ("L", [_text("<command-name>/model</command-name>\n            <command-message>model</command-message>\n            <command-args></command-args>")])
_MODEL_OUT: _Step = ("L", [_text("<local-command-stdout>Kept model as Default (recommended)</local-command-stdout>")])
_NO_ID_DONE: _Step = ("n", [_text("ORD done")])


@dataclass(frozen=True)
class Probe:
    name: str
    steps: tuple[_Step, ...]  # appended after the prompt "ORD question", in order
    alone: bool = False  # the steps are the whole transcript (no base, no prompt): they open the request


PROBES: list[Probe] = [
    Probe("result alone", (("a", [_call(1)]), ("u", [_res(1)]), _DONE)),
    Probe("text then result", (("a", [_call(1)]), ("u", [_text("ORD typed")]), ("u", [_res(1)]), _DONE)),
    Probe("result then text", (("a", [_call(1)]), ("u", [_res(1)]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("text, result, text", (("a", [_call(1)]), ("u", [_text("ORD one")]), ("u", [_res(1)]), ("u", [_text("ORD two")]), _DONE)),
    Probe("two results, text between", (("a", [_call(1), _call(2)]), ("u", [_res(1)]), ("u", [_text("ORD typed")]), ("u", [_res(2)]), _DONE)),
    Probe("text then result, session ends", (("a", [_call(1)]), ("u", [_text("ORD typed")]), ("u", [_res(1)]))),
    Probe("text, then a line with text and result", (("a", [_call(1)]), ("u", [_text("ORD typed")]), ("u", [_text("ORD mixed"), _res(1)]), _DONE)),
    Probe("line with text and result, then result", (("a", [_call(1), _call(2)]), ("u", [_text("ORD mixed"), _res(1)]), ("u", [_res(2)]), _DONE)),
    Probe("text, image, result", (("a", [_call(1)]), ("u", [_text("ORD typed")]), ("u", [_IMAGE]), ("u", [_res(1)]), _DONE)),
    Probe("two turns, text then result each", (
        ("a", [_call(1)]), ("u", [_text("ORD one")]), ("u", [_res(1)]),
        ("a", [_call(2)]), ("u", [_text("ORD two")]), ("u", [_res(2)]), _DONE,
    )),
    Probe("missing result, text after", (("a", [_call(1), _call(2)]), ("u", [_res(1)]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("missing result, text before", (("a", [_call(1), _call(2)]), ("u", [_text("ORD typed")]), ("u", [_res(1)]), _DONE)),
    Probe("missing result, session ends", (("a", [_call(1), _call(2)]), ("u", [_text("ORD typed")]), ("u", [_res(1)]))),
    Probe("result answering no call, own line", (("a", [_call(1)]), ("u", [_res(1)]), ("u", [_NOWHERE]), _DONE)),
    Probe("result answering no call, beside text", (("a", [_call(1)]), ("u", [_res(1)]), ("u", [_text("ORD typed"), _NOWHERE]), _DONE)),
    Probe("result answering no call, beside its own", (("a", [_call(1)]), ("u", [_res(1), _NOWHERE]), _DONE)),
    Probe("result twice", (("a", [_call(1)]), ("u", [_res(1)]), ("u", [_res(1, "again")]), _DONE)),
    Probe("result of an earlier reply, text beside", (("a", [_call(1)]), ("a", [_text("ORD between")]), ("u", [_text("ORD typed")]), ("u", [_res(1)]), _DONE)),
    Probe("result of an earlier reply, alone", (("a", [_call(1)]), ("a", [_text("ORD between")]), ("u", [_res(1)]), _DONE)),
    # A reply's parallel calls, a line each (as Claude Code writes them), some never answered, the
    # conversation going on: `lre` drops such a line, not the reply (tests/test_claude_code_unanswered_lines.py).
    Probe("parallel calls on their own lines, one answered", (("a", [_text("ORD working")]), ("A", [_call(1)]), ("A", [_call(2)]), ("u", [_res(1)]), _DONE)),
    Probe("parallel calls on their own lines, the second answered", (("a", [_call(1)]), ("A", [_call(2)]), ("A", [_call(3)]), ("u", [_res(2)]), _DONE)),
    Probe("parallel calls on their own lines, none answered", (("a", [_text("ORD working")]), ("A", [_call(1)]), ("A", [_call(2)]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("parallel calls, one line answered in part", (("a", [_call(1), _call(2)]), ("A", [_call(3)]), ("u", [_res(1)]), _DONE)),
    # The turn the session stopped in keeps the line, its call answered by the "[Tool call
    # interrupted ...]" result Claude Code appends last, after the turn's results.
    Probe("parallel calls on their own lines, one answered, session ends", (("a", [_call(1)]), ("A", [_call(2)]), ("u", [_res(1)]))),
    # A call whose id an earlier call of the request has: `Pqi` removes it (and so its result).
    Probe("a call id reused by a later reply", (("a", [_call(1)]), ("u", [_res(1)]), ("a", [_call(1)]), ("u", [_res(1, "second")]), _DONE)),
    Probe("a call id reused, the second unanswered", (("a", [_call(1)]), ("u", [_res(1)]), ("a", [_call(1)]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("a call id reused beside text", (("a", [_call(1)]), ("u", [_res(1)]), ("a", [_text("ORD again"), _call(1)]), ("u", [_res(1, "second")]), _DONE)),
    Probe("a call id twice in one reply", (("a", [_call(1), _call(1)]), ("u", [_res(1)]), _DONE)),
    # An API error's reply ("E": isApiErrorMessage) or any reply without calls after unanswered calls:
    # the turn is done, the lines of those calls left out (`lre`), none answered on resume.
    Probe("an API error between a call and its result", (("a", [_call(1)]), ("E", [_text("API Error: 500 overloaded")]), ("u", [_res(1)]), _DONE)),
    Probe("an API error after an unanswered call, session ends", (("a", [_call(1)]), ("E", [_text("API Error: 500 overloaded")]))),
    Probe("a reply after an unanswered call, session ends", (("a", [_call(1)]), ("a", [_text("ORD later reply")]))),
    Probe("an API error after an unanswered call, then text", (("a", [_call(1)]), ("E", [_text("API Error: 500 overloaded")]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("two API errors after an unanswered call", (("a", [_call(1)]), ("E", [_text("API Error: 500 overloaded")]), ("E", [_text("API Error: 529 overloaded")]))),
    Probe("calls answered in part, then an API error, session ends", (("a", [_call(1), _call(2)]), ("u", [_res(1)]), ("E", [_text("API Error: 500 overloaded")]))),
    Probe("a later call unanswered, then an API error, session ends", (("a", [_call(1)]), ("u", [_res(1)]), ("a", [_call(2)]), ("E", [_text("API Error: 500 overloaded")]))),
    Probe("an API error between two unanswered calls, session ends", (("a", [_call(1)]), ("E", [_text("API Error: 500 overloaded")]), ("a", [_call(2)]))),
    Probe("a call, then a reply's text and call lines, session ends", (("a", [_call(1)]), ("a", [_text("ORD then")]), ("A", [_call(2)]))),
    Probe("an API error after a result", (("a", [_call(1)]), ("u", [_res(1)]), ("E", [_text("API Error: 500 overloaded")]), ("u", [_text("ORD typed")]), _DONE)),
    # A synthetic API error ("S": isApiErrorMessage, model "<synthetic>"): left out before the lines
    # are joined and paired, so it splits nothing; it still ends the turn of the calls before it.
    Probe("a synthetic API error between a call and its result", (("a", [_call(1)]), ("S", [_text("API Error: 500 overloaded")]), ("u", [_res(1)]), _DONE)),
    Probe("a synthetic API error between two results", (("a", [_call(1), _call(2)]), ("u", [_res(1)]), ("S", [_text("API Error: 500 overloaded")]), ("u", [_res(2)]), _DONE)),
    Probe("a synthetic API error after an unanswered call, session ends", (("a", [_call(1)]), ("S", [_text("API Error: 500 overloaded")]))),
    Probe("a synthetic API error after an unanswered call, then text", (("a", [_call(1)]), ("S", [_text("API Error: 500 overloaded")]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("a synthetic API error answering the prompt, session ends", (("S", [_text("API Error: 500 overloaded")]),)),
    Probe("an API error answering the prompt, session ends", (("E", [_text("API Error: 500 overloaded")]),)),
    Probe("a result opening the request", (("u", [_NOWHERE]), _DONE), alone=True),
    Probe("a result and text opening the request", (("u", [_NOWHERE]), ("u", [_text("ORD typed")]), _DONE), alone=True),
    # Replies of thinking only (`claude_code._leave_out_thinking_only`: before, 17 of these 27 differed).
    Probe("thinking-only reply, then text typed", (("a", [_think(1)]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("thinking-only reply, session ends", (("a", [_think(1)]),)),
    Probe("thinking line, then its call line, answered", (("a", [_think(1)]), ("A", [_call(1)]), ("u", [_res(1)]), _DONE)),
    Probe("thinking line, then its call line, unanswered, text", (("a", [_think(1)]), ("A", [_call(1)]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("thinking line, then its call line, session ends", (("a", [_think(1)]), ("A", [_call(1)]))),
    Probe("thinking and call in one line, answered", (("a", [_think(1), _call(1)]), ("u", [_res(1)]), _DONE)),
    Probe("thinking line, text line", (("a", [_think(1)]), ("A", [_text("ORD answer")]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("text line, then trailing thinking line", (("a", [_text("ORD answer")]), ("A", [_think(1)]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("redacted-only reply, then text", (("a", [_REDACTED]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("redacted then call, answered", (("a", [_REDACTED]), ("A", [_call(1)]), ("u", [_res(1)]), _DONE)),
    Probe("two thinking lines then text", (("a", [_think(1)]), ("A", [_think(2)]), ("A", [_text("ORD answer")]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("thinking-only reply after result", (("a", [_call(1)]), ("u", [_res(1)]), ("a", [_think(1)]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("thinking-only reply, session ends after result", (("a", [_call(1)]), ("u", [_res(1)]), ("a", [_think(1)]))),
    Probe("empty thinking then text", (("a", [_think("")]), ("A", [_text("ORD answer")]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("thinking-only reply, then text, session ends", (("a", [_think(1)]), ("u", [_text("ORD typed")]))),
    Probe("unanswered call, then thinking-only reply, session ends", (("a", [_call(1)]), ("a", [_think(1)]))),
    Probe("unanswered call, thinking-only reply, then text", (("a", [_call(1)]), ("a", [_think(1)]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("thinking-only reply between a call and its result", (("a", [_call(1)]), ("a", [_think(1)]), ("u", [_res(1)]), _DONE)),
    Probe("two thinking-only lines of one reply, then text", (("a", [_think(1)]), ("A", [_think(2)]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("thinking without signature only, then text", (("a", [{"type": "thinking", "thinking": "THINK nosig"}]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("thinking-only reply after a text reply, session ends", (("a", [_text("ORD answer")]), ("a", [_think(1)]))),
    Probe("call answered, thinking-only reply, session ends", (("a", [_call(1)]), ("u", [_res(1)]), ("a", [_think(1)]))),
    Probe("thinking line of a call reply, call unanswered, then a thinking-only reply, session ends", (("a", [_think(1)]), ("A", [_call(1)]), ("a", [_think(2)]))),
    Probe("thinking and text in one line, then text", (("a", [_think(1), _text("ORD answer")]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("text then thinking in one line, then text", (("a", [_text("ORD answer"), _think(1)]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("API error after a thinking-only reply", (("a", [_think(1)]), ("E", [_text("API Error: 500 overloaded")]), ("u", [_text("ORD typed")]), _DONE)),
    Probe("thinking-only reply, then a reply's unanswered call, session ends", (("a", [_think(1)]), ("a", [_call(1)]))),
    # A reply's text line after its call line, the call unanswered: the result made up, then the
    # resume's reply (`claude_code._joins_earlier`: a first version of the id-less merge broke these).
    Probe("call line, then its text line, call unanswered, session ends", (("a", [_call(1)]), ("A", [_text("ORD after")]))),
    Probe("call answered, then a reply's call line and text line, unanswered, session ends", (
        ("a", [_call(1)]), ("u", [_res(1)]), ("a", [_call(2)]), ("A", [_text("ORD after")]))),
    Probe("two call lines and a text line, one answered, session ends", (
        ("a", [_call(1)]), ("A", [_call(2)]), ("A", [_text("ORD after")]), ("u", [_res(1)]))),
    # Replies without a message.id (`claude_code._merge_undefined_ids`: before, 7 of these 20 differed): a
    # missing id is one id to Claude Code, so each joins the one before it across tool results.
    Probe("no-id: thinking line, then call line, answered", (("n", [_think(1)]), ("n", [_call(1)]), ("u", [_res(1)]), _NO_ID_DONE)),
    Probe("no-id: call line, then thinking-only line, then result", (("n", [_call(1)]), ("n", [_think(1)]), ("u", [_res(1)]), _NO_ID_DONE)),
    Probe("no-id: thinking-only reply, then text typed", (("n", [_think(1)]), ("u", [_text("ORD typed")]), _NO_ID_DONE)),
    Probe("no-id: text line, then thinking line, then text typed", (("n", [_text("ORD answer")]), ("n", [_think(1)]), ("u", [_text("ORD typed")]), _NO_ID_DONE)),
    Probe("no-id: thinking line, text line, text typed", (("n", [_think(1)]), ("n", [_text("ORD answer")]), ("u", [_text("ORD typed")]), _NO_ID_DONE)),
    Probe("no-id: thinking-only reply, session ends", (("n", [_think(1)]),)),
    Probe("no-id: call answered, then thinking-only reply, session ends", (("n", [_call(1)]), ("u", [_res(1)]), ("n", [_think(1)]))),
    Probe("no-id: two calls on two lines with thinking between, answered", (("n", [_call(1)]), ("n", [_think(1)]), ("n", [_call(2)]), ("u", [_res(1)]), ("u", [_res(2)]), _NO_ID_DONE)),
    Probe("no-id: thinking line, call line, unanswered, text", (("n", [_think(1)]), ("n", [_call(1)]), ("u", [_text("ORD typed")]), _NO_ID_DONE)),
    Probe("id reply, then no-id thinking line chained, then text", (("a", [_text("ORD answer")]), ("n", [_think(1)]), ("u", [_text("ORD typed")]), _NO_ID_DONE)),
    Probe("id call, then no-id thinking line chained, then result", (("a", [_call(1)]), ("n", [_think(1)]), ("u", [_res(1)]), _NO_ID_DONE)),
    Probe("no-id: thinking and text in one line, then text", (("n", [_think(1), _text("ORD answer")]), ("u", [_text("ORD typed")]), _NO_ID_DONE)),
    Probe("no-id: call, result, call2, result2, done", (("n", [_call(1)]), ("u", [_res(1)]), ("n", [_call(2)]), ("u", [_res(2)]), _NO_ID_DONE)),
    Probe("no-id: call, result, text typed, done", (("n", [_call(1)]), ("u", [_res(1)]), ("u", [_text("ORD typed")]), _NO_ID_DONE)),
    Probe("id text reply, then no-id text line chained, text typed", (("a", [_text("ORD answer")]), ("n", [_text("ORD more")]), ("u", [_text("ORD typed")]), _NO_ID_DONE)),
    Probe("no-id: text, typed, call, result, done", (("n", [_text("ORD first")]), ("u", [_text("ORD typed")]), ("n", [_call(1)]), ("u", [_res(1)]), _NO_ID_DONE)),
    Probe("no-id call, result, id reply", (("n", [_call(1)]), ("u", [_res(1)]), ("a", [_text("ORD id answer")]))),
    Probe("id call, result, no-id reply", (("a", [_call(1)]), ("u", [_res(1)]), _NO_ID_DONE)),
    Probe("no-id: call, then result with text, done", (("n", [_call(1)]), ("u", [_res(1), _text("ORD also")]), _NO_ID_DONE)),
    Probe("no id, no requestId: two call lines, results in the other order, done", (
        ("N", [_call(1)]), ("N", [_call(2)]), ("u", [_res(2)]), ("u", [_res(1)]), ("N", [_text("ORD done")]))),
    Probe("no id, no requestId: thinking line, then call line, answered", (("N", [_think(1)]), ("N", [_call(1)]), ("u", [_res(1)]), ("N", [_text("ORD done")]))),
    Probe("no id, no requestId: call, result, done", (("N", [_call(1)]), ("u", [_res(1)]), ("N", [_text("ORD done")]))),
    Probe("no-id: two reply lines in a row, text typed", (("n", [_text("ORD one")]), ("n", [_text("ORD two")]), ("u", [_text("ORD typed")]), _NO_ID_DONE)),
    # A message.id written again after a prompt ("=k": the k-th reply's id; damaged or hand-edited
    # transcripts, a line copied from another branch): Claude Code's request builder merges a reply
    # into the latest one of its id only since the last user message holding no tool result (`yo`).
    Probe("id repeated after a prompt, session ends", (("a", [_text("ORD first")]), ("u", [_text("ORD typed")]), ("=1", [_text("ORD again")]))),
    Probe("id repeated after a prompt, then text", (("a", [_text("ORD first")]), ("u", [_text("ORD typed")]), ("=1", [_text("ORD again")]), ("u", [_text("ORD two")]), _DONE)),
    Probe("line repeated after a prompt, then text", (("a", [_text("ORD first")]), ("u", [_text("ORD typed")]), ("=1", [_text("ORD first")]), ("u", [_text("ORD two")]), _DONE)),
    Probe("call reply's id repeated after result, reply, prompt", (
        ("a", [_call(1)]), ("u", [_res(1)]), ("a", [_text("ORD between")]), ("u", [_text("ORD typed")]), ("=1", [_text("ORD again")]), ("u", [_text("ORD two")]), _DONE)),
    Probe("call reply's id repeated after result and prompt", (
        ("a", [_call(1)]), ("u", [_res(1)]), ("u", [_text("ORD typed")]), ("=1", [_text("ORD again")]), ("u", [_text("ORD two")]), _DONE)),
    Probe("call reply's id repeated with a call after a prompt", (
        ("a", [_call(1)]), ("u", [_res(1)]), ("a", [_text("ORD between")]), ("u", [_text("ORD typed")]), ("=1", [_call(2)]), ("u", [_res(2)]), _DONE)),
    Probe("call reply's id repeated with a call, session ends", (
        ("a", [_call(1)]), ("u", [_res(1)]), ("a", [_text("ORD between")]), ("u", [_text("ORD typed")]), ("=1", [_call(2)]), ("u", [_res(2)]))),
    # ("~": a line off the chain, hanging off the line before it; the chain goes on without it)
    Probe("id repeated after a prompt, the repeat off the chain", (
        ("a", [_text("ORD first")]), ("u", [_text("ORD typed")]), ("=1~", [_text("ORD again")]), ("a", [_text("ORD answer")]), ("u", [_text("ORD two")]), _DONE)),
    Probe("id repeated after a prompt, the first off the chain", (
        ("a~", [_text("ORD first")]), ("a", [_text("ORD answer")]), ("u", [_text("ORD typed")]), ("=1", [_text("ORD again")]), ("u", [_text("ORD two")]), _DONE)),
    # ("C": a compact boundary without a preserved segment, and its summary line)
    Probe("id repeated across a compact boundary", (("a", [_text("ORD first")]), ("C", []), ("=1", [_text("ORD again")]), ("u", [_text("ORD two")]), _DONE)),
    Probe("call reply's id repeated across a compact boundary", (
        ("a", [_call(1)]), ("u", [_res(1)]), ("C", []), ("=1", [_text("ORD again")]), ("u", [_text("ORD two")]), _DONE)),
    # The block order of a reply (`cXo`: its calls moved last, unless a call sits between thinking).
    Probe("call line, then its text line, answered", (("a", [_call(1)]), ("A", [_text("ORD after")]), ("u", [_res(1)]), _DONE)),
    Probe("text, call, text lines of one reply, answered", (("a", [_text("ORD one")]), ("A", [_call(1)]), ("A", [_text("ORD two")]), ("u", [_res(1)]), _DONE)),
    Probe("call and text in one line, answered", (("a", [_call(1), _text("ORD after")]), ("u", [_res(1)]), _DONE)),
    Probe("call, text, call lines of one reply, answered", (
        ("a", [_call(1)]), ("A", [_text("ORD mid")]), ("A", [_call(2)]), ("u", [_res(1)]), ("u", [_res(2)]), _DONE)),
    Probe("thinking, call, thinking, text lines of one reply, answered", (
        ("a", [_think(1)]), ("A", [_call(1)]), ("A", [_think(2)]), ("A", [_text("ORD after")]), ("u", [_res(1)]), _DONE)),
    Probe("no-id: call line, then text line, answered", (("n", [_call(1)]), ("n", [_text("ORD after")]), ("u", [_res(1)]), _NO_ID_DONE)),
    # A text of whitespace only in a reply of several lines (`Rzi` drops it at a merge, unless it
    # sits between thinking blocks or only thinking would be left; a reply of one line keeps it).
    Probe("blank text line, then call line, answered", (("a", [_text("\n\n")]), ("A", [_call(1)]), ("u", [_res(1)]), _DONE)),
    Probe("call line, then blank text line, answered", (("a", [_call(1)]), ("A", [_text(" ")]), ("u", [_res(1)]), _DONE)),
    Probe("blank text and call in one line, answered", (("a", [_text("\n\n"), _call(1)]), ("u", [_res(1)]), _DONE)),
    Probe("thinking, blank text, thinking, text lines of one reply", (
        ("a", [_think(1)]), ("A", [_text(" ")]), ("A", [_think(2)]), ("A", [_text("ORD after")]), ("u", [_text("ORD two")]), _DONE)),
    Probe("text, blank text, text lines of one reply", (
        ("a", [_text("ORD one")]), ("A", [_text("\u3000\n")]), ("A", [_text("ORD two")]), ("u", [_text("ORD next")]), _DONE)),
    # A local command run after the turn stopped (its `system` lines, sent as user text): the reply
    # Claude Code adds on resume goes right after the last line that is not a system line (`iKn`'s
    # splice), before the command (a real transcript, spotter's short.jsonl, ends so).
    Probe("interrupted, then a local command, session ends", (
        ("a", [_call(1)]), ("u", [_res(1, "rejected")]), ("u", [_text("[Request interrupted by user for tool use]")]), _MODEL, _MODEL_OUT)),
    Probe("prompt, then a local command, session ends", (_MODEL, _MODEL_OUT)),
    Probe("result, then a local command, session ends", (("a", [_call(1)]), ("u", [_res(1)]), _MODEL_OUT)),
    Probe("reply, then a local command, session ends", (("a", [_text("ORD answer")]), _MODEL, _MODEL_OUT)),
    Probe("unanswered call, then a local command, session ends", (("a", [_call(1)]), _MODEL, _MODEL_OUT)),
    Probe("prompt, local command, then text typed, session ends", (_MODEL, _MODEL_OUT, ("u", [_text("ORD typed")]))),
    Probe("parallel call lines, one answered, then a local command, session ends", (("a", [_call(1)]), ("A", [_call(2)]), ("u", [_res(1)]), _MODEL_OUT)),
    Probe("an API error after an unanswered call, then a local command, session ends", (
        ("a", [_call(1)]), ("E", [_text("API Error: 500 overloaded")]), _MODEL, _MODEL_OUT)),
    Probe("a local command between a call and its result", (("a", [_call(1)]), _MODEL_OUT, ("u", [_res(1)]), _DONE)),
    Probe("unanswered call, local command, then text typed", (("a", [_call(1)]), _MODEL_OUT, ("u", [_text("ORD typed")]), _DONE)),
]


def _uuid(n: int, k: int) -> str:
    return f"0e4d1a9e-0000-4000-{9000 + n:04d}-{k:012d}"


def lines(p: Probe, n: int, leaf: dict[str, Any]) -> list[dict[str, Any]]:
    """The probe's lines, chained under the base's leaf: the prompt, then its steps."""
    fields = {k: leaf[k] for k in ("isSidechain", "userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch") if k in leaf}
    out: list[dict[str, Any]] = []
    parent = None if p.alone else leaf["uuid"]
    mid = 0
    steps = p.steps if p.alone else (("u", [_text(f"ORD question {n}")]), *p.steps)
    for k, (kind, content) in enumerate(steps):
        side, kind = kind.endswith("~"), kind.removesuffix("~")
        o: dict[str, Any] = {"parentUuid": parent, **fields, "uuid": _uuid(n, k), "timestamp": f"2026-11-30T14:00:{k:02d}.000Z"}
        if kind == "C":
            out.append(_boundary(o, _uuid(n, 900 + k)))
            o.update(parentUuid=_uuid(n, 900 + k), type="user", isCompactSummary=True, isVisibleInTranscriptOnly=True, message={
                "role": "user", "content": f"{SUMMARY_OPENING}\n\nSummary:\nORD summary {n}"})
        elif kind == "u":
            o.update(type="user", message={"role": "user", "content": content})
        elif kind == "L":
            o.update(type="system", subtype="local_command", content=content[0]["text"], level="info", isMeta=False)
        else:
            mid += kind in "aES"
            if kind in "ES":
                o["isApiErrorMessage"] = True
            rid = int(kind[1:]) if kind.startswith("=") else mid
            o.update(type="assistant", message={
                **({} if kind in "nN" else {"id": f"msg_ord_{n}_{rid}"}), "type": "message", "role": "assistant", "model": "<synthetic>" if kind == "S" else "claude-opus-5-5",
                "content": content,
                # (a line the reply goes on after has none yet, as Claude Code writes it)
                "stop_reason": None if k + 1 < len(steps) and steps[k + 1][0] == "A"
                else "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn",
                "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
            }, **({} if kind == "N" else {"requestId": f"req_ord_{n}_{rid}"}))
        out.append(o)
        if not side:
            parent = o["uuid"]
    return out


SUMMARY_OPENING = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation."


def _boundary(o: dict[str, Any], uuid: str) -> dict[str, Any]:
    """A compact boundary (of `/compact`, no preserved segment) under the line `o` hangs off."""
    fields = {k: v for k, v in o.items() if k not in ("parentUuid", "uuid")}
    return {
        **fields, "parentUuid": None, "logicalParentUuid": o["parentUuid"], "uuid": uuid, "type": "system", "subtype": "compact_boundary",
        "content": "Conversation compacted", "isMeta": False, "level": "info", "compactMetadata": {"trigger": "manual", "preTokens": 1000},
    }


def write_probes(out: Path, base: Path = BASE) -> list[Path]:
    data = base.read_bytes()
    leaf = json.loads(data.splitlines()[LEAF_LINE - 1])
    files = []
    for n, p in enumerate(PROBES):
        f = out / f"order{n:03d}.jsonl"
        f.write_bytes((b"" if p.alone else data) + b"".join(json.dumps(o).encode() + b"\n" for o in lines(p, n, leaf)))
        files.append(f)
    return files


def _orphans_sent(harness: Any, body: dict[str, Any], transcript: str, names: dict[str, str]) -> set[str]:
    """The items (record ids) of the results the request carries whose call the reply right before
    their message does not make."""
    out: set[str] = set()
    blocks = harness.request_blocks(body, transcript)
    for before, s in zip(_calls_before(body), blocks, strict=True):
        if s.kind == "tool_result" and s.call_id not in before:
            out.add(names.get(s.line_uuid or "", s.line_uuid or f"synthetic:{s.call_id}"))
    return out


def _calls_before(body: dict[str, Any]) -> list[set[str]]:
    """Per block of the request, in order: the calls the assistant message right before its message makes."""
    from tests.peers.claude_code_resume.harness import _blocks

    out: list[set[str]] = []
    before: set[str] = set()
    for m in body.get("messages") or []:
        bs = _blocks(m.get("content"))
        out += [before] * len(bs)
        before = {b.get("id") for b in bs if b.get("type") == "tool_use"} if m.get("role") == "assistant" else set()
    return out


# (the items, in order; the items holding an orphaned result; the block order of each reply of
# several blocks, "t" a text, "c" a call, "k" thinking, "o" any other block)
Verdict = tuple[list[Any], list[str], list[tuple[str, str]]]
_SHAPE = {"text": "t", "tool_use": "c", "tool_call": "c", "thinking": "k"}


def _shapes_sent(harness: Any, body: dict[str, Any], transcript: str, names: dict[str, str]) -> list[tuple[str, str]]:
    """Per assistant message of several blocks the request carries: (the item of its first block,
    its blocks' kinds in order)."""
    by_message: dict[int, list[Any]] = {}
    for s in harness.request_blocks(body, transcript):
        if s.role == "assistant":
            by_message.setdefault(s.message, []).append(s)
    return [
        (names.get(bs[0].line_uuid or "", bs[0].line_uuid or "?"), "".join(_SHAPE.get(b.kind, "o") for b in bs))
        for bs in by_message.values()
        if len(bs) > 1
    ]


def _shapes_predicted(report: Any, predicted: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """`_shapes_sent` of the prediction: each predicted reply's record's blocks (a trimmed one's as
    sent: `RecordSource.sent_message`), of its calls those the item says are sent (`tool_call_ids`:
    not the calls of lines left out, nor repeated ones)."""
    out = []
    for m in predicted:
        if m["role"] != "assistant" or m["synthetic"] or m["seq"] is None:
            continue
        sent = set(m["tool_call_ids"])
        blocks = []
        rec = report.ledger.records[m["seq"]]
        for b in (rec._source.sent_message(rec) if report.context[m["index"]].trimmed else rec.message).blocks:
            if b.type != "tool_call" or b.call_id in sent:
                sent.discard(b.call_id)
                blocks.append(b)
        if len(blocks) > 1:
            out.append((m["record_id"], "".join(_SHAPE.get(b.type, "o") for b in blocks)))
    return out


def run(out: Path, names: set[str] | None = None) -> list[tuple[Probe, Verdict | str, Verdict]]:
    """Every probe (of `names`: all by default): (probe, what Claude Code sent or why it sent
    nothing, inspector's prediction)."""
    from inspector.analysis import analyze
    from inspector.analysis.export import context_json
    from inspector.formats import load
    from tests.test_claude_code_accepts import _harness, _predicted_item, _record_of_line, _sent_items

    harness = _harness()
    picked = [(p, f) for p, f in zip(PROBES, write_probes(out), strict=True) if names is None or p.name in names]
    runs = harness.resume_many([str(f) for _, f in picked], str(out / "resume"))
    rows: list[tuple[Probe, Verdict | str, Verdict]] = []
    for (p, f), r in zip(picked, runs, strict=True):
        report = analyze(load(str(f)))
        predicted = context_json(report)["messages"]
        want: Verdict = (
            [_predicted_item(m) for m in predicted],
            sorted(_predicted_item(m)[0] for m in predicted if m.get("orphan")),
            _shapes_predicted(report, predicted),
        )
        try:
            body = r.first_main()
            items = _sent_items(harness, body, r.transcript, report.ledger, predicted)[0]
            names = _record_of_line(report.ledger)
            got: Verdict | str = (
                items, sorted(_orphans_sent(harness, body, r.transcript, names)), _shapes_sent(harness, body, r.transcript, names))
        except harness.HarnessError:
            got = f"no request (rc {r.rc})"
        rows.append((p, got, want))
    return rows


def _show(v: Verdict | tuple[list[Any], list[str]] | str) -> str:
    """The items from the probe's own lines on (`L<k>`: its k-th line, 0 the prompt), a made-up
    result as `miss`, the reply on resume as `resume`, then the items holding an orphan, then the
    block order of each of the probe's replies of several blocks."""

    def name(rid: str) -> str:
        if rid.startswith("synthetic:"):
            return "miss"
        if rid.startswith("resume:"):
            return "resume"
        return f"L{int(rid.rsplit('-', 1)[-1])}" if rid.startswith("0e4d1a9e-") else "."  # (L0: the first step when alone)

    if isinstance(v, str):
        return v
    items, orphans, *rest = v
    shown = " ".join(n for n in (name(i[0]) for i in items) if n != ".")
    shapes = " ".join(f"{name(i)}:{k}" for i, k in (rest[0] if rest else []) if name(i) != ".")
    return shown + (f" orphans {' '.join(name(o) for o in orphans)}" if orphans else "") + (f" blocks {shapes}" if shapes else "")


def main() -> int:
    from tests.peers.claude_code_resume.type_probe import print_verdicts

    with tempfile.TemporaryDirectory() as tmp:
        print_verdicts(run(Path(tmp)), _show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
