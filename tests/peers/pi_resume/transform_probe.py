"""What the real pi sends of replies by another model and of images, against inspector's next request.

pi-ai rewrites every message of a request for the model it goes to (`transformMessages`,
providers/transform-messages.js; inspector: `inspector/formats/pi_transform.py`): another model's
thinking is sent as text (an empty or redacted one left out), and a model without image input gets
a placeholder text for each run of images. Each probe here is a session written for the purpose
(a header, a model change, then replies by other models, with signed, redacted, empty and plain
thinking, a call with a thought signature, images in a user message, a custom message and a tool
result), ending on the model pi is to resume with: a model change to it, or its own reply. The
installed pi (0.73.1) resumes every probe in one process (`resume.resume_many`), pi's built-in
`groq` provider routed to the scripted server (models pi ships: one without image input, one with),
and the fake model of the user's models.json (a model pi does not ship). Each message of pi's first
request (chat completions, openai-completions.js `convertMessages`) is compared with inspector's
next request (`analyze`: each item's message as pi-ai sends it, `ContextItem.sent`, and the ids
`context --json` lists).

    python -m tests.peers.pi_resume.transform_probe          # every probe, each resume model
    python -m tests.peers.pi_resume.transform_probe --quick  # the CI set
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.peers.pi_resume import resume

# Models pi resumes with: (provider, id) of pi's registry (groq's api is openai-completions), and the
# harness's fake model (the user's own: inspector takes it to take images; given both inputs here).
TEXT_ONLY = ("groq", "llama-3.1-8b-instant")
WITH_IMAGES = ("groq", "meta-llama/llama-4-scout-17b-16e-instruct")
FAKE = (resume.ph.PROVIDER, resume.ph.MODEL)
OTHER = ("anthropic", "anthropic-messages", "claude-sonnet-4-5")
IMG = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
_TS = "2026-12-01T10:00:00.000Z"
_USAGE = {"input": 100, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


class _Session:
    """A session written entry by entry, each the child of the one before."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": "probe-session", "timestamp": _TS, "cwd": "/tmp"}]
        self.last: str | None = None

    def _add(self, entry: dict[str, Any]) -> None:
        eid = f"e{len(self.lines):03d}"
        self.lines.append({**entry, "id": eid, "parentId": self.last, "timestamp": _TS})
        self.last = eid

    def model(self, provider: str, model: str) -> _Session:
        self._add({"type": "model_change", "provider": provider, "modelId": model})
        return self

    def user(self, *content: Any) -> _Session:
        self._add({"type": "message", "message": {"role": "user", "content": list(content), "timestamp": 1}})
        return self

    def custom(self, *content: Any) -> _Session:
        self._add({"type": "custom_message", "customType": "probe", "content": list(content), "display": True})
        return self

    def reply(self, by: tuple[str, str, str], *content: Any, stop: str = "stop") -> _Session:
        provider, api, model = by
        m = {"role": "assistant", "content": list(content), "api": api, "provider": provider, "model": model, "usage": _USAGE, "stopReason": stop, "timestamp": 2}
        self._add({"type": "message", "message": m})
        return self

    def result(self, call: str, *content: Any) -> _Session:
        m = {"role": "toolResult", "toolCallId": call, "toolName": "read", "content": list(content), "isError": False, "timestamp": 3}
        self._add({"type": "message", "message": m})
        return self

    def text(self) -> str:
        return "".join(json.dumps(x) + "\n" for x in self.lines)


def _t(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _think(text: str, **kw: Any) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, **kw}


