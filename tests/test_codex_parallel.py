"""A big Codex rollout is read by two processes (`codex._CODEC`, `formats.parallel`): a forked helper
reads chunks of lines from their heads, this process merges them in file order and reads itself every
line the helper leaves. The ledger must be the serial one, record for record, and so must the
analysis, wherever the two processes meet, on real sessions, peers, fixtures, damaged rollouts and
every kind of line the two paths decide between; also when the helper dies mid-way or the file grows
meanwhile."""

from __future__ import annotations

import json
import os
import random
import signal
from pathlib import Path
from typing import Any

import orjson
import pytest

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import codex, fork_reader_ahead, load
from inspector.formats import parallel as par
from inspector.ledger.model import Ledger, mark_code
from tests.conftest import REPO
from tests.golden_outputs import SHARED
from tests.test_parallel_load import _assert_same, _loader_stops_at, _snapshot, _write, spy_forks

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the helper is forked")

SERIAL = 1 << 62


@pytest.fixture
def helpers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every helper forked, in order (each test sets its chunk size)."""
    return spy_forks(monkeypatch)


def _files() -> list[Path]:
    """Every Codex rollout of the real sessions, the peer corpus and the tests' fixtures."""
    found = sorted((SHARED / "real_sessions" / "codex").glob("*.jsonl"))
    found += sorted(p for p in (SHARED / "peers" / "codex" / "corpus").rglob("*.jsonl") if not p.name.endswith((".requests.jsonl", ".stream.jsonl")))
    found += sorted((REPO / "tests" / "differential" / "fixtures").glob("codex-*/session.jsonl"))
    found += sorted((REPO / "tests" / "peers" / "codex_resume" / "sessions").glob("*.jsonl"))
    return found


def test_the_rollouts_compared_include_the_repositorys_own() -> None:
    """The comparisons below run on every rollout `_files` finds: never on none (the fixtures and
    peer sessions this repository ships are always among them), so no test here passes empty."""
    repo_own = [p for p in _files() if REPO in p.parents]
    assert len(repo_own) >= 3 and all(p.is_file() for p in _files())


def _serial(path: Path, monkeypatch: pytest.MonkeyPatch) -> Ledger:
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SERIAL)
    return load(str(path), fingerprint=False)


