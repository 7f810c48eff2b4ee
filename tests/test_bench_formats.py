"""The benchmark files of `benchmarks.gen_formats`: deterministic, loadable, fresh ids, an unbroken chain."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks import formats as bench
from benchmarks.gen_formats import SPECS, _pi_conversation, generate
from inspector.formats import load

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared")
pytestmark = pytest.mark.skipif(not os.path.isdir(os.path.join(SHARED, "real_sessions")), reason="needs ../shared")


@pytest.mark.parametrize("fmt", list(SPECS))
def test_generated_file_loads_clean_with_its_compactions(tmp_path, fmt):
    path = generate(fmt, 1.0, seed=7, path=str(tmp_path / f"a.{SPECS[fmt].ext}"))
    again = generate(fmt, 1.0, seed=7, path=str(tmp_path / f"b.{SPECS[fmt].ext}"))
    if SPECS[fmt].writer == "jsonl":
        assert Path(path).read_bytes() == Path(again).read_bytes()
    led = load(path)
    # NextClaw's legacy store sends the last 50 messages (getHistory): what a long file says of it
    window = {"outside_history_window", "unmatched_tool_call"} if fmt == "nextclaw_legacy" else set()
    assert [d for d in led.diagnostics if d.severity != "info" and d.problem not in window] == []
    spec = SPECS[fmt]
    assert sum(1 for r in led.records if r.checkpoint is not None) == (spec.compactions if spec.in_force is None else spec.in_force)
    ids = [r.id for r in led.records if r.id]
    assert len(ids) == len(set(ids))
    assert bench.floor(fmt, path) > 0


@pytest.mark.parametrize("fmt", list(SPECS))
def test_every_compaction_of_a_generated_file_summarizes_what_it_removes(tmp_path, fmt):
    """The shapes users have: each compaction a sound one of its runtime (nothing falls into a hole,
    no summary carried forward, every ADK range ending on an event's time, as ADK's own do)."""
    from inspector.analysis import analyze

    path = generate(fmt, 1.0, seed=7, path=str(tmp_path / f"a.{SPECS[fmt].ext}"))
    report = analyze(load(path))
    assert report.coverage_counts()["hole"] == 0
    # NextClaw's legacy store sends the last 50 messages (getHistory), whatever a long file holds.
    expected = {"dropped_tool_call", "history_window"} if fmt == "nextclaw_legacy" else set()
    assert {f.code for f in report.findings} <= expected


@pytest.mark.parametrize("fmt", ["pi", "claude_code", "openclaw"])
def test_parent_chain_runs_from_the_header_to_the_last_record(tmp_path, fmt):
    led = load(generate(fmt, 0.3, seed=3, path=str(tmp_path / f"x.{SPECS[fmt].ext}")))
    by_id = {r.id: r for r in led.records if r.id}
    roots = [r for r in led.records if r.id and not r.parent_id]
    dangling = [r for r in led.records if r.parent_id and r.parent_id not in by_id]
    assert dangling == []
    assert len(roots) <= 2  # pi/OpenClaw: the first entry; Claude Code: the first record and each compact boundary


def test_maka_file_records_every_compaction_and_the_store_holds_the_widest(tmp_path):
    """maka keeps one checkpoint in force (the projection's widest); the others are still in the run ledgers."""
    import sqlite3

    path = generate("maka", 1.0, seed=7, path=str(tmp_path / "m.sqlite"))
    con = sqlite3.connect(path)
    written = con.execute("SELECT count(*) FROM core_agent_run_events WHERE event_type='history_compact_checkpoint_recorded'").fetchone()[0]
    con.close()
    assert written == SPECS["maka"].compactions
    superseded = [d for d in load(path).diagnostics if "is not the one in force" in d.message]
    assert len(superseded) == SPECS["maka"].compactions - 1


@pytest.mark.parametrize("fmt", ["adk_go_sqlite", "adk_go_json", "maka", "nextclaw", "nextclaw_legacy"])
def test_seed_runtime_files_carry_pi_real_conversation(tmp_path, fmt):
    """The seed runtimes' files are filled from pi's real sessions: a real prompt is in them, and the
    floor decodes every row's (every line's) JSON."""
    path = generate(fmt, 0.5, seed=5, path=str(tmp_path / f"s.{SPECS[fmt].ext}"))
    led = load(path)
    assert led.format == fmt.removesuffix("_sqlite").removesuffix("_json")
    real = {m["text"] for turn in _pi_conversation() for m in turn if m["role"] == "user"}
    prompts = [b.text for r in led.records if r.role == "user" and r.message for b in r.message.blocks if b.type == "text"]
    assert len(prompts) > 3 and all(p in real for p in prompts)
    assert bench.floor(fmt, path) >= len(led.records) // 2


def test_missing_file_is_generated_in_a_process_of_its_own(tmp_path, monkeypatch, capsys):
    """A child's peak RSS starts at its parent's high-water mark (Linux, through fork and exec): a
    file generated in the measuring process made every later measurement report at least that
    process's peak (600 MB for formats of a few MB). So the harness never generates in-process."""
    import benchmarks.gen_formats as gen

    def in_process(*a, **k):
        raise AssertionError("generated in the measuring process")

    monkeypatch.setattr(gen, "generate", in_process)
    seed = 900_000 + os.getpid() % 1000
    path = gen.default_path("claude_code", 0.2, seed)
    try:
        assert bench.main(["--mb", "0.2", "--formats", "claude_code", "--seed", str(seed), "--repeat", "1", "--json"]) == 0
        import json

        (res,) = json.loads(capsys.readouterr().out)
        assert os.path.exists(path) and res["records"] > 0 and not res["errors"]
    finally:
        if os.path.exists(path):
            os.remove(path)


def test_the_report_prices_the_ledgers_page_faults_at_this_machines_cost_of_one():
    """The timed ratios move with the price of a page fault (a VM whose host backs memory lazily pays
    several times bare metal's): the report measures it and says what the ledger's faults cost."""
    fault = bench.page_fault_seconds(1)
    assert fault is not None and 1e-8 < fault < 1e-3
    row = {
        "format": "pi", "file_bytes": 10 * bench.MB, "records": 5, "floor_cpu": 0.1, "floor_wall": 0.1, "load_cpu": 0.15,
        "load_wall": 0.15, "pipeline_cpu": 0.2, "pipeline_helper_cpu": 0.0, "pipeline_wall": 0.2, "cpu_ratio": 2.0,
        "cpu_pass": False, "wall_ratio": 2.0, "wall_pass": False, "peak_rss": 20 * bench.MB, "rss_ratio": 2.0,
        "rss_pass": True, "pipeline_sys": 0.02, "floor_sys": 0.0, "pipeline_faults": 10_000, "helper_peak_rss": None,
        "errors": [],
    }
    text = bench.render([row], 1, 2e-6)
    assert "about 0.02 s at this machine's 2.0 us a fault, 10% of its CPU" in text
    assert "a page fault (first touch of fresh memory) costs 2.00 us" in text



@pytest.mark.parametrize("fmt", ["nextclaw", "maka"])
def test_bounds_watch_every_text_the_analysis_counts_and_every_event_it_digests(tmp_path, fmt):
    """`benchmarks.bounds` times what the output requires: the texts it captures are those whose
    counts the report holds, and maka's digest pass is fed the events its checkpoints cover."""
    from benchmarks import bounds
    from inspector.analysis import analyze, tokens
    from inspector.formats import maka

    path = generate(fmt, 1.0, seed=7, path=str(tmp_path / f"a.{SPECS[fmt].ext}"))
    texts, fed = bounds._texts_counted(path)
    report = analyze(load(path, fingerprint=False))
    counted = [it.tokens for it in report.context if it.tokens_from == "tiktoken" and it.tokens is not None]
    tok = tokens.get_tokenizer()
    assert texts and sum(tok.count(t) for t in texts) == sum(counted)
    widest = 0
    if fmt == "maka":  # the widest checkpoint's coverage (the digest pass stops there)
        import sqlite3

        import orjson

        con = sqlite3.connect(path)
        rows = con.execute("SELECT record_json FROM core_agent_run_events WHERE event_type=?", (maka.CHECKPOINT_EVENT,)).fetchall()
        con.close()
        widest = max(orjson.loads(r)["data"]["checkpoint"]["coverage"]["eventCount"] for (r,) in rows)
    assert len(fed) == widest
    assert tokens.Tokenizer.count_many.__name__ == "count_many" and maka.PrefixDigests.feed.__name__ == "feed"  # put back
    out = bounds.measure_here(path)
    assert out["distinct_texts"] == len(set(t for t in texts if t)) and out["events_digested"] == widest


def test_bounds_capture_each_text_once_whichever_entry_point_counts_it(tmp_path):
    """A short batch is counted text by text (`Tokenizer.count_many` calls `count`): captured once."""
    from benchmarks import bounds
    from inspector.analysis import engine, tokens

    path = generate("pi", 1.0, seed=7, path=str(tmp_path / "a.jsonl"))
    real = engine.count_tokens

    def direct_and_short(led, items, tok):  # one item counted alone, two as a short batch
        tok.count("alone")
        tok.count_many(["a", "b"])
        return real(led, items, tok)

    engine.count_tokens = direct_and_short
    try:
        texts, _ = bounds._texts_counted(path)
    finally:
        engine.count_tokens = real
    assert texts[:3] == ["alone", "a", "b"] and texts.count("a") == 1 and tokens.Tokenizer.count.__name__ == "count"
