"""`inspector hook claude-code`: the session check run by Claude Code itself, where the compaction happens.

Claude Code (2.1.328) runs a command hook with the event as JSON on stdin (`session_id`,
`transcript_path`, `cwd`, `hook_event_name`, and `source` for SessionStart / `trigger` for
PreCompact) and reads its answer from the exit code and stdout:

- exit 0: success; for SessionStart, stdout JSON is read: `systemMessage` is shown to the user,
  `hookSpecificOutput.additionalContext` (with `hookEventName: "SessionStart"`) is added to what
  the model receives next. For PreCompact, stdout is plain text: Claude Code shows it to the user
  ("PreCompact [command] completed successfully: ...") and appends it to the summarizer's
  instructions ("Additional Instructions:").
- exit 2: a blocking error (for PreCompact: the compaction is not done). Never used here.
- any other code: a non-blocking error; stderr is shown, the agent goes on.

So the answer is: for SessionStart (source `compact` or `resume`) a warning and, for the model,
what was lost and where to read it; for PreCompact a note the user sees and the summarizer is
asked to keep; nothing (exit 0, empty stdout) when the session is sound or the event is another.
Our own trouble (stdin that is not an event, a transcript that cannot be read, a bug) is one line
on stderr and exit 1: reported, never blocking, and never a traceback. A mistyped flag is exit 1
as well (argparse's usage exit 2 would block a compaction).

When Claude Code runs SessionStart with source `compact`, the transcript does not hold the new
boundary yet: Claude Code writes it, and the hooks' output, after the hooks return (seen with the
real CLI, tests/peers/claude_code_hook/). The transcript then shows the session just before the
compaction, so only what no compaction brings back is reported then: holes. Orphans and the
budget are about the request the compaction rebuilds; they are checked at the next `resume`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import orjson

from inspector.analysis import Finding, Report, analyze
from inspector.cli import args as argtypes
from inspector.formats import LoadError, load

# The findings the hook speaks about: history the model lost, tool pairs the request breaks, and a
# request too large for the window.
HOOK_CODES: tuple[str, ...] = ("hole", "orphan_tool_result", "unanswered_tool_call", "over_budget")
# What stays true however the pending compaction summarizes (see the module docstring).
SURVIVES_COMPACTION: tuple[str, ...] = ("hole",)
# SessionStart sources the check runs for (startup and clear begin with an empty context).
CHECKED_SOURCES = ("compact", "resume")
LOST_PROMPTS_SHOWN = 5  # user messages of a hole quoted to the model
PROMPT_CHARS = 200
EXIT_OK = 0
EXIT_NOT_BLOCKING = 1  # Claude Code: a non-blocking error (2 would block a compaction)


class HookInputError(Exception):
    """The hook could not do its check; the message says why (one line, for stderr)."""


@dataclass(frozen=True, slots=True)
class HookEvent:
    """The fields of a Claude Code hook event the check uses."""

    name: str
    transcript_path: str
    source: str | None = None  # SessionStart: startup | resume | clear | compact
    trigger: str | None = None  # PreCompact: manual | auto


def parse_event(raw: bytes) -> HookEvent:
    """The event Claude Code wrote on stdin, or HookInputError naming what is wrong with it."""
    if not raw.strip():
        raise HookInputError("stdin is empty: Claude Code writes the hook event there as JSON")
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise HookInputError(f"stdin is not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise HookInputError(f"stdin holds a JSON {type(obj).__name__}, not a hook event object")
    name = obj.get("hook_event_name")
    path = obj.get("transcript_path")
    if not isinstance(name, str):
        raise HookInputError("the hook event has no hook_event_name")
    if not isinstance(path, str) or not path:
        raise HookInputError(f"the {name} event has no transcript_path")
    source, trigger = obj.get("source"), obj.get("trigger")
    return HookEvent(
        name,
        path,
        source if isinstance(source, str) else None,
        trigger if isinstance(trigger, str) else None,
    )


def checked(event: HookEvent) -> bool:
    """Whether the event is one the check answers."""
    if event.name == "PreCompact":
        return True
    return event.name == "SessionStart" and event.source in CHECKED_SOURCES


def codes_for(event: HookEvent) -> tuple[str, ...]:
    pending_compaction = event.name == "SessionStart" and event.source == "compact"
    return SURVIVES_COMPACTION if pending_compaction else HOOK_CODES


def losses(report: Report, codes: Sequence[str]) -> list[Finding]:
    """The report's findings the hook speaks about, in the report's order (worst first)."""
    return [f for f in report.findings if f.code in codes]


def lost_prompts(report: Report, findings: Sequence[Finding]) -> list[tuple[int, str]]:
    """(line, first words) of the user messages the holes took, oldest first, a few at most."""
    out: list[tuple[int, str]] = []
    for f in findings:
        if f.code != "hole":
            continue
        for s in f.records:
            rec = report.ledger.records[s]
            if rec.role != "user" or rec.message is None:
                continue
            text = " ".join(rec.message.text().split())
            if text:
                out.append((rec.line, text[:PROMPT_CHARS] + ("…" if len(text) > PROMPT_CHARS else "")))
    out.sort()
    return out[:LOST_PROMPTS_SHOWN]


def warning_text(findings: Sequence[Finding]) -> str:
    """What the user is shown: one clause per finding."""
    parts = [f"{f.code}: {f.message}" for f in findings]
    return "inspector: this session " + ("has " if len(parts) == 1 else f"has {len(parts)} problems: ") + " · ".join(parts)


def model_context(report: Report, findings: Sequence[Finding], transcript: str) -> str:
    """What the model is told: what it no longer has, and where the full record is."""
    lines = ["A check of this session's transcript (inspector) found:"]
    lines += [f"- {f.message}" for f in findings]
    prompts = lost_prompts(report, findings)
    if prompts:
        lines.append("User messages you no longer have (transcript line: first words):")
        lines += [f"- line {line}: {text}" for line, text in prompts]
    if any(f.code == "hole" for f in findings):
        lines.append(
            f"The messages lost are still in the transcript file {transcript} (one JSON object per line; the line "
            "numbers above are its lines, counted from 1). Read them there before relying on what you remember, or "
            "ask the user."
        )
    return "\n".join(lines)


def summarizer_note(report: Report, findings: Sequence[Finding], transcript: str) -> str:
    """PreCompact: shown to the user and appended to the summarizer's instructions."""
    return (
        warning_text(findings)
        + f"\nState in the summary that this history was lost before this compaction and that it can be read in {transcript}."
    )


