"""What pi-ai rewrites of the next request for the model it goes to (pi 0.73.1, `.pi/`).

Before each request pi-ai converts every message of pi's context with `transformMessages`
(pi-ai `dist/providers/transform-messages.js`, called by every provider's `convertMessages`:
openai-completions.js:577, anthropic.js:754, google-shared.js:83, mistral.js:30,
amazon-bedrock.js:472, openai-responses-shared.js:63), against the model the request goes to:

- An answer is "the same model's" when its recorded `provider`, `api` and `model` all equal that
  model's (:65-67). Of an answer by another model: a thinking block is sent as a text block of its
  thinking (:84-87); one whose thinking is empty or whitespace is left out (:80-81), and a redacted
  one too (:72-73); a tool call loses its `thoughtSignature` (:100-103) and its id may be rewritten
  by the provider's `normalizeToolCallId` (:104-110, its result's id with it: :55-59). Of the same
  model's: a redacted or signed thinking block is kept (:72-78), an empty unsigned one left out
  (:80-81), any other kept.
- Where the model's `input` holds no "image" (:20), every image of a user message (a custom
  message's too: pi's `convertToLlm` sends it as the user's) and of a tool result is replaced by
  the text "(image omitted: model does not support images)" / "(tool image omitted: model does not
  support images)", consecutive images by one (:1-18, :24-34).

The model pi resumes with is the last model change or answer on the branch (session-manager.js:
146-159, restored by sdk.js:105-113 when pi has a key for it), its `api` and `input` those of pi's built-in registry
(`pi_windows.json`, generated from pi-ai's models.generated.js by
`tests/peers/pi_resume/model_windows.py`). A model pi does not ship (one of the user's models.json):
its api taken as the one its own latest answer recorded, when an answer named it last (else the
answers are compared on provider and model only), its input as taking images (nothing is replaced).

What changes what inspector shows is mirrored: block kinds and text (thinking sent as text, blocks
left out, images replaced by their placeholder), and so the tokens counted for the item (on what is
sent). Not mirrored: the call ids a provider normalizes (`normalizeToolCallId`: the ids pair the
same way, but where two normalize to one), a signature left out (no text inspector counts), what
each provider's `convertMessages` then does of a block (openai-completions.js sends the same model's
thinking in a field of its own, not as content), and a model pi falls back to when it cannot
restore the session's (no key configured for it: sdk.js:107-113), or one given on its command line
(`--model`, main.js:226-239: not restored from the session).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from inspector.formats import pi_resume
from inspector.formats.base import JS_WHITESPACE
from inspector.formats.jsonl import line_object
from inspector.formats.pi_sending import truthy
from inspector.ledger.model import Ledger, Message, Record

IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"  # transform-messages.js:1
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"  # transform-messages.js:2


@dataclass(frozen=True, slots=True)
class Target:
    """The model the next request goes to, as `transformMessages` compares an answer with it."""

    provider: str
    model: str
    api: str | None  # None: not known (a model pi does not ship, set by a model change)
    image: bool  # its input takes images
    known: bool  # a model pi's registry ships

    def name(self) -> str:
        return f"{self.provider}/{self.model}" + (f" ({self.api})" if self.api else "")

    def same(self, m: dict[str, Any]) -> bool:
        """`isSameModel` (transform-messages.js:65-67) of an answer."""
        api = m.get("api") if self.api is None else self.api  # (unknown: compared on provider and model only)
        return m.get("provider") == self.provider and m.get("api") == api and m.get("model") == self.model and type(api) is str


def target(led: Ledger, path: Sequence[int]) -> Target | None:
    """The model pi resumes the session with (None: none that pi's registry could find)."""
    e = pi_resume._Entries(led)
    try:
        return _target(e, path)
    finally:
        e.close()


def _target(e: pi_resume._Entries, path: Sequence[int]) -> Target | None:
    for s in reversed(path):
        rec = e.records[s]
        got = pi_resume._model_of(e, rec)
        if got is None:
            continue
        if got == pi_resume._NO_MODEL:
            return None
        provider, model = got
        reg = pi_resume.registered(provider, model)
        if reg is not None:
            return Target(provider, model, reg.api, reg.image, True)
        api = e.message(rec).get("api") if rec.type == "message" else None
        return Target(provider, model, api if isinstance(api, str) else None, True, False)
    return None


def _blank(text: Any) -> bool:
    """`!text || text.trim() === ""` of a thinking that is a string or false to JavaScript."""
    return not truthy(text) or (isinstance(text, str) and not text.strip(JS_WHITESPACE))  # (JavaScript's trim)


def _answer_block(b: Any, same: bool) -> tuple[Any, str | None]:
    """A block of an answer as `transformMessages` sends it (:68-114; None: left out) and what it
    did of it ("text", "redacted", "empty": a thinking sent as text or left out; None: as written)."""
    if not isinstance(b, dict) or b.get("type") != "thinking":
        if not same and isinstance(b, dict) and b.get("type") == "toolCall" and truthy(b.get("thoughtSignature")):
            return {k: v for k, v in b.items() if k != "thoughtSignature"}, None
        return b, None
    if truthy(b.get("redacted")):
        return (b, None) if same else (None, "redacted")
    if same and truthy(b.get("thinkingSignature")):
        return b, None
    thinking = b.get("thinking")
    if _blank(thinking):
        return None, "empty"
    if same or not isinstance(thinking, str):  # (a thinking of another type: pi-ai fails on it, `pi_sending`)
        return b, None
    return {"type": "text", "text": thinking}, "text"


def _answer(m: dict[str, Any], t: Target) -> tuple[dict[str, Any], str] | None:
    content = m.get("content")
    if not isinstance(content, list) or None in content:  # (pi-ai fails on it: `pi_sending`)
        return None
    same = t.same(m)
    out: list[Any] = []
    did: set[str] = set()
    for b in content:
        sent, what = _answer_block(b, same)
        if sent is not None:
            out.append(sent)
        if what is not None:
            did.add(what)
    if same or not did:  # (the same model's empty thinking, left out, changes nothing shown)
        return None
    wrote = "/".join(str(m.get(k)) for k in ("provider", "model")) + f" ({m.get('api')})"
    gone = " and its ".join(f"{w} thinking" for w in ("redacted", "empty") if w in did)
    did_what = ["sends its thinking as text" if "text" in did else "", f"leaves out its {gone}" if gone else ""]
    return {**m, "content": out}, (
        f"pi-ai {', '.join(p for p in did_what if p)}: the reply is by {wrote}, not by the model the request goes to, "
        f"{t.name()}{_assumed(t)}"
    )


def _assumed(t: Target) -> str:
    if t.known:
        return ""
    return " (a model pi does not ship: taken to be the one of its latest reply)" if t.api else " (a model pi does not ship: compared on provider and model only)"


def _without_images(content: Any, placeholder: str) -> list[Any] | None:
    """`replaceImagesWithPlaceholder` (:3-18) of a content that holds an image (None: it holds none)."""
    if not isinstance(content, list) or not any(isinstance(b, dict) and b.get("type") == "image" for b in content):
        return None
    out: list[Any] = []
    previous = False
    for b in content:
        if isinstance(b, dict) and b.get("type") == "image":
            if not previous:
                out.append({"type": "text", "text": placeholder})
            previous = True
            continue
        out.append(b)
        previous = isinstance(b, dict) and b.get("text") == placeholder
    return out


def sent_entry(o: Any, t: Target) -> tuple[Message, str] | None:
    """The message of a pi entry as pi-ai sends it to `t`, and why, where it rewrites it (None: sent
    as written, as far as inspector shows it)."""
    from inspector.formats import pi

    if not isinstance(o, dict):
        return None
    if o.get("type") == "custom_message":
        content = _without_images(o.get("content"), IMAGE_PLACEHOLDER) if not t.image else None
        return None if content is None else (pi._user_message(content, "custom"), _images_note(t))
    m = o.get("message")
    if o.get("type") != "message" or not isinstance(m, dict):
        return None
    role = m.get("role")
    if role == "assistant":
        got = _answer(m, t)
        return None if got is None else (pi._message(got[0]), got[1])
    if t.image or role not in ("user", "custom", "toolResult"):
        return None
    content = _without_images(m.get("content"), TOOL_IMAGE_PLACEHOLDER if role == "toolResult" else IMAGE_PLACEHOLDER)
    return None if content is None else (pi._message({**m, "content": content}), _images_note(t))


def _images_note(t: Target) -> str:
    return f"pi-ai sends a placeholder text in place of its images: the model the request goes to, {t.name()}, takes no image input"


class _Block(msgspec.Struct, gc=False):
    type: Any = None


class _Message(msgspec.Struct, gc=False):
    role: Any = None
    provider: Any = None
    api: Any = None
    model: Any = None
    content: list[_Block] | str | None = None


class _Entry(msgspec.Struct, gc=False):
    """What tells whether pi-ai may rewrite an entry's message: read without its texts."""

    type: Any = None
    message: _Message | None = None
    content: list[_Block] | str | None = None


_DECODER = msgspec.json.Decoder(_Entry)


def _may_rewrite(raw: bytes, t: Target) -> bool | None:
    """Whether pi-ai may rewrite the message of an entry's line for `t`: another model's answer
    with a thinking block, or an image for a model without image input (None: the line does not
    decode so: read it whole)."""
    try:
        e = _DECODER.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    m = e.message
    content = e.content if e.type == "custom_message" else m.content if m is not None else None
    if type(content) is not list:
        return False
    if m is not None and m.role == "assistant":
        return any(b.type == "thinking" for b in content) and not t.same({"provider": m.provider, "api": m.api, "model": m.model})
    return not t.image and any(b.type == "image" for b in content)


def _plain_answer(rec: Record) -> bool:
    """An answer its loader read no thinking block in (pi's `_Source.plain_answers`): pi-ai sends
    it as written whatever the model (`_answer`), so its line need not be read again."""
    plain = getattr(rec._source, "plain_answers", None)
    return plain is not None and rec.role == "assistant" and rec.offset in plain


def _lines(led: Ledger, recs: list[Record]) -> Iterator[tuple[Record, bytes | None]]:
    """Each record's line as written, in file order, read through one open file (None: unreadable,
    or a ledger read from bytes)."""
    try:
        fd = os.open(led.path, os.O_RDONLY) if led.path is not None else None
    except OSError:
        fd = None
    try:
        for rec in sorted(recs, key=lambda r: r.offset):
            try:
                yield rec, os.pread(fd, rec.length, rec.offset) if fd is not None and rec.length else None
            except OSError:
                yield rec, None
    finally:
        if fd is not None:
            os.close(fd)


def _whole(raw: bytes, rec: Record) -> Any:
    """A line's JSON as pi reads it (invalid UTF-8 as U+FFFD; a line orjson refuses read as the
    loader reads it: `jsonl.line_object`)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return line_object(raw, rec.line, rec.offset)


def rewrite_items(led: Ledger, path: Sequence[int], items: Sequence[Any]) -> None:
    """`Runtime.rewrites_sent` for pi: each item of the next request whose message pi-ai sends
    otherwise than as written is marked so (`trimmed`, the message as sent in `sent`, a note). Each
    answer's line is looked at (each user's and result's too for a model without image input),
    without its texts; only one that may be rewritten is read whole."""
    e = pi_resume._Entries(led)
    try:
        t = _target(e, path)
        if t is None:
            return
        records = e.records
        roles = ("assistant",) if t.image else ("assistant", "user", "tool")
        todo = {
            it.seq: it
            for it in items
            if it.seq is not None and it.kind == "message" and not it.text and records[it.seq].role in roles and not _plain_answer(records[it.seq])
        }
        for rec, raw in _lines(led, [records[s] for s in todo]):
            may = _may_rewrite(raw, t) if raw is not None else None
            if may is False:
                continue
            got = sent_entry(_whole(raw, rec) if raw is not None else e.obj(rec), t)
            if got is not None:
                it = todo[rec.seq]
                it.sent, why = got
                it.trimmed = True
                it.note = why if it.note is None else f"{it.note}; {why}"
    finally:
        e.close()


__all__ = ["IMAGE_PLACEHOLDER", "TOOL_IMAGE_PLACEHOLDER", "Target", "rewrite_items", "sent_entry", "target"]
