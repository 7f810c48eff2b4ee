"""How OpenClaw 2026.9.6 reads a session's transcript rows where they are not as it writes them:
which rows stop it, which entries it sets aside, how it hangs entries into its tree, and which
messages it cannot convert into a request. Each rule was found by resuming damaged copies of a
store OpenClaw wrote with the real OpenClaw (`tests/peers/openclaw/type_probe.py`) and is cited to
the npm packages `openclaw@2026.9.6` (`dist/`) and `@openclaw/ai@2026.9.6` (`ai/dist/`):

- **Rows it cannot parse stop it** (`row_refusal`). Before a run OpenClaw rebuilds the session's
  transcript index whenever it lags the rows (any row appended by something else: a repair, a
  copy): `visitProjectionSource` (session-transcript-index-UaRlRUAw.mjs:122-175) `JSON.parse`s the
  navigation projection of every row (a plain row's `event_json` itself, a zstd row's
  `navigation_json`), then decodes and parses the payload of every row on the visible path (the zstd
  decoder: `openclaw_transcript_payload_decode`, transcript-payload-qsg5dB6v.mjs:635-650, throws on
  a frame that does not decode or whose size is not `event_utf8_bytes`). One throw fails the
  rebuild; the run then stops ("Session transcript projection is rebuilding") and sends nothing.
- **Its tree** (`Scan`, mirroring `scanSessionTranscriptNavigation`, transcript-tree-3xvvNd9-.mjs:
  100-174, over every row in seq order): a row is a node when it is an object, not a `session`
  header, with a non-blank string `id` and a `parentId` that is null or a non-blank string
  (`parseSessionTranscriptTreeEntry`, :34-58); an entry of one of its ten types without a
  `parentId` key hangs under the current leaf (`parseParentlessCanonicalEntry`, :59-68). An entry
  of one of its types whose `parentId` names no earlier node is hung under the current leaf
  (`canonicalParentIsStale`, :138-139), and so is one that names the last node when that node is of
  another type (:139); after a `reset`, every entry that does not descend from it is (:139). Only
  an entry of its types moves the leaf (:51-55), and so does a `leaf` row (its navigation: a branch
  switch, a rewind), to its target, unless it names no earlier node or a reset came after what it
  names (:115-134; `Scan._add_control`). The path is the parent chain from the leaf, leaf rows
  skipped; a cycle gives none (`selectSessionTranscriptTreePathNodes`, :199-213).
- **Entries it does not recognize** (`unrecognized`): every entry goes through its schema
  (`indexedSessionEntrySchema`, transcript-payload-qsg5dB6v.mjs:15-125; `partitionSessionFileEntries`
  :207-240, used by the session manager, session-manager-DjC09C_X.mjs:384-396). One that fails it is
  "opaque": it keeps its place in the tree (its children go on through it) but is no entry of the
  context, never sent, and never a window boundary.
- **Messages it cannot convert** (`send_failure`): a recognized message in the next request is
  converted by `@openclaw/ai` before it is sent: a user message's block of no known kind has its
  `data` trimmed (`projectUserMediaForTransport`, ai/dist/provider-transcript-transform-BTocjCRs.mjs:
  4-19), a user text block's text cleaned (`sanitizeSurrogates`: `value.replaceAll`), an answer's
  text and thinking blocks trimmed (`convertMessages`, ai/dist/openai-completions-stream-
  BpuJ0ZOA.mjs:535-539; not a failed answer's, replaced or dropped before: `answer_left_out`). A
  value of another type throws a TypeError, every time (OpenClaw retries the request three times,
  then gives up): nothing is sent.
- **A header below version 3, or none, is refused** (`header_refusal`), and **call blocks without
  input, id or name are dropped** before the pairing (`dropped_call`).

docs/runtimes/openclaw.md §9 lists them with what was left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.formats.base import JS_WHITESPACE
from inspector.formats.fields import json_type
from inspector.formats.openclaw_heartbeat import is_silent_reply
from inspector.formats.pi_sending import MISSING, type_error

# The entry types OpenClaw's tree and schema know (`isCanonicalSessionEntryType`,
# transcript-tree-3xvvNd9-.mjs:4-18).
CANONICAL = frozenset(
    {"message", "thinking_level_change", "model_change", "compaction", "reset", "branch_summary", "custom", "custom_message", "label", "session_info"}
)
_RESET_REASONS = frozenset({"new", "reset", "idle", "daily", "cron-stale"})
_MISSING = MISSING  # (JavaScript's undefined: the sentinel `type_error` knows)


# ---------------------------------------------------------------------------------------- the schema


def _str(o: dict[str, Any], key: str, what: str, *, min1: bool = False, optional: bool = False) -> str | None:
    v = o.get(key, _MISSING)
    if v is _MISSING:
        return None if optional else f"it has no {what}"
    if not isinstance(v, str):
        return f"its {what} is {json_type(v)}, not a string"
    if min1 and not v:
        return f"its {what} is empty"
    return None


def _readable(content: Any, what: str) -> str | None:
    """`readableContentSchema`: a string, or a list of objects each with a string `type`."""
    if content is _MISSING:
        return f"it has no {what}"
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"its {what} is {json_type(content)}, not text or a list"
    for b in content:
        if not isinstance(b, dict):
            return f"its {what} holds a block that is {json_type(b)}, not an object"
        if not isinstance(b.get("type"), str):
            return f"its {what} holds a block whose type is {json_type(b.get('type', _MISSING)) if 'type' in b else 'missing'}"
    return None


def _message(m: Any) -> str | None:
    """`readableMessageSchema` (transcript-payload-qsg5dB6v.mjs:28-54), by role."""
    if not isinstance(m, dict):
        return f"its message is {'missing' if m is _MISSING else json_type(m)}"
    role = m.get("role", _MISSING)
    content = m.get("content", _MISSING)
    if role in ("user", "assistant"):
        return _readable(content, "message's content")
    if role == "toolResult":
        for key in ("toolCallId", "toolName"):
            if why := _str(m, key, f"tool result's {key}"):
                return why
        if not isinstance(m.get("isError"), bool):
            return f"its tool result's isError is {json_type(m['isError']) if 'isError' in m else 'missing'}, not a boolean"
        return None if isinstance(content, list) else f"its tool result's content is {'missing' if content is _MISSING else json_type(content)}, not a list"
    if role == "custom":
        # (without a customType it is read as a legacy hook message: `normalizePersistedLegacyHookMessage`, :165-176)
        why = _str(m, "customType", "message's customType") if "customType" in m else None
        return why or _readable(content, "message's content")
    if role == "bashExecution":
        return _str(m, "command", "command's command") or _str(m, "output", "command's output")
    return f"its message's role is {json_type(role) if role is not _MISSING else 'missing'}" + (
        f" ({role!r}), none of user, assistant, toolResult, custom, bashExecution" if isinstance(role, str) else ""
    )


def unrecognized(o: dict[str, Any]) -> str | None:
    """Why OpenClaw's entry schema does not take this entry (it is opaque: never sent, never a
    boundary), or None. A `session` header is read apart (`findSessionTranscriptHeader`)."""
    t = o.get("type", _MISSING)
    if t == "session":
        return None
    if type(t) is not str or t not in CANONICAL:  # (a list or object: no type, and no key of a set)
        return f"its type is {json_type(t) if t is not _MISSING else 'missing'}" + (f" ({t!r}), not one of OpenClaw's entry types" if isinstance(t, str) else "")
    why = _str(o, "id", "id", min1=True)
    if why is None and o.get("parentId") is not None and not isinstance(o["parentId"], str):
        why = f"its parentId is {json_type(o['parentId'])}, not a string or null"
    why = why or _str(o, "timestamp", "timestamp", optional=True)
    return why or _by_type(o, t)


def _by_type(o: dict[str, Any], t: str) -> str | None:
    if t == "message":
        return _message(o.get("message", _MISSING))
    if t == "thinking_level_change":
        return _str(o, "thinkingLevel", "thinkingLevel", min1=True)
    if t == "model_change":
        return _str(o, "provider", "provider", min1=True) or _str(o, "modelId", "modelId", min1=True)
    if t == "compaction":
        why = _str(o, "summary", "summary") or _str(o, "firstKeptEntryId", "firstKeptEntryId", min1=True)
        tb = o.get("tokensBefore", _MISSING)
        if why is None and (isinstance(tb, bool) or not isinstance(tb, int | float)):
            why = f"its tokensBefore is {'missing' if tb is _MISSING else json_type(tb)}, not a number"
        return why
    if t == "reset":
        reason = _js_string(o.get("reason", _MISSING))
        if reason not in _RESET_REASONS:
            return f"its reason ({reason}) is none of {', '.join(sorted(_RESET_REASONS))}"
        return _str(o, "firstKeptEntryId", "firstKeptEntryId", optional=True)
    if t == "branch_summary":
        return _str(o, "fromId", "fromId") or _str(o, "summary", "summary")
    if t == "custom":
        return _str(o, "customType", "customType", min1=True)
    if t == "custom_message":
        why = _str(o, "customType", "customType", min1=True) or _readable(o.get("content", _MISSING), "content")
        return why or (None if isinstance(o.get("display"), bool) else "its display is not a boolean")
    if t == "label":
        return _str(o, "targetId", "targetId", min1=True) or _str(o, "label", "label", optional=True)
    return _str(o, "name", "name", optional=True)  # session_info


def _js_string(v: Any) -> str:
    """`String(v)` (zod's coerced string) of a parsed JSON value, as far as the reset reasons go."""
    if v is _MISSING:
        return "undefined"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return v if isinstance(v, str) else json_type(v)


def header_refusal(header: Any) -> str | None:
    """Why OpenClaw refuses to run a session whose header (its first `session` row with a string
    id, `findSessionTranscriptHeader`) is this (None: there is none): a version below 3, or none
    (`(header?.version ?? 1) < 3`, `assertCurrentSessionTranscriptHeader`, transcript-payload-
    qsg5dB6v.mjs:146-148, called when the session manager loads a stored session,
    session-manager-DjC09C_X.mjs:392)."""
    if not isinstance(header, dict) or header.get("type") != "session" or not isinstance(header.get("id"), str):
        what = "it has no session header (a first row like {\"type\":\"session\",\"id\":...})"
    else:
        v = header.get("version")
        if not _js_below_3(1 if v is None else v):
            return None
        what = f"its header's version is {json_type(v) if not isinstance(v, int | float) or isinstance(v, bool) else v}, below 3"
    return (
        f"{what}: OpenClaw takes it for a legacy transcript and refuses to run it (\"Persisted legacy session "
        "transcripts require doctor/import migration before runtime use\"): it sends nothing"
    )


def _js_below_3(v: Any) -> bool:
    """JavaScript's `v < 3` of a parsed JSON value (its Number(): NaN compares false)."""
    if isinstance(v, bool):
        return True
    if isinstance(v, int | float):
        return v < 3
    if isinstance(v, str):
        try:
            return float(v.strip() or "0") < 3
        except ValueError:
            return False
    return isinstance(v, list) and not v  # (an empty list is 0; an object, most lists: NaN)


# ---------------------------------------------------------------------------------------- the tree


def _non_blank(v: Any) -> str | None:
    return v if isinstance(v, str) and v.strip() else None  # readNonBlankString (string-coerce-CIXf7egm.mjs:23)


@dataclass(slots=True)
class Node:
    id: str
    parent: str | None
    moves_leaf: bool  # an entry of OpenClaw's types, not appended "side": it becomes the leaf
    side: bool = False
    # what the entry's own fields say (for `tree_facts`'s callers)
    canonical: bool = False
    explicit: bool = True  # it has a parentId key
    # A leaf row (OpenClaw's navigation control, `Control`); None: another entry.
    control: Control | None = None


@dataclass(slots=True, frozen=True)
class Control:
    """What a `leaf` row asks of OpenClaw's tree (`parseSessionTranscriptTreeEntry`,
    transcript-tree-3xvvNd9-.mjs:40-50): make `target` the leaf (None: no leaf, an empty path) and
    hang the next entry under `append_to` (its `appendParentId`, by default the target)."""

    target: str | None
    append_to: str | None


def leaf_control(o: dict[str, Any]) -> Control | None:
    """The control a `leaf` row is, or None: no string `targetId` and `appendParentId` (or null; a
    blank one makes no node), or an `appendMode` other than "side" (transcript-tree-3xvvNd9-.mjs:
    40-50; OpenClaw's own schema for the row, `opaqueLeafEntrySchema`,
    transcript-payload-qsg5dB6v.mjs:131-138). Its id and parentId are `tree_facts`'s."""
    t = o.get("targetId", _MISSING)
    target = None if t is None else _non_blank(t)
    if t is not None and target is None:
        return None
    a = o.get("appendParentId", _MISSING)
    append_to = target if a is _MISSING else None if a is None else _non_blank(a)
    if a is not _MISSING and a is not None and append_to is None:
        return None
    if o.get("appendMode", "side") != "side":
        return None
    return Control(target, append_to)


def tree_facts(o: Any) -> Node | None:
    """The node a row's entry makes in OpenClaw's tree, its parent as written (None: no node); a
    `leaf` row's node carries its `Control`."""
    if not isinstance(o, dict) or o.get("type") == "session":
        return None
    rid = _non_blank(o.get("id"))
    if rid is None:
        return None
    t = o.get("type")
    canonical = type(t) is str and t in CANONICAL  # (a type that is a list or object is none of them)
    side = o.get("appendMode") == "side"
    if "parentId" not in o:
        return Node(rid, None, canonical and not side, side, canonical, explicit=False) if canonical else None
    p = o["parentId"]
    parent = None if p is None else _non_blank(p)
    if p is not None and parent is None:
        return None
    if t == "leaf":
        control = leaf_control(o)
        return None if control is None else Node(rid, parent, False, side, False, control=control)
    return Node(rid, parent, canonical and not side, side, canonical)


@dataclass(slots=True, frozen=True)
class LeafMove:
    """What a leaf row did in OpenClaw's tree (`Scan.moves`): `target` is the leaf it made (None:
    none), `asked` what it named; `how`: "moved", "invalid" (it named no earlier node, or an
    invalid leaf row: ignored) or "reset" (a reset came after what it named: the leaf stays)."""

    id: str
    asked: str | None
    target: str | None
    how: str


class Scan:
    """`scanSessionTranscriptNavigation` over the rows in seq order (`add` each row's node, or
    None): each node's parent as OpenClaw normalizes it, and the leaf."""

    __slots__ = ("append_parent", "by_id", "controls", "invalid", "latest_reset", "leaf", "leaf_row", "moves", "parents", "reset_desc", "undecoded")

    def __init__(self) -> None:
        self.by_id: dict[str, str | None] = {}  # each node's id -> its parent, normalized
        self.leaf: str | None = None
        self.append_parent: str | None = None
        self.latest_reset: str | None = None
        self.reset_desc: set[str] = set()
        self.parents: dict[str, str | None] = {}  # id -> normalized parent, where it differs
        self.undecoded: dict[str, int] = {}  # the nodes of zstd rows whose payload does not decode -> their seq
        self.controls: set[str] = set()  # the nodes that are leaf rows (valid or not)
        self.invalid: set[str] = set()  # the leaf rows it ignores (`invalidLeafControlIds`)
        self.moves: list[LeafMove] = []  # what each leaf row did, in order
        self.leaf_row: str | None = None  # the leaf row that made the leaf, when one did (no entry since)

    def add(self, node: Node | None, is_reset: bool = False) -> None:
        if node is None:
            return
        if node.control is not None:
            self._add_control(node, node.control)
            return
        parent = node.parent if node.explicit else self.leaf  # (parseParentlessCanonicalEntry)
        if node.canonical:
            stale = node.explicit and parent is not None and parent not in self.by_id and self.leaf is not None
            if (self.latest_reset is not None and not node.side and (parent is None or parent not in self.reset_desc)) or (not node.side and stale) or (node.explicit and not node.side and parent == self.append_parent and self.leaf != self.append_parent):
                parent = self.leaf
            if self.controls:
                parent = self._through_controls(parent)
        if self.controls:
            self.controls.discard(node.id)  # (a node that reuses a leaf row's id takes its place)
        if parent != node.parent:
            self.parents[node.id] = parent
        self.by_id[node.id] = parent
        if is_reset:
            self.latest_reset = node.id
            self.reset_desc = {node.id}
        elif self.latest_reset is not None and parent is not None and parent in self.reset_desc:
            self.reset_desc.add(node.id)
        self.append_parent = node.id
        if node.moves_leaf:
            self.leaf, self.leaf_row = node.id, None

    def add_entry(self, rid: str, parent: str | None) -> None:
        """`add` of the node of a message or custom entry with a parentId key, not appended
        "side" (the index's rows: `Node(rid, parent, True, canonical=True)`), without making it."""
        leaf, reset = self.leaf, self.latest_reset
        norm = parent
        if (
            (reset is not None and (parent is None or parent not in self.reset_desc))
            or (parent is not None and leaf is not None and parent not in self.by_id)
            or (parent == self.append_parent and leaf != parent)
        ):
            norm = leaf
        if self.controls:
            norm = self._through_controls(norm)
            self.controls.discard(rid)
        if norm != parent:
            self.parents[rid] = norm
        self.by_id[rid] = norm
        if reset is not None and norm is not None and norm in self.reset_desc:
            self.reset_desc.add(rid)
        self.append_parent = self.leaf = rid
        self.leaf_row = None

    def _through_controls(self, parent: str | None) -> str | None:
        """An entry's parent past the leaf rows it names (`resolveCanonicalParentId`,
        transcript-tree-3xvvNd9-.mjs:69-80): a valid leaf row's parent is its target, an invalid
        one's the parentId it was written with; a cycle of leaf rows stops where it closes."""
        seen: set[str] = set()
        while parent is not None and parent in self.controls and parent not in seen:
            seen.add(parent)
            parent = self.by_id[parent]
        return parent

    def _known(self, ref: str | None) -> bool:
        """`isKnownLeafReference` (transcript-tree-3xvvNd9-.mjs:119): null, or an earlier node not
        an ignored leaf row."""
        return ref is None or (ref in self.by_id and ref not in self.invalid)

    def _add_control(self, node: Node, c: Control) -> None:
        """A leaf row (transcript-tree-3xvvNd9-.mjs:115-134, :160-171): after a reset, one that
        names what does not descend from it keeps the leaf where it is (:115-118); one that names
        no earlier node (or an ignored leaf row) is ignored, its node hung where it was written
        (:119-134); else its target becomes the leaf (null: none) and the next entry hangs under
        its `append_to` (:164-170)."""
        target, append_to, how = c.target, c.append_to, "moved"
        if self.latest_reset is not None and self.leaf is not None and (target is None or target not in self.reset_desc):
            target = append_to = self.leaf
            how = "reset"
        self.controls.add(node.id)
        if not self._known(target) or not self._known(append_to):
            self.invalid.add(node.id)
            self.by_id[node.id] = node.parent
            self.moves.append(LeafMove(node.id, c.target, self.leaf, "invalid"))
            return
        if target != node.parent:
            self.parents[node.id] = target
        self.by_id[node.id] = target
        if self.latest_reset is not None and target is not None and target in self.reset_desc:
            self.reset_desc.add(node.id)
        self.append_parent = append_to
        self.leaf, self.leaf_row = target, node.id
        self.moves.append(LeafMove(node.id, c.target, target, how))

    def path_leaf(self) -> str | None:
        """The last node of the path OpenClaw sends: the leaf, past the leaf rows it names (a
        path skips them, `selectSessionTranscriptTreePathNodes`, transcript-tree-3xvvNd9-.mjs:
        199-213); None: no path (no leaf, or a cycle of leaf rows)."""
        cur, seen = self.leaf, set()
        while cur is not None and cur in self.controls:
            if cur in seen:
                return None
            seen.add(cur)
            cur = self.by_id.get(cur)
        return cur


# ---------------------------------------------------------------------------------------- sending

# The blocks OpenClaw takes for tool calls (`TOOL_CALL_TYPES`, tool-result-pairing-Bky0eubt.mjs:3-7).
TOOL_CALL_TYPES = ("toolCall", "toolUse", "functionCall")
_CALL_ID_KEYS = ("call_id", "tool_call_id", "toolCallId", "tool_use_id", "toolUseId", "id")


def dropped_call(b: Any) -> str | None:
    """Why OpenClaw drops this block of an answer's content before it sends the answer (a call
    without input, id or name: `repairToolCallInputs`, session-transcript-repair-rV_-0RVP.mjs:
    135-145; `hasToolCallInput`, tool-call-id-Dp16BALg.mjs:57-61; `collectToolCallIds`,
    tool-block-contract-CJH3ADzt.mjs:47-60; `isAllowedToolCallName`, tool-call-shared-B1OM3EZi.mjs:
    19-26, its name pattern and length not mirrored), or None."""
    if not isinstance(b, dict) or b.get("type") not in TOOL_CALL_TYPES:
        return None
    if b.get("arguments") is None and b.get("input") is None:
        return "it has no arguments"
    if not any(_non_blank(b.get(k)) for k in _CALL_ID_KEYS):
        return "it has no id"
    if _non_blank(b.get("name")) is None:
        return "it has no name"
    return None


def left_out(o: dict[str, Any]) -> bool:
    """A recognized user (or extension) message whose content is a list of blank texts only:
    OpenClaw leaves it out of the request (observed; its empty text blocks are dropped,
    `dropEmptyTextBlocks`, embedded-agent-helpers-BFS05UdI.mjs:637-642, and a user message left
    with no content is not converted, `convertMessages`, ai/dist/openai-completions-stream-
    BpuJ0ZOA.mjs:519)."""
    m = o.get("message")
    if o.get("type") != "message" or not isinstance(m, dict) or m.get("role") not in ("user", "custom"):
        return False
    c = m.get("content")
    return isinstance(c, list) and all(isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str) and not b["text"].strip() for b in c)


