"""Which damaged session lines the real pi reads, sends, or stops on: one pi, many probes.

Each probe is a copy of the pi peer corpus's `normal.jsonl` (two compactions) with two entries
appended under its leaf: D, a user message carrying a marker (`PROBE-nnn`), damaged one way (a
field missing or of another JSON type, a line that is not an object, invalid UTF-8, a lone
surrogate, a value after the object, a block of an unknown type, ...), and C under it, a clean user
message carrying `AFTER-nnn`. Some probes damage the base's own compaction line instead, with D
clean. The installed pi resumes every copy in one process (`resume.resume_many`: RPC
`switch_session`, one prompt) against the scripted model on 127.0.0.1. Per probe, what pi did: it
refused (could not open the file, or every request fails before it is sent: why), or it sent a
request: was D's marker in it, C's, the base's history (its last summary), and how many messages.

`tests/test_pi_line_rule.py` holds inspector's prediction (`analyze`: its next request, or a
`resume_refused` diagnostic) to the same verdict; `python -m tests.peers.pi_resume.type_probe`
prints the two side by side.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import SHARED
from tests.peers import probe_edits
from tests.peers.claude_code_resume.type_probe import print_verdicts
from tests.peers.pi_resume import resume
from tests.peers.probe_edits import drop_at as _drop
from tests.peers.probe_edits import set_at as _set

BASE = SHARED / "peers" / "pi" / "corpus" / "normal.jsonl"
LEAF = "2d11abcc"
HISTORY_MARK = "FAKE-SUMMARY #3"  # the base's last compaction summary: sent whenever its history is
COMPACTION_LINE = 109
WHEN = "2026-11-30T13:09:00.000Z"
_Edit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Probe:
    name: str
    line: Callable[[str], bytes]  # the marker -> D's bytes (no newline)
    base: Callable[[list[bytes]], None] | None = None  # an edit of the base's lines, in place
    aside: bool = False  # C hangs under the base's leaf, D beside it: D off the active path


def _user(marker: str, i: str = "d") -> dict[str, Any]:
    return {
        "type": "message", "id": f"p{i}{marker[-3:]}", "parentId": LEAF, "timestamp": WHEN,
        "message": {"role": "user", "content": [{"type": "text", "text": marker}], "timestamp": 1796044140000},
    }  # fmt: skip


def _assistant(marker: str) -> dict[str, Any]:
    o = _user(marker)
    o["message"] = {
        "role": "assistant", "content": [{"type": "text", "text": marker}], "api": "openai-completions",
        "provider": "fake", "model": "fake-model", "stopReason": "stop", "timestamp": 1796044140000,
        "usage": {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
    }  # fmt: skip
    return o


def _tool_result(marker: str) -> dict[str, Any]:
    o = _user(marker)
    o["message"] = {
        "role": "toolResult", "toolCallId": "call_n14_2_0", "toolName": "edit",
        "content": [{"type": "text", "text": marker}], "isError": False, "timestamp": 1796044140000,
    }  # fmt: skip
    return o


def _edited(*edits: _Edit, make: Callable[[str], dict[str, Any]] = _user) -> Callable[[str], bytes]:
    return probe_edits.edited_line(make, *edits)


def _block(block: dict[str, Any], make: Callable[[str], dict[str, Any]] = _user) -> Callable[[str], bytes]:
    """D with one more block after its marker text."""
    return probe_edits.with_block(make, block)


def _raw(text: bytes) -> Callable[[str], bytes]:
    """D with a field `x` of raw JSON TEXT (a field no one reads)."""
    return probe_edits.with_raw_field(_user, text)


_whole = probe_edits.whole


def _on_line(n: int, kind: str, edit: _Edit) -> Callable[[list[bytes]], None]:
    """An edit of the base's line N, an entry of type KIND (or a message of role KIND)."""

    def base(lines: list[bytes]) -> None:
        o = json.loads(lines[n - 1])
        assert kind in (o["type"], o.get("message", {}).get("role")), f"the base's line {n} moved"
        edit(o)
        lines[n - 1] = json.dumps(o).encode()

    return base


def _on_compaction(edit: _Edit) -> Callable[[list[bytes]], None]:
    return _on_line(COMPACTION_LINE, "compaction", edit)


SUMMARIZED_USER, SUMMARIZED_REPLY = 4, 5  # (lines the base's compactions summarized: not sent)


_CLEAN = _edited()
_CALL = {"type": "toolCall", "id": "call_probe", "name": "bash", "arguments": {"command": "true"}}