def _both(path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> tuple[Ledger, Ledger]:
    serial = _serial(path, monkeypatch)
    monkeypatch.setattr(par, "CHUNK_BYTES", chunk)
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", 1)
    return serial, load(str(path), fingerprint=False)


def _same_everything(serial: Ledger, parallel: Ledger) -> None:
    """The same ledger, record for record (what was read lazily, then every message), and the same
    analysis (`analyze --json`, `context --json`)."""
    _assert_same(_snapshot(serial), _snapshot(parallel))
    for led in (serial, parallel):  # (the loader's index: what reading every record finds)
        ix = led.record_index()
        assert ix is not None and ix.codes == bytes(map(mark_code, led.records)) and ix.seqs == list(range(len(led.records)))
    for out in (analyze_json, context_json):
        assert orjson.dumps(out(analyze(serial)), default=str) == orjson.dumps(out(analyze(parallel)), default=str)


@pytest.mark.parametrize("chunk", [300, 4096])
@pytest.mark.parametrize("path", _files(), ids=lambda p: p.parent.name + "/" + p.name)
def test_every_real_peer_and_fixture_rollout_reads_the_same(path: Path, chunk: int, tmp_path: Path, monkeypatch, helpers) -> None:
    copy = _write(tmp_path / "rollout.jsonl", [path.read_bytes()])
    serial, parallel = _both(copy, monkeypatch, chunk)
    h = helpers[-1]
    assert h is not None and h.pid == 0  # forked, reaped
    _same_everything(serial, parallel)


@pytest.mark.parametrize("share", [0.0, 0.4, 1.0])
def test_a_generated_rollout_reads_the_same_wherever_the_two_meet(share: float, tmp_path: Path, monkeypatch, helpers) -> None:
    from benchmarks.gen_formats import generate

    path = Path(generate("codex", 2, 3, str(tmp_path / "codex.jsonl")))
    _loader_stops_at(monkeypatch, int(path.stat().st_size * share) + (share == 1))
    serial, parallel = _both(path, monkeypatch, 64 << 10)
    h = helpers[-1]
    assert h is not None and h.appended == len(h.bounds) - 1 - h.own_below
    assert (h.appended > 0) == (share < 1)
    assert len(serial.records) > 3000 and any(r.type == "compacted" for r in serial.records)
    _same_everything(serial, parallel)


# -- every kind of line the helper and this process decide between


def _line(t: str, payload: Any, ts: Any = "2026-01-01T00:00:00.000Z", **extra: Any) -> bytes:
    return json.dumps({"timestamp": ts, "type": t, "payload": payload, **extra}, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _edge_lines(tag: str) -> list[bytes]:
    """Lines the head path and the general path decide between, and lines whose mapping depends
    on the lines before them (ids taken, the reply awaiting its usage, the turn's model, the
    history a checkpoint or a roll-back acts on); ids made unique by `tag`."""
    item = lambda p, **kw: _line("response_item", p, **kw)  # noqa: E731
    event = lambda p, **kw: _line("event_msg", p, **kw)  # noqa: E731
    usage = {"input_tokens": 900, "cached_input_tokens": 100, "output_tokens": 50}
    said = lambda role, text, **kw: item({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}], **kw})  # noqa: E731
    return [
        _line("turn_context", {"cwd": "/", "model": f"model-a-{tag}"}),
        said("user", f"hello {tag}"),
        event({"type": "token_count", "info": None}),  # no reply awaits: nothing given
        item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}], "content": None, "encrypted_content": "x"}),
        said("assistant", "let me look", id=f"msg-{tag}"),
        event({"type": "token_count", "info": {"last_token_usage": usage, "model_context_window": 128000}}),
        event({"type": "token_count", "info": {"last_token_usage": usage, "model_context_window": 0}}),  # a repeat: nothing
        item({"type": "function_call", "name": "shell", "arguments": "{\"cmd\":\"ls\"}", "call_id": f"c1-{tag}"}),
        item({"type": "function_call_output", "call_id": f"c1-{tag}", "output": "ok"}),
        item({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": ""}),  # an empty call id: its own key
        item({"type": "function_call_output", "call_id": "", "output": "empty"}),
        item({"type": "custom_tool_call", "name": "apply_patch", "input": "x", "call_id": ""}),
        item({"type": "custom_tool_call_output", "call_id": f"c9-{tag}", "output": "no call"}),
        item({"type": "web_search_call", "status": "completed", "action": {"type": "search"}}),
        item({"type": "ghost_snapshot", "ghost_commit": {"id": "g"}}),
        item({"type": "ghost_snapshot", "id": f"msg-{tag}"}),  # a ghost whose id a message took
        said("assistant", "again", id=f"msg-{tag}"),  # an id taken: the line's id, kept apart
        said("user", "an empty id", id=""),
        said("user", "a line's id", id="L3"),  # names line 3's record: taken
        said("user", "a line's id no record has", id="L999999"),
        event({"type": "agent_message", "message": "x", "id": f"ev-{tag}"}),  # a meta line with an id
        event({"type": "agent_message", "message": "x", "id": f"ev-{tag}"}),  # ... taken
        event({"type": "agent_message", "message": "x", "id": ""}),
        event({"type": "agent_message", "message": "x", "id": f"dup-{tag}"}),  # an event takes an id ...
        said("user", f"dup {tag}"),
        said("user", f"dup {tag}", id=f"dup-{tag}"),  # ... an item has it too (kept apart): the checkpoint keeps this one
        _line("turn_context", {"cwd": "/", "model": f"model-b-{tag}"}),
        said("assistant", "on model b"),
        _line("turn_context", {"cwd": "/", "model": f"model-a-{tag}", "effort": 5}),  # a wrong type: the general path sets model a
        _line("turn_context", {"cwd": "/", "model": f"model-b-{tag}"}),  # ... and a head sets b again
        said("assistant", "on model b again"),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]}, metadata={"compaction_output": True}),
        said("assistant", "never sent above, and no checkpoint takes it"),
        _line("turn_context", {"cwd": "/"}),  # no model: unchanged
        said("assistant", "still b", phase="final"),
        event({"type": "token_count", "info": {"last_token_usage": {"input_tokens": 7, "output_tokens": 2}, "model_context_window": 9000}}),
        _line("token_usage_record", {"usage": {"input_tokens": 5, "output_tokens": 1}}),
        said("assistant", "summary by the summarizer", id=f"sum-{tag}"),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "handoff"}]}, metadata={"compaction_output": True}),
        _line("compacted", {"message": "handoff", "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"hello {tag}"}]},
            {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": ""},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}], "content": None, "encrypted_content": "x"},
            {"type": "message", "id": f"msg-{tag}", "role": "assistant", "content": [{"type": "output_text", "text": "let me look"}]},
            {"type": "message", "id": f"dup-{tag}", "role": "user", "content": [{"type": "input_text", "text": f"dup {tag}"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "handoff"}]},
        ]}),
        said("user", f"next {tag}"),
        said("assistant", "answer"),
        event({"type": "thread_rolled_back", "num_turns": 1}),
        said("user", f"after the roll-back {tag}"),
        said("developer", "dev"),
        item({"type": "message", "role": "user", "content": "a plain string"}),
        item({"type": "message", "role": "user", "content": None}),
        item({"type": "message", "role": "user", "content": [{"type": "input_image", "image_url": "data:"}, {"text": None}]}),
        item({"type": "message", "role": "critic", "content": "an unknown role"}),
        item({"type": "message", "content": "no role"}),
        item({"type": "agent_message", "content": "another agent"}),
        item({"type": "brand_new_item", "x": 1}),
        _line("inter_agent_communication", {"content": "from another agent"}),
        _line("world_state", {"x": 1}),
        _line("brand_new_line_type", {"x": 1}),
        _line("session_meta", {"id": f"other-{tag}", "cwd": "/"}),  # a repeated header
        event({"type": 5}),
        event({"type": "token_count", "info": {"last_token_usage": {"input_tokens": "many"}}}),  # a wrong type: the general path
        _line("event_msg", {"type": "agent_message"}, ts=17),
        _line("event_msg", {"type": "agent_message"}, ts=1.5e300),
        _line("event_msg", {"type": "agent_message"}, ts=None),
        said("user", "caf\xe9 \u2603 non-ascii"),
        said("user", "x" * 3000),  # over the (patched) large-line size: read by `bounded`
        b'{"timestamp":"t","type":"event_msg","payload":{"type":"agent_message","message":"\xff\xfe"}}\n',  # not UTF-8
        b'{"timestamp":"t","type":"event_msg","payload":{"type":"agent_me\n',
        b"[1, 2]\n",
        _line("world_state", {}).rstrip(b"\n") + _line("world_state", {}),  # two lines glued
        b"\n",
        b"   \n",
        _line("response_item", None),  # lost its payload
        said("assistant", f"last of {tag}"),
    ]


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_edge_lines_are_read_alike_by_the_helper_and_here(share: float, tmp_path: Path, monkeypatch, helpers) -> None:
    monkeypatch.setattr(codex, "LARGE_LINE_BYTES", 2000)  # (before the fork: the helper has it too)
    header = _line("session_meta", {"id": "s", "cwd": "/", "model_provider": "openai"})
    first, second = _edge_lines("a"), _edge_lines("b")
    filler = [_line("event_msg", {"type": "agent_reasoning", "text": f"f{i}"}) for i in range(30)]
    lines = [header, *first, *filler, *second, b'{"timestamp":"t","type":"event_msg","payload":{"type":"agen']  # a cut last line
    path = _write(tmp_path / "edge.jsonl", lines)
    monkeypatch.setattr(par, "CHUNK_BYTES", 300)  # about a line a chunk
    _loader_stops_at(monkeypatch, int(path.stat().st_size * share))
    serial = _serial(path, monkeypatch)
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", 1)
    parallel = load(str(path), fingerprint=False)
    h = helpers[-1]
    assert h is not None and h.appended == len(h.bounds) - 1 - h.own_below
    assert (h.appended > 0) == (share < 1)
    problems = {d.problem for d in serial.diagnostics}
    assert {"skipped_by_runtime", "malformed_json", "invalid_utf8", "not_an_object", "glued_objects", "truncated_line"} <= problems, problems
    assert any(r.type == "compacted" for r in serial.records) and any(not r.runtime_visible for r in serial.records)
    _same_everything(serial, parallel)
    assert len({r.message.route for r in serial.records if r.role == "assistant" and r.message.route is not None}) >= 3  # type: ignore[union-attr]


