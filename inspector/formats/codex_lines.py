"""Which rollout lines Codex reads: the line rule of Codex's resume, for the reader to follow.

Codex reads each line of a rollout whole into its own types (`serde_json::from_str::<Value>`, then
`from_value::<RolloutLine>`, in codex-rs/rollout's `load_rollout_items`) and skips any line that
fails either step: nothing of a skipped line reaches the model. So where the reader would keep a
damaged line's other fields (`fields.check_fields` drops only the wrong one), Codex drops the line,
and so must the prediction. `skip_reason` says why Codex skips a parsed line, `json_skip_reason`
why it skips one our lenient JSON reading still read.

The types mirrored here are those of the pinned Codex (0.169.0), as the real binary reads them
(`python -m tests.peers.codex_resume.type_probe` appends a hundred damaged lines to a rollout and
resumes it once; `tests/test_codex_line_rule.py` holds this module to it):

- a line: `timestamp` a string (required), `ordinal` an unsigned 64-bit integer or null, `metadata`
  an object or null (its `history_sequence` an unsigned integer); an unknown line `type` is read and
  ignored;
- a `response_item` payload: `type` a string (required); for the item types below, the fields
  listed (an optional field may be missing or null, a required one may not); an item type not
  below is read as Codex's `Other`, never sent;
- a `compacted` payload: `message` a string, `replacement_history` null or a list of items that
  each pass the response item rule (one bad item: the whole compaction is skipped).

Codex refuses to resume a rollout at all (an error, nothing sent) when its session_meta lacks a
field it requires or holds one it cannot read (`session_meta_problem`: `timestamp`, `cwd`,
`originator`, `cli_version` strings; `model_provider` a string or null; `session_id` a UUID; `source`
not null, a number or an empty object), when its session_meta's `history_mode` is not `legacy`, `paginated` or an object, or when it is `paginated` and the last line
Codex reads has no `ordinal` (`history_mode_problem`, `codex._Builder.resume_refusal`), and when
its session_meta's `base_instructions` is neither missing, null, nor an object with a string `text`
and a `provenance` that is missing, null or an object, nor that struct's sequence form, a list of
the text and at most the provenance (`base_instructions_problem`: serde fails the session_meta, and
Codex says the rollout "does not start with session metadata").

Not mirrored (Codex reads and we read, or both skip, or the two may part, as before): the fields
of event messages, turn contexts and session metas, item types not listed, an integer past 64
bits or a value nested 128 deep in a field no type above names (serde skips such a line; telling
would cost every line a walk of its bytes).
"""

from __future__ import annotations

import uuid
from typing import Any

import orjson

from inspector.formats.fields import json_type
from inspector.formats.jsonl import RawLine
from inspector.ledger.quoting import quote

# Tagged parts: a part's `type` -> the string field that part requires.
TEXT_PARTS = {"input_text": "text", "output_text": "text", "input_image": "image_url"}
OUTPUT_PARTS = {"input_text": "text", "input_image": "image_url"}
SUMMARY_PARTS = {"summary_text": "text"}
REASONING_PARTS = {"reasoning_text": "text", "text": "text"}
PHASES = frozenset({"commentary", "final_answer"})

_STR, _OPT_STR, _PARTS, _OPT_PARTS, _OUTPUT, _PHASE = range(6)
# An item type -> {field: (its check, the parts it may hold)}.
_Checks = dict[str, tuple[int, dict[str, str] | None]]
ITEMS: dict[str, _Checks] = {
    "message": {
        "id": (_OPT_STR, None),
        "role": (_STR, None),
        "content": (_PARTS, TEXT_PARTS),
        "phase": (_PHASE, None),
        "status": (_OPT_STR, None),
    },
    "function_call": {
        "id": (_OPT_STR, None),
        "name": (_STR, None),
        "arguments": (_STR, None),
        "call_id": (_STR, None),
        "namespace": (_OPT_STR, None),
        "status": (_OPT_STR, None),
    },
    "function_call_output": {"call_id": (_STR, None), "output": (_OUTPUT, OUTPUT_PARTS)},
    "custom_tool_call": {
        "id": (_OPT_STR, None),
        "status": (_OPT_STR, None),
        "call_id": (_STR, None),
        "name": (_STR, None),
        "input": (_STR, None),
    },
    "custom_tool_call_output": {"call_id": (_STR, None), "output": (_OUTPUT, OUTPUT_PARTS)},
    "reasoning": {
        "id": (_OPT_STR, None),
        "summary": (_PARTS, SUMMARY_PARTS),
        "content": (_OPT_PARTS, REASONING_PARTS),
        "encrypted_content": (_OPT_STR, None),
    },
}


