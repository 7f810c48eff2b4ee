"""pi-ai rewrites the next request for the model it goes to (`transformMessages`,
providers/transform-messages.js; `inspector/formats/pi_transform.py`): another model's thinking is
sent as text, its empty and redacted thinking left out, and a model without image input gets a
placeholder text for each run of images. inspector's next request shows what is sent, and counts it.

Before this rule, the next request of a session whose model was switched (/model) showed another
model's thinking as thinking (left out of the preview, counted at the reply's own output tokens)
and images where the model receives a placeholder. The real pi: tests/test_pi_transform_real.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.export import context_json
from inspector.formats import load, pi_resume, pi_transform
from inspector.live.incremental import GROWN, Follower
from inspector.tui.model import item_full_text
from tests.peers.pi_resume import transform_probe as tp

TEXT_ONLY, WITH_IMAGES = tp.TEXT_ONLY, tp.WITH_IMAGES
PLACEHOLDER, TOOL_PLACEHOLDER = pi_transform.IMAGE_PLACEHOLDER, pi_transform.TOOL_IMAGE_PLACEHOLDER


def _report(tmp_path: Path, s: tp._Session, name: str = "s.jsonl") -> Any:
    p = tmp_path / name
    p.write_text(s.text())
    return analyze(load(str(p)))


def _items(rep: Any) -> list[dict[str, Any]]:
    return context_json(rep)["messages"]


def _blocks(rep: Any, i: int) -> list[tuple[str, str]]:
    it = rep.ensure_tokens()[i]
    m = it.sent if it.sent is not None else rep.ledger.records[it.seq].message
    return [(b.type, b.text) for b in m.blocks]


def test_the_registry_names_each_models_api_and_input() -> None:
    got = pi_resume.registered(*TEXT_ONLY)
    assert got is not None and got.api == "openai-completions" and got.image is False and got.window == 131072
    assert pi_resume.registered(*WITH_IMAGES).image is True  # type: ignore[union-attr]
    assert pi_resume.registered("anthropic", "claude-sonnet-4-5").api == "anthropic-messages"  # type: ignore[union-attr]
    assert pi_resume.registered("fake", "fake-model") is None


def test_another_models_thinking_is_sent_as_text(tmp_path: Path) -> None:
    rep = _report(tmp_path, tp._history(tp.OTHER).model(*WITH_IMAGES))
    items = _items(rep)
    first = items[1]  # signed, redacted, blank thinking, a text, a call
    assert _blocks(rep, 1) == [("text", "The user wants a file read."), ("text", "Reading it."), ("tool_call", "")]
    assert first["preview"] == "The user wants a file read. Reading it."
    assert "sends its thinking as text, leaves out its redacted thinking and its empty thinking" in first["note"]
    assert "anthropic/claude-sonnet-4-5 (anthropic-messages)" in first["note"]
    # counted on what is sent, not at the reply's own output tokens
    assert first["tokens_from"] == "tiktoken" and first["tokens"] != 50
    assert _blocks(rep, 3) == [("text", "Plain thinking, unsigned."), ("text", "It is a cat.")]
    assert items[1]["tool_call_ids"] == ["call_probe_1"] and items[2]["tool_call_id"] == "call_probe_1"
    # a model with image input: the images are sent
    assert ("image", "") in _blocks(rep, 0) and "note" not in items[0]


def test_the_same_models_replies_are_sent_as_written(tmp_path: Path) -> None:
    own = ("groq", "openai-completions", TEXT_ONLY[1])
    rep = _report(tmp_path, tp._history(own))
    items = _items(rep)
    assert _blocks(rep, 1)[0] == ("thinking", "The user wants a file read.")
    assert items[1]["tokens_from"] == "usage" and items[1]["tokens"] == 50
    assert "thinking" not in (items[3].get("note") or "")


def test_a_model_without_image_input_gets_placeholders(tmp_path: Path) -> None:
    rep = _report(tmp_path, tp._history(tp.OTHER).model(*TEXT_ONLY))
    items = _items(rep)
    # two images in a row: one placeholder
    assert _blocks(rep, 0) == [("text", "Look at these."), ("text", PLACEHOLDER), ("text", "And this one."), ("text", PLACEHOLDER)]
    assert "takes no image input" in items[0]["note"] and PLACEHOLDER in items[0]["preview"]
    assert _blocks(rep, 2) == [("tool_result", "Read image file [image/png]" + TOOL_PLACEHOLDER)]
    assert _blocks(rep, 4) == [("text", "An extension's note with a picture:"), ("text", PLACEHOLDER)]  # a custom message
    assert item_full_text(rep, rep.context[0]) == "\n\n".join(["Look at these.", PLACEHOLDER, "And this one.", PLACEHOLDER])  # the app's view


def test_a_placeholder_written_before_an_image_takes_its_place() -> None:
    # `previousWasPlaceholder` (transform-messages.js:15): a text that is the placeholder already
    o = {"type": "message", "message": {"role": "user", "content": [tp._t(PLACEHOLDER), tp.IMG, tp.IMG, tp._t("x"), tp.IMG]}}
    t = pi_transform.Target(*TEXT_ONLY, "openai-completions", False, True)
    got = pi_transform.sent_entry(o, t)
    assert got is not None and [b.text for b in got[0].blocks] == [PLACEHOLDER, "x", PLACEHOLDER]


def test_thinking_blank_to_javascript_is_left_out() -> None:
    # `block.thinking.trim() === ""`: JavaScript's whitespace, not Python's (U+001C is none to it)
    t = pi_transform.Target(*TEXT_ONLY, "openai-completions", False, True)

    def sent(thinking: str) -> list[tuple[str, str]]:
        m = {"role": "assistant", "content": [tp._think(thinking), tp._t("ok")], "provider": "anthropic", "api": "anthropic-messages", "model": "m"}
        got = pi_transform.sent_entry({"type": "message", "message": m}, t)
        assert got is not None
        return [(b.type, b.text) for b in got[0].blocks]

    assert sent("\u3000\ufeff\u2028 ") == [("text", "ok")]
    assert sent("\x1c") == [("text", "\x1c"), ("text", "ok")]


def test_a_line_with_invalid_utf8_is_rewritten_as_pi_reads_it(tmp_path: Path) -> None:
    # pi reads the file as UTF-8 with U+FFFD for a bad byte (docs/runtimes/pi.md section 1), and
    # rewrites that reply as any other
    text = tp._history(tp.OTHER).model(*TEXT_ONLY).text().replace("Plain thinking, unsigned.", "Plain BAD.")
    p = tmp_path / "s.jsonl"
    p.write_bytes(text.encode().replace(b"BAD", b"\xff"))
    rep = analyze(load(str(p)))
    assert _blocks(rep, 3) == [("text", "Plain \ufffd."), ("text", "It is a cat.")]


def test_a_model_pi_does_not_ship(tmp_path: Path) -> None:
    fake = ("fake", "openai-completions", "fake-model")
    # named by its own reply last: its api is that reply's; a reply of the same provider and id
    # recorded with another api is another model's
    s = tp._history(fake).reply(("fake", "openai-responses", "fake-model"), tp._think("Other api."), tp._t("x"))
    s.user(tp._t("go")).reply(fake, tp._t("Last."))
    rep = _report(tmp_path, s)
    assert _blocks(rep, 1)[0] == ("thinking", "The user wants a file read.")
    assert _blocks(rep, 6)[0] == ("text", "Other api.")
    assert "taken to be the one of its latest reply" in _items(rep)[6]["note"]
    assert ("image", "") in _blocks(rep, 0)  # taken to take images
    # named by a model change: compared on provider and id only
    rep = _report(tmp_path, tp._history(fake).model("fake", "fake-model"), "b.jsonl")
    assert _blocks(rep, 1)[0] == ("thinking", "The user wants a file read.")


def _notes(rep: Any) -> list[tuple[str | None, int | None]]:
    return [(it.note, it.tokens) for it in rep.ensure_tokens()]


def test_a_followed_session_switched_to_another_model_is_rewritten(tmp_path: Path) -> None:
    s = tp._history(tp.OTHER)
    p = tmp_path / "s.jsonl"
    p.write_text(s.text())
    fol = Follower(str(p))
    first = fol.poll()
    assert first is not None and _blocks(first.report, 1)[0] == ("thinking", "The user wants a file read.")  # (the same model's)
    # an append that switches the model: the items kept from before are rewritten too
    p.write_text(s.model(*TEXT_ONLY).user(tp._t("more")).text())
    up = fol.poll()
    assert up is not None and up.whole == GROWN and fol.full_reads == 1
    assert _notes(up.report) == _notes(analyze(load(str(p))))
    assert _blocks(up.report, 1)[0] == ("text", "The user wants a file read.")
    # grown on the same model: the new items are rewritten
    p.write_text(s.reply(tp.OTHER, tp._think("More thought."), tp._t("y")).model(*TEXT_ONLY).user(tp._t("again"), tp.IMG).text())
    up = fol.poll()
    assert up is not None and up.whole == GROWN
    assert _notes(up.report) == _notes(analyze(load(str(p))))
    assert _blocks(up.report, len(up.report.context) - 1) == [("text", "again"), ("text", PLACEHOLDER)]


def test_the_table_is_pi_ais() -> None:
    data = json.loads((Path(pi_resume.__file__).parent / "pi_windows.json").read_text())
    assert len(data["models"]) == 969 and "openai-completions" in data["apis"]


def test_an_answer_is_read_again_only_if_its_loader_saw_a_thinking_block(tmp_path: Path, monkeypatch: Any) -> None:
    """The loader lists the answers it read no thinking block in (`_Source.plain_answers`), and the
    next request reads only the others' lines again: a block whose type is thinking, with no
    thinking in it (left out for another model as empty), is one; an answer with only text is not."""
    s = tp._Session().model(tp.OTHER[0], tp.OTHER[2]).user(tp._t("Hi."))
    s.reply(tp.OTHER, {"type": "thinking", "thinkingSignature": ""}, tp._t("Hello."))
    s.reply(tp.OTHER, tp._t("Plain."))
    s.model(*TEXT_ONLY).user(tp._t("And?"))
    p = tmp_path / "s.jsonl"
    p.write_text(s.text())
    led = load(str(p))
    answers = [r for r in led.records if r.role == "assistant"]
    assert [r.offset in r._source.plain_answers for r in answers] == [False, True]
    read: list[int] = []
    lines = pi_transform._lines
    monkeypatch.setattr(pi_transform, "_lines", lambda led, recs: (read.extend(r.seq for r in recs), lines(led, recs))[1])
    items = _items(analyze(led))
    assert answers[0].seq in read and answers[1].seq not in read  # (the users' lines too: a model without image input)
    assert "leaves out its empty thinking" in items[1]["note"]
    assert "note" not in items[2]