# -- damaged rollouts (the fuzz campaign's own mutations)


@pytest.mark.parametrize("seed", range(8))
def test_damaged_rollouts_read_the_same(seed: int, tmp_path: Path, monkeypatch, helpers) -> None:
    from tests.fuzz.mutations import Context, apply, choose

    sources = _files()
    rng = random.Random(seed)
    path = tmp_path / "case.jsonl"
    path.write_bytes(rng.choice(sources).read_bytes())
    apply(path, choose(rng, "codex", allow_huge=False), Context())
    serial, parallel = _both(path, monkeypatch, rng.choice((200, 500, 1000)))
    _same_everything(serial, parallel)


# -- the helper dies, the file grows


def test_a_helper_killed_mid_way_leaves_the_rest_to_this_process(tmp_path: Path, monkeypatch, helpers) -> None:
    from benchmarks.gen_formats import generate

    path = Path(generate("codex", 1, 5, str(tmp_path / "codex.jsonl")))
    real = par._pwrite_all
    done = [0]

    def dies(*args: Any) -> Any:  # in the helper only: it dies after its third chunk
        done[0] += 1
        if done[0] > 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args)

    monkeypatch.setattr(par, "_pwrite_all", dies)
    _loader_stops_at(monkeypatch, 0)  # (every chunk but the first is the helper's, until it dies)
    serial, parallel = _both(path, monkeypatch, 32 << 10)
    h = helpers[-1]
    assert h is not None and h.pid == 0 and 0 < h.appended <= 3 < len(h.bounds) - 2
    _same_everything(serial, parallel)


