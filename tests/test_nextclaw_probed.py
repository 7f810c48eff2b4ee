"""What the real NextClaw sent, held as rules (docs/runtimes/nextclaw.md, "Checked against the real
runtime"). Each journal here was run through NextClaw's own kernel (Peiiii/nextclaw 001fb682, its
TypeScript sources) for one turn against a scripted OpenAI-compatible server, and the request it sent
was compared with inspector's prediction; each test holds one rule that comparison found, cited to
NextClaw's source at that commit (`K/` = packages/nextclaw-kernel/src/, `N/` =
packages/ncp-packages/nextclaw-ncp/src/, `T/` = packages/ncp-packages/nextclaw-ncp-toolkit/src/agent/,
`R/` = packages/ncp-packages/nextclaw-ncp-agent-runtime/src/runtime/; context-compaction.utils.ts is
K/features/context-compaction/utils/)."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.formats import nextclaw
from tests.nextclaw_store import Journal, checkpoint, message, timeline, ts


def _analyze(path: Path) -> Report:
    return analyze(nextclaw.load(str(path), None, None))


def _compacted(summary: str) -> Journal:
    j = Journal()
    j.sent(message("u1", "user", "Summarise the report", ts(1)))
    j.completed(message("a1", "assistant", "It says X.", ts(2)))
    j.sent(timeline(checkpoint("ctx-1", summary, ts(2), ts(30))))
    j.sent(message("u2", "user", "And the appendix?", ts(31)))
    return j


def test_the_summary_block_is_sent_trimmed(tmp_path: Path) -> None:
    """The model input builder trims each block of its one system message before joining them
    (K/services/agent-run-model-input-builder.service.ts:32, :90-93): a summary's trailing
    whitespace never reaches the model (NextClaw sent "...\\n\\nReport summary." for "Report summary.\\n")."""
    rep = _analyze(_compacted("## Active Request\nReport summary.\n \u3000\n").write(tmp_path))
    assert rep.context[0].kind == "summary"
    assert rep.context[0].text == nextclaw.PREAMBLE + "\n\n## Active Request\nReport summary."
    assert [it.record_id for it in rep.context[1:]] == ["u2"]


def test_an_empty_summary_leaves_the_preamble_alone(tmp_path: Path) -> None:
    rep = _analyze(_compacted("  \n").write(tmp_path))
    assert rep.context[0].text == nextclaw.PREAMBLE


def _refused(j: Journal, tmp_path: Path) -> list[str]:
    """The resume_refused diagnostics, and nothing sent, when NextClaw's replay throws."""
    led = nextclaw.load(str(j.write(tmp_path)), None, None)
    said = [d.message for d in led.diagnostics if d.problem == "resume_refused" and d.severity == "error"]
    if said:
        assert led.runtime_rejects_file and analyze(led).context == []
    return said


def _after_a_turn(*lines: dict) -> Journal:
    j = Journal()
    j.sent(message("u0", "user", "first", ts(1)))
    j.completed(message("a0", "assistant", "ok", ts(2)))
    for m in lines:
        (j.completed if m.get("role") == "assistant" else j.sent)(m)
    return j


def test_messages_the_replay_throws_on_refuse_the_session(tmp_path: Path) -> None:
    """Each of these made the real kernel's replay throw a TypeError, so sending to the session
    failed (N/toolkit/reply-tags.ts:28, :44, :49; T/agent-conversation-message-normalizer.ts:7;
    K/utils/ncp-agent-session-replay-event.utils.ts:176)."""
    def odd(role: str, **fields: object) -> dict:
        m = message("m1", role, "x", ts(3))
        m.update(fields)
        if fields.get("parts") == "MISSING":
            del m["parts"]
        return m

    for m in (
        odd("assistant", parts=None),
        odd("user", parts=None),
        odd("user", parts={"a": 1}),
        odd("assistant", parts="hello"),
        odd("user", parts="MISSING"),
        odd("assistant", parts=[None, {"type": "text", "text": "x"}]),
        odd("user", parts=[None]),
        odd("assistant", parts=[{"type": "reasoning", "text": "r"}, {"type": "text", "text": 5}]),
    ):
        said = _refused(_after_a_turn(m), tmp_path)
        assert len(said) == 1 and ": line 4: " in said[0], m
    # What it loaded: a user message's string parts (they spread), a later text part's null text.
    assert not _refused(_after_a_turn(odd("user", parts="hello")), tmp_path)
    second = [{"type": "text", "text": "ok"}, {"type": "text", "text": None}]
    assert not _refused(_after_a_turn(odd("assistant", parts=second)), tmp_path)