def _is_u64(v: Any) -> bool:
    """An unsigned integer (one past 64 bits is not told from one within: see the module's doc)."""
    return type(v) is int and v >= 0


def parts_problem(v: Any, parts: dict[str, str], where: str) -> str | None:
    """Why Codex cannot read a list of tagged parts (None: it reads it)."""
    if type(v) is not list:
        return f"{where} is {json_type(v)}, not a list"
    for i, part in enumerate(v):
        if type(part) is not dict:
            return f"{where}[{i}] is {json_type(part)}, not an object"
        t = part.get("type")
        if type(t) is not str:
            return f"{where}[{i}] has {'no type' if t is None else 'a type of ' + json_type(t)}"
        need = parts.get(t)
        if need is None:
            return f"{where}[{i}] is of a type Codex does not know ({quote(t)})"
        if type(part.get(need)) is not str and not (t == "input_image" and type(part.get("file_id")) is str):
            return f"{where}[{i}]'s {need} is {json_type(part.get(need))}, not a string"
    return None


def _field_problem(p: dict[str, Any], name: str, check: int, parts: dict[str, str] | None, where: str) -> str | None:
    v = p.get(name)
    at = f"{where}'s {name}"
    if check == _STR:
        return None if type(v) is str else f"{at} is {json_type(v)}, not a string"
    if v is None:
        if check in (_PARTS, _OUTPUT):
            return f"{at} is {'null' if name in p else 'missing'}"
        return None
    if check == _OPT_STR:
        return None if type(v) is str else f"{at} is {json_type(v)}, not a string"
    if check == _PHASE:
        return None if type(v) is str and v in PHASES else f"{at} is {json_type(v) if type(v) is not str else repr(v)}, not one of Codex's phases"
    if check == _OUTPUT and type(v) is str:
        return None
    return parts_problem(v, parts or {}, at)


def item_skip_reason(p: Any, where: str = "its payload") -> str | None:
    """Why Codex skips a response item (None: it reads it)."""
    if type(p) is not dict:
        return f"{where} is {json_type(p)}, not an object"
    it = p.get("type")
    if type(it) is not str:
        return f"{where} has {'no type' if it is None else 'a type of ' + json_type(it)}"
    for name, (check, parts) in ITEMS.get(it, {}).items():
        why = _field_problem(p, name, check, parts, where)
        if why is not None:
            return why
    return None


def _compacted_skip_reason(p: Any) -> str | None:
    if type(p) is not dict:
        return f"its payload is {json_type(p)}, not an object"
    if "message" not in p:
        return "its payload has no message"
    if type(p["message"]) is not str:
        return f"its payload's message is {json_type(p['message'])}, not a string"
    rh = p.get("replacement_history")
    if rh is None:
        return None
    if type(rh) is not list:
        return f"its replacement history is {json_type(rh)}, not a list"
    for i, item in enumerate(rh):
        why = item_skip_reason(item, f"its replacement history's item {i}")
        if why is not None:
            return why
    return None


