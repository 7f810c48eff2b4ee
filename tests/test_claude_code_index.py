"""Claude Code's index-first loader (issue 15): a file read from disk keeps an index of each clean
line (its message's role, stop reason, calls and results) and reads the content and unknown fields
again when asked for; what it then gives is what parsing every line whole (`build`) gives."""

from __future__ import annotations

from inspector.formats import claude_code, load
from inspector.formats.jsonl import read_lines
from tests.test_incremental import corpus, format_of

INDEX_FIELDS = ("seq", "line", "kind", "type", "id", "parent_id", "timestamp", "offset", "length", "role",
                "stop_reason", "source_role", "call_ids", "result_id", "runtime_visible", "never_sent")  # fmt: skip


def transcripts() -> list[str]:
    return [f for f in corpus() if format_of(f) == "claude_code"]


def test_stream_reads_content_on_demand_and_equals_the_whole_parse():
    files = transcripts()
    assert len(files) >= 5
    lazy = messages = 0
    for path in files:
        led = load(path)
        lazy += sum(1 for r in led.records if r.kind == "message" and r._message is None)
        messages += sum(1 for r in led.records if r.kind == "message")
        whole = claude_code.build(read_lines(path)[0], path)
        assert [d.message for d in led.diagnostics] == [d.message for d in whole.diagnostics], path
        assert (led.leaf_seq, led.resolved_path, led.session_id) == (whole.leaf_seq, whole.resolved_path, whole.session_id)
        for r, w in zip(led.records, whole.records, strict=True):
            assert [getattr(r, k) for k in INDEX_FIELDS] == [getattr(w, k) for k in INDEX_FIELDS], (path, r.line)
            assert r.message == w.message, (path, r.line)
            assert r.extra == w.extra, (path, r.line)
            assert r.checkpoint == w.checkpoint, (path, r.line)
    assert lazy > messages // 2  # most messages were not materialized by the load
