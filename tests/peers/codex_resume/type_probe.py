"""Which damaged rollout lines the real Codex reads, all at once: one resume, many probes.

Each probe is one line appended to a rollout (by default the Codex peer corpus's
`auto_compact.jsonl`): a user message carrying a marker of its own (`PROBE-<n>`), damaged one way
(a field of another JSON type, a field missing, a number out of range, invalid UTF-8, a lone
surrogate, nesting, a part of an unknown type, ...). The rollout is resumed once with the installed
Codex (`resume.resume`: the pinned CLI against the scripted model on 127.0.0.1); a probe whose
marker is in the first request's input is a line Codex read, one whose marker is not is a line it
skipped. `sent_by_codex` gives that verdict per probe; `tests/test_codex_line_rule.py` holds
inspector's own prediction (`context --json`) to it, and `python -m tests.peers.codex_resume.type_probe`
prints the two side by side.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import REPO, SHARED
from tests.peers.codex_resume import resume as harness
from tests.peers.probe_edits import drop_at as _drop
from tests.peers.probe_edits import set_at as _set

BASE = SHARED / "peers" / "codex" / "corpus" / "auto_compact.jsonl"
_Edit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Probe:
    name: str
    line: Callable[[str], bytes]  # the marker -> the line's bytes (no newline; several lines joined by newlines)


def _message(marker: str) -> dict[str, Any]:
    return {
        "timestamp": "2026-11-30T13:03:00.000Z",
        "ordinal": 1000 + int(marker.rsplit("-", 1)[1]),
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": marker}]},
    }


def _edited(edit: _Edit) -> Callable[[str], bytes]:
    def line(marker: str) -> bytes:
        o = _message(marker)
        edit(o)
        return json.dumps(o).encode()

    return line


def _item(payload: Callable[[str], dict[str, Any]], edit: _Edit = lambda p: None, call: bool | str = False) -> Callable[[str], bytes]:
    """A response item of another type carrying the marker, its payload edited; with CALL, a clean
    function call (id `call_<marker>`) before it, whose output it is."""

    def line(marker: str) -> bytes:
        o = _message(marker)
        o["payload"] = payload(marker)
        edit(o["payload"])
        out = [json.dumps(o).encode()]
        if call:
            c = _message(marker)
            c["payload"] = {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": _call_id(marker)}
            if call == "custom":
                c["payload"] = {"type": "custom_tool_call", "name": "apply_patch", "input": "x", "call_id": _call_id(marker)}
            out.insert(0, json.dumps(c).encode())
        return b"\n".join(out)

    return line


def _call(m: str) -> dict[str, Any]:
    return {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": f"echo {m}"}), "call_id": f"call_{m}"}


def _call_id(m: str) -> str:
    """The id of the call an output answers: not holding the marker (the output alone carries it)."""
    return "call_" + m[::-1]


def _output(m: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": _call_id(m), "output": f"out {m}"}


def _custom(m: str) -> dict[str, Any]:
    return {"type": "custom_tool_call", "call_id": f"ct_{m}", "name": "apply_patch", "input": f"in {m}", "status": "completed"}


def _reasoning(m: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": f"rs_{m}", "summary": [{"type": "summary_text", "text": m}], "encrypted_content": None}


def _set_p(key: str, value: Any) -> _Edit:
    return lambda p: p.__setitem__(key, value)


def _drop_p(key: str) -> _Edit:
    return lambda p: p.__delitem__(key)


def _raw_field(text: str | bytes, where: str = "payload") -> Callable[[str], bytes]:
    """The message with `"x": TEXT` (raw JSON text, as bytes when not valid UTF-8) in WHERE."""
    raw = text if isinstance(text, bytes) else text.encode()

    def line(marker: str) -> bytes:
        body = json.dumps(_message(marker)).encode()
        anchor = b'"role": "user"' if where == "payload" else b'"type": "response_item"'
        return body.replace(anchor, anchor + b', "x": ' + raw, 1)

    return line


def _part(part: dict[str, Any]) -> _Edit:
    """A second content part beside the marker's."""
    return lambda o: o["payload"]["content"].append(part)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