def skip_reason(o: dict[str, Any]) -> str | None:
    """Why Codex skips this parsed line (None: it reads it)."""
    ts = o.get("timestamp")
    if type(ts) is not str:
        return "it has no timestamp" if ts is None else f"its timestamp is {json_type(ts)}, not a string"
    n = o.get("ordinal")
    if n is not None and not _is_u64(n):
        return f"its ordinal is {json_type(n) if type(n) is not int else 'negative'}, not an unsigned integer"
    meta = o.get("metadata")
    if meta is not None:
        if type(meta) is not dict:
            return f"its metadata is {json_type(meta)}, not an object"
        hs = meta.get("history_sequence")
        if hs is not None and not _is_u64(hs):
            return f"its metadata's history_sequence is {json_type(hs)}, not an unsigned integer"
    t = o.get("type")
    if t == "response_item":
        return item_skip_reason(o.get("payload"))
    if t == "compacted":
        return _compacted_skip_reason(o.get("payload"))
    return None


def json_skip_reason(rl: RawLine) -> str | None:
    """Why Codex skips a line that our reading of JSON (JSON.parse's rules) read: one glued to
    another value, one not valid UTF-8, one nested deeper than orjson reads, one holding a lone
    surrogate escape."""
    if len(rl.objects) > 1:
        return "another JSON value follows the first on its line"
    d = rl.diagnostic
    if d is not None and "invalid UTF-8" in d.message:
        return "it is not valid UTF-8"
    if d is not None and d.problem == "too_deep":  # (read with its deepest values cut: serde_json stops at 128 levels)
        return "it nests deeper than Codex's JSON parser reads (128 levels)"
    if rl.lenient and rl.objects:
        try:
            orjson.dumps(rl.objects[0])
        except (orjson.JSONEncodeError, RecursionError):
            return "it holds a lone surrogate escape"
    return None


# serde_json's recursion limit: a line nesting 128 levels (arrays and objects) fails to parse and
# Codex skips it; one of 127 is read (type probe: "a value nested 125 deep (line 127)" read, "126
# deep (line 128)" skipped).
SERDE_DEPTH = 128


