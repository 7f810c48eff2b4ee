"""Codex compacts a resumed rollout before the user's turn when the usage it resumes with is at or
over its auto-compact limit (`inspector/formats/codex_resume.py`): `analyze` says so, and the real
Codex 0.169 (tests/peers/codex_resume) does exactly that on each side of the line.

The harness's config.toml sets `model_context_window = 100000`, so Codex's limit is 90,000 and the
rollout it writes records an effective window of 95,000: every variant here records that window, so
the limit `analyze` derives from the file is the one Codex applies.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.formats import codex_resume, load
from tests.peers.codex_resume import resume as harness
from tests.peers.codex_resume.fake_model import is_compaction
from tests.test_codex_accepts import PEER, codex  # noqa: F401 - the fixture

PROMPT = "RESUME-PROBE: carry on."


def _lines(src: Path) -> list[dict]:
    return [json.loads(x) for x in src.read_bytes().splitlines() if x.strip()]


def _write(objs: list[dict], dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("".join(json.dumps(o, separators=(",", ":"), ensure_ascii=False) + "\n" for o in objs))
    return dst


def _with_usage(objs: list[dict], total: int) -> list[dict]:
    """OBJS with the last recorded usage's total set to TOTAL (the window left at 95,000)."""
    k = max(i for i, o in enumerate(objs) if o.get("type") == "event_msg" and o["payload"].get("type") == "token_count" and o["payload"].get("info"))
    out = json.loads(json.dumps(objs))
    info = out[k]["payload"]["info"]
    info["last_token_usage"]["total_tokens"] = total
    info["model_context_window"] = 95_000
    return out


def _renumbered(objs: list[dict]) -> list[dict]:
    """Ordinals counted again, 0 on (the peer numbers every line: Codex reads them in order)."""
    return [{**o, "ordinal": i} for i, o in enumerate(objs)]


def _finding(path: Path) -> str | None:
    report = analyze(load(str(path), fingerprint=False))
    got = [f for f in report.findings if f.code == "compacts_first"]
    return got[0].message if got else None


def _codex_compacts(path: Path, scratch: Path) -> bool:
    r = harness.resume(path, PROMPT, scratch)
    assert r.returncode == 0 and r.requests, r.stderr[-1500:]
    return is_compaction(r.requests[0])


def test_the_limit_and_the_window_codex_derives() -> None:
    assert codex_resume.model_window(95_000) == 100_000
    assert codex_resume.model_window(258_400) == 272_000  # gpt-5's 272,000 as 0.169 records it
    assert codex_resume.model_window(272_000) == 272_000  # ... and as Codex of 2025 recorded it
    assert codex_resume.auto_compact_limit(100_000) == 90_000


@pytest.mark.parametrize(("total", "compacts"), [(89_990, False), (90_000, True)])
def test_the_recorded_usage_at_the_limit_compacts_first(codex: Path, tmp_path: Path, total: int, compacts: bool) -> None:  # noqa: F811
    """The peer rollout ends on the model's reply: only the recorded usage counts. 10 tokens under
    the limit Codex sends the turn; at the limit it compacts first, and `analyze` says which."""
    f = _write(_with_usage(_lines(PEER), total), tmp_path / "r.jsonl")
    said = _finding(f)
    assert (said is not None) is compacts, said
    if said is not None:
        assert f"{total:,} tokens" in said and "limit of 90,000" in said and "100,000-token window" in said
    assert _codex_compacts(f, tmp_path / "run") is compacts


def test_what_came_after_the_models_last_item_counts(codex: Path, tmp_path: Path) -> None:  # noqa: F811
    """A user message written after the model's last reply (its turn never answered), about 2,000
    tokens by Codex's estimate: with the recorded usage 1,000 under the limit, Codex compacts first;
    2,300 under, it does not. `analyze` agrees on both."""
    objs = _lines(PEER)
    tail = objs[-1]
    objs.append({"timestamp": tail["timestamp"], "ordinal": tail["ordinal"] + 1, "type": "response_item",
                 "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x" * 8000}]}})  # fmt: skip
    for total, compacts in ((89_000, True), (87_700, False)):
        f = _write(_with_usage(objs, total), tmp_path / str(total) / "r.jsonl")
        assert (_finding(f) is not None) is compacts, (total, _finding(f))
        assert _codex_compacts(f, tmp_path / str(total) / "run") is compacts, total


