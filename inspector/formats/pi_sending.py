"""The entries pi (0.73.1) cannot open or send: where its own code stops with a TypeError.

pi reads a session line by line with `JSON.parse` and checks no types. Three places then read
what it parsed as if every entry had the shape pi writes, and stop the session with a TypeError
on one that does not (each found by resuming damaged copies of a session with the real pi,
`tests/peers/pi_resume/type_probe.py`):

- Opening (`SessionManager` in pi-coding-agent `dist/core/session-manager.js`): `_buildIndex`
  reads every line's `entry.type` (a line that is JSON `null` stops it), and `buildSessionContext`
  reads `entry.message.role` of every message entry on the active path (a null or missing message
  stops it). pi cannot open the session (`resume_refused`, `open_failure`).
- Sending (pi-ai `dist/providers/transform-messages.js`, then the provider's `convertMessages`:
  `openai-completions.js`, `anthropic.js`): every message pi's context holds is converted before
  each request, the answers it drops for their stop reason included. A user message's content
  that is neither text nor a list is mapped over (`msg.content.map`), each of its blocks' `type`
  read and a text block's text cleaned as a string (`sanitizeSurrogates`: `text.replace`); an
  answer's content is `flatMap`ped, a text block's text and a thinking block's thinking trimmed;
  a tool result's content iterated (`for ... of`, `.filter`). On a content of another shape the
  request fails before it is sent, every time (`send_failure`; the analysis says so when the
  message is in the next request: `request_fails`).

A shape that one provider converts and another does not (a tool result's content that is a
string: iterated as characters for a model without image input, `.filter` fails for one with it)
is not listed: which one the next request uses is not in the file.
"""

from __future__ import annotations

from typing import Any

from inspector.formats.fields import json_type

MISSING: Any = object()  # a field the object does not have (JavaScript's undefined)


def open_failure(o: dict[str, Any]) -> str | None:
    """Why pi stops opening a session whose active path holds this entry, or None."""
    if o.get("type") == "message" and o.get("message") is None:
        what = "null" if "message" in o else "missing"
        return (
            f"its message is {what}: pi reads every message's role on the active path when it opens the session "
            'and stops with a TypeError ("Cannot read properties of '
            f"{'null' if what == 'null' else 'undefined'} (reading 'role')\")"
        )
    return None


def send_failure(o: dict[str, Any]) -> str | None:
    """Why pi-ai cannot convert this entry's message into a request, or None."""
    t = o.get("type")
    if t == "custom_message":
        return _user_content(o.get("content", MISSING))
    m = o.get("message")
    if t != "message" or not isinstance(m, dict):
        return None
    role = m.get("role")
    content = m.get("content", MISSING)
    if role in ("user", "custom"):
        return None if role == "custom" and isinstance(content, str) else _user_content(content)
    if role == "assistant":
        return _answer_content(content)
    if role == "toolResult":
        return _result_content(content)
    return None


def type_error(value: Any, reading: str, expression: str) -> str:
    """The TypeError's message JavaScript gives where code reads `expression.reading` of VALUE
    (null, undefined: `MISSING`, or a value without that method)."""
    if value is None or value is MISSING:
        return f"Cannot read properties of {'null' if value is None else 'undefined'} (reading '{reading}')"
    return f"{expression}.{reading} is not a function"


def _fails(what: str, value: Any, reading: str, expression: str) -> str:
    """WHAT, and the TypeError pi-ai stops with when it reads VALUE (as `expression`, `.reading`)."""
    return f'{what}: pi-ai stops with a TypeError building every request that holds it ("{type_error(value, reading, expression)}")'


def _user_content(content: Any) -> str | None:
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return _fails(f"its content is {_kind(content)}, not text or a list", content, "map", "msg.content")
    for b in content:
        if b is None:
            return _fails("its content holds a block that is null", None, "type", "item")
        text = b.get("text", MISSING) if isinstance(b, dict) and b.get("type") == "text" else ""
        if not isinstance(text, str):
            return _fails(
                f"a text block of its content has a text that is {_kind(text)}", text, "replace", "text"
            )
    return None


def _answer_content(content: Any) -> str | None:
    if not isinstance(content, list):
        return _fails(
            f"its content is {_kind(content)}, not a list", content, "flatMap", "assistantMsg.content"
        )
    for b in content:
        if b is None:
            return _fails("its content holds a block that is null", None, "type", "block")
        if not isinstance(b, dict):
            continue
        kind = b.get("type")
        text = b.get("text", MISSING) if kind == "text" else ""
        if not isinstance(text, str):
            return _fails(
                f"a text block of its content has a text that is {_kind(text)}", text, "trim", "block.text"
            )
        thinking = b.get("thinking")
        if kind == "thinking" and not isinstance(thinking, str) and truthy(thinking):
            return _fails(
                f"a thinking block of its content has a thinking that is {_kind(thinking)}",
                thinking,
                "trim",
                "block.thinking",
            )
    return None


def _result_content(content: Any) -> str | None:
    if isinstance(content, str) or (isinstance(content, list) and None not in content):
        return None
    if isinstance(content, list):
        return _fails("its content holds a block that is null", None, "type", "block")
    what = f"its content is {_kind(content)}, not a list"
    return f'{what}: pi-ai stops with a TypeError building every request that holds it ("content is not iterable")'


def _kind(v: Any) -> str:
    return "missing" if v is MISSING else json_type(v)


def truthy(v: Any) -> bool:
    """JavaScript's truthiness of a parsed JSON value (an empty list or object is true; NaN, which a
    lenient read may hold, is false)."""
    return v is not None and v is not False and v != 0 and v != "" and v == v