def nesting(v: Any) -> int:
    """How many levels of arrays and objects V nests (a scalar: 0), walked without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(v, 1)]
    while stack:
        x, d = stack.pop()
        if type(x) is dict:
            x = list(x.values())
        elif type(x) is not list:
            continue
        deepest = max(deepest, d)
        stack.extend((y, d + 1) for y in x if type(y) in (dict, list))
    return deepest


def fields_read(p: dict[str, Any]) -> dict[str, Any]:
    """The item P with only the fields the mirrored type of its `type` names (serde drops the
    others as it reads: what Codex holds of it, and writes when it compacts)."""
    names = ITEMS.get(p.get("type"), {})  # type: ignore[call-overload]
    return {k: v for k, v in p.items() if k == "type" or k in names}


HISTORY_MODES = frozenset({"legacy", "paginated"})


def history_mode_problem(header: dict[str, Any] | None) -> str | None:
    """Why Codex refuses to resume a rollout for its session_meta's `history_mode` (a string it
    knows or an object; absent: legacy), None when it does not."""
    if header is None or "history_mode" not in header:
        return None
    mode = header["history_mode"]
    if type(mode) is dict or (type(mode) is str and mode in HISTORY_MODES):
        return None
    found = repr(mode) if type(mode) is str else json_type(mode)
    return f"its session_meta's history_mode is {found}, not legacy or paginated"


# The session_meta fields Codex 0.169 reads as required strings (`SessionMeta`; probed: missing, null
# or a number, it refuses the rollout, "does not start with session metadata"; an empty string it reads).
META_TEXTS = ("timestamp", "cwd", "originator", "cli_version")


def session_meta_problem(header: dict[str, Any] | None, removed: dict[str, str]) -> str | None:
    """Why Codex refuses to resume a rollout for its session_meta's own fields (`removed`: what the
    field guard took out of it, by field, as found), None when it does not or this does not tell.
    Probed on Codex 0.169: each of META_TEXTS must be a string; `model_provider` a string or null;
    `session_id`, when present, a UUID; `source`, when present, not null, a number or an empty
    object (a string, any, and an object naming its variant are read)."""
    if header is None:
        return None
    for key in META_TEXTS:
        v = header.get(key)
        if type(v) is not str:
            found = removed.get(key) or (json_type(v) if key in header else None)
            return f"its session_meta's {key} is {found}, not a string" if found else f"its session_meta has no {key}"
    if "model_provider" in removed:
        return f"its session_meta's model_provider is {removed['model_provider']}, not a string"
    if "session_id" in removed or "session_id" in header:
        sid = header.get("session_id")
        if type(sid) is not str or not _is_uuid(sid):
            found = removed.get("session_id") or (repr(sid) if type(sid) is str else json_type(sid))
            return f"its session_meta's session_id is {found}, not a UUID"
    if "source" in header:
        src = header["source"]
        if src is None or type(src) in (int, float, bool) or src == {}:
            return f"its session_meta's source is {json_type(src) if src != {} else 'an empty object'}, not a source Codex knows"
    return None


def _is_uuid(s: str) -> bool:
    try:
        uuid.UUID(s)
    except ValueError:
        return False
    return True


def base_instructions_problem(header: dict[str, Any] | None) -> str | None:
    """Why Codex refuses to resume a rollout for its session_meta's `base_instructions` (codex-rs
    `BaseInstructions`, a struct: an object with a string `text`), None when it does not or when
    this does not tell. A bare string, a number, an object without a string `text` or with a
    `provenance` of another JSON type fail the session_meta: the real Codex 0.169 then stops
    ("does not start with session metadata"). A list is serde's sequence form of the struct: Codex
    reads `[text]`, `[text, null]` and `[text, provenance]`, and refuses an empty list, a first item
    that is no string and more than two items (each probed); a provenance is judged as in the object
    form (`_provenance_problem`)."""
    if header is None or header.get("base_instructions") is None:
        return None
    bi = header["base_instructions"]
    if type(bi) is list:
        return _listed_instructions_problem(bi)
    if type(bi) is not dict:
        return f"its session_meta's base_instructions is {json_type(bi)}, not an object with a text"
    if type(bi.get("text")) is not str:
        return f"its session_meta's base_instructions.text is {json_type(bi['text']) if 'text' in bi else 'missing'}, not a string"
    return _provenance_problem(bi.get("provenance"), "base_instructions.provenance")


# `BaseInstructionsProvenance`, an internally tagged enum: `{"type": "model", "model": <string>}` or
# `{"type": "custom"}` (other fields ignored). Probed on Codex 0.169: a provenance without a type, of
# a type not a string, of any other type name (20 tried), or a model one without a string model
# fails the session_meta.
PROVENANCE_TYPES = ("model", "custom")


def _provenance_problem(prov: Any, where: str) -> str | None:
    if prov is None:
        return None
    if type(prov) is not dict:
        return f"its session_meta's {where} is {json_type(prov)}, not an object"
    kind = prov.get("type")
    if type(kind) is not str or kind not in PROVENANCE_TYPES:
        said = "has no type" if "type" not in prov else f"is of type {kind!r}" if type(kind) is str else f"has a type of {json_type(kind)}"
        return f"its session_meta's {where} {said}, where Codex reads \"model\" or \"custom\""
    if kind == "model" and type(prov.get("model")) is not str:
        return f"its session_meta's {where} is a model one whose model is {json_type(prov['model']) if 'model' in prov else 'missing'}, not a string"
    return None


def _listed_instructions_problem(bi: list[Any]) -> str | None:
    """`base_instructions_problem` of a list (the struct's sequence form, its text first)."""
    if not bi:
        return "its session_meta's base_instructions is an empty list, which holds no text"
    if type(bi[0]) is not str:
        return f"its session_meta's base_instructions is a list whose first item (the text) is {json_type(bi[0])}, not a string"
    if len(bi) > 2:
        return f"its session_meta's base_instructions is a list of {len(bi)} items, more than the struct's fields"
    return _provenance_problem(bi[1], "base_instructions' second item (the provenance)") if len(bi) == 2 else None
