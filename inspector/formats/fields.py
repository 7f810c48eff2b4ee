"""The one guard between a producer's JSON and the adapters (issue 11): the types of the fields
each adapter reads, and `check_fields`, which holds a parsed line against them.

A field holding another JSON type than the one declared (an entry `type` that is an object, a
text part whose `text` is a list, an id that is a number, a token count past 64 bits, ...) is
removed from the object before the adapter sees it, and a Diagnostic names the line, the field,
the type found and the type expected. The adapter then reads the record as if the field were
missing: an entry without a usable `type` or `role` is kept as an unknown record, shown, never
fatal. So an adapter only ever hands the ledger model values of the declared types.

`null` is accepted everywhere: every adapter reads a null field as a missing one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspector.ledger.model import Diagnostic

INT64 = 1 << 63


class Int:
    """A JSON integer a 64-bit count can hold (not a boolean)."""


class Number:
    """A JSON number (integer within 64 bits, or float; not a boolean)."""


@dataclass(slots=True)
class Field:
    """The JSON types a field may hold; for an object its own fields, for a list its items'
    (the fields of those items that are objects: an adapter reads any other item as opaque)."""

    types: tuple[type, ...]
    fields: dict[str, Field] | None = None
    items: dict[str, Field] | None = None


def STR() -> Field:
    return Field((str,))


def INT() -> Field:
    return Field((Int,))


def NUM() -> Field:
    return Field((Number,))


def OBJ(**fields: Field) -> Field:
    return Field((dict,), fields=fields)


def LIST(**items: Field) -> Field:
    return Field((list,), items=items)


def ANY(**fields: Field) -> Field:
    """Any type (the adapter reports a wrong one itself); when an object, its fields checked."""
    return Field((dict, list, str, Number, bool), fields=fields)


def TEXT_OR_LIST(**items: Field) -> Field:
    """Content: a string, or a list of parts."""
    return Field((str, list), items=items)


def ANY_ID() -> Field:
    return Field((str, Number))


_NAMES: dict[type, str] = {
    str: "a string",
    Int: "an integer",
    Number: "a number",
    dict: "an object",
    list: "a list",
    bool: "a boolean",
}


def json_type(v: Any) -> str:
    """The JSON type of a parsed value, as a diagnostic names it."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer" if -INT64 <= v < INT64 else "an integer too large for 64 bits"
    if isinstance(v, float):
        return "a number" if -INT64 <= v < INT64 else "a number too large for 64 bits"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _fits(v: Any, t: type) -> bool:
    if t is Int:
        return type(v) is int and -INT64 <= v < INT64
    if t is Number:
        return type(v) in (int, float) and -INT64 <= v < INT64  # (NaN fails too)
    return isinstance(v, t) and not (t is not bool and isinstance(v, bool))


@dataclass(slots=True)
class WrongType:
    path: str
    found: str
    expected: str

    def sentence(self) -> str:
        return f"field {self.path!r} is {self.found}, not {self.expected}; read without it"


def _expected(types: tuple[type, ...]) -> str:
    return " or ".join(_NAMES.get(t, t.__name__) for t in types)


def check_fields(obj: dict[str, Any], spec: dict[str, Field], prefix: str = "") -> list[WrongType]:
    """Remove every field of `obj` (nested ones too) whose type `spec` does not allow; return
    what was removed, in the order `spec` names the fields. Fields `spec` does not name are left alone."""
    out: list[WrongType] = []
    _checker(spec)(obj, prefix, out)
    return out


def checker(spec: dict[str, Field]) -> Callable[[dict[str, Any], str, list[WrongType]], None]:
    """`check_fields` for `spec` as its compiled test `(obj, prefix, out)`: what a loader's
    per-line loop calls, without a lookup and a list per line."""
    return _checker(spec)  # type: ignore[no-any-return]


class FewFirst:
    """`checker(spec)` for a loader that mostly checks a few objects only (ADK's and adk-go's events
    read whole: most are read from their heads): the first `few` objects it is handed are checked
    by walking `spec` (`check_interpreted`, some 3x slower an object), the rest by `spec`'s compiled
    checker, compiled at the first of them (its few milliseconds, once a process, cost more than
    checking a few dozen objects)."""

    __slots__ = ("compiled", "left", "spec")

    def __init__(self, spec: dict[str, Field], few: int = 64) -> None:
        self.spec = spec
        self.left = few  # objects still to walk
        self.compiled: Callable[[dict[str, Any], str, list[WrongType]], None] | None = None

    def __call__(self, obj: dict[str, Any], prefix: str, out: list[WrongType]) -> None:
        if self.compiled is not None:
            self.compiled(obj, prefix, out)
        elif self.left > 0:
            self.left -= 1
            check_interpreted(self.spec, obj, prefix, out)
        else:
            self.compiled = checker(self.spec)
            self.compiled(obj, prefix, out)


