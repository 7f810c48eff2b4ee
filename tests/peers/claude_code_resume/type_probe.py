"""Which damaged transcript lines the real Claude Code sends on resume, probe by probe.

Each probe is the Claude Code peer corpus's `manual_compact.jsonl` with two lines appended under its
leaf: a damaged line D carrying a marker of its own (`PROBE-<n>`: a field of another JSON type, a
field missing, a block of an unknown type, invalid UTF-8, a lone surrogate, ...) and, under D, a
clean user line C (`AFTER-<n>`). Claude Code 2.1.328 resumes each copy (`harness.resume_many`: the
pinned CLI against the scripted Messages API on 127.0.0.1) and its first main-loop request says,
per probe, whether D was sent, whether C was, and whether the history before them (the leaf's
reply) was: a line the CLI cannot use breaks the parent chain there, and what came before is not
sent. `inspector context --json` on the same file predicts the same three (the lines of its
items), and `python -m tests.peers.claude_code_resume.type_probe` prints the two side by side.
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import SHARED

BASE = SHARED / "peers" / "claude_code" / "corpus" / "manual_compact.jsonl"
LEAF_LINE = 84  # the base's leaf: its last reply ("[P3] step 1: ...")
LEAF_MARK = "[P3] step 1:"
_Edit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Probe:
    name: str
    line: Callable[[str, dict[str, Any]], bytes]  # (marker, the leaf's line) -> D's bytes, no newline
    # D holds no marker (its content is an empty list): what the request carries if D is sent, looked
    # for in place of the marker: "" a message with no content as written, else a text block of the
    # reply's that Claude Code writes in (its "(no content)", `Eqi`). The prediction must say the same
    # text for D's item.
    sent_as: str | None = None


def _uuid(n: int, k: int) -> str:
    return f"0e4d1a9e-0000-4000-{8000 + k:04d}-{n:012d}"


def _fields(leaf: dict[str, Any]) -> dict[str, Any]:
    return {k: leaf[k] for k in ("isSidechain", "userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch") if k in leaf}


def _user(marker: str, leaf: dict[str, Any], n: int) -> dict[str, Any]:
    return {
        "parentUuid": leaf["uuid"],
        **_fields(leaf),
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": marker}]},
        "uuid": _uuid(n, 0),
        "timestamp": "2026-11-30T14:00:00.000Z",
    }


def _assistant(marker: str, leaf: dict[str, Any], n: int) -> dict[str, Any]:
    return {
        "parentUuid": leaf["uuid"],
        **_fields(leaf),
        "message": {
            "id": f"msg_probe_{n:04d}",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": [{"type": "text", "text": marker}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
        "type": "assistant",
        "uuid": _uuid(n, 0),
        "timestamp": "2026-11-30T14:00:00.000Z",
    }


def _at(o: dict[str, Any], path: str) -> tuple[Any, str]:
    """The container holding `path`'s last key (`a.b.0.c`), and that key."""
    *head, last = path.split(".")
    for k in head:
        o = o[int(k)] if isinstance(o, list) else o[k]
    return o, last


def _set(path: str, value: Any) -> _Edit:
    def edit(o: dict[str, Any]) -> None:
        box, k = _at(o, path)
        box[int(k) if isinstance(box, list) else k] = copy.deepcopy(value)

    return edit


def _drop(path: str) -> _Edit:
    def edit(o: dict[str, Any]) -> None:
        box, k = _at(o, path)
        del box[int(k) if isinstance(box, list) else k]

    return edit


def _add_block(block: dict[str, Any]) -> _Edit:
    """A second content block after the marker's."""

    def edit(o: dict[str, Any]) -> None:
        o["message"]["content"].append(copy.deepcopy(block))

    return edit


def _edited(base: Callable[[str, dict[str, Any], int], dict[str, Any]], *edits: _Edit) -> Callable[[str, dict[str, Any]], bytes]:
    def line(marker: str, leaf: dict[str, Any]) -> bytes:
        o = base(marker, leaf, int(marker.rsplit("-", 1)[1]))
        for e in edits:
            e(o)
        return json.dumps(o).encode().replace(b"PROBE-X", marker.encode())

    return line