PROBES: list[Probe] = [
    Probe("as written", _edited(lambda o: None)),
    Probe("an unknown field (number)", _raw_field("5")),
    Probe("an unknown field (object)", _raw_field('{"a": [1, "b", null]}')),
    Probe("an id of another type", _edited(_set("payload.id", 5))),
    Probe("a null id", _edited(_set("payload.id", None))),
    Probe("a role of another type", _edited(_set("payload.role", 5))),
    Probe("a null role", _edited(_set("payload.role", None))),
    Probe("no role", _edited(_drop("payload.role"))),
    Probe("content a string", _edited(_set("payload.content", "PROBE-as-string"))),
    Probe("null content", _edited(_set("payload.content", None))),
    Probe("no content", _edited(_drop("payload.content"))),
    Probe("a part's text another type", _edited(_part({"type": "input_text", "text": 5}))),
    Probe("a part's text null", _edited(_part({"type": "input_text", "text": None}))),
    Probe("a part without text", _edited(_part({"type": "input_text"}))),
    Probe("a part of an unknown type", _edited(_part({"type": "input_future", "text": "t"}))),
    Probe("a part without a type", _edited(_part({"text": "t"}))),
    Probe("a part that is a string", _edited(_part("t"))),  # type: ignore[arg-type]
    Probe("an output_text part", _edited(_part({"type": "output_text", "text": "t"}))),
    Probe("an input_image part", _edited(_part({"type": "input_image", "image_url": "data:image/png;base64,AA=="}))),
    Probe("a phase of another type", _edited(_set("payload.phase", 5))),
    Probe("an unknown phase", _edited(_set("payload.phase", "sometime"))),
    Probe("end_turn a string", _edited(_set("payload.end_turn", "yes"))),
    Probe("status another type", _edited(_set("payload.status", 5))),
    Probe("an unknown status", _edited(_set("payload.status", "wandering"))),
    Probe("a timestamp of another type", _edited(_set("timestamp", 5))),
    Probe("a null timestamp", _edited(_set("timestamp", None))),
    Probe("no timestamp", _edited(_drop("timestamp"))),
    Probe("an ordinal of another type", _edited(_set("ordinal", "x"))),
    Probe("metadata of another type", _edited(_set("metadata", 5))),
    Probe("a 70-bit integer", _raw_field("1180591620717411303424")),
    Probe("2**64", _raw_field("18446744073709551616")),
    Probe("-2**63 - 1", _raw_field("-9223372036854775809")),
    Probe("1e400", _raw_field("1e400")),
    Probe("-1e400", _raw_field("-1e400")),
    Probe("1e308", _raw_field("1e308")),
    Probe("1e-400", _raw_field("1e-400")),
    Probe("invalid UTF-8 in a field", _raw_field(b'"\xff\xfe"')),
    Probe("an overlong UTF-8 encoding", _raw_field(b'"\xc0\xaf"')),
    Probe("a lone high surrogate", _raw_field('"\\ud800"')),
    Probe("a lone low surrogate", _raw_field('"\\udc00"')),
    Probe("a surrogate pair", _raw_field('"\\ud83d\\ude00"')),
    Probe("an escaped NUL", _raw_field('"\\u0000"')),
    Probe("a value nested 100 deep", _raw_field(_nested(100))),
    Probe("a value nested 125 deep (line 127)", _raw_field(_nested(125))),
    Probe("a value nested 126 deep (line 128)", _raw_field(_nested(126))),
    Probe("a top-level value nested 126 deep (line 127)", _raw_field(_nested(126), where="top")),
    Probe("a top-level value nested 127 deep (line 128)", _raw_field(_nested(127), where="top")),
    Probe("a value nested 3000 deep", _raw_field(_nested(3000))),
    Probe("an object glued after it", lambda m: json.dumps(_message(m)).encode() + b'{"a": 1}'),
    Probe("trailing spaces", lambda m: json.dumps(_message(m)).encode() + b"   "),
    Probe("a duplicate key", lambda m: json.dumps(_message(m)).encode().replace(b'"role": "user"', b'"role": 5, "role": "user"', 1)),
    Probe("an unknown item type", _edited(_set("payload.type", "future_item"))),
    Probe("an unknown line type", _edited(_set("type", "future_record"))),
    Probe("u64 max", _raw_field("18446744073709551615")),
    Probe("i64 min", _raw_field("-9223372036854775808")),
    Probe("a big integer with a fraction", _raw_field("1180591620717411303424.0")),
    Probe("a big integer in an unknown object", _raw_field('{"a": {"b": [18446744073709551616]}}')),
    Probe("metadata with an unknown field", _edited(_set("metadata", {"zz": 1}))),
    Probe("metadata's history_sequence a string", _edited(_set("metadata", {"history_sequence": "x"}))),
    Probe("a negative ordinal", _edited(_set("ordinal", -1))),
    Probe("a null ordinal", _edited(_set("ordinal", None))),
    Probe("a phase commentary", _edited(_set("payload.phase", "commentary"))),
    Probe("a phase final_answer", _edited(_set("payload.phase", "final_answer"))),
    Probe("a null phase", _edited(_set("payload.phase", None))),
    Probe("an assistant message", _edited(lambda o: (o["payload"].__setitem__("role", "assistant"), o["payload"]["content"][0].__setitem__("type", "output_text")))),
    Probe("a made-up role", _edited(_set("payload.role", "narrator"))),
    Probe("a null part type", _edited(_part({"type": None, "text": "t"}))),
    Probe("an input_image without image_url", _edited(_part({"type": "input_image"}))),
    Probe("an input_image url a number", _edited(_part({"type": "input_image", "image_url": 5}))),
    Probe("a phase input", _edited(_set("payload.phase", "input"))),
    Probe("a phase final", _edited(_set("payload.phase", "final"))),
    Probe("an input_image with a null image_url", _edited(_part({"type": "input_image", "image_url": None, "detail": "auto"}))),
    Probe("an input_image with a file_id", _edited(_part({"type": "input_image", "file_id": "f1"}))),
    Probe("an input_file part", _edited(_part({"type": "input_file", "file_id": "f1"}))),
    Probe("an output_audio part", _edited(_part({"type": "output_audio", "transcript": "t"}))),
    Probe("a call", _item(_call)),
    Probe("a call: name a number", _item(_call, _set_p("name", 5))),
    Probe("a call: no name", _item(_call, _drop_p("name"))),
    Probe("a call: arguments an object", _item(_call, _set_p("arguments", {"cmd": "x"}))),
    Probe("a call: no arguments", _item(_call, _drop_p("arguments"))),
    Probe("a call: call_id a number", _item(_call, _set_p("call_id", 5))),
    Probe("a call: no call_id", _item(_call, _drop_p("call_id"))),
    Probe("a call: id a number", _item(_call, _set_p("id", 5))),
    Probe("a call: namespace a number", _item(_call, _set_p("namespace", 5))),
    Probe("a call: status a number", _item(_call, _set_p("status", 5))),
    Probe("an output", _item(_output, call=True)),
    Probe("an output: a number", _item(_output, _set_p("output", 5), call=True)),
    Probe("an output: null", _item(_output, _set_p("output", None), call=True)),
    Probe("an output: missing", _item(_output, _drop_p("output"), call=True)),
    Probe("an output: parts", _item(lambda m: {**_output(m), "output": [{"type": "input_text", "text": f"out {m}"}]}, call=True)),
    Probe("an output: an unknown part", _item(lambda m: {**_output(m), "output": [{"type": "input_text", "text": f"out {m}"}, {"type": "zz"}]}, call=True)),
    Probe("an output: an object", _item(lambda m: {**_output(m), "output": {"content": f"out {m}", "success": True}}, call=True)),
    Probe("an output: one part object", _item(lambda m: {**_output(m), "output": {"type": "input_text", "text": f"out {m}", "detail": None, "image_url": None}}, call=True)),
    Probe("an output: an output_text part", _item(lambda m: {**_output(m), "output": [{"type": "output_text", "text": f"out {m}"}]}, call=True)),
    Probe("an output: an input_image part, null url", _item(lambda m: {**_output(m), "output": [{"type": "input_text", "text": f"out {m}"}, {"type": "input_image", "image_url": None}]}, call=True)),
    Probe("a custom output", _item(lambda m: {"type": "custom_tool_call_output", "call_id": _call_id(m), "output": f"out {m}"}, call="custom")),
    Probe("a custom output: parts", _item(lambda m: {"type": "custom_tool_call_output", "call_id": _call_id(m), "output": [{"type": "input_text", "text": f"out {m}"}]}, call="custom")),
    Probe("a custom output: a number", _item(lambda m: {"type": "custom_tool_call_output", "call_id": _call_id(m), "output": 5, "id": m}, call="custom")),
    Probe("a call: arguments null", _item(_call, _set_p("arguments", None))),
    Probe("a reasoning item: a null id", _item(_reasoning, _set_p("id", None))),
    Probe("a reasoning item: a null summary", _item(_reasoning, _set_p("summary", None))),
    Probe("an output: call_id a number", _item(_output, _set_p("call_id", 5), call=True)),
    Probe("a custom call", _item(_custom)),
    Probe("a custom call: input a number", _item(_custom, _set_p("input", 5))),
    Probe("a custom call: status a number", _item(_custom, _set_p("status", 5))),
    Probe("a reasoning item", _item(_reasoning)),
    Probe("a reasoning item: summary a string", _item(_reasoning, _set_p("summary", "s"))),
    Probe("a reasoning item: no id", _item(_reasoning, _drop_p("id"))),
    Probe("a reasoning item: an unknown summary part", _item(_reasoning, lambda p: p["summary"].append({"type": "zz", "text": "t"}))),
    Probe("a reasoning item: content parts", _item(_reasoning, _set_p("content", [{"type": "reasoning_text", "text": "t"}]))),
    Probe("a reasoning item: encrypted_content a number", _item(_reasoning, _set_p("encrypted_content", 5))),
]


