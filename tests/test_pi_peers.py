"""The next request is exactly pi's (issue 2, point 4).

`../shared/peers/pi/corpus/<name>.context.json` is what pi 0.73.1's own code builds and sends for
each session file (see the README there). For every one, our effective context must list the same
records in the same order, with the synthetic tool results pi inserts, and nothing pi drops.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.formats import load

PEERS = Path(__file__).resolve().parents[2] / "shared" / "peers" / "pi" / "corpus"
CASES = sorted(p for p in PEERS.glob("*.context.json")) if PEERS.exists() else []

_ROLE = {"toolResult": "tool", "user": "user", "assistant": "assistant"}


def _ours(path: Path, upto: int | None = None) -> list[tuple[str, str | None, bool]]:
    report = analyze(load(str(path), upto_line=upto))
    return [(it.role, it.record_id, it.synthetic) for it in report.context]


def _theirs(ctx: dict) -> list[tuple[str, str | None, bool]]:
    return [(_ROLE[m["role"]], m["entryId"], m["synthetic"]) for m in ctx["llmMessages"]]


def test_peer_corpus_present() -> None:
    assert len(CASES) >= 8, f"expected the pi peer corpus at {PEERS}"


@pytest.mark.parametrize("ctx_file", CASES, ids=[p.name.split(".")[0] for p in CASES])
def test_context_equals_pi(ctx_file: Path) -> None:
    ctx = json.loads(ctx_file.read_text())
    session = ctx_file.with_name(ctx_file.name.replace(".context.json", ".jsonl"))
    assert _ours(session) == _theirs(ctx)


@pytest.mark.parametrize("ctx_file", CASES, ids=[p.name.split(".")[0] for p in CASES])
def test_summary_and_dropped_records_match_pi(ctx_file: Path) -> None:
    ctx = json.loads(ctx_file.read_text())
    session = ctx_file.with_name(ctx_file.name.replace(".context.json", ".jsonl"))
    report = analyze(load(str(session)))
    if ctx["compaction"]:
        assert report.checkpoints[-1].record.id == ctx["compaction"]["id"]
        assert report.checkpoints[-1].first_kept_found == ctx["compaction"]["firstKeptFound"]
        assert report.context[0].kind == "summary"
        assert report.context[0].text.startswith("The conversation history before this point was compacted")
    dropped = {d["entryId"] for d in ctx["droppedByTransform"]}
    states = {report.ledger.records[s].id: report.states[s] for s in report.path if report.states[s]}
    for entry_id in dropped:
        assert states[entry_id] == "excluded"
    assert len(report.path) == ctx["pathLength"]
    assert report.ledger.records[report.ledger.leaf_seq].id == ctx["leafId"]


_WIRE = {"user": "u", "assistant": "a", "toolResult": "t", "tool": "t"}


def _signature_at(session: Path, upto: int) -> tuple[str, list]:
    report = analyze(load(str(session), upto_line=upto))
    roles = " ".join(_WIRE[it.role] for it in report.context)
    ids = [it.tool_call_ids if it.role == "assistant" else it.tool_result_id for it in report.context]
    return roles, ids


def _wire_ids(messages: list[dict]) -> list:
    out = []
    for m in messages:
        if m["role"] == "assistant":
            out.append([c["id"] for c in m.get("tool_calls") or []])
        elif m["role"] == "tool":
            out.append(m["tool_call_id"])
        else:
            out.append(None)
    return out


@pytest.mark.parametrize("ctx_file", CASES, ids=[p.name.split(".")[0] for p in CASES])
def test_every_request_pi_sent_is_our_context_at_some_moment(ctx_file: Path) -> None:
    """Every agent request pi actually sent equals our context for the file as it stood then
    (some prefix of its lines, moving forward in time): roles for every request, and tool-call
    ids for the requests the harness kept in full (those after compactions and errors)."""
    name = ctx_file.name.replace(".context.json", "")
    session = ctx_file.with_name(f"{name}.jsonl")
    requests = [json.loads(x) for x in ctx_file.with_name(f"{name}.requests.jsonl").read_text().splitlines()]
    agent = [r for r in requests if r["kind"] == "agent"]
    n_lines = len(session.read_text().splitlines())
    cache: dict[int, tuple[str, list]] = {}
    line = 1
    matched = 0
    for req in agent:
        while line <= n_lines:
            if line not in cache:
                cache[line] = _signature_at(session, line) if line > 1 else ("", [])
            roles, ids = cache[line]
            ok = roles == req["roles"] and (not req["full"] or ids == _wire_ids(req["messages"]))
            if ok:
                matched += 1
                break
            line += 1
        assert line <= n_lines, f"request seq {req['seq']} ({req['roles']!r}) matches no moment of the file"
    assert matched == len(agent) > 0