def test_a_file_appended_while_it_is_read_is_read_to_its_size_at_the_start(tmp_path: Path, monkeypatch, helpers) -> None:
    from benchmarks.gen_formats import generate

    path = Path(generate("codex", 1, 7, str(tmp_path / "codex.jsonl")))
    data = path.read_bytes()
    cut = data.rfind(b"\n", 0, len(data) - 5000) + 1
    grown = tmp_path / "grown.jsonl"
    grown.write_bytes(data[:cut] + data[cut : cut + 40])  # its last line half written
    serial = _serial(grown, monkeypatch)
    real = par.fork_helper  # (the spy)

    def fork_then_append(*args: Any, **kw: Any) -> Any:
        h = real(*args, **kw)
        with open(grown, "ab") as out:  # the writer goes on meanwhile
            out.write(data[cut + 40 :])
        return h

    monkeypatch.setattr(par, "fork_helper", fork_then_append)
    monkeypatch.setattr(par, "CHUNK_BYTES", 32 << 10)
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", 1)
    parallel = load(str(grown), fingerprint=False)
    assert grown.stat().st_size == len(data)
    assert helpers[-1] is not None and helpers[-1].appended > 0
    assert serial.diagnostics[-1].problem == "truncated_line"
    _same_everything(serial, parallel)


# -- the app's helper, forked ahead


def test_a_helper_forked_ahead_is_taken_over_by_the_apps_load(tmp_path: Path, monkeypatch) -> None:
    import threading

    from benchmarks.gen_formats import generate

    path = Path(generate("codex", 1, 3, str(tmp_path / "codex.jsonl")))
    serial = _serial(path, monkeypatch)
    monkeypatch.setattr(par, "CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", 1 << 16)
    monkeypatch.setattr(par, "_single_threaded", lambda: True)  # (other tests' idle threads)
    try:
        assert fork_reader_ahead(str(path))
        st = path.stat()
        helper = par._ahead[(st.st_dev, st.st_ino)][0]
        out: list[Ledger] = []
        t = threading.Thread(target=lambda: out.append(load(str(path), fingerprint=False)))
        t.start()
        t.join()
    finally:
        par.discard_ahead()
    assert par._ahead == {} and helper.pid == 0 and helper.appended > 0
    _same_everything(serial, out[0])