def _raw(base: Callable[[str, dict[str, Any], int], dict[str, Any]], fix: Callable[[bytes], bytes]) -> Callable[[str, dict[str, Any]], bytes]:
    def line(marker: str, leaf: dict[str, Any]) -> bytes:
        return fix(json.dumps(base(marker, leaf, int(marker.rsplit("-", 1)[1]))).encode())

    return line


def _u(*edits: _Edit) -> Callable[[str, dict[str, Any]], bytes]:
    return _edited(_user, *edits)


def _a(*edits: _Edit) -> Callable[[str, dict[str, Any]], bytes]:
    return _edited(_assistant, *edits)


_TOOL_USE = {"type": "tool_use", "id": "toolu_probe", "name": "Bash", "input": {"command": "true"}}
_DEEP: Any = "x"
for _ in range(200):
    _DEEP = [_DEEP]

PROBES: list[Probe] = [
    # clean, both roles: the control
    Probe("clean user line", _u()),
    Probe("clean reply", _a()),
    Probe("user content a string", _u(_set("message.content", "PROBE-X"))),
    # line-level
    Probe("no uuid", _u(_drop("uuid"))),
    Probe("uuid null", _u(_set("uuid", None))),
    Probe("uuid a number", _u(_set("uuid", 7))),
    Probe("parentUuid a number", _u(_set("parentUuid", 7))),
    Probe("parentUuid missing", _u(_drop("parentUuid"))),
    Probe("parentUuid null", _u(_set("parentUuid", None))),
    Probe("isSidechain a string", _u(_set("isSidechain", "false"))),
    Probe("isSidechain true", _u(_set("isSidechain", True))),
    Probe("isSidechain null", _u(_set("isSidechain", None))),
    Probe("isMeta true", _u(_set("isMeta", True))),
    Probe("isMeta a string", _u(_set("isMeta", "true"))),
    Probe("timestamp a number", _u(_set("timestamp", 5))),
    Probe("timestamp missing", _u(_drop("timestamp"))),
    Probe("timestamp not a time", _u(_set("timestamp", "yesterday"))),
    Probe("sessionId a number", _u(_set("sessionId", 5))),
    Probe("sessionId missing", _u(_drop("sessionId"))),
    Probe("type uppercased", _u(_set("type", "User"))),
    Probe("type a number", _u(_set("type", 1))),
    Probe("isCompactSummary a string", _u(_set("isCompactSummary", "true"))),
    Probe("isVisibleInTranscriptOnly true", _u(_set("isVisibleInTranscriptOnly", True))),
    Probe("toolUseResult a string", _u(_set("toolUseResult", "x"))),
    Probe("deep unknown field", _u(_set("probeDeep", _DEEP))),
    Probe("unknown field nested 3000 deep", _raw(_user, lambda b: b[:-1] + b', "probeDeep": ' + b"[" * 3000 + b"]" * 3000 + b"}")),
    Probe("huge number in an unknown field", _raw(_user, lambda b: b[:-1] + b', "probeBig": 1e400}')),
    Probe("a key twice", _raw(_user, lambda b: b[:-1] + b', "type": "user"}')),
    Probe("invalid UTF-8 in an unknown field", _raw(_user, lambda b: b[:-1] + b', "probe": "\xff"}')),
    Probe("lone surrogate in the text", _raw(_user, lambda b: b.replace(b'PROBE-', b'\\ud800 PROBE-', 1))),
    Probe("NUL escape in the text", _raw(_user, lambda b: b.replace(b'PROBE-', b'\\u0000 PROBE-', 1))),
    Probe("a value glued after the object", _raw(_user, lambda b: b + b" 1")),
    # the user message
    Probe("message missing", _u(_drop("message"), _set("probe", "PROBE-X"))),
    Probe("message a string", _u(_set("message", "PROBE-X"))),
    Probe("role missing", _u(_drop("message.role"))),
    Probe("role null", _u(_set("message.role", None))),
    Probe("role a number", _u(_set("message.role", 3))),
    Probe("role assistant on a user line", _u(_set("message.role", "assistant"))),
    Probe("role made up", _u(_set("message.role", "robot"))),
    Probe("content a number", _u(_set("message.content", 5), _set("probe", "x"))),
    Probe("content null", _u(_set("message.content", None))),
    Probe("content an object", _u(_set("message.content", {"type": "text", "text": "PROBE-X"}))),
    Probe("content empty", _u(_set("message.content", [])), sent_as=""),
    Probe("block text null", _u(_add_block({"type": "text", "text": None}))),
    Probe("block text a number", _u(_add_block({"type": "text", "text": 5}))),
    Probe("block text missing", _u(_add_block({"type": "text"}))),
    Probe("block of an unknown type", _u(_add_block({"type": "probe_block", "text": "x"}))),
    Probe("block without a type", _u(_add_block({"text": "x"}))),
    Probe("block a string", _u(_add_block("x"))),  # type: ignore[arg-type]
    Probe("block null", _u(_add_block(None))),  # type: ignore[arg-type]
    Probe("image without a source", _u(_add_block({"type": "image"}))),
    Probe("image source a string", _u(_add_block({"type": "image", "source": "x"}))),
    Probe("result answering no call", _u(_add_block({"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "r"}))),
    Probe("result id a number", _u(_add_block({"type": "tool_result", "tool_use_id": 5, "content": "r"}))),
    Probe("result content a number", _u(_add_block({"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": 5}))),
    # the reply
    Probe("reply without message.id", _a(_drop("message.id"))),
    Probe("reply message.id a number", _a(_set("message.id", 5))),
    Probe("reply content a string", _a(_set("message.content", "PROBE-X"))),
    Probe("reply content empty", _a(_set("message.content", [])), sent_as="(no content)"),
    Probe("reply text null", _a(_add_block({"type": "text", "text": None}))),
    Probe("reply text a number", _a(_add_block({"type": "text", "text": 5}))),
    Probe("reply block unknown", _a(_add_block({"type": "probe_block"}))),
    Probe("reply thinking a number", _a(_add_block({"type": "thinking", "thinking": 5, "signature": "s"}))),
    Probe("reply thinking without signature", _a(_add_block({"type": "thinking", "thinking": "t"}))),
    Probe("reply call, clean, unanswered", _a(_add_block(_TOOL_USE))),
    Probe("reply call input a string", _a(_add_block({**_TOOL_USE, "input": "x"}))),
    Probe("reply call without a name", _a(_add_block({k: v for k, v in _TOOL_USE.items() if k != "name"}))),
    Probe("reply call id a number", _a(_add_block({**_TOOL_USE, "id": 5}))),
    Probe("reply stop_reason a number", _a(_set("message.stop_reason", 5))),
    Probe("reply usage a string", _a(_set("message.usage", "x"))),
    Probe("reply model a number", _a(_set("message.model", 5))),
    Probe("reply isApiErrorMessage a string", _a(_set("isApiErrorMessage", "true"))),
    Probe("reply isApiErrorMessage true", _a(_set("isApiErrorMessage", True))),
    Probe("reply role user", _a(_set("message.role", "user"))),
]


def marker(i: int) -> str:
    return f"PROBE-{i:03d}"


def after(i: int) -> str:
    return f"AFTER-{i:03d}"


def write_probes(out: Path, base: Path = BASE) -> list[Path]:
    """One copy of the base per probe, D and C appended (C's parent: D's uuid, or D's
    intended uuid when the probe damaged it)."""
    data = base.read_bytes()
    leaf = json.loads(data.splitlines()[LEAF_LINE - 1])
    assert LEAF_MARK in json.dumps(leaf["message"]), "the base's leaf moved"
    files = []
    for i, p in enumerate(PROBES):
        d = p.line(marker(i), leaf)
        c = _user(after(i), leaf, i)
        c["parentUuid"], c["uuid"] = _uuid(i, 0), _uuid(i, 1)
        f = out / f"probe{i:03d}.jsonl"
        f.write_bytes(data + d + b"\n" + json.dumps(c).encode() + b"\n")
        files.append(f)
    return files


@dataclass(frozen=True)
class Verdict:
    d: bool  # the damaged line's marker was sent
    c: bool  # the clean line after it was
    history: bool  # the base's leaf reply was

    def __str__(self) -> str:
        return "".join(ch if v else "-" for ch, v in zip("DCH", (self.d, self.c, self.history), strict=True))


def _holds(m: Any, sent_as: str) -> bool:
    """Whether a request message carries a marker-less D as `Probe.sent_as` says."""
    c = m.get("content") if isinstance(m, dict) else None
    if sent_as == "":  # (a user line's; the request's own system messages may have none)
        return m.get("role") == "user" and (c == [] or c == "")
    texts = [b.get("text") for b in c if isinstance(b, dict) and b.get("type") == "text"] if isinstance(c, list) else []
    return m.get("role") == "assistant" and sent_as in texts


def sent(body: dict[str, Any], i: int) -> Verdict:
    text = json.dumps(body.get("messages"), ensure_ascii=False)
    how = PROBES[i].sent_as
    d = marker(i) in text if how is None else any(_holds(m, how) for m in body.get("messages") or [])
    return Verdict(d, after(i) in text, LEAF_MARK in text)


def predicted(f: Path, i: int) -> Verdict:
    """inspector's prediction: the lines of its next request's items (`context --json`), a
    reply's block on a line of its own counted with its reply (the item of the reply's first
    line), as the API joins consecutive replies."""
    from inspector.analysis import analyze
    from inspector.formats import load

    report = analyze(load(str(f)))
    lines = {it.line for it in report.context if it.line is not None}
    by_line = {r.line: r for r in report.ledger.records}

    def item_line(line: int) -> int:
        rec = by_line.get(line)
        into = (rec.extra or {}).get("merged_into_line") if rec is not None else None
        return into if isinstance(into, int) else line

    n = f.read_bytes().count(b"\n")
    d = item_line(n - 1) in lines
    how = PROBES[i].sent_as
    if d and how is not None:  # (a marker-less D: its item must be sent as the probe looks for it)
        d = any(it.text == how for it in report.context if it.line == item_line(n - 1))
    return Verdict(d, item_line(n) in lines, LEAF_LINE in lines)


def run(out: Path) -> list[tuple[Probe, Verdict | str, Verdict]]:
    """Every probe: (probe, what Claude Code sent or why it sent nothing, inspector's prediction)."""
    from tests.test_claude_code_accepts import _harness

    harness = _harness()
    files = write_probes(out)
    runs = harness.resume_many([str(f) for f in files], str(out / "resume"))
    rows: list[tuple[Probe, Verdict | str, Verdict]] = []
    for i, (p, f, r) in enumerate(zip(PROBES, files, runs, strict=True)):
        try:
            got: Verdict | str = sent(r.first_main(), i)
        except harness.HarnessError:
            got = f"no request (rc {r.rc}): {r.stderr.strip().splitlines()[-1][:100] if r.stderr.strip() else ''}"
        rows.append((p, got, predicted(f, i)))
    return rows


def print_verdicts(rows: Sequence[tuple[Any, Any, Any]], show: Callable[[Any], str] = str, who: str = "claude") -> None:
    """Each probe's verdicts side by side (`!!` where they part), then how many part."""
    differ = 0
    for i, (p, got, want) in enumerate(rows):
        same = show(got) == show(want)
        differ += not same
        print(f"{'  ' if same else '!!'} {i:3d} {p.name:42} {who} {show(got):8} inspector {show(want)}")
    print(f"{len(rows)} probes, {differ} differ")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        print_verdicts(run(Path(tmp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