# What OpenClaw sends in place of a failed answer it replays (`FAILED_ASSISTANT_REPLAY_TEXT`,
# ai/dist/host-yTvBrYM2.mjs:422), and the text its stream writes into an answer that failed before
# producing any (`STREAM_ERROR_FALLBACK_TEXT`, :413), which it does not replay.
FAILED_TURN_MARKER = "[This turn failed before it completed. Do not redo its work without confirming with the user first.]"
_STREAM_ERROR_FALLBACK = "[assistant turn failed before producing content]"


def _replayed_blocks(content: Any) -> list[Any]:
    """An answer's content as OpenClaw's replay rules read it: a string as its one text block
    (`normalizeAssistantReplayTextContent`, builtin-openclaw-q1hiFm14.mjs:4505-4513, :4594), an object as
    a list of it (:4599-4601), anything else as no block."""
    if isinstance(content, list):
        return content
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [content] if isinstance(content, dict) else []


# The answers OpenClaw writes into a transcript for its own record and never replays to a model: a
# delivery mirror of what a channel was sent, a message the gateway injected
# (`isTranscriptOnlyOpenClawAssistantMessage`, transcript-only-openclaw-assistant-CVgy4bjA.mjs:6-39).
_TRANSCRIPT_ONLY_MODELS = frozenset({"delivery-mirror", "gateway-injected"})
_DELIVERY_MIRROR_KINDS = frozenset({"channel-final", "channel-final-suppressed", "message-tool-source-reply", "cron-direct-delivery-context"})