def check_interpreted(spec: dict[str, Field], obj: dict[str, Any], prefix: str, out: list[WrongType]) -> None:
    """`checker(spec)(obj, prefix, out)`, walking `spec` instead of compiling it (`FewFirst`). (Its
    common-form test is `_fits`' own shortcut: a value passing it fits, so only `_fits` is asked.)"""
    get = obj.get
    for key, f in spec.items():
        v = get(key)
        if v is None:
            continue
        tv = type(v)
        if not any(_fits(v, t) for t in f.types):
            out.append(WrongType(prefix + key, json_type(v), _expected(f.types)))
            del obj[key]
        elif f.fields:
            if tv is dict:
                check_interpreted(f.fields, v, prefix + key + ".", out)
        elif f.items and tv is list:
            for j, x in enumerate(v):
                if type(x) is dict:
                    check_interpreted(f.items, x, prefix + key + "[" + str(j) + "].", out)


# Every line of a big file goes through check_fields: each spec is compiled once into a function
# that tests its fields inline, the common case (the exact type declared) with one `type(v) is T`,
# anything else with `_fits` as before. Keyed by the spec's id, the spec kept alive beside it.
_CHECKERS: dict[int, tuple[dict[str, Field], Any]] = {}
_FAST_TEST = {str: "str", dict: "dict", list: "list", bool: "bool"}


def _checker(spec: dict[str, Field]) -> Any:
    hit = _CHECKERS.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    fn = _compile(spec)
    _CHECKERS[id(spec)] = (spec, fn)
    return fn


def _fast_test(types: tuple[type, ...]) -> str:
    """An expression true for `v` of a declared type's common form (False: ask `_fits`)."""
    tests = []
    for t in types:
        if t in _FAST_TEST:
            tests.append(f"tv is {_FAST_TEST[t]}")
        elif t is Int:
            tests.append("(tv is int and -INT64 <= v < INT64)")
        elif t is Number:
            tests.append("((tv is int or tv is float) and -INT64 <= v < INT64)")
    return " or ".join(tests) or "False"


def _compile(spec: dict[str, Field]) -> Any:
    env: dict[str, Any] = {"WrongType": WrongType, "json_type": json_type, "_fits": _fits, "INT64": INT64}
    src = ["def check(obj, prefix, out):", "    get = obj.get"]
    for i, (key, f) in enumerate(spec.items()):
        env[f"T{i}"] = f.types
        k = repr(key)
        src += [
            f"    v = get({k})",
            "    if v is not None:",
            "        tv = type(v)",
            f"        if not ({_fast_test(f.types)}) and not any(_fits(v, t) for t in T{i}):",
            f"            out.append(WrongType(prefix + {k}, json_type(v), {_expected(f.types)!r}))",
            f"            del obj[{k}]",
        ]
        if f.fields:
            env[f"C{i}"] = _checker(f.fields)
            src.append(f"        elif tv is dict: C{i}(v, prefix + {key + '.'!r}, out)")
        elif f.items:
            env[f"C{i}"] = _checker(f.items)
            src += [
                "        elif tv is list:",
                "            for j, x in enumerate(v):",
                f"                if type(x) is dict: C{i}(x, prefix + {key + '['!r} + str(j) + '].', out)",
            ]
    exec(compile("\n".join(src) + "\n", f"<check_fields {', '.join(spec)[:60]}>", "exec"), env)
    return env["check"]


def line_diagnostics(line: int, wrong: list[WrongType], where: str | None = None) -> list[Diagnostic]:
    """One diagnostic per field removed from a line (`where`: how the line is named)."""
    place = where or f"line {line}"
    return [Diagnostic(line, "wrong_type", f"{place}: {w.sentence()}", recovered="the record, without that field") for w in wrong]


# ---------------------------------------------------------------------------------------- the formats

_PI_BLOCK = {
    "type": STR(),
    "text": STR(),
    "thinking": STR(),
    "id": STR(),
    "name": STR(),
    "mimeType": STR(),
}
_PI_USAGE = {"input": NUM(), "output": NUM(), "cacheRead": NUM(), "cacheWrite": NUM(), "inputTokens": NUM(), "outputTokens": NUM()}