PROBES: list[Probe] = [
    Probe("clean", _CLEAN),
    # --- lines that are not an entry object
    Probe("line null", _whole(b"null")),
    Probe("line null first", _CLEAN, lambda lines: lines.insert(0, b"null")),
    Probe("line a number", _whole(b"5")),
    Probe("line a string", _whole(b'"PROBE"')),
    Probe("line a list", _whole(b"[1, 2]")),
    Probe("line true", _whole(b"true")),
    Probe("line cut short", lambda m: json.dumps(_user(m)).encode()[:-7]),
    Probe("line with a value after it", lambda m: json.dumps(_user(m)).encode() + b' {"x": 1}'),
    Probe("line with a comma after it", lambda m: json.dumps(_user(m)).encode() + b","),
    Probe("line with a bare NaN", _raw(b"NaN")),
    Probe(
        "line invalid UTF-8",
        lambda m: json.dumps(_user(m)).encode().replace(m.encode(), m.encode() + b" \xff\xfe"),
    ),
    Probe(
        "line lone surrogate",
        lambda m: json.dumps(_user(m)).encode().replace(m.encode(), m.encode() + b" \\ud800"),
    ),
    Probe("line with a BOM", lambda m: b"\xef\xbb\xbf" + json.dumps(_user(m)).encode()),
    Probe("line nested 3000 deep", _raw(b"[" * 3000 + b"]" * 3000)),
    Probe(
        "line duplicate key, role last",
        lambda m: (
            json.dumps(_user(m)).encode().replace(b'"role": "user"', b'"role": "assistant", "role": "user"')
        ),
    ),
    # --- the entry's own fields
    Probe("entry without type", _edited(_drop("type"))),
    Probe("entry type unknown", _edited(_set("type", "probe_entry"))),
    Probe("entry type a number", _edited(_set("type", 5))),
    Probe("entry without id", _edited(_drop("id"))),
    Probe("entry id a number", _edited(_set("id", 5))),
    Probe("entry id null", _edited(_set("id", None))),
    Probe("entry id the leaf's", _edited(_set("id", LEAF))),
    Probe("entry without parentId", _edited(_drop("parentId"))),
    Probe("entry parentId null", _edited(_set("parentId", None))),
    Probe("entry parentId unknown", _edited(_set("parentId", "ffffffff"))),
    Probe("entry parentId a number", _edited(_set("parentId", 5))),
    Probe("entry parentId itself", lambda m: _edited(_set("parentId", f"pd{m[-3:]}"))(m)),
    Probe("entry timestamp a number", _edited(_set("timestamp", 5))),
    Probe("entry a second session header", _edited(_set("type", "session"))),
    # --- the message
    Probe("message missing", _edited(_drop("message"))),
    Probe("message null", _edited(_set("message", None))),
    Probe("message a string", _edited(_set("message", "PROBE"))),
    Probe("message without role", _edited(_drop("message.role"))),
    Probe("message role unknown", _edited(_set("message.role", "system"))),
    Probe("message role a number", _edited(_set("message.role", 5))),
    Probe("user content a string", lambda m: _edited(_set("message.content", m))(m)),
    Probe("user content a number", _edited(_set("message.content", 5))),
    Probe("user content null", _edited(_set("message.content", None))),
    Probe("user content missing", _edited(_drop("message.content"))),
    Probe("user content an object", _edited(_set("message.content", {"type": "text", "text": "x"}))),
    Probe("user content empty", _edited(_set("message.content", []))),
    Probe("user block unknown", _block({"type": "probe_block", "text": "x"})),
    Probe("user block without type", _block({"text": "x"})),
    Probe("user block null", _block(None)),  # type: ignore[arg-type]
    Probe("user block a string", _block("x")),  # type: ignore[arg-type]
    Probe("user text a number", _block({"type": "text", "text": 5})),
    Probe("user text null", _block({"type": "text", "text": None})),
    Probe("user text missing", _block({"type": "text"})),
    Probe("user image", _block({"type": "image", "data": "aGk=", "mimeType": "image/png"})),
    Probe("user image data a number", _block({"type": "image", "data": 5, "mimeType": "image/png"})),
    Probe("reply clean", _edited(make=_assistant)),
    Probe("reply content a string", lambda m: _edited(_set("message.content", m), make=_assistant)(m)),
    Probe("reply content null", _edited(_set("message.content", None), make=_assistant)),
    Probe("reply content empty", _edited(_set("message.content", []), make=_assistant)),
    Probe("reply stopReason error", _edited(_set("message.stopReason", "error"), make=_assistant)),
    Probe("reply stopReason aborted", _edited(_set("message.stopReason", "aborted"), make=_assistant)),
    Probe("reply stopReason missing", _edited(_drop("message.stopReason"), make=_assistant)),
    Probe("reply stopReason a number", _edited(_set("message.stopReason", 5), make=_assistant)),
    Probe("reply stopReason unknown", _edited(_set("message.stopReason", "probe"), make=_assistant)),
    Probe("reply other model", _edited(_set("message.model", "other-model"), make=_assistant)),
    Probe("reply provider missing", _edited(_drop("message.provider"), make=_assistant)),
    Probe("reply text a number", _block({"type": "text", "text": 5}, make=_assistant)),
    Probe("reply text null", _block({"type": "text", "text": None}, make=_assistant)),
    Probe("reply block unknown", _block({"type": "probe_block"}, make=_assistant)),
    Probe("reply block null", _block(None, make=_assistant)),  # type: ignore[arg-type]
    Probe("reply thinking", _block({"type": "thinking", "thinking": "thought"}, make=_assistant)),
    Probe("reply thinking a number", _block({"type": "thinking", "thinking": 5}, make=_assistant)),
    Probe("reply call unanswered", _block(_CALL, make=_assistant)),
    Probe("reply call arguments a string", _block({**_CALL, "arguments": "x"}, make=_assistant)),
    Probe("reply call arguments null", _block({**_CALL, "arguments": None}, make=_assistant)),
    Probe("reply call id a number", _block({**_CALL, "id": 5}, make=_assistant)),
    Probe("reply call without id", _block({k: v for k, v in _CALL.items() if k != "id"}, make=_assistant)),
    Probe(
        "reply call without name", _block({k: v for k, v in _CALL.items() if k != "name"}, make=_assistant)
    ),
    Probe("reply usage a string", _edited(_set("message.usage", "x"), make=_assistant)),
    Probe("reply usage missing", _edited(_drop("message.usage"), make=_assistant)),
    Probe("result clean, orphan", _edited(make=_tool_result)),
    Probe("result content a string", lambda m: _edited(_set("message.content", m), make=_tool_result)(m)),
    Probe("result content null", _edited(_set("message.content", None), make=_tool_result)),
    Probe("result toolCallId a number", _edited(_set("message.toolCallId", 5), make=_tool_result)),
    Probe("result toolCallId missing", _edited(_drop("message.toolCallId"), make=_tool_result)),
    Probe("result isError a string", _edited(_set("message.isError", "yes"), make=_tool_result)),
    Probe("result text a number", _block({"type": "text", "text": 5}, make=_tool_result)),
    Probe(
        "result image", _block({"type": "image", "data": "aGk=", "mimeType": "image/png"}, make=_tool_result)
    ),
    Probe(
        "bash execution",
        _edited(
            _set("message", {"role": "bashExecution", "command": "ls", "output": "PROBE-out", "exitCode": 0})
        ),
    ),
    Probe(
        "bash excluded",
        _edited(
            _set(
                "message",
                {"role": "bashExecution", "command": "ls", "output": "x", "excludeFromContext": True},
            )
        ),
    ),
    Probe(
        "bash output a number",
        _edited(_set("message", {"role": "bashExecution", "command": "ls", "output": 5, "exitCode": 0})),
    ),
    Probe(
        "custom role content a string",
        lambda m: _edited(
            _set("message", {"role": "custom", "customType": "x", "content": m, "display": True})
        )(m),
    ),
    Probe(
        "custom role content a number",
        _edited(_set("message", {"role": "custom", "customType": "x", "content": 5, "display": True})),
    ),
    Probe(
        "summary role",
        lambda m: _edited(_set("message", {"role": "compactionSummary", "summary": m, "tokensBefore": 1}))(m),
    ),
    Probe(
        "branch summary role",
        lambda m: _edited(_set("message", {"role": "branchSummary", "summary": m, "fromId": LEAF}))(m),
    ),
    # --- other entry types
    Probe(
        "custom_message entry",
        lambda m: _edited(
            _set("type", "custom_message"),
            _set("customType", "x"),
            _set("content", m),
            _set("display", False),
            _drop("message"),
        )(m),
    ),
    Probe(
        "custom_message content a number",
        _edited(
            _set("type", "custom_message"), _set("customType", "x"), _set("content", 5), _drop("message")
        ),
    ),
    Probe(
        "branch_summary entry",
        lambda m: _edited(
            _set("type", "branch_summary"), _set("summary", m), _set("fromId", LEAF), _drop("message")
        )(m),
    ),
    Probe(
        "branch_summary empty",
        _edited(_set("type", "branch_summary"), _set("summary", ""), _set("fromId", LEAF), _drop("message")),
    ),
    Probe(
        "branch_summary a number",
        _edited(_set("type", "branch_summary"), _set("summary", 5), _set("fromId", LEAF), _drop("message")),
    ),
    Probe(
        "model_change entry",
        _edited(
            _set("type", "model_change"),
            _set("provider", "other"),
            _set("modelId", "other-model"),
            _drop("message"),
        ),
    ),
    Probe(
        "label entry",
        _edited(_set("type", "label"), _set("targetId", LEAF), _set("label", "x"), _drop("message")),
    ),
    Probe(
        "compaction appended",
        lambda m: _edited(
            _set("type", "compaction"),
            _set("summary", m),
            _set("firstKeptEntryId", LEAF),
            _set("tokensBefore", 1),
            _drop("message"),
        )(m),
    ),
    Probe(
        "compaction appended, summary a number",
        _edited(
            _set("type", "compaction"), _set("summary", 5), _set("firstKeptEntryId", LEAF), _drop("message")
        ),
    ),
    Probe(
        "compaction appended, summary missing",
        _edited(_set("type", "compaction"), _set("firstKeptEntryId", LEAF), _drop("message")),
    ),
    Probe(
        "compaction appended, kept a number",
        lambda m: _edited(
            _set("type", "compaction"), _set("summary", m), _set("firstKeptEntryId", 5), _drop("message")
        )(m),
    ),
    # --- the base's last compaction damaged (D clean)
    Probe("base compaction summary a number", _CLEAN, _on_compaction(_set("summary", 5))),
    Probe("base compaction summary null", _CLEAN, _on_compaction(_set("summary", None))),
    Probe("base compaction summary missing", _CLEAN, _on_compaction(_drop("summary"))),
    Probe("base compaction kept missing", _CLEAN, _on_compaction(_drop("firstKeptEntryId"))),
    Probe("base compaction kept unknown", _CLEAN, _on_compaction(_set("firstKeptEntryId", "ffffffff"))),
    Probe("base compaction kept a number", _CLEAN, _on_compaction(_set("firstKeptEntryId", 5))),
    Probe("base compaction without id", _CLEAN, _on_compaction(_drop("id"))),
    Probe("base compaction tokensBefore a string", _CLEAN, _on_compaction(_set("tokensBefore", "x"))),
    # --- where a shape pi fails on stops it: on the path, in the request, or nowhere
    Probe("message null, beside the path", _edited(_set("message", None)), aside=True),
    Probe(
        "reply content null, beside the path",
        _edited(_set("message.content", None), make=_assistant),
        aside=True,
    ),
    Probe("summarized message null", _CLEAN, _on_line(SUMMARIZED_USER, "user", _set("message", None))),
    Probe(
        "summarized reply content null",
        _CLEAN,
        _on_line(SUMMARIZED_REPLY, "assistant", _set("message.content", None)),
    ),
    Probe(
        "summarized user content a number",
        _CLEAN,
        _on_line(SUMMARIZED_USER, "user", _set("message.content", 5)),
    ),
    Probe(
        "errored reply content null",
        _edited(_set("message.content", None), _set("message.stopReason", "error"), make=_assistant),
    ),
    Probe(
        "aborted reply block null",
        _edited(
            lambda o: o["message"]["content"].append(None),
            _set("message.stopReason", "aborted"),
            make=_assistant,
        ),
    ),
    Probe(
        "custom_message content empty",
        _edited(
            _set("type", "custom_message"), _set("customType", "x"), _set("content", []), _drop("message")
        ),
    ),
    Probe("user text empty", _edited(_set("message.content.0.text", ""))),
    Probe("parent cycle beside the path", lambda m: _edited(_set("parentId", f"pd{m[-3:]}"))(m), aside=True),
]