def transcript_only(m: dict[str, Any]) -> bool:
    """An answer of OpenClaw's own record (provider "openclaw" and a transcript-only model, or a
    delivery-mirror marker of a known kind), which its replay drops before anything else reads the
    request (`normalizeAssistantReplayContent`, builtin-openclaw-q1hiFm14.mjs:4580-4583)."""
    if m.get("role") != "assistant":
        return False
    if m.get("provider") == "openclaw" and isinstance(m.get("model"), str) and m["model"] in _TRANSCRIPT_ONLY_MODELS:
        return True
    marker = m.get("openclawDeliveryMirror")
    return isinstance(marker, dict) and isinstance(marker.get("kind"), str) and marker["kind"] in _DELIVERY_MIRROR_KINDS


RUNTIME_CONTEXT = "openclaw.runtime-context"  # (OPENCLAW_RUNTIME_CONTEXT_CUSTOM_TYPE, internal-runtime-context-BH-o1oq1.mjs:17)


def runtime_context(o: dict[str, Any]) -> bool:
    """An entry whose message is OpenClaw's runtime context for the user message before it (a
    message of role "custom" and customType "openclaw.runtime-context",
    `isOpenClawRuntimeContextCustomMessage`, internal-runtime-context-BH-o1oq1.mjs:154-158: a
    `custom_message` entry, as OpenClaw before 2026.9 wrote one after each user message, or a
    message entry of that role). OpenClaw leaves every stored one out of the request: at send time it
    keeps only those right before the last user message (`stripHistoricalRuntimeContextCustomMessages`,
    :202-221, from `normalizeMessagesForLlmBoundary`, builtin-openclaw-q1hiFm14.mjs:5914-5920), and
    the last user message is the prompt being sent, whose own context goes in its carrier: a stored
    one at the very end of the path is not sent either (observed, tests/test_openclaw_runtime_context.py)."""
    if o.get("type") == "custom_message":
        return o.get("customType") == RUNTIME_CONTEXT
    m = o.get("message")
    return o.get("type") == "message" and isinstance(m, dict) and m.get("role") == "custom" and m.get("customType") == RUNTIME_CONTEXT