def test_a_message_event_without_a_message_refuses_the_session(tmp_path: Path) -> None:
    """K/features/context-compaction/services/context-compaction-journal-recovery.service.ts:141
    (`message.metadata` of undefined), N/toolkit/reply-tags.ts:44 (a string message)."""
    for payload in ({}, {"message": None}, {"message": "oops"}):
        j = _after_a_turn().event("message.sent", ts(4), **payload)
        assert len(_refused(j, tmp_path)) == 1, payload


def test_streamed_text_without_a_message_id_refuses_the_session(tmp_path: Path) -> None:
    """T/agent-conversation-state.manager.ts:431 (nothing streaming: `null.status`), :463 with
    T/agent-conversation-state-manager.utils.ts:234 (`undefined.trim`); an empty delta returns
    before (:247-250, :288-291), and a tool call's start without one is taken (the real kernel sent it)."""
    for t, extra in (
        ("message.text-start", {}),
        ("message.text-delta", {"delta": "lost"}),
        ("message.reasoning-delta", {"delta": "lost"}),
    ):
        assert len(_refused(_after_a_turn().event(t, ts(4), **extra), tmp_path)) == 1, t
    assert not _refused(_after_a_turn().event("message.text-delta", ts(4), delta=""), tmp_path)
    j = _after_a_turn().event("message.tool-call-start", ts(4), toolCallId="c9", toolName="ls")
    assert not _refused(j, tmp_path)


def _sent_text(rep: Report, k: int) -> str:
    """The text of the request's item k: its own, else its record's text (or tool result) blocks."""
    it = rep.context[k]
    if it.text or it.seq is None:
        return it.text
    kind = "tool_result" if it.role == "tool" else "text"
    return "".join(b.text or "" for b in rep.ledger.records[it.seq].message.blocks if b.type == kind)


def _turn(assistant: dict) -> Journal:
    j = Journal()
    j.sent(message("u1", "user", "hi", ts(1)))
    return j.completed(assistant)


def test_reply_tags_are_cut_from_the_first_text_part(tmp_path: Path) -> None:
    """sanitizeAssistantReplyTags (N/toolkit/reply-tags.ts:19-90): every `[[reply_to_current]]`,
    then the first `[[reply_to: id]]`, cut from an assistant message's first text part, trimmed as
    JavaScript trims (not \\x85 nor \\x1c); a part left empty goes, and the next pass takes the
    next one: three passes, as the real kernel sent (seven empty tags: four left; six id tags:
    three left)."""
    def sent(text: str | None, parts: list | None = None) -> str:
        return _sent_text(_analyze(_turn(message("a1", "assistant", text, ts(2), parts=parts)).write(tmp_path)), -1)

    assert sent("[[reply_to_current]]  Hello there  ") == "Hello there"
    assert sent("Sure [[ reply_to : m9 ]] thing ") == "Sure  thing"
    assert sent("\x85 [[REPLY_TO_CURRENT]] \u3000x\x1c ") == "\x85  \u3000x\x1c"
    tag = "[[reply_to_current]]"
    many = [{"type": "text", "text": tag} for _ in range(7)] + [{"type": "text", "text": "end"}]
    assert sent(None, many) == tag * 4 + "end"
    ids = "A [[reply_to: x]] B [[reply_to: y]] C [[reply_to: z]] D [[reply_to: w]] E"
    assert sent(ids) == "A  B  C  D [[reply_to: w]] E"
    first = [{"type": "reasoning", "text": "r"}, {"type": "text", "text": tag}, {"type": "text", "text": " second " + tag}]
    assert sent(None, first) == "second"
    assert sent("  no tag  ") == "  no tag  "  # (nothing cut: not trimmed)
    j = Journal()
    j.sent(message("u1", "user", tag + " user text", ts(1)))
    assert _sent_text(_analyze(j.write(tmp_path)), 0) == tag + " user text"  # (an assistant's only)


