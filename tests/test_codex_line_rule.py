"""Codex skips a rollout line it cannot read into its own types; inspector's prediction skips the
same lines (`inspector/formats/codex_lines.py`), checked against the real Codex.

One rollout (the peer corpus's `auto_compact.jsonl`) gets a hundred damaged lines appended, each a
user message, call, output or reasoning item carrying a marker of its own
(`tests/peers/codex_resume/type_probe.py`); the pinned Codex resumes it once against the scripted
model on 127.0.0.1, and the markers in its first request are the lines it read. `inspector context
--json` must send exactly those. A missing Codex fails the test, naming the cause (installed by
tests/install_codex.sh).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.formats import load
from tests.conftest import need_shared
from tests.peers.codex_resume import resume as harness
from tests.peers.codex_resume import type_probe as probe

# Where we knowingly part from Codex (the module doc of `codex_lines` says why): an integer past 64
# bits or a value nested 128 deep in a field no mirrored type names (telling would cost every line
# a walk of its bytes), and a message of a role Codex never writes (Codex sends it as it is).
NOT_MIRRORED = frozenset({
    "a 70-bit integer",
    "2**64",
    "-2**63 - 1",
    "a big integer in an unknown object",
    "a value nested 126 deep (line 128)",
    "a top-level value nested 127 deep (line 128)",
    "a made-up role",
})


def test_inspector_sends_the_lines_the_real_codex_reads(tmp_path: Path) -> None:
    need_shared(probe.BASE)
    have = harness.installed_version()
    if have != harness.CODEX_VERSION:
        pytest.fail(f"Codex {harness.CODEX_VERSION} is not installed at {harness.CODEX} (found {have}): run tests/install_codex.sh", pytrace=False)
    rollout = tmp_path / probe.BASE.name
    markers = probe.probe_rollout(probe.BASE, rollout)
    theirs = probe.sent_by_codex(rollout, markers, tmp_path / "run")
    ours = probe.sent_by_inspector(rollout, markers)
    assert set(markers.values()) >= NOT_MIRRORED
    # The probes reach both verdicts: Codex reads some and skips many (a harness that lost every
    # line, or kept them all, would agree with anything).
    assert len(markers) >= 100 and 30 <= len(theirs) <= len(markers) - 40, (len(theirs), len(markers))
    differ = sorted(f"{m} {name}: Codex {'sends' if m in theirs else 'skips'} it, inspector {'sends' if m in ours else 'skips'} it"
                    for m, name in markers.items() if (m in theirs) != (m in ours) and name not in NOT_MIRRORED)
    assert not differ, "\n".join(differ)


def _strip_ordinal(raw: bytes) -> bytes:
    o = json.loads(raw)
    o.pop("ordinal", None)
    return json.dumps(o).encode()


def _with_mode(raw: bytes, mode: object) -> bytes:
    o = json.loads(raw)
    o["payload"]["history_mode"] = mode
    return json.dumps(o).encode()


def _with_instructions(raw: bytes, edit: Callable[[dict[str, Any]], Any]) -> bytes:
    o = json.loads(raw)
    o["payload"]["base_instructions"] = edit(o["payload"]["base_instructions"])
    return json.dumps(o).encode()


_GONE = object()


def _with_meta(raw: bytes, key: str, value: object) -> bytes:
    o = json.loads(raw)
    if value is _GONE:
        del o["payload"][key]
    else:
        o["payload"][key] = value
    return json.dumps(o).encode()


def _refusal_cases() -> dict[str, list[bytes]]:
    """Rollouts the real Codex 0.169 refuses to resume, or resumes, each beside the peer rollout."""
    lines = probe.BASE.read_bytes().rstrip(b"\n").split(b"\n")
    user = json.dumps(probe._message("PROBE-000")).encode()  # (an ordinal of its own)
    return {
        "as written": lines,
        "a last line without an ordinal": [*lines, _strip_ordinal(user)],
        "a last event without an ordinal": [*lines[:-1], _strip_ordinal(lines[-1])],
        "no ordinal anywhere": [lines[0], *map(_strip_ordinal, lines[1:])],
        "a last line cut short after one without an ordinal": [*lines[:-1], _strip_ordinal(lines[-1]), user[:-9]],
        "a last line cut short": [*lines, user[:-9]],
        "a last line Codex skips": [*lines, user.replace(b'"role": "user"', b'"role": 5')],
        "a last line Codex skips, without an ordinal": [*lines, _strip_ordinal(user).replace(b'"role": "user"', b'"role": 5')],
        "a last line of another type without an ordinal": [*lines, _strip_ordinal(user).replace(b'"response_item"', b'"future_record"')],
        "a last line glued, without an ordinal": [*lines, _strip_ordinal(user) + b'{"a": 1}'],
        "a header without an ordinal": [_strip_ordinal(lines[0]), *lines[1:]],
        "legacy, no ordinal anywhere": [_with_mode(lines[0], "legacy"), *map(_strip_ordinal, lines[1:])],
        "no history mode, no ordinal anywhere": [_strip_ordinal(lines[0]).replace(b'"history_mode": "paginated", ', b""), *map(_strip_ordinal, lines[1:])],
        "an unknown history mode": [_with_mode(lines[0], "default"), *lines[1:]],
        "a null history mode": [_with_mode(lines[0], None), *lines[1:]],
        "a history mode of a number": [_with_mode(lines[0], 5), *lines[1:]],
        # (a redacted real rollout, jerometremblay/codex_log_viewer, had its instructions replaced by a bare string)
        "base instructions of a bare string": [_with_instructions(lines[0], lambda bi: bi["text"]), *lines[1:]],
        "base instructions without a text": [_with_instructions(lines[0], lambda bi: {"provenance": bi["provenance"]}), *lines[1:]],
        "base instructions whose text is a number": [_with_instructions(lines[0], lambda bi: {**bi, "text": 5}), *lines[1:]],
        "base instructions whose provenance is a number": [_with_instructions(lines[0], lambda bi: {**bi, "provenance": 5}), *lines[1:]],
        "null base instructions": [_with_instructions(lines[0], lambda bi: None), *lines[1:]],
        # (types the field guard removes before the rule sees them: refused all the same)
        "base instructions of a boolean": [_with_instructions(lines[0], lambda bi: True), *lines[1:]],
        "base instructions of an integer": [_with_instructions(lines[0], lambda bi: 5), *lines[1:]],
        "base instructions of a float": [_with_instructions(lines[0], lambda bi: 1.5), *lines[1:]],
        "base instructions of a list": [_with_instructions(lines[0], lambda bi: [bi["text"]]), *lines[1:]],
        # (the struct's sequence form: a text and a null are read, anything else is not)
        "base instructions of a list of a text and a null": [_with_instructions(lines[0], lambda bi: [bi["text"], None]), *lines[1:]],
        "base instructions of a list of an empty text": [_with_instructions(lines[0], lambda bi: [""]), *lines[1:]],
        "base instructions of an empty list": [_with_instructions(lines[0], lambda bi: []), *lines[1:]],
        "base instructions of a list of a number": [_with_instructions(lines[0], lambda bi: [5]), *lines[1:]],
        "base instructions of a list of a text and its provenance": [_with_instructions(lines[0], lambda bi: [bi["text"], bi["provenance"]]), *lines[1:]],
        "base instructions of a list of three": [_with_instructions(lines[0], lambda bi: [bi["text"], None, 3]), *lines[1:]],
        "base instructions of a list of a text and a number": [_with_instructions(lines[0], lambda bi: [bi["text"], 5]), *lines[1:]],
        # (the provenance, an internally tagged enum: a model one with its model, or a custom one)
        "a custom provenance": [_with_instructions(lines[0], lambda bi: {**bi, "provenance": {"type": "custom", "path": 5}}), *lines[1:]],
        "a model provenance without its model": [_with_instructions(lines[0], lambda bi: {**bi, "provenance": {"type": "model"}}), *lines[1:]],
        "a model provenance whose model is a number": [_with_instructions(lines[0], lambda bi: {**bi, "provenance": {"type": "model", "model": 5}}), *lines[1:]],
        "a provenance of a type Codex does not know": [_with_instructions(lines[0], lambda bi: {**bi, "provenance": {"type": "file"}}), *lines[1:]],
        "a provenance without a type": [_with_instructions(lines[0], lambda bi: {**bi, "provenance": {}}), *lines[1:]],
        "a listed model provenance without its model": [_with_instructions(lines[0], lambda bi: [bi["text"], {"type": "model"}]), *lines[1:]],
        # (the session_meta's own fields: `codex_lines.session_meta_problem`)
        "a session_meta without its timestamp": [_with_meta(lines[0], "timestamp", _GONE), *lines[1:]],
        "a session_meta whose cwd is null": [_with_meta(lines[0], "cwd", None), *lines[1:]],
        "a session_meta whose cwd is empty": [_with_meta(lines[0], "cwd", ""), *lines[1:]],
        "a session_meta whose originator is a number": [_with_meta(lines[0], "originator", 5), *lines[1:]],
        "a session_meta without its cli_version": [_with_meta(lines[0], "cli_version", _GONE), *lines[1:]],
        "a session_meta whose model_provider is a number": [_with_meta(lines[0], "model_provider", 5), *lines[1:]],
        "a session_meta whose model_provider is null": [_with_meta(lines[0], "model_provider", None), *lines[1:]],
        "a session_meta whose session_id is no UUID": [_with_meta(lines[0], "session_id", "s1"), *lines[1:]],
        "a session_meta without a session_id": [_with_meta(lines[0], "session_id", _GONE), *lines[1:]],
        "a session_meta whose source is null": [_with_meta(lines[0], "source", None), *lines[1:]],
        "a session_meta whose source is an empty object": [_with_meta(lines[0], "source", {}), *lines[1:]],
        "a session_meta whose source names a sub-agent": [_with_meta(lines[0], "source", {"subagent": "review"}), *lines[1:]],
        "base instructions with a field of their own": [_with_instructions(lines[0], lambda bi: {**bi, "note": 1}), *lines[1:]],
    }


def test_inspector_says_when_the_real_codex_refuses_to_resume(tmp_path: Path) -> None:
    """Codex 0.169 refuses a rollout outright (an error, no request) when its history mode is one it
    does not know, when its base instructions are not an object with a string text, or when it is
    paginated and the last line Codex reads has no ordinal: `analyze`
    says `resume_refused` exactly when the real Codex refuses."""
    need_shared(probe.BASE)
    if harness.installed_version() != harness.CODEX_VERSION:
        pytest.fail(f"Codex {harness.CODEX_VERSION} is not installed at {harness.CODEX}: run tests/install_codex.sh", pytrace=False)
    verdicts = []
    for k, (name, lines) in enumerate(_refusal_cases().items()):
        rollout = tmp_path / f"c{k}" / probe.BASE.name
        rollout.parent.mkdir()
        rollout.write_bytes(b"\n".join(lines) + b"\n")
        run = harness.resume(rollout, "continue", tmp_path / f"run{k}")
        refused = run.returncode != 0 and not run.requests
        said = [f for f in analyze(load(str(rollout))).findings if f.code == "resume_refused"]
        verdicts.append((name, refused, bool(said)))
    assert sum(r for _, r, _ in verdicts) >= 5 and sum(not r for _, r, _ in verdicts) >= 5, verdicts
    assert [v for v in verdicts if v[1] != v[2]] == [], verdicts


def test_base_instructions_in_a_list_are_sent_as_codex_sends_them(tmp_path: Path) -> None:
    """A list is the base-instructions struct's sequence form: the real Codex 0.169 sends `["X"]`
    and `["X", null]` as the instructions "X" (its first input item, a developer message), as the
    next request `analyze` predicts begins."""
    need_shared(probe.BASE)
    if harness.installed_version() != harness.CODEX_VERSION:
        pytest.fail(f"Codex {harness.CODEX_VERSION} is not installed at {harness.CODEX}: run tests/install_codex.sh", pytrace=False)
    lines = probe.BASE.read_bytes().rstrip(b"\n").split(b"\n")
    for k, listed in enumerate((["LISTED-INSTRUCTIONS"], ["LISTED-INSTRUCTIONS", None])):
        rollout = tmp_path / f"c{k}" / probe.BASE.name
        rollout.parent.mkdir()
        rollout.write_bytes(b"\n".join([_with_instructions(lines[0], lambda bi, listed=listed: listed), *lines[1:]]) + b"\n")
        run = harness.resume(rollout, "continue", tmp_path / f"run{k}")
        assert run.returncode == 0 and run.requests, run.stderr[-800:]
        first = run.requests[0]["input"][0]
        assert first["role"] == "developer" and first["content"][0]["text"] == "LISTED-INSTRUCTIONS", first
        ours = analyze(load(str(rollout))).context[0]
        assert (ours.role, ours.seq, ours.text) == ("system", None, "LISTED-INSTRUCTIONS"), ours


def test_a_rollout_without_base_instructions_is_sent_codex_own(tmp_path: Path) -> None:
    """A rollout whose session_meta records no base instructions (absent, as every Codex before
    0.9x wrote it, or null): the real Codex 0.169 sends its own for the model first, and the next
    request `analyze` predicts begins with an item saying so (the text is not in the file)."""
    need_shared(probe.BASE)
    if harness.installed_version() != harness.CODEX_VERSION:
        pytest.fail(f"Codex {harness.CODEX_VERSION} is not installed at {harness.CODEX}: run tests/install_codex.sh", pytrace=False)
    lines = probe.BASE.read_bytes().rstrip(b"\n").split(b"\n")
    recorded = json.loads(lines[0])["payload"]["base_instructions"]["text"]
    absent = json.loads(lines[0])
    del absent["payload"]["base_instructions"]
    for k, header in enumerate((json.dumps(absent).encode(), _with_instructions(lines[0], lambda bi: None))):
        rollout = tmp_path / f"c{k}" / probe.BASE.name
        rollout.parent.mkdir()
        rollout.write_bytes(b"\n".join([header, *lines[1:]]) + b"\n")
        run = harness.resume(rollout, "continue", tmp_path / f"run{k}")
        assert run.returncode == 0 and run.requests, run.stderr[-800:]
        first = run.requests[0]["input"][0]
        # (the peer's recorded instructions are this Codex's own for the harness's model: the same opening)
        assert first["role"] == "developer" and first["content"][0]["text"][:200] == recorded[:200], first
        ours = analyze(load(str(rollout))).context[0]
        assert (ours.role, ours.seq, ours.synthetic, ours.text) == ("system", None, True, ""), ours
        assert ours.note is not None and "built-in instructions" in ours.note


def test_a_repair_of_a_rollout_codex_refuses_is_one_it_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A paginated rollout whose last line lost its ordinal is refused by Codex; the repair's
    appended lines continue the count from the latest numbered line, so the repaired rollout is
    one the real Codex resumes, and `analyze` no longer says it refuses."""
    need_shared(probe.BASE)
    if harness.installed_version() != harness.CODEX_VERSION:
        pytest.fail(f"Codex {harness.CODEX_VERSION} is not installed at {harness.CODEX}: run tests/install_codex.sh", pytrace=False)
    lines = probe.BASE.read_bytes().rstrip(b"\n").split(b"\n")
    f = tmp_path / probe.BASE.name
    f.write_bytes(b"\n".join([*lines[:-1], _strip_ordinal(lines[-1])]) + b"\n")
    assert [x.code for x in analyze(load(str(f))).findings if x.code == "resume_refused"] == ["resume_refused"]
    assert main(["repair", str(f), "--strategy", "recover", "--write", "--json"]) == 0  # (the peer rollout's last compaction leaves compact nothing to do)
    capsys.readouterr()
    assert [x.code for x in analyze(load(str(f))).findings if x.code == "resume_refused"] == []
    run = harness.resume(f, "continue", tmp_path / "run")
    assert run.returncode == 0 and run.requests, run.stderr[-2000:]