def _call(cid: str, **kw: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": cid, "name": "read", "arguments": {"path": "a.png"}, **kw}


def _history(by: tuple[str, str, str]) -> _Session:
    """Turns by `by`: signed, redacted, blank and plain thinking, a call with a thought signature,
    images in a user message (two in a row), a custom message and a tool result."""
    s = _Session().model(by[0], by[2])
    s.user(_t("Look at these."), IMG, IMG, _t("And this one."), IMG)
    s.reply(by, _think("The user wants a file read.", thinkingSignature="sig-1"), _think("", redacted=True, thinkingSignature="opaque"),
            _think("  \n"), _t("Reading it."), _call("call_probe_1", thoughtSignature="ts-1"), stop="toolUse")  # fmt: skip
    s.result("call_probe_1", _t("Read image file [image/png]"), IMG)
    s.reply(by, _think("Plain thinking, unsigned."), _t("It is a cat."))
    s.custom(_t("An extension's note with a picture:"), IMG)
    s.user(_t("Thanks."))
    return s


def _own_reply(to: tuple[str, str]) -> tuple[str, str, str]:
    return (to[0], "openai-completions", to[1])


# (name, the session, given the model pi is to resume with)
PROBES: list[tuple[str, Callable[[tuple[str, str]], _Session]]] = [
    ("another model's turns, then a model change", lambda to: _history(OTHER).model(*to)),
    ("another model's turns, then the model's own reply", lambda to: _history(OTHER).reply(_own_reply(to), _t("Noted."))),
    ("its own turns, then another's", lambda to: _history(_own_reply(to)).reply(OTHER, _think("Other thoughts."), _t("Other."))
     .user(_t("Back.")).reply(_own_reply(to), _think("Own thoughts.", thinkingSignature="reasoning_content"), _t("Own."))),
    ("its provider and id, another api", lambda to: _history((to[0], "openai-responses", to[1])).reply(_own_reply(to), _t("Noted."))),
    ("an errored reply last", lambda to: _history(OTHER).model(*to).user(_t("Again."))
     .reply(_own_reply(to), _think("Half a thought."), stop="error")),
]
QUICK = [0, 2, 3]
# Not mirrored (docs/runtimes/pi.md section 5): a call id of the OpenAI Responses providers
# (`call|item`) by another model, which openai-completions cuts at the `|` (:563-576) for the call
# and its result alike; inspector lists the file's ids. Run with the whole set, counted apart.
CODEX = ("openai-codex", "openai-codex-responses", "gpt-5.1")
NOT_MIRRORED: list[tuple[str, Callable[[tuple[str, str]], _Session]]] = [
    ("a Responses call id by another model", lambda to: _Session().model(CODEX[0], CODEX[2]).user(_t("Read it."))
     .reply(CODEX, _t("Reading."), _call("call_rx1|fc_0a1b+/="), stop="toolUse").result("call_rx1|fc_0a1b+/=", _t("done"))
     .reply(CODEX, _t("Done.")).model(*to)),
]


def _parts(content: Any) -> tuple[list[str], int]:
    """The texts and the count of images of a message's content as pi sent it."""
    if isinstance(content, str):
        return [content], 0
    texts = [c["text"] for c in content or [] if c.get("type") == "text"]
    return texts, sum(1 for c in content or [] if c.get("type") == "image_url")


def sent(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """pi's request as the comparison sees it: per message its role, texts, image count and call ids.
    The user message openai-completions adds after tool results to carry their images (:753-771)
    is counted into the result before it (:755-771); a result's texts joined with newlines (:727) are split."""
    out: list[tuple[Any, ...]] = []
    for m in messages:
        texts, images = _parts(m.get("content"))
        if m["role"] == "user" and texts[:1] == ["Attached image(s) from tool result:"] and out and out[-1][0] == "tool":
            role, t, n, ids = out[-1]
            out[-1] = (role, t, n + images, ids)
        elif m["role"] == "tool":
            out.append(("tool", m["content"].split("\n"), 0, [m["tool_call_id"]]))
        elif m["role"] == "assistant":
            out.append(("assistant", ["".join(texts)] if texts else [], 0, [c["id"] for c in m.get("tool_calls") or []]))
        else:
            out.append((m["role"], texts, images, []))
    return out


def predicted(report: Any, image: bool) -> list[tuple[Any, ...]]:
    """inspector's next request as pi-ai's chat-completions conversion would write it (`image`: the
    model takes images): each item's message as sent (`ContextItem.sent`, else as written)."""
    out: list[tuple[Any, ...]] = []
    for it in report.ensure_tokens():
        m = it.sent if it.sent is not None else report.ledger.records[it.seq].message if it.seq is not None else None
        blocks = m.blocks if m is not None else []
        if it.role == "assistant":
            text = "".join(b.text for b in blocks if b.type == "text" and b.text.strip())
            out.append(("assistant", [text] if text else [], 0, list(it.tool_call_ids)))
        elif it.role == "tool":
            texts = [b.text for b in blocks if b.type == "tool_result"] if m is not None else [it.text]
            images = sum(1 for b in blocks if b.type == "image") if image else 0
            out.append(("tool", texts, images, [it.tool_result_id]))
        else:
            texts = [b.text for b in blocks if b.type == "text"] if m is not None else [it.text]
            out.append((it.role, texts, sum(1 for b in blocks if b.type == "image"), []))
    return out


def _tool_texts(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A result's texts as one (inspector joins a result's text blocks with nothing, openai-completions
    with newlines: what each provider does there is not modelled)."""
    return (row[0], ["".join(row[1])], *row[2:]) if row[0] == "tool" else row


def compare(messages: list[dict[str, Any]], f: Path, image: bool) -> str | None:
    """None when pi's request is inspector's next request, message by message, else the first difference."""
    from inspector.analysis import analyze
    from inspector.formats import load

    got = [_tool_texts(r) for r in sent(messages)]
    want = [_tool_texts(r) for r in predicted(analyze(load(str(f))), image)]
    if got == want:
        return None
    i = next((k for k, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
    return f"message {i}: pi sent {got[i] if i < len(got) else None}, inspector {want[i] if i < len(want) else None}"


# The models pi resumes each probe with: (label, model, whether it takes images, the fake model's
# input). One pi process a fake model's input.
TARGETS = [
    ("pi's model without image input", TEXT_ONLY, False, ("text", "image")),
    ("pi's model with image input", WITH_IMAGES, True, ("text", "image")),
    ("the user's model, with image input", FAKE, True, ("text", "image")),
]
# ... and where inspector's assumption fails: a model of the user's models.json without image input
# (inspector cannot read its input: it takes it to take images; pi sends placeholders).
ASSUMED = [("the user's model, without image input", FAKE, False, ("text",))]


def _probe_files(scratch: Path, quick: bool) -> list[tuple[str, Path, tuple[str, str], bool, tuple[str, ...]]]:
    out = []
    for t, (label, to, image, fake_input) in enumerate(TARGETS + ([] if quick else ASSUMED)):
        for k, (name, make) in enumerate([PROBES[i] for i in QUICK] if quick else PROBES + (NOT_MIRRORED if t < len(TARGETS) else [])):
            f = scratch / "probes" / f"t{t}-{k:02d}.jsonl"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(make(to).text())
            out.append((f"{name}; {label}", f, to, image, fake_input))
    return out


def run(scratch: Path, quick: bool = False) -> list[tuple[str, str | None]]:
    """(label, None or the first difference) for each probe and resume model."""
    probes = _probe_files(scratch, quick)
    rows: dict[Path, tuple[str, str | None]] = {}
    for fake_input in dict.fromkeys(p[4] for p in probes):
        these = [p for p in probes if p[4] == fake_input]
        copies = []
        for _, f, *_ in these:  # (pi writes to what it resumes: it resumes copies)
            copies.append(f.with_suffix(".resumed.jsonl"))
            copies[-1].write_bytes(f.read_bytes())
        run_dir = scratch / f"run-{len(fake_input)}"
        runs = resume.resume_many(copies, run_dir, extra=resume.Models(("groq",), fake_input, cli_model=False))
        for (name, f, to, image, _), r in zip(these, runs, strict=True):
            if r.messages is None or r.model != to[1]:
                rows[f] = (name, f"pi sent nothing: {r.error}" if r.messages is None else f"pi resumed with {r.model}, not {to[1]}")
            else:
                rows[f] = (name, compare(r.messages, f, image))
    return [rows[p[1]] for p in probes]


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        rows = run(Path(tmp), quick="--quick" in argv)
    for name, diff in rows:
        print(f"{'agrees' if diff is None else 'DIFFERS'}  {name}" + (f"\n    {diff}" if diff else ""))
    groups = {"mirrored": [], "assumed": [], "not mirrored": []}  # type: dict[str, list[str | None]]
    for name, d in rows:
        key = "assumed" if name.endswith(ASSUMED[0][0]) else "not mirrored" if name.startswith(NOT_MIRRORED[0][0]) else "mirrored"
        groups[key].append(d)
    for key, ds in groups.items():
        if ds:
            print(f"{key}: {sum(1 for d in ds if d is None)} of {len(ds)} agree")
    return 1 if any(d is not None for d in groups["mirrored"]) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