def test_a_null_tool_result_is_sent(tmp_path: Path) -> None:
    """`part.result !== undefined` (R/utils/message-converter.utils.ts:84): a null result is sent,
    as the tool message "null"; a missing one is not (both seen on the real kernel)."""
    null = {"type": "tool-invocation", "toolCallId": "c1", "toolName": "ls", "state": "result", "args": {}, "result": None}
    rep = _analyze(_turn(message("a1", "assistant", None, ts(2), parts=[{"type": "text", "text": "x"}, null])).write(tmp_path))
    assert [(it.role, it.tool_result_id) for it in rep.context] == [("user", None), ("assistant", None), ("tool", "c1")]
    assert _sent_text(rep, -1) == "null"
    calls = [b for b in rep.ledger.records[rep.context[1].seq].message.blocks if b.type == "tool_call"]
    assert [(b.call_id, b.name, b.args) for b in calls] == [("c1", "ls", {})]
    missing = {k: v for k, v in null.items() if k != "result"}
    rep = _analyze(_turn(message("a1", "assistant", None, ts(2), parts=[missing])).write(tmp_path))
    assert [it.role for it in rep.context] == ["user", "assistant"]


def test_a_user_text_that_is_no_string_fails_the_request(tmp_path: Path) -> None:
    """buildNcpUserContent's `part.text.trim()` (R/runtime/user-content.utils.ts:209) throws for a
    text or rich-text part whose text is no string: the real kernel wrote `run.error` "part.text.trim
    is not a function" and sent nothing (request_fails). Compacted away, it is not built."""
    for parts in ([{"type": "text", "text": 5}], [{"type": "text", "text": "ok"}, {"type": "text", "text": None}], [{"type": "rich-text"}]):
        j = Journal()
        j.sent(message("u1", "user", None, ts(1), parts=parts))
        j.completed(message("a1", "assistant", "ok", ts(2)))
        rep = _analyze(j.write(tmp_path))
        assert [f.code for f in rep.findings if f.code == "request_fails"] == ["request_fails"], parts
    j = Journal()
    j.sent(message("u1", "user", None, ts(1), parts=[{"type": "text", "text": 5}]))
    j.completed(message("a1", "assistant", "ok", ts(2)))
    j.sent(timeline(checkpoint("ctx-1", "S.", ts(2), ts(30))))
    assert not [f for f in _analyze(j.write(tmp_path)).findings if f.code == "request_fails"]


def test_a_text_end_without_a_message_id_and_nothing_streaming_refuses(tmp_path: Path) -> None:
    """`this.streamingMessage?.id !== payload.messageId` is false for no id and nothing streaming,
    then `this.streamingMessage.status` throws (T/agent-conversation-state.manager.ts:271-276):
    the real kernel's send failed. With a message streaming, it returns (the kernel sent it)."""
    assert len(_refused(_after_a_turn().event("message.text-end", ts(4)), tmp_path)) == 1
    j = Journal()
    j.sent(message("u1", "user", "hi", ts(1)))
    j.event("run.started", ts(2), runId="r1")
    j.event("message.text-delta", ts(2), messageId="a1", delta="x")
    assert not _refused(j.event("message.text-end", ts(3)), tmp_path)


def _covered(v: object) -> Journal:
    j = Journal()
    j.sent(message("u1", "user", "Summarise", ts(1)))
    j.completed(message("a1", "assistant", "It says X.", ts(2)))
    cp = checkpoint("ctx-1", "S.", ts(2), ts(30))
    cp["coveredUntil"] = v
    return j.sent(timeline(cp))


def test_covered_until_is_parsed_as_javascript_parses_it(tmp_path: Path) -> None:
    """`Date.parse(checkpoint.coveredUntil ?? checkpoint.updatedAt)` (context-compaction.utils.ts:106,
    :139-141), as the real kernel read it: a number through its string, by V8's fallback ("5" is
    2001-05-01: every message after it; "13" and 10**12 NaN: none), a string it cannot read NaN (not
    updatedAt), a date alone UTC, null the updatedAt."""
    def kept(v: object) -> list[str | None]:
        return [it.record_id for it in _analyze(_covered(v).write(tmp_path)).context[1:]]

    everything = ["u1", "a1"]
    for v in (5, 0, 12, 50, 2026, 1.5, -5, [5], "2026-08-20", "2026-08-20T09:00:30", " 5 "):
        assert kept(v) == everything, v
    for v in (13, 31, 2027, 10**12, True, {}, "yesterday", "", "2030-01-01T00:00:00.000Z", "2026-08-20T09:00:00Z "):
        assert kept(v) == [], v
    assert kept(None) == []  # (updatedAt, ts(30): both covered)
    assert nextclaw.js_date_parse("2026-08-20T09:01:00.000Z") == nextclaw._ms(ts(1))


