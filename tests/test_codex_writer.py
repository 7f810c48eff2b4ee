"""The Codex writer (issue 14 §2): the `compacted` line and its event, read back as the checkpoint;
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
    cp, ev = _appended(rollout, 2)
    assert [cp["ordinal"], ev["ordinal"]] == [original[-1]["ordinal"] + 1, original[-1]["ordinal"] + 2]
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
    assert [o["type"] for o in _appended(out, 2)] == ["compacted", "event_msg"]
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