def marker(i: int) -> str:
    return f"PROBE-{i:03d}"


def after(i: int) -> str:
    return f"AFTER-{i:03d}"


def write_probes(out: Path, cwd: Path, base: Path = BASE) -> list[Path]:
    """One copy of the base per probe (its header's cwd made CWD: pi resumes only a session whose
    directory exists), D and C appended."""
    lines = base.read_bytes().splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(cwd)
    lines[0] = json.dumps(header).encode()
    assert json.loads(lines[-1])["id"] == LEAF, "the base's leaf moved"
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for i, p in enumerate(PROBES):
        mine = list(lines)
        if p.base is not None:
            p.base(mine)
        c = _user(after(i), "c")
        c["parentId"] = LEAF if p.aside else f"pd{marker(i)[-3:]}"
        f = out / f"probe{i:03d}.jsonl"
        f.write_bytes(b"\n".join([*mine, p.line(marker(i)), json.dumps(c).encode()]) + b"\n")
        files.append(f)
    return files


@dataclass(frozen=True)
class Verdict:
    d: bool  # D's marker was sent
    c: bool  # C's was
    history: bool  # the base's history was (its last summary)
    n: int  # messages sent (pi's request, its system prompt and the probe's prompt left out)

    def __str__(self) -> str:
        flags = "".join(ch if v else "-" for ch, v in zip("DCH", (self.d, self.c, self.history), strict=True))
        return f"{flags} {self.n}"