def test_a_journal_without_events_is_an_empty_session(tmp_path: Path) -> None:
    """NextClaw replays no event and starts the session empty: the real kernel sent only the new
    message. Read as an empty session, with a note; detected by its name (`.jsonl`)."""
    p = tmp_path / "agent_main_s1.jsonl"
    p.write_text(Journal().text())
    assert nextclaw.looks_like_file(str(p))
    from inspector.formats import load

    led = load(str(p))
    rep = analyze(led)
    assert led.format == "nextclaw" and led.records == [] and rep.context == []
    assert [f.code for f in rep.findings] == ["file_structure"]
    side = tmp_path / "agent_main_s1.metadata.json"
    side.write_text(Journal().text())
    assert not nextclaw.looks_like_file(str(side))


def test_a_user_file_part_is_sent_as_its_asset_reference(tmp_path: Path) -> None:
    """buildNcpUserContent (R/runtime/user-content.utils.ts:13-39, :172-236), as the real kernel sent
    it: a file part as `[Asset: …]`, `[MIME: …]`, the URI, size and URL given, and the instruction;
    nothing for a part with no URI, URL or content; a text part only of whitespace not sent."""
    def sent(*parts: dict) -> str:
        j = Journal()
        j.sent(message("u1", "user", None, ts(1), parts=list(parts)))
        return _sent_text(_analyze(j.write(tmp_path)), 0)

    file = {"type": "file", "name": " a.txt ", "mimeType": "text/plain", "url": "http://x/a.txt", "sizeBytes": 12}
    assert sent({"type": "text", "text": "see"}, file) == (
        "see[Asset: a.txt]\n[MIME: text/plain]\n[Size Bytes: 12]\n[Preview URL: http://x/a.txt]\n" + nextclaw._ASSET_INSTRUCTION
    )
    assert sent({"type": "file", "contentBase64": "aGk="}) == (
        "[Asset: asset]\n[MIME: application/octet-stream]\n" + nextclaw._ASSET_INSTRUCTION
    )
    assert sent({"type": "file", "name": "a", "assetUri": "asset://n"}).startswith(
        "[Asset: a]\n[MIME: application/octet-stream]\n[Asset URI: asset://n]\n[Instruction"
    )
    assert sent({"type": "file", "name": "a.txt"}) == ""
    image = {"type": "file", "name": "p.png", "mimeType": "image/png"}
    assert sent({**image, "url": "file:///p.png"}).startswith("[Asset: p.png]\n[MIME: image/png]\n[Preview URL: file:///p.png]")
    assert sent({**image, "url": "https://x/p.png"}) == ""  # (an image: as the model's vision has it, not predicted)
    assert sent({"type": "text", "text": "a"}, {"type": "text", "text": " \u3000"}, {"type": "text", "text": "b"}) == "ab"


def test_the_continuation_message_keeps_its_calls(tmp_path: Path) -> None:
    """The continuation message's parts not covered (continuationMessageCoveredPartCount,
    context-compaction.utils.ts:94-104) are converted as any message (R/utils/message-converter.utils.ts:77-134):
    the real kernel sent their text and their calls, each call's result after it. Every call is
    the item's, not only a lone one; a rich-text part is not an assistant's text there."""
    def call(c: str) -> dict:
        return {"type": "tool-invocation", "toolCallId": c, "toolName": "ls", "state": "result", "args": {}, "result": "out " + c}

    j = Journal()
    j.sent(message("u1", "user", "Summarise", ts(1)))
    parts = [{"type": "text", "text": "Reading."}, {"type": "rich-text", "text": "rich"}, {"type": "text", "text": "more"}, call("c1"), call("c2")]
    j.completed(message("a1", "assistant", None, ts(2), parts=parts))
    cp = checkpoint("ctx-1", "S.", ts(2), ts(30), continuationMessageId="a1", continuationMessageCoveredPartCount=1)
    j.sent(timeline(cp))
    rep = _analyze(j.write(tmp_path))
    assert [(it.role, it.text, list(it.tool_call_ids), it.tool_result_id) for it in rep.context[1:]] == [
        ("assistant", "more", ["c1", "c2"], None),
        ("tool", "", [], "c1"),
        ("tool", "", [], "c2"),
    ]
    assert not [f for f in rep.findings if f.code in ("orphan_tool_result", "unanswered_tool_call")]