def runtime_context_message(m: dict[str, Any]) -> bool:
    """A message (as replayed) of role "custom" and customType "openclaw.runtime-context"
    (`isOpenClawRuntimeContextCustomMessage`, internal-runtime-context-BH-o1oq1.mjs:154-158)."""
    return m.get("role") == "custom" and m.get("customType") == RUNTIME_CONTEXT


# The entry types its orphan repair walks back over from the leaf to find a trailing message
# (`isSessionContextMetadataEntry`, dist/session-manager-codec-DW3_Rlj9.mjs:23-25).
METADATA_TYPES = frozenset({"thinking_level_change", "model_change", "custom", "label", "session_info"})


# Blocks OpenClaw's replay takes out of an answer (`MANAGED_DISPLAY_BLOCK_TYPES`, builtin-openclaw-q1hiFm14.mjs:4398-4404).
_DISPLAY_BLOCKS = frozenset({"attachment", "attachment_error", "audio", "image", "video"})


def silent_answer(content: Any) -> bool:
    """An answer OpenClaw's replay normalization leaves out for its silent reply, before anything
    else reads the request: a text content that is blank or a silent-reply payload ("NO_REPLY",
    `openclaw_heartbeat.is_silent_reply`; `normalizeAssistantReplayTextContent`,
    builtin-openclaw-q1hiFm14.mjs:4505-4513), or a list left with no block once its display blocks
    and its texts that are such payloads go, or only reasoning once such a text went
    (`normalizeAssistantReplayBlockContent`, :4514-4555; `hasOnlyAssistantReasoningContent`,
    ai/dist/host-yTvBrYM2.mjs:393-411). (A text it strips of inbound metadata first is not mirrored.)"""
    if isinstance(content, str):
        return not content.strip(JS_WHITESPACE) or is_silent_reply(content.strip(JS_WHITESPACE))
    if not isinstance(content, list):
        return False
    kept: list[Any] = []
    silent = touched = False
    for b in content:
        if isinstance(b, dict) and b.get("type") in _DISPLAY_BLOCKS:
            touched = True
        elif isinstance(b, dict) and isinstance(b.get("text"), str) and is_silent_reply(b["text"].strip(JS_WHITESPACE)):
            touched = silent = True
        else:
            kept.append(b)
    if not touched:
        return False
    blocks = [(b.get("type", _NO_TYPE), b.get("text")) if isinstance(b, dict) else (_NO_TYPE, None) for b in kept]
    return not kept or (silent and answer_left_out("length", blocks))


