"""The Codex writer (issue 14 §2): the `compacted` line, its event and the `token_count` after them,
read back as the checkpoint;
`repair --out` / `--write` / `undo` through the file writeback. (That Codex itself resumes from it:
tests/test_codex_accepts.py.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.formats import codex, codex_writer, load
from tests.conftest import SHARED, need_shared

PEER = SHARED / "peers" / "codex" / "corpus" / "auto_compact.jsonl"
SHORT = ["--strategy", "compact", "--keep-recent", "100"]


@pytest.fixture
def rollout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    f = tmp_path / "rollout.jsonl"
    shutil.copyfile(PEER, f)
    return f


def _appended(f: Path, n: int) -> list[dict]:
    return [json.loads(x) for x in f.read_bytes().splitlines()[-n:]]


def test_the_lines_are_codex_compacted_and_its_event(rollout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = load(str(rollout))
    original = [json.loads(x) for x in rollout.read_bytes().splitlines()]
    assert main(["repair", str(rollout), *SHORT, "--write", "--json"]) == 0
    capsys.readouterr()
    cp, ev, tc = _appended(rollout, 3)
    assert [cp["ordinal"], ev["ordinal"], tc["ordinal"]] == [original[-1]["ordinal"] + k for k in (1, 2, 3)]
    assert cp["type"] == "compacted" and cp["id"].startswith(codex_writer.ID_PREFIX)
    rh = cp["payload"]["replacement_history"]
    # Our summary first, in Codex's own shape, then the kept item exactly as the rollout holds it.
    assert rh[0] == {"type": "message", "role": "user", "content": [{"type": "input_text", "text": cp["payload"]["message"]}]}
    assert cp["payload"]["message"].startswith(codex.SUMMARY_PREFIX)
    kept = [o["payload"] for o in original if o["type"] == "response_item" and o["payload"].get("id") == "msg_fake_e0fc89bc7fa8"]
    assert rh[1:] == kept
    assert ev["type"] == "event_msg" and ev["payload"]["type"] == "item_completed"
    assert ev["payload"]["item"] == {"type": "ContextCompaction", "id": cp["id"]}
    assert ev["payload"]["thread_id"] == before.session_id
    # Read back as the checkpoint: the kept item is the record itself, retained, not new content.
    report = analyze(load(str(rollout)))
    last = report.checkpoints[-1]
    assert last.record.id == cp["id"]
    led = report.ledger
    rep = last.record.checkpoint.replacement
    assert rep[0].kind == "summary" and rep[0].seq is None
    assert rep[1].seq is not None and led.records[rep[1].seq].id == "msg_fake_e0fc89bc7fa8"
    assert report.coverage_counts()["hole"] == 0 and [it.kind for it in report.context][:2] == ["message", "summary"]


def test_the_plan_reads_its_lines_back_as_a_reload_does(rollout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The plan's "after" is the written file's: the kept item is matched against the history
    before the checkpoint (read alone, it would be new content and the record a hole)."""
    assert main(["plan", str(rollout), *SHORT, "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    out = rollout.with_name("copy.jsonl")
    assert main(["repair", str(rollout), *SHORT, "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    written = analyze(load(str(out)))
    assert planned["after"]["coverage"] == {k: v for k, v in written.coverage_counts().items()}
    assert planned["after"]["coverage"]["retained"] >= 1


def test_out_leaves_the_rollout_and_write_undo_restores_its_bytes(rollout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = rollout.read_bytes()
    out = rollout.with_name("copy.jsonl")
    assert main(["repair", str(rollout), *SHORT, "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    assert rollout.read_bytes() == data and out.read_bytes().startswith(data)
    assert [o["type"] for o in _appended(out, 3)] == ["compacted", "event_msg", "event_msg"]
    assert main(["repair", str(rollout), *SHORT, "--write", "--json"]) == 0
    capsys.readouterr()
    assert rollout.read_bytes() != data
    assert main(["undo", str(rollout)]) == 0
    assert rollout.read_bytes() == data


def test_a_rollout_without_its_session_meta_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    f = tmp_path / "headless.jsonl"
    f.write_bytes(b"".join(PEER.read_bytes().splitlines(keepends=True)[1:]))
    data = f.read_bytes()
    assert main(["repair", str(f), *SHORT, "--write"]) == 2
    assert "thread id" in capsys.readouterr().err
    assert f.read_bytes() == data


def test_plan_on_a_prefix_and_on_an_unwritable_tail_says_so_instead_of_crashing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by the seed-7 campaign: the writer re-reads the rollout to copy the kept items, and
    (a) with `--at` it compared the whole file with the prefix analysed ("changed since"), (b) a
    kept record that is not one response_item line raised a LoadError through `plan`."""
    path = need_shared(PEER)
    assert main(["plan", "--at", "40", "--strategy", "recover", str(path)]) == 0, capsys.readouterr().err
    lines = path.read_text().splitlines()
    last = max(i for i, ln in enumerate(lines) if '"type":"response_item"' in ln.replace(" ", ""))
    glued = tmp_path / "glued.jsonl"  # the last response item glued to a copy of itself: two objects, one line
    glued.write_text("\n".join([*lines[:last], lines[last] + lines[last], *lines[last + 1 :]]) + "\n")
    code = main(["plan", "--strategy", "recover", str(glued)])
    err = capsys.readouterr().err
    assert code in (0, 2) and "Traceback" not in err


def _token_counts(rows: list[dict]) -> list[dict]:
    return [o for o in rows if o.get("type") == "event_msg" and o["payload"].get("type") == "token_count"]


def _estimate(instructions: str, history: list[dict]) -> int:
    """Codex's estimate of base instructions and a history of text items: 4 bytes a token, rounded up."""
    return sum(-(-len(t.encode()) // 4) for t in [instructions, *(json.dumps(p, ensure_ascii=False, separators=(",", ":")) for p in history)])


def test_the_token_count_after_the_checkpoint_is_the_one_codex_writes_after_its_own(rollout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Codex resumes with the usage of the rollout's last token_count: after our checkpoint it is
    one in the shape Codex writes after its own compaction (the peer rollout's own, line 41), the
    totals, window and rate limits carried, the last usage nothing but the new history's size as
    Codex estimates it; the analysis counts the next request from its content, not that usage."""
    original = [json.loads(x) for x in rollout.read_bytes().splitlines()]
    theirs = original[40]  # (Codex's own, after its first compaction)
    assert theirs["payload"]["type"] == "token_count" and original[36]["type"] == "compacted"
    last = _token_counts(original)[-1]["payload"]
    assert main(["repair", str(rollout), *SHORT, "--write", "--json"]) == 0
    capsys.readouterr()
    cp, _, tc = _appended(rollout, 3)
    assert tc["timestamp"] == cp["timestamp"] and tc["type"] == "event_msg"
    ours = tc["payload"]

    def shape(v: object) -> object:
        return {k: shape(x) for k, x in v.items()} if isinstance(v, dict) else type(v).__name__

    assert shape(ours) == shape(theirs["payload"])
    assert ours["info"]["total_token_usage"] == last["info"]["total_token_usage"]
    assert ours["info"]["model_context_window"] == last["info"]["model_context_window"] == 95_000
    assert ours["rate_limits"] == last["rate_limits"] and ours["info"]["last_usage_includes_reasoning"] is True
    used = ours["info"]["last_token_usage"]
    assert {k: v for k, v in used.items() if k != "total_tokens"} == dict.fromkeys(used.keys() - {"total_tokens"}, 0)
    led = load(str(rollout))
    assert used["total_tokens"] == _estimate(led.instructions, cp["payload"]["replacement_history"])
    assert 4_000 < used["total_tokens"] < 8_000  # (Codex wrote 6,107 and 6,114 for its own, of about this size)
    # Read back: the checkpoint is still the last one, and the next request is counted from its
    # items (no reply after the checkpoint: no usage to anchor on).
    report = analyze(led)
    assert report.checkpoints[-1].record.id == cp["id"] and report.tokens_source == "tiktoken"


def test_a_rollout_that_recorded_no_usage_gets_one_as_codex_writes_from_nothing(
    rollout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex's compaction writes a token_count whether or not it held usage (from a zero info):
    so does the repair, the totals zero, the window and rate limits unknown (null)."""
    rows = [x for x in rollout.read_bytes().splitlines() if b'"type":"token_count"' not in x]
    rollout.write_bytes(b"\n".join(rows) + b"\n")
    assert main(["repair", str(rollout), *SHORT, "--window", "95000", "--write", "--json"]) == 0
    capsys.readouterr()
    cp, _, tc = _appended(rollout, 3)
    info = tc["payload"]["info"]
    assert set(info["total_token_usage"].values()) == {0} and info["model_context_window"] is None
    assert tc["payload"]["rate_limits"] is None
    assert info["last_token_usage"]["total_tokens"] == _estimate(load(str(rollout)).instructions, cp["payload"]["replacement_history"])
    assert main(["undo", str(rollout)]) == 0
    assert rollout.read_bytes() == b"\n".join(rows) + b"\n"


def test_codex_estimate_discounts_images_and_encrypted_reasoning() -> None:
    """An inline image counts as Codex's fixed 7,373 bytes, not its base64; encrypted reasoning as
    3/4 of its ciphertext less 650 bytes (history.rs `estimate_response_item_model_visible_bytes`)."""
    data = "data:image/png;base64," + "A" * 400_000
    msg = {"type": "message", "role": "user", "content": [{"type": "input_image", "image_url": data}]}
    plain = len(json.dumps(msg, separators=(",", ":")).encode())
    assert codex_writer._item_bytes(msg) == plain - 400_000 + 7373
    out = {"type": "function_call_output", "call_id": "c", "output": [{"type": "input_image", "image_url": data}]}
    assert codex_writer._item_bytes(out) == len(json.dumps(out, separators=(",", ":")).encode()) - 400_000 + 7373
    linked = {"type": "message", "role": "user", "content": [{"type": "input_image", "image_url": "https://x/y.png"}]}
    assert codex_writer._item_bytes(linked) == len(json.dumps(linked, separators=(",", ":")).encode())
    reasoning = {"type": "reasoning", "summary": [], "encrypted_content": "x" * 4000}
    assert codex_writer._item_bytes(reasoning) == 4000 * 3 // 4 - 650
    assert codex_writer._codex_estimate("abcde", [reasoning]) == 2 + (2350 + 3) // 4
