"""Sub-agents across sessions (issue 18 point 2): a Codex child rollout (its session_meta names the
session that spawned it) and ADK sub-agents (events authored by another agent of the session) are
attributed to their parent: scan rows name the parent, `usage` rolls them into it and shows them apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli.main import main
from tests.conftest import SHARED, need_shared

PARENT_ID = "019c8a53-a0dd-7130-bcd7-95445d84846a"
CHILD_ID = "019c8a59-0000-7000-8000-00000000c41d"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))


def codex_tree(tmp_path: Path, child_first: bool = False) -> tuple[Path, Path, Path]:
    """A real Codex rollout as the parent, and a child rollout spawned by it: the same lines under a
    session_meta whose source is `{"subagent": {"thread_spawn": {"parent_thread_id": ...}}}`, the
    shape Codex writes (codex-rs protocol `SessionSource::SubAgent(SubAgentSource::ThreadSpawn)`)."""
    src = need_shared(SHARED / "real_sessions" / "codex" / f"localpush__rollout-2026-02-23T12-47-42-{PARENT_ID}.jsonl")
    root = tmp_path / "sessions"
    day_parent, day_child = (root / "2026" / "02" / "24", root / "2026" / "02" / "23") if child_first else (
        root / "2026" / "02" / "23", root / "2026" / "02" / "24")
    day_parent.mkdir(parents=True)
    day_child.mkdir(parents=True, exist_ok=True)
    parent = day_parent / f"rollout-2026-02-23T12-47-42-{PARENT_ID}.jsonl"
    parent.write_bytes(src.read_bytes())
    lines = src.read_text().splitlines()
    meta = json.loads(lines[0])
    meta["payload"].update(id=CHILD_ID, source={"subagent": {"thread_spawn": {"parent_thread_id": PARENT_ID, "depth": 1}}})
    child = day_child / f"rollout-2026-02-24T09-00-00-{CHILD_ID}.jsonl"
    child.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n")
    return root, parent, child


def rows(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, dict]:
    assert main(["scan", *argv, "--json", "--no-progress"]) in (0, 1)
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return {Path(r["path"]).name: r for r in out}


@pytest.mark.parametrize("child_first", [False, True], ids=["parent-first", "child-first"])
def test_a_codex_child_rollout_names_its_parent(tmp_path: Path, capsys: pytest.CaptureFixture[str], child_first: bool) -> None:
    root, parent, child = codex_tree(tmp_path, child_first)
    got = rows(capsys, str(root))
    assert got[child.name]["parent_session_id"] == PARENT_ID
    assert got[parent.name]["parent_session_id"] is None and got[parent.name]["parent"] is None
    if not child_first:  # the parent was read first in this scan
        assert got[child.name]["parent"] == str(parent)
    # a later scan finds the parent in the index whichever came first (a child read before its
    # parent is named once the parent is indexed)
    assert main(["scan", str(child), "--json", "--no-progress"]) == 0
    (again,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert again["parent"] == str(parent)
    assert main(["usage", str(child), "--json", "--no-progress"]) == 0
    (g,) = json.loads(capsys.readouterr().out)["groups"]
    assert g["key"] == str(parent) and g["subagents"] == 1  # rolled into its parent


def test_usage_rolls_a_codex_child_into_its_parent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, parent, _child = codex_tree(tmp_path)
    assert main(["usage", str(root), "--json", "--no-progress"]) == 0
    (g,) = json.loads(capsys.readouterr().out)["groups"]  # one session: the child is inside its parent
    assert g["key"] == str(parent) and g["subagents"] == 1 and g["sessions"] == 1
    assert g["subagent_usage"]["output"] > 0 and g["usage"]["output"] == 2 * g["subagent_usage"]["output"]


FORKED_OUTPUT = ("You are the newly spawned agent. The prior conversation history was forked from your parent agent. "
                 "Treat the next user message as your new task, and use the forked history only as background context.")


def forked_child(tmp_path: Path, marker: bool) -> tuple[Path, Path, Path]:
    """A child Codex forked from the real parent: as codex-rs writes it (`InitialHistory::Forked`),
    its own session_meta (`forked_from_id`), then the parent's whole rollout copied in, its
    session_meta and token_count lines included, then the spawn output that ends the copy (or,
    `marker=False`, a fork without one: the copy written in one instant), then its own turn."""
    root, parent, child = codex_tree(tmp_path)
    lines = parent.read_text().splitlines()
    meta = json.loads(lines[0])
    meta["payload"].update(id=CHILD_ID, forked_from_id=PARENT_ID,
                           source={"subagent": {"thread_spawn": {"parent_thread_id": PARENT_ID, "depth": 1}}})
    at = "2026-02-24T09:00:00.123Z"
    copied = [json.loads(line) for line in lines]
    for o in copied:
        o["timestamp"] = at
    if marker:
        copied.append({"timestamp": at, "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call_spawn", "output": FORKED_OUTPUT}})
    own = [
        {"timestamp": "2026-02-24T09:00:05.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "child: do work"}]}},
        {"timestamp": "2026-02-24T09:00:09.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
        {"timestamp": "2026-02-24T09:00:09.001Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
            "last_token_usage": {"input_tokens": 1000, "cached_input_tokens": 0, "output_tokens": 7,
                                 "reasoning_output_tokens": 0, "total_tokens": 1007},
            "model_context_window": 258400}}},
    ]
    child.write_text("\n".join(json.dumps(o) for o in [meta, *copied, *own]) + "\n")
    return root, parent, child


@pytest.mark.parametrize("marker", [True, False], ids=["spawn-output", "one-instant"])
def test_a_forked_childs_copy_of_its_parents_history_is_not_counted_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], marker: bool
) -> None:
    root, parent, child = forked_child(tmp_path, marker)
    assert main(["usage", str(parent), "--json", "--no-progress"]) == 0
    (alone,) = json.loads(capsys.readouterr().out)["groups"]
    assert main(["usage", str(root), "--json", "--no-progress"]) == 0
    (g,) = json.loads(capsys.readouterr().out)["groups"]
    assert g["key"] == str(parent) and g["subagents"] == 1
    assert g["subagent_usage"]["output"] == 7 and g["subagent_usage"]["input"] == 1000  # the child's own turn only
    assert g["usage"]["output"] == alone["usage"]["output"] + 7
    assert rows(capsys, str(child))[child.name]["usage"]["output"] == 7


def test_adk_sub_agents_are_shown_apart_inside_their_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ADK's multi-agent peer session: a coordinator (the agent the user talks to) hands over to
    weather_agent, math_agent and two critics; their replies are the session's sub-agents."""
    src = need_shared(SHARED / "peers" / "adk" / "corpus" / "multi_agent.json")
    session = tmp_path / "multi_agent.json"
    session.write_bytes(src.read_bytes())
    events = json.loads(src.read_text())["events"]

    def tokens(author: str) -> int:
        return sum((e.get("usage_metadata") or {}).get("candidates_token_count") or 0 for e in events
                   if e.get("author") == author and e.get("usage_metadata"))

    assert main(["usage", str(session), "--json", "--no-progress"]) == 0
    (g,) = json.loads(capsys.readouterr().out)["groups"]
    assert g["key"] == str(session) and g["sessions"] == 1
    assert g["subagent_names"] == sorted(f"{session}#{a}" for a in ("weather_agent", "math_agent", "critic_a", "critic_b"))
    subs = sum(tokens(a) for a in ("weather_agent", "math_agent", "critic_a", "critic_b"))
    assert subs > 0 and g["subagent_usage"]["output"] >= subs  # thoughts count as output too
    assert g["usage"]["output"] > g["subagent_usage"]["output"]  # the coordinator's own replies are in the total


def test_the_index_lists_a_parents_child_rollouts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the session view's `a` key opens for a Codex parent (and `a` in the child, back)."""
    from inspector.store.index import SessionIndex

    root, parent, child = codex_tree(tmp_path)
    rows(capsys, str(root))
    with SessionIndex() as index:
        assert index.children_of(str(parent)) == [str(child)]
        assert index.path_of_session(PARENT_ID) == str(parent)