REFUSED = "refused"


def sent(r: resume.Resumed, i: int) -> Verdict | str:
    if r.messages is None:
        return REFUSED
    text = json.dumps(r.messages, ensure_ascii=False)
    return Verdict(marker(i) in text, after(i) in text, HISTORY_MARK in text, len(r.messages))


def predicted(f: Path, i: int) -> Verdict | str:
    """inspector's prediction: its next request's items, or `refused` when it says pi stops (it
    cannot open the session, build its request, or walk its path: a cycle)."""
    from inspector.analysis import analyze
    from inspector.formats import load

    report = analyze(load(str(f)))
    if any(x.code in ("resume_refused", "request_fails", "broken_tree") for x in report.findings):
        return REFUSED
    items = report.context
    text = "\n".join(_text(report, it) for it in items)
    return Verdict(marker(i) in text, after(i) in text, HISTORY_MARK in text, len(items))


def _text(report: Any, it: Any) -> str:
    if it.kind == "summary" or it.seq is None:
        return str(it.text)
    m = report.ledger.records[it.seq].message
    return "" if m is None else str(m.text())


def _copies(files: list[Path], into: Path) -> list[Path]:
    """A copy of each file for pi to resume (it writes to a file it resumes: the probe's prompt and
    its answer)."""
    into.mkdir(parents=True, exist_ok=True)
    for f in files:
        (into / f.name).write_bytes(f.read_bytes())
    return [into / f.name for f in files]