def answer(event: HookEvent, report: Report) -> str | None:
    """What the hook prints on stdout for this event and report; None: nothing (all is well)."""
    found = losses(report, codes_for(event))
    if not found:
        return None
    if event.name == "PreCompact":
        return summarizer_note(report, found, event.transcript_path)
    out: dict[str, Any] = {
        "systemMessage": warning_text(found),
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": model_context(report, found, event.transcript_path),
        },
    }
    return orjson.dumps(out).decode()


def check(event: HookEvent, window: int | None, reserve: int | None) -> str | None:
    """Analyse the event's transcript and answer it (HookInputError when it cannot be read)."""
    try:
        led = load(event.transcript_path, fmt="claude_code")
    except LoadError as e:
        raise HookInputError(str(e)) from None
    except OSError as e:
        raise HookInputError(f"{event.transcript_path}: {e.strerror or e}") from None
    return answer(event, analyze(led, window=window, reserve=reserve))


class _NonBlockingParser(argparse.ArgumentParser):
    """A usage error exits 1 (non-blocking for Claude Code), not argparse's 2 (blocking)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_NOT_BLOCKING, f"{self.prog}: error: {message}\n")


HELP = "run as a Claude Code hook: warn when a compaction or resume finds holes, orphans or an over-budget request"
DESCRIPTION = (
    "Run as a Claude Code hook (SessionStart with matcher compact|resume, and PreCompact): read the hook event "
    "on stdin, analyse its transcript, and answer in Claude Code's hook output format: a warning for the user "
    "and, at SessionStart, context for the model naming what it lost. Silent when the session is sound. Exit 0; "
    "1 (a non-blocking error for Claude Code) when the event or the transcript cannot be read. Settings: "
    "docs/hooks.md."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runtime", choices=("claude-code",), help="the runtime whose hook event is on stdin")
    p.add_argument("--window", type=argtypes.tokens, metavar="N", help="context window in tokens (enables the budget check)")
    p.add_argument("--reserve", type=argtypes.tokens, metavar="N", help="tokens reserved for the reply")


def parser() -> argparse.ArgumentParser:
    p = _NonBlockingParser(prog="inspector hook", description=DESCRIPTION)
    add_arguments(p)
    return p


def run(argv: Sequence[str], stdin: bytes | None = None) -> int:
    args = parser().parse_args(list(argv))
    raw = sys.stdin.buffer.read() if stdin is None else stdin
    try:
        event = parse_event(raw)
        out = check(event, args.window, args.reserve) if checked(event) else None
    except HookInputError as e:
        print(f"inspector hook {args.runtime}: {e}", file=sys.stderr)
        return EXIT_NOT_BLOCKING
    except Exception as e:  # a bug of ours must not fail the agent: say it, do not block
        print(f"inspector hook {args.runtime}: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_NOT_BLOCKING
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return EXIT_OK