def test_messages_after_the_checkpoint_go_where_nextclaw_sends_them(tmp_path: Path) -> None:
    """The projection places every regular message by its fate under the latest checkpoint,
    before its timeline message or after it (context-compaction.utils.ts:185-231): one written after
    it at or before coveredUntil is dropped, a preserved one goes with the preserved, and those
    after coveredUntil go by timestamp. The real kernel did (the generated journals of
    test_checkpoints_split_by_time_order_as_by_each_records_fate); in file order otherwise."""
    def ids(j: Journal) -> list[str | None]:
        return [it.record_id for it in _analyze(j.write(tmp_path)).context[1:]]

    j = Journal()
    j.sent(message("u1", "user", "first", ts(1)))
    j.completed(message("a1", "assistant", "answer", ts(2)))
    j.sent(timeline(checkpoint("ctx-1", "S.", ts(2), ts(30), preservedUserMessageIds=["u9"])))
    j.sent(message("u2", "user", "late", ts(40)))
    j.completed(message("a2", "assistant", "covered", ts(2)))  # (at coveredUntil: dropped)
    j.sent(message("u3", "user", "earlier", ts(35)))  # (sent before u2 by time)
    j.sent(message("u9", "user", "preserved", ts(45)))
    assert ids(j) == ["u9", "u3", "u2"]
    j = Journal()
    j.sent(message("u1", "user", "first", ts(1)))
    j.sent(timeline(checkpoint("ctx-1", "S.", ts(1), ts(30))))
    j.sent(message("u2", "user", "next", ts(31)))
    j.completed(message("a2", "assistant", "ok", ts(32)))
    assert ids(j) == ["u2", "a2"]


def test_a_checkpoint_field_nested_deep_is_quoted_in_its_report_not_a_crash(tmp_path: Path) -> None:
    """Found by `python -m tests.fuzz` (seed 137): a compressed checkpoint with summaryDiagnostics
    whose `phase` held an object nested past Python's repr limit made its `compaction_report`
    raise a RecursionError (the load failed). Every value of the report's text from the file is now
    quoted to a few levels."""
    from inspector.formats import load

    deep = '{"a":' * 1000 + '"x"' + "}" * 1000  # (past json.dumps and repr, within what the reader takes: spliced in as text)
    diag = {"attemptCount": 3, "finishReason": "length", "providerMaxOutputTokens": "@DEEP@", "installedSummaryTokens": "@DEEP@"}
    cp = checkpoint("ctx-1", "s", ts(1), ts(2), phase="@DEEP@", coveredMessageCount="@DEEP@", summaryDiagnostics=diag)
    f = Journal().sent(message("u1", "user", "hello", ts(0))).sent(timeline(cp)).write(tmp_path)
    f.write_text(f.read_text().replace('"@DEEP@"', deep))
    reports = [d.message for d in load(str(f)).diagnostics if d.problem == "compaction_report"]
    assert len(reports) == 1 and "{'a': {'a': {'a': {...}}}}" in reports[0] and "3 summary calls" in reports[0], reports


def test_a_sidecar_naming_a_checkpoint_nested_deep_is_quoted_not_a_crash(tmp_path: Path) -> None:
    """The same for the metadata sidecar's last_context_compaction (its id and status), which the
    report beside the journal's latest checkpoint quoted with repr (found reading the code after the
    fuzz campaign's seed 137)."""
    from inspector.formats import load

    deep = '{"a":' * 1000 + '"x"' + "}" * 1000
    f = Journal().sent(message("u1", "user", "hello", ts(0))).sent(timeline(checkpoint("ctx-1", "s", ts(1), ts(2)))).write(tmp_path)
    meta = {"_type": "metadata", "version": 1, "created_at": ts(0), "agent_id": "main",
            "metadata": {"last_context_compaction": {"id": "@DEEP@", "status": "@DEEP@"}}}  # fmt: skip
    (tmp_path / "agent_main_s1.metadata.json").write_text(json.dumps(meta).replace('"@DEEP@"', deep))
    said = [d.message for d in load(str(f)).diagnostics if "last_context_compaction" in d.message]
    assert len(said) == 1 and "names checkpoint {'a': {'a': {'a': {...}}}}" in said[0] and "'ctx-1'" in said[0], said