def run(out: Path) -> list[tuple[Probe, Verdict | str, Verdict | str, str]]:
    """Every probe: (probe, what pi did, inspector's prediction, pi's reason when it sent nothing)."""
    files = write_probes(out / "probes", out / "run" / "ws")
    runs = resume.resume_many(_copies(files, out / "resumed"), out / "run")
    return [
        (p, sent(r, i), predicted(f, i), r.error)
        for i, (p, f, r) in enumerate(zip(PROBES, files, runs, strict=True))
    ]


REPAIR = ["--strategy", "compact", "--window", "16384", "--reserve", "4096", "--keep-recent", "3000"]


def _stuck_on_send(f: Path) -> bool:
    """inspector says every request of this session fails on a message in it (not on opening it)."""
    from inspector.analysis import analyze
    from inspector.formats import load

    return any(
        x.code == "request_fails" and (x.data or {}).get("problem") == "fails_on_send"
        for x in analyze(load(str(f))).findings
    )


def run_repaired(out: Path) -> list[tuple[Probe, Verdict | str, Verdict | str, str]]:
    """Every probe whose session pi cannot send for a message in its request, repaired with
    `inspector repair` (compact, pi's peer budgets) and resumed again: (probe, what pi did with the
    repaired copy, inspector's prediction of it, pi's reason when it sent nothing)."""
    from inspector.cli.main import main as inspector

    files = write_probes(out / "probes", out / "run" / "ws")
    picked, repaired = [], []
    for i, (p, f) in enumerate(zip(PROBES, files, strict=True)):
        if not _stuck_on_send(f):
            continue
        r = out / "repaired" / f.name
        r.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.redirect_stdout(io.StringIO()):
            code = inspector(["repair", str(f), *REPAIR, "--out", str(r)])
        assert code == 0, (p.name, code)
        picked.append((i, p))
        repaired.append(r)
    runs = resume.resume_many(_copies(repaired, out / "resumed"), out / "run")
    return [
        (p, sent(run, i), predicted(r, i), run.error)
        for (i, p), r, run in zip(picked, repaired, runs, strict=True)
    ]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        rows = run(Path(tmp))
        print_verdicts([(p, got, want) for p, got, want, _ in rows], who="pi")
        for p, _, _, why in rows:
            if why:
                print(f"   {p.name}: pi: {why}")
        print("the sessions pi cannot send, repaired (inspector repair, compact) and resumed again:")
        rows = run_repaired(Path(tmp) / "repaired")
        print_verdicts([(p, got, want) for p, got, want, _ in rows], who="pi")
    return 0


if __name__ == "__main__":
    sys.exit(main())
