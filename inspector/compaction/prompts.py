"""What a summarizer is asked (seed 004's protocol, ADR 0302's update prompt), as plain text.

The conversation is serialized the way pi serializes it for its summarizer, one message per
marker line (`[User]:`, `[Assistant]:`, `[Assistant thinking]:`, `[Assistant tool calls]:`,
`[Tool result]:`), inside `<conversation>…</conversation>`. A carried summary goes inside
`<previous-summary>…</previous-summary>` with the update instructions; the range's file list goes
inside `<read-files>` / `<modified-files>` on the last request only. The offline extractive
summarizer reads exactly these markers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from inspector.analysis.protocol import ESSENTIAL_MARKER, ESSENTIAL_SECTIONS
from inspector.analysis.tokens import Tokenizer
from inspector.ledger.jsontext import dumps_text, py_str
from inspector.ledger.model import Message

SYSTEM_PROMPT = (
    "You are a context summarization assistant. You read part of a coding agent's conversation and "
    "write the structured summary another model will continue the work from. Do not continue the "
    "conversation, do not answer questions in it, and do not invent facts: only output the summary."
)

OPTIONAL_SECTIONS: tuple[str, ...] = ("Decisions", "Files", "Errors and fixes", "Open questions")

_FORMAT = (
    "Write the essential sections first, in this order, each under its own `## ` heading:\n"
    + "".join(f"## {name}\n" for name in ESSENTIAL_SECTIONS)
    + f"Then write the line {ESSENTIAL_MARKER} on its own: it marks the essential part as complete.\n"
    "After it you may add optional sections ("
    + ", ".join(f"## {name}" for name in OPTIONAL_SECTIONS)
    + "); close each one with the line <!-- end: NAME --> where NAME is its heading. "
    "Anything after the last closing line is discarded.\n"
    "Quote paths, identifiers, commands and error messages exactly. The active request is the user's "
    "latest instruction the work is still carrying out; constraints are everything the user said must "
    "or must not be done. Stay within {target} tokens."
)

INITIAL_INSTRUCTIONS = "Summarize the conversation above so that another model can continue the work without it.\n" + _FORMAT

UPDATE_INSTRUCTIONS = (
    "The conversation above holds NEW messages that follow the summary in <previous-summary>. Update "
    "that summary: keep everything in it that still holds, fold in what the new messages add or change, "
    "and move finished work out of the current work state.\n" + _FORMAT
)

FILE_LIST_NOTE = "List the files above in the optional `## Files` section."

# Tool names whose `path`-like argument is a file read / a file modified (pi: read, write, edit).
READ_TOOLS = frozenset({"read", "read_file", "view", "cat", "open_file"})
WRITE_TOOLS = frozenset(
    {"write", "edit", "write_file", "edit_file", "create", "create_file", "str_replace", "multiedit", "multi_edit", "apply_patch"}
)
_PATH_KEYS = ("path", "file_path", "filePath", "file", "filename")


def serialize_message(m: Message) -> str:
    """One message as summarizer input text."""
    if m.role == "assistant":
        parts: list[str] = []
        texts = [b.text for b in m.blocks if b.type == "text" and b.text]
        thinking = [b.text for b in m.blocks if b.type == "thinking" and b.text]
        calls = [b for b in m.blocks if b.type == "tool_call"]
        if thinking:
            parts.append("[Assistant thinking]: " + "\n".join(thinking))
        if texts:
            parts.append("[Assistant]: " + "\n".join(texts))
        if calls:
            parts.append("[Assistant tool calls]: " + "; ".join(f"{b.name}({_args(b.args)})" for b in calls))
        return "\n".join(parts) or "[Assistant]: (no text)"
    if m.role == "tool":
        err = any(b.is_error for b in m.blocks if b.type == "tool_result")
        text = m.text() or "(no output)"
        return f"[Tool result]: {'(error) ' if err else ''}{text}"
    if m.role == "system":
        return "[System]: " + (m.text() or "")
    text = m.text()
    if any(b.type == "image" for b in m.blocks):
        text = (text + "\n[image]").strip()
    return "[User]: " + (text or "(empty)")


def _args(args: Any) -> str:
    if isinstance(args, dict):
        return ", ".join(f"{k}={_json(v)}" for k, v in args.items())
    return _json(args)


def _json(v: Any) -> str:
    try:
        return dumps_text(v)
    except TypeError:
        return py_str(v)


def clip_to_tokens(text: str, max_tokens: int, tok: Tokenizer) -> str:
    """`text` shortened to at most `max_tokens` tokens: its head and tail with an elision marker
    between them (summarizer input only; a retained message is never shortened)."""
    n = tok.count(text)
    if n <= max_tokens:
        return text
    if max_tokens <= 8:
        return "[… elided …]"
    keep_chars = max(int(len(text) * max_tokens / n * 0.9), 16)
    while True:
        head = text[: keep_chars * 2 // 3]
        tail = text[len(text) - keep_chars // 3 :] if keep_chars // 3 else ""
        out = f"{head}\n[… {n - max_tokens:,}+ tokens elided …]\n{tail}"
        if tok.count(out) <= max_tokens or keep_chars <= 16:
            return out if tok.count(out) <= max_tokens else "[… elided …]"
        keep_chars = keep_chars * 3 // 4


def file_operations(messages: Iterable[Message]) -> tuple[list[str], list[str]]:
    """(files read, files modified) by tool calls, in first-seen order; a file both read and
    modified counts as modified (pi's rule for `details.readFiles / modifiedFiles`)."""
    read: dict[str, None] = {}
    modified: dict[str, None] = {}
    for m in messages:
        for b in m.blocks:
            if b.type != "tool_call" or not isinstance(b.args, dict):
                continue
            name = (b.name or "").lower()
            path = next((b.args[k] for k in _PATH_KEYS if isinstance(b.args.get(k), str)), None)
            if path is None:
                continue
            if name in WRITE_TOOLS:
                modified[path] = None
            elif name in READ_TOOLS:
                read[path] = None
    return [p for p in read if p not in modified], list(modified)


def merge_file_lists(
    prev_read: list[str], prev_modified: list[str], read: list[str], modified: list[str]
) -> tuple[list[str], list[str]]:
    """Cumulative over checkpoints, as pi keeps them."""
    mod = list(dict.fromkeys([*prev_modified, *modified]))
    rd = [p for p in dict.fromkeys([*prev_read, *read]) if p not in set(mod)]
    return rd, mod


def file_list_block(read: list[str], modified: list[str]) -> str:
    """pi's own file-list block, appended to the stored summary and to the last request."""
    parts: list[str] = []
    if read:
        parts.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
    if modified:
        parts.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
    return "\n\n".join(parts)


def build_prompt(
    conversation: list[str], previous_summary: str | None, file_list: str | None, target_tokens: int
) -> str:
    """The user prompt of one summarizer request."""
    parts: list[str] = []
    if previous_summary:
        parts.append(f"<previous-summary>\n{previous_summary}\n</previous-summary>")
    parts.append("<conversation>\n" + "\n\n".join(conversation) + "\n</conversation>")
    if file_list:
        parts.append(file_list + "\n" + FILE_LIST_NOTE)
    instructions = UPDATE_INSTRUCTIONS if previous_summary else INITIAL_INSTRUCTIONS
    parts.append(instructions.replace("{target}", f"{target_tokens:,}"))
    return "\n\n".join(parts)


def recovery_notice(reason: str, line_from: int | None, line_to: int | None) -> str:
    """The recovery notice of ADR 0302: says what the checkpoint is, never what the history said."""
    where = f" (lines {line_from}–{line_to})" if line_from is not None and line_to is not None else ""
    return (
        "## Recovery notice\n"
        f"No summary of the older history could be installed ({reason}). What follows the summary"
        f" is the most recent part of the conversation{where}, kept verbatim from the session file;"
        " older history not covered by a summary above was dropped from this request.\n"
        "<!-- end: Recovery notice -->"
    )


def quoted_request(text: str, line: int) -> str:
    """The active request, verbatim, for a runtime whose retained tail must be contiguous (pi)
    when the window cannot hold it raw."""
    name = f"Active request (verbatim, line {line})"
    return f"## {name}\n{text}\n<!-- end: {name} -->"
