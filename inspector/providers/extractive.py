"""The offline summarizer: no model, no key, no network. It extracts, it never invents.

Input is the serialized conversation the repair engine sends: each message starts on a line with a
role marker — `[user]`, `[assistant]`, `[tool]`, or pi's `[User]:`, `[Assistant]:`,
`[Assistant thinking]:`, `[Assistant tool calls]:`, `[Tool result]:` as the engine's prompts write
them. When the prompt wraps the conversation in `<conversation>…</conversation>`, only that part is
read as messages, so the instructions around it are not mistaken for them; `<read-files>` and
`<modified-files>` blocks feed the Files section. A previous summary in the prompt (inside `<previous-summary>`, a `[summary]`
message, or a user message that carries a checkpoint — a `<summary>` block or an `## Active request`
heading) is not taken as a request; its active request (when the range has none), constraints and
files roll forward.

Output follows the summary protocol (seed 004): the four essential sections, the essential marker,
then an optional `## Files` section closed by its own marker. The output budget is
`max_output_tokens` at 4 characters a token: the essentials are abbreviated step by step until
they fit, files fill what is left; when even the tersest essentials do not fit, the text is cut
and the outcome is `truncated`. A pure function of the request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inspector.analysis.protocol import ESSENTIAL_MARKER, ESSENTIAL_SECTIONS
from inspector.ledger.model import Route, Usage
from inspector.providers.base import SummaryRequest, SummaryResult

CHARS_PER_TOKEN = 4
ACTIVE, WORK, SAFETY, CONTRACT = ESSENTIAL_SECTIONS
FILES = "Files"
FILES_END = f"<!-- end: {FILES} -->"
MAX_FILES = 50

_MARKER = re.compile(r"^\[(?P<label>[A-Za-z][A-Za-z _-]{0,40})(?:[ #:,][^\]\n]*)?\]:?[ \t]*(?P<rest>.*)$")
_CONVERSATION = re.compile(r"<conversation>\n?(.*?)\n?</conversation>", re.S)
_PREVIOUS = re.compile(r"<previous[-_ ]summary>\n?(.*?)\n?</previous[-_ ]summary>", re.S | re.I)
_FILE_LIST = re.compile(r"<(read|modified)-files>\n?(.*?)</\1-files>", re.S)
_SUMMARY_TAG = re.compile(r"<summary>\n?(.*?)\n?</summary>", re.S)
# Our own filler bullets, not constraints, when a previous extractive summary rolls forward.
_PLACEHOLDER = re.compile(r"^(?:none stated\.?|\(\d+ more in the original messages\))$", re.I)
_CONSTRAINT = re.compile(r"\b(?:never|don['’]t|do not|must|always|only)\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)
_EXT = (
    r"py|pyi|ts|tsx|js|jsx|mjs|cjs|json|jsonl|toml|yaml|yml|md|rst|txt|cfg|ini|lock|rs|go|java|kt|c|h"
    r"|cc|cpp|hpp|cs|rb|php|swift|sh|bash|zsh|sql|html|css|scss|vue|svelte|xml|csv|proto|gradle|env"
)
_PATH = re.compile(
    rf"(?<![\w@/.-])(?:~?/|\.{{1,2}}/)?(?:[\w.-]+/)+[\w.-]+\.\w{{1,10}}(?![\w/])"
    rf"|(?<![\w@/.-])[\w-][\w.-]*\.(?:{_EXT})(?![\w/])"
)


@dataclass(frozen=True)
class Segment:
    kind: str  # user | assistant | tool_call | tool | thinking | system | summary
    text: str


@dataclass(frozen=True)
class _Level:
    request: int  # chars of the active request
    item: int  # chars per work-state item
    items: int  # work-state items kept
    constraint: int  # chars per constraint
    constraints: int  # constraints kept
    terse: bool  # the short continuation contract


# Most generous first; the first level whose essentials fit the budget is used.
_LEVELS = (
    _Level(2000, 400, 8, 400, 30, False),
    _Level(1000, 200, 6, 240, 20, False),
    _Level(500, 120, 4, 160, 12, False),
    _Level(240, 80, 3, 120, 8, True),
    _Level(120, 60, 2, 100, 5, True),
    _Level(60, 40, 1, 60, 3, True),
)


class ExtractiveProvider:
    """Deterministic, offline; the default summarizer."""

    __slots__ = ()
    name = "extractive"
    route = Route("extractive", "local")

    def __repr__(self) -> str:
        return "ExtractiveProvider()"

    def summarize(self, req: SummaryRequest) -> SummaryResult:
        return summarize_extractively(req)


def summarize_extractively(req: SummaryRequest) -> SummaryResult:
    budget = max(req.max_output_tokens, 0) * CHARS_PER_TOKEN
    segments, previous = parse_prompt(req.prompt)
    facts = _facts(segments, previous, req.prompt)

    text, outcome = "", "truncated"
    for level in _LEVELS:
        essentials = _render_essentials(facts, level)
        if len(essentials) <= budget:
            text, outcome = essentials + _render_files(facts.files, budget - len(essentials)), "ok"
            break
    else:
        text = _render_essentials(facts, _LEVELS[-1])[:budget]
    usage = Usage(input=_tokens(len(req.system) + len(req.prompt)), output=_tokens(len(text)))
    return SummaryResult(outcome, text, usage)


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


# --- reading the prompt ---------------------------------------------------------------------------


def _kind(label: str) -> str | None:
    label = label.strip().lower()
    if label.startswith("user"):
        return "user"
    if label.startswith("assistant"):
        if "call" in label or "tool" in label:
            return "tool_call"
        if "think" in label or "reason" in label:
            return "thinking"
        return "assistant"
    if label.startswith("tool"):
        return "tool_call" if "call" in label and "result" not in label else "tool"
    if label.startswith("system"):
        return "system"
    if label.startswith(("summary", "previous summary", "checkpoint", "compaction")):
        return "summary"
    return None


def parse_prompt(prompt: str) -> tuple[list[Segment], list[str]]:
    """(messages in order, previous summaries found in the prompt)."""
    previous = [m.group(1) for m in _PREVIOUS.finditer(prompt)]
    conv = _CONVERSATION.search(prompt)
    body = conv.group(1) if conv else _PREVIOUS.sub("", prompt)
    segments: list[Segment] = []
    kind: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if kind is not None:
            segments.append(Segment(kind, "\n".join(lines).strip()))

    for line in body.splitlines():
        m = _MARKER.match(line)
        k = _kind(m.group("label")) if m else None
        if m and k:
            flush()
            kind, lines = k, [m.group("rest")]
        elif kind is not None:
            lines.append(line)
    flush()
    if not segments and body.strip():
        # No role markers at all: the whole text is what the user asked to have summarized.
        segments.append(Segment("user", body.strip()))
    # A checkpoint carried as a user or system message (pi sends its summary that way) is a
    # previous summary, not a request.
    segments = [
        Segment("summary", s.text) if s.kind in ("user", "system") and _is_summary(s.text) else s
        for s in segments
    ]
    for s in segments:
        if s.kind == "summary":
            inner = _SUMMARY_TAG.search(s.text)
            previous.append(inner.group(1) if inner else s.text)
    return [s for s in segments if s.kind != "summary"], previous


def _is_summary(text: str) -> bool:
    return (
        bool(_SUMMARY_TAG.search(text)) or re.search(rf"^## {re.escape(ACTIVE)}\s*$", text, re.M) is not None
    )


def _sections(summary: str) -> dict[str, str]:
    head = summary.split(ESSENTIAL_MARKER)
    out: dict[str, str] = {}
    for part in head:
        for m in re.finditer(r"^## ([^\n]+?)[ \t]*$\n?(.*?)(?=^## |\Z)", part, re.M | re.S):
            body = re.sub(r"<!-- end: [^>]+? -->", "", m.group(2)).strip()
            out.setdefault(m.group(1).strip(), body)
    return out


def _bullets(section: str) -> list[str]:
    return [ln[2:].strip() for ln in section.splitlines() if ln.startswith("- ") and ln[2:].strip()]


@dataclass(frozen=True)
class _Facts:
    request: str
    work: tuple[Segment, ...]
    pending_call: bool
    constraints: tuple[str, ...]
    files: tuple[str, ...]


def _facts(segments: list[Segment], previous: list[str], prompt: str = "") -> _Facts:
    prev = [_sections(p) for p in previous]
    users = [s for s in segments if s.kind == "user" and s.text]
    if users:
        request = users[-1].text
    else:
        carried = [p[ACTIVE] for p in prev if p.get(ACTIVE)]
        request = carried[-1] if carried else ""

    last_user = max((i for i, s in enumerate(segments) if s.kind == "user"), default=-1)
    relevant = [s for s in segments if s.kind in ("assistant", "tool_call", "tool") and s.text]
    after = [s for s in segments[last_user + 1 :] if s.kind in ("assistant", "tool_call", "tool") and s.text]
    work = tuple(after or relevant)
    pending = bool(work) and work[-1].kind == "tool_call"

    constraints: list[str] = []
    seen: set[str] = set()

    def add(sentence: str) -> None:
        norm = " ".join(sentence.split())
        if norm and norm.lower() not in seen and not _PLACEHOLDER.match(norm):
            seen.add(norm.lower())
            constraints.append(norm)

    for p in prev:
        for b in _bullets(p.get(SAFETY, "")):
            add(b)
    for s in users:
        for line in s.text.splitlines():
            line = line.strip().lstrip("-*• ").strip()
            for sentence in _SENTENCE_END.split(line):
                if _CONSTRAINT.search(sentence):
                    add(sentence)

    last_seen: dict[str, int] = {}  # path -> order of its latest mention; insertion = first mention
    order = 0
    for p in prev:
        for b in _bullets(p.get(FILES, "")):
            last_seen[b] = order
            order += 1
    for s in segments:
        if s.kind == "thinking":
            continue
        for m in _PATH.finditer(_URL.sub(" ", s.text)):
            last_seen[m.group(0).rstrip(".,:;")] = order
            order += 1
    # pi's file-list blocks (the engine's own record of files read and modified) count as the latest mentions.
    for m in _FILE_LIST.finditer(prompt):
        for line in m.group(2).splitlines():
            if line.strip():
                last_seen[line.strip()] = order
                order += 1
    # The most recently mentioned files are the ones the work continues with; shown in first-mention order.
    recent = set(sorted(last_seen, key=last_seen.__getitem__)[-MAX_FILES:])
    files = [f for f in last_seen if f in recent]
    return _Facts(request, work, pending, tuple(constraints), tuple(files))


# --- writing the summary --------------------------------------------------------------------------


def _abbrev(text: str, limit: int) -> str:
    # Collapsed to one line, so no extracted text can open a heading; comment openers defused, so
    # none can fake the protocol's markers.
    text = " ".join(text.split()).replace("<!--", "< !--")
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _work_line(s: Segment, limit: int) -> str:
    if s.kind == "tool":
        lines = [ln for ln in s.text.splitlines() if ln.strip()]
        more = f" ({len(lines)} lines)" if len(lines) > 1 else ""
        return f"- tool result: {_abbrev(lines[0] if lines else '', limit)}{more}"
    label = "tool call" if s.kind == "tool_call" else "assistant"
    return f"- {label}: {_abbrev(s.text, limit)}"


def _render_essentials(f: _Facts, lv: _Level) -> str:
    request = _abbrev(f.request, lv.request) if f.request else "No user request in the summarized range."
    work = [_work_line(s, lv.item) for s in f.work[-lv.items :]]
    if f.pending_call:
        work.append("- The last tool call has no result in the summarized range.")
    if not work:
        work = ["- Nothing was done after the request in the summarized range."]
    kept = f.constraints[: lv.constraints]
    safety = [f"- {_abbrev(c, lv.constraint)}" for c in kept] or ["- None stated."]
    if len(f.constraints) > len(kept):
        safety.append(f"- ({len(f.constraints) - len(kept)} more in the original messages)")
    if lv.terse:
        contract = ["- Continue the active request from the work state; keep the constraints."]
    else:
        contract = [
            "- Continue the active request from the current work state; do not redo finished steps.",
            "- Keep every safety and user constraint listed above.",
        ]
        if f.pending_call:
            contract.append("- Check the outcome of the last tool call before relying on it.")
        contract.append(
            "- This summary was extracted offline from the source messages; consult them for detail."
        )
    parts = [
        f"## {ACTIVE}\n{request}",
        f"## {WORK}\n" + "\n".join(work),
        f"## {SAFETY}\n" + "\n".join(safety),
        f"## {CONTRACT}\n" + "\n".join(contract),
    ]
    return "\n\n".join(parts) + f"\n\n{ESSENTIAL_MARKER}\n"


def _render_files(files: tuple[str, ...], room: int) -> str:
    """The Files section with as many paths as fit in `room` characters, or "" when none fit."""
    head, tail = f"\n## {FILES}\n", f"{FILES_END}\n"
    out, size = [], len(head) + len(tail)
    for path in files:
        line = f"- {path}\n"
        if size + len(line) > room:
            break
        out.append(line)
        size += len(line)
    return head + "".join(out) + tail if out else ""