PI: dict[str, Field] = {
    "type": STR(),
    "id": STR(),
    "parentId": STR(),
    "timestamp": ANY_ID(),
    "version": INT(),
    "message": OBJ(
        role=STR(),
        content=TEXT_OR_LIST(**_PI_BLOCK),
        model=STR(),
        provider=STR(),
        errorMessage=STR(),
        usage=OBJ(**_PI_USAGE),
        toolCallId=STR(),
        toolName=STR(),
        summary=STR(),
    ),
    "content": TEXT_OR_LIST(**_PI_BLOCK),
    "summary": STR(),
    "firstKeptEntryId": STR(),
    "firstKeptEntryIndex": INT(),
    "tokensBefore": INT(),
    "details": ANY(usage=OBJ(**_PI_USAGE), retainedTailBudgetTokens=INT()),
    "provider": STR(),
    "modelId": STR(),
}

_CC_BLOCK: dict[str, Field] = {
    "type": STR(),
    "text": STR(),
    "thinking": STR(),
    "id": ANY_ID(),  # (a number too: Claude Code counts it as a call id, `claude_code._call_key`)
    "name": STR(),
    "tool_use_id": ANY_ID(),
    "content": TEXT_OR_LIST(type=STR(), text=STR()),
}
_CC_USAGE = {k: INT() for k in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")}

CLAUDE_CODE: dict[str, Field] = {
    "type": STR(),
    "subtype": STR(),
    "uuid": STR(),
    "parentUuid": STR(),
    "logicalParentUuid": STR(),
    "sessionId": STR(),
    "agentId": STR(),
    "requestId": STR(),
    "timestamp": ANY_ID(),
    "message": ANY(id=STR(), role=STR(), model=STR(), content=TEXT_OR_LIST(**_CC_BLOCK), usage=OBJ(**_CC_USAGE)),
    "compactMetadata": ANY(
        trigger=STR(),
        preTokens=INT(),
        preservedSegment=OBJ(headUuid=STR(), tailUuid=STR()),
        preservedMessages=OBJ(uuids=LIST()),
    ),
    "toolUseResult": ANY(agentId=STR()),
}

_CODEX_CONTENT = TEXT_OR_LIST(type=STR(), text=STR())
_CODEX_ITEM: dict[str, Field] = {
    "type": STR(),
    "role": STR(),
    "id": STR(),
    "call_id": STR(),
    "name": STR(),
    "phase": STR(),
    "content": _CODEX_CONTENT,
    "summary": Field((list, str), items={"type": STR(), "text": STR()}),  # (turn_context: a setting)
    "encrypted_content": STR(),
}
_CODEX_TOKENS = {k: INT() for k in ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens")}
_CODEX_PAYLOAD = {
    **_CODEX_ITEM,
    "content": _CODEX_CONTENT,
    "output": ANY(content=_CODEX_CONTENT, text=STR()),
    "model": STR(),
    "model_provider": STR(),
    "session_id": STR(),
    # (a list is the struct's sequence form, which Codex reads: `codex_lines.base_instructions_problem`)
    "base_instructions": Field((str, dict, list), fields={"text": STR()}),
    "num_turns": INT(),
    "message": ANY(),  # (compacted: the adapter says what a non-string is)
    "replacement_history": Field((list, dict, str, Number, bool), items=_CODEX_ITEM),
    "info": OBJ(last_token_usage=OBJ(**_CODEX_TOKENS), model_context_window=INT()),
    "usage": OBJ(**_CODEX_TOKENS),
}
_CODEX_PAYLOAD["content"] = Field((str, list), items={"type": STR(), "text": STR()})

CODEX: dict[str, Field] = {
    "type": STR(),
    "timestamp": ANY_ID(),
    "payload": ANY(**_CODEX_PAYLOAD),
    "metadata": OBJ(),
}

_ADK_PARTS = LIST(
    text=STR(),
    function_call=OBJ(id=STR(), name=STR()),
    function_response=OBJ(id=STR(), name=STR()),
)
_ADK_CONTENT = OBJ(role=STR(), parts=_ADK_PARTS)
_ADK_LAX_FLOAT = Field((Number, str, bool))

ADK: dict[str, Field] = {
    "id": STR(),
    "invocation_id": STR(),
    "author": STR(),
    "branch": STR(),
    "content": _ADK_CONTENT,
    "finish_reason": STR(),
    "error_message": STR(),
    "usage_metadata": OBJ(
        **{k: INT() for k in ("prompt_token_count", "candidates_token_count", "cached_content_token_count", "thoughts_token_count")}
    ),
    "actions": OBJ(
        transfer_to_agent=STR(),
        # (a float in pydantic's lax mode: a boolean or numeric string too, `adk_compaction._lax_num`)
        compaction=OBJ(start_timestamp=_ADK_LAX_FLOAT, end_timestamp=_ADK_LAX_FLOAT, compacted_content=_ADK_CONTENT),
    ),
}

# Native ledgers check every field themselves (`native.py`); nothing to declare here.
SPECS: dict[str, dict[str, Field]] = {"pi": PI, "claude_code": CLAUDE_CODE, "codex": CODEX, "adk": ADK}