def probe_rollout(base: Path, dest: Path, probes: list[Probe] = PROBES) -> dict[str, str]:
    """BASE with one line per probe appended, written to DEST; {marker: probe name}."""
    lines = [base.read_bytes().rstrip(b"\n")]
    markers: dict[str, str] = {}
    for n, p in enumerate(probes):
        marker = f"PROBE-{n:03d}"
        markers[marker] = p.name
        lines.append(p.line(marker))
    # Codex 0.169 refuses to resume a rollout whose last record has no ordinal: end on a clean one.
    lines.append(json.dumps(_message("PROBE-999")).encode())
    dest.write_bytes(b"\n".join(lines) + b"\n")
    return markers


def _markers_in(value: Any, markers: dict[str, str]) -> set[str]:
    text = json.dumps(value)
    return {m for m in markers if m in text}


def sent_by_codex(rollout: Path, markers: dict[str, str], scratch: Path) -> set[str]:
    """The markers of the probes the real Codex sends in its first request after resuming."""
    run = harness.resume(rollout, "continue", scratch)
    if not run.requests:
        raise RuntimeError(f"Codex sent no request (exit {run.returncode}): {run.stderr[-2000:]}")
    return _markers_in(run.requests[0]["input"], markers)


def sent_by_inspector(rollout: Path, markers: dict[str, str]) -> set[str]:
    """The markers of the probes `inspector context --json` predicts the next request holds."""
    run = subprocess.run([sys.executable, "-m", "inspector", "context", "--json", str(rollout)],
                         capture_output=True, text=True, cwd=REPO, check=True)
    return _markers_in(json.loads(run.stdout)["messages"], markers)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    base = Path(args[0]) if args else BASE
    if harness.installed_version() != harness.CODEX_VERSION:
        print(f"Codex {harness.CODEX_VERSION} is not installed: run tests/install_codex.sh", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        rollout = Path(tmp) / base.name
        markers = probe_rollout(base, rollout)
        theirs = sent_by_codex(rollout, markers, Path(tmp) / "run")
        ours = sent_by_inspector(rollout, markers)
    print(f"{len(markers)} probes appended to {base.name}; sent by Codex {harness.CODEX_VERSION} / by inspector's prediction")
    differ = 0
    for marker, name in markers.items():
        a, b = marker in theirs, marker in ours
        differ += a != b
        print(f"  {marker} {name:44} {'sent' if a else 'skipped':8} {'sent' if b else 'skipped':8}{'' if a == b else '  <- differs'}")
    print(f"{differ} of {len(markers)} differ")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