def dropped_answer(o: dict[str, Any]) -> bool:
    """An answer OpenClaw leaves out of the request whole: one of its own record (`transcript_only`),
    or for how it ended (`answer_left_out`), read from the entry after the calls it drops
    (`dropped_call`) are taken out."""
    m = o.get("message")
    if o.get("type") != "message" or not isinstance(m, dict) or m.get("role") != "assistant":
        return False
    if transcript_only(m) or silent_answer(m.get("content")):
        return True
    blocks = [(b.get("type", _NO_TYPE), b.get("text")) if isinstance(b, dict) else (_NO_TYPE, None) for b in _replayed_blocks(m.get("content"))]
    return answer_left_out(m.get("stopReason"), blocks)


_NO_TYPE = object()  # (a block that is no object, or has no type: none of the kinds below)
FAILED = ("error", "aborted")  # an answer's stopReason, exactly, that OpenClaw's replay takes for failed


def answer_left_out(stop: Any, blocks: list[tuple[Any, Any]]) -> bool:
    """Whether OpenClaw leaves out an answer whose stopReason is STOP and whose content blocks are
    BLOCKS ((type, text) each, as `_replayed_blocks` reads the content):

    - a failed one (stopReason exactly "error" or "aborted", FAILED) that makes a call, or has no text
      block whose text, trimmed, is neither blank nor the stream's fallback text
      (`resolveFailedAssistantReplay` with `pairingAware: false`, ai/dist/host-yTvBrYM2.mjs:422-432,
      as `transformMessages` calls it, :549-555, for an openai-completions model; an errored one of
      only fallback text is dropped before, `normalizeAssistantReplayContent`,
      builtin-openclaw-q1hiFm14.mjs:4584-4588). Any other failed answer is sent with its content
      replaced by FAILED_TURN_MARKER (:556-562): `Runtime.failed_turn_marker`. (A model API whose
      transport pairs calls, `SYNTHETIC_TOOL_RESULT_APIS` in dist/ai-transport-runtime-host-
      BWiVmtXI.mjs:83-95, keeps a failed answer's calls until `repairToolUseResultPairing` drops the
      failed frame and its results, :229-233: left out all the same; docs/runtimes/openclaw.md §9.)
    - one cut at the output limit (stopReason "length") holding only reasoning: thinking blocks
      (at least one) and blank texts (`isReasoningOnlyLengthAssistantTurn`, ai/dist/host-
      yTvBrYM2.mjs:393-411, applied by `normalizeAssistantReplayContent`,
      builtin-openclaw-q1hiFm14.mjs:4612-4615, for every model API)."""
    if stop == "length":
        thinking = False
        for kind, text in blocks:
            if kind in ("thinking", "redacted_thinking"):
                thinking = True
            elif not (kind == "text" and isinstance(text, str) and not text.strip(JS_WHITESPACE)):
                return False
        return thinking
    if stop not in FAILED:
        return False
    if any(kind == "toolCall" for kind, _ in blocks):
        return True
    return not any(kind == "text" and isinstance(text, str) and text.strip(JS_WHITESPACE) not in ("", _STREAM_ERROR_FALLBACK) for kind, text in blocks)