def test_encrypted_reasoning_before_the_last_user_message_counts(codex: Path, tmp_path: Path) -> None:  # noqa: F811
    """Codex takes a resumed usage not to hold the encrypted reasoning before the last user message
    and adds its estimate (3/4 of the ciphertext less 650 bytes, 4 bytes a token: 7,338 tokens for
    40,000 characters): with the recorded usage 3,669 under the limit it compacts first, 7,638
    under it does not."""
    objs = _lines(PEER)
    k = max(i for i, o in enumerate(objs) if o.get("type") == "response_item" and o["payload"].get("role") == "user")
    enc = base64.b64encode(bytes(range(256)) * 117)[:40_000].decode()
    objs.insert(k, {"timestamp": objs[k]["timestamp"], "ordinal": 0, "type": "response_item",
                    "payload": {"type": "reasoning", "summary": [], "content": None, "encrypted_content": enc}})  # fmt: skip
    objs = _renumbered(objs)
    for total, compacts in ((90_000 - 3_669, True), (90_000 - 7_638, False)):
        f = _write(_with_usage(objs, total), tmp_path / str(total) / "r.jsonl")
        assert (_finding(f) is not None) is compacts, (total, _finding(f))
        assert _codex_compacts(f, tmp_path / str(total) / "run") is compacts, total
    # ... unless the usage says it holds them (`last_usage_includes_reasoning`, which our own
    # token_count sets; the peer's says false, a Codex of 2025 wrote none)
    said = _with_usage(objs, 90_000 - 3_669)
    for o in said:
        if o.get("type") == "event_msg" and o["payload"].get("type") == "token_count" and o["payload"].get("info"):
            o["payload"]["info"]["last_usage_includes_reasoning"] = True
    f = _write(said, tmp_path / "included" / "r.jsonl")
    assert _finding(f) is None
    assert _codex_compacts(f, tmp_path / "included" / "run") is False


def test_a_rollout_that_records_no_usage_or_no_window_gets_no_verdict(tmp_path: Path) -> None:
    """Without a recorded window the limit is the user's model's, which the file does not tell."""
    objs = _with_usage(_lines(PEER), 200_000)
    for o in objs:
        if o.get("type") == "event_msg" and o["payload"].get("type") == "token_count" and o["payload"].get("info"):
            o["payload"]["info"]["model_context_window"] = None
    assert _finding(_write(objs, tmp_path / "r.jsonl")) is None
    assert _finding(PEER) is None  # (its last usage, 10,502 tokens, is far under its limit)


def test_a_repaired_rollout_is_no_longer_compacted_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The finding's own advice: the `token_count` a repair writes after its checkpoint records the
    new history's size, so the repaired rollout is under the limit (the real Codex resumes it without
    a compaction: test_codex_accepts' overflowed-rollout test)."""
    from inspector.cli.main import main

    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    f = _write(_with_usage(_lines(PEER), 150_000), tmp_path / "r.jsonl")
    assert _finding(f) is not None
    assert main(["repair", str(f), "--strategy", "recover", "--write", "--json"]) == 0
    capsys.readouterr()
    assert _finding(f) is None


def test_a_rollout_codex_refuses_to_resume_is_not_said_to_be_compacted_first(tmp_path: Path) -> None:
    """Codex stops before any turn on a rollout it cannot resume: no compaction to warn of."""
    objs = _with_usage(_lines(PEER), 150_000)
    objs[0]["payload"]["history_mode"] = "default"  # (a history mode Codex does not know: refused)
    report = analyze(load(str(_write(objs, tmp_path / "r.jsonl")), fingerprint=False))
    assert {f.code for f in report.findings} >= {"resume_refused"}
    assert "compacts_first" not in {f.code for f in report.findings}