def _kind(v: Any) -> str:
    return "missing" if v is _MISSING else json_type(v)


def _fails(what: str, value: Any, reading: str, expression: str) -> str:
    error = type_error(value, reading, expression)
    return f'{what}: OpenClaw stops with a TypeError converting every request that holds it ("{error}")'


def send_failure(o: dict[str, Any]) -> str | None:
    """Why `@openclaw/ai` cannot convert this recognized entry's message into a request, or None."""
    if o.get("type") != "message" or not isinstance(o.get("message"), dict):
        return None
    m = o["message"]
    content = m.get("content")
    if not isinstance(content, list):
        return None
    if m.get("role") == "user":
        for b in content:
            kind = b.get("type") if isinstance(b, dict) else None
            if kind == "text" and not isinstance(b.get("text", _MISSING), str):
                v = b.get("text", _MISSING)
                return _fails(f"a text block of its content has a text that is {_kind(v)}", v, "replaceAll", "value")
            if kind not in ("text", "image", "video") and isinstance(b, dict) and not isinstance(b.get("data", _MISSING), str):
                v = b.get("data", _MISSING)
                return _fails(f"a block of its content of kind {kind!r} (no text, image or video) has a data that is {_kind(v)}", v, "trim", "block.data")
    if m.get("role") == "assistant":
        # A failed answer is sent as the marker or left out (`dropped_answer`) before
        # `convertMessages` trims its texts (ai/dist/host-yTvBrYM2.mjs:549-562): only the blocks
        # `transformAssistant` reads first (:550) can fail (observed: the probes "errored reply
        # text null", "aborted reply block unknown").
        failed = m.get("stopReason") in FAILED
        for b in content:
            kind = b.get("type") if isinstance(b, dict) else None
            if kind not in ("text", "thinking", *TOOL_CALL_TYPES) and isinstance(b, dict) and not isinstance(b.get("id", _MISSING), str):
                # any other block is taken for a call: its id trimmed (`transformAssistant`,
                # ai/dist/host-yTvBrYM2.mjs:485; `transformMessages` :506). (A call block without an
                # id is dropped before: `dropped_calls`.)
                v = b.get("id", _MISSING)
                return _fails(f"a block of its content of kind {kind!r} (no text, thinking or call) has an id that is {_kind(v)}", v, "trim", "block.id")
            v = b.get("text", _MISSING) if isinstance(b, dict) else ""
            if kind == "text" and not isinstance(v, str) and not failed:
                return _fails(f"a text block of its content has a text that is {_kind(v)}", v, "trim", "block.text")
    return None
