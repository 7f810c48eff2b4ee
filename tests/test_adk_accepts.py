"""google-adk 2.13 accepts what we write (issue 14, point 3).

Every session of the ADK peer corpus (`../shared/peers/adk/corpus/`: SqliteSessionService `.db`,
DatabaseSessionService v1 `.v1.db`, `model_dump()` `.json`) is repaired with each strategy that has
something to install: a database in place (`inspector repair --write`), a dump as a new file
(`--out`). Then the real ADK (`.adk-venv`, installed by tests/install_adk.sh) opens each repaired
session with its own session service and runs one more turn through a Runner against a scripted
model (tests/adk_resume.py, one process for every file). The first request ADK sends must be
exactly what `inspector context --json` predicted on the repaired store, then the judge's own
message: our summary (role model) first, then the kept events in order, every function call and
response by id, no orphaned response, no unanswered call.

A missing ADK fails the test naming the cause (never a skip).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.compaction.plan import Outlook
from inspector.formats import load
from tests.conftest import REPO, SHARED

CORPUS = SHARED / "peers" / "adk" / "corpus"
# Sessions the real ADK wrote for the differential campaign, kept because they hold incidents
# (holes at a timestamp tie, a live question summarized) or disagreed once (tests/differential/).
FIXTURES = Path(__file__).parent / "differential" / "fixtures"
ADK_PYTHON = Path(os.environ.get("ADK_PYTHON") or REPO / ".adk-venv" / "bin" / "python")
DRIVER = Path(__file__).with_name("adk_resume.py")
JUDGE_MESSAGE = "[judge] please continue."
# The corpus records no window (ADK does not know one): these leave each strategy work to do.
BUDGETS = ["--window", "8000", "--reserve", "1000"]
STRATEGIES: tuple[tuple[str, ...], ...] = (
    ("compact", "--keep-recent", "400"),
    ("resummarize", "--keep-recent", "400"),
    ("recover", "--keep-recent", "400"),
)
_ROLE = {"assistant": "model", "user": "user", "tool": "user"}
REFUSED: dict[str, str] = {}  # case -> why the plan says the checkpoint cannot be written
HEALED: list[str] = []  # cases whose holes / orphans the plan promised to bring to 0


def _sessions() -> list[tuple[str, Path, str]]:
    """(name, file, backend) of every session to repair."""
    out: list[tuple[str, Path, str]] = []
    if CORPUS.is_dir():
        for p in sorted(CORPUS.iterdir()):
            if p.suffix in (".db", ".json") and not p.name.endswith(".oracle.json") and p.name != "INDEX.json":
                backend = "json" if p.suffix == ".json" else ("v1" if p.name.endswith(".v1.db") else "sqlite")
                out.append((p.name.replace(".", "-"), p, backend))
    for d in sorted(FIXTURES.glob("adk-*")):
        backend = json.loads((d / "scenario.json").read_text()).get("backend")
        out.append((d.name, d / "session.db", "v1" if backend == "database_v1" else "sqlite"))
    return out


@pytest.fixture(scope="module")
def adk_python() -> str:
    if not ADK_PYTHON.exists():
        pytest.fail(f"google-adk is not installed at {ADK_PYTHON}: run tests/install_adk.sh (or tests/install_runtimes.sh)")
    r = subprocess.run([str(ADK_PYTHON), "-c", "import google.adk; print(google.adk.__version__)"], capture_output=True, text=True)
    if r.returncode != 0 or r.stdout.strip() != "2.13.0":
        pytest.fail(f"{ADK_PYTHON} has no google-adk 2.13.0 ({(r.stdout + r.stderr).strip()[-300:]}): run tests/install_adk.sh")
    return str(ADK_PYTHON)


def _repair(name: str, src: Path, backend: str, tmp: Path, capsys: pytest.CaptureFixture[str]) -> list[tuple[str, Path, str]]:
    """(case, repaired file, backend) for each strategy with work on this session."""
    out: list[tuple[str, Path, str]] = []
    for strategy, *opts in STRATEGIES:
        args = ["--strategy", strategy, *opts, *BUDGETS]
        assert main(["plan", str(src), *args, "--json"]) == 0, src.name
        plan = json.loads(capsys.readouterr().out)
        if plan["action"] == "noop":
            continue
        label = f"{name}.{strategy}"
        if any("cannot be written" in n for n in plan["notes"]):
            REFUSED[label] = next(n for n in plan["notes"] if "cannot be written" in n)
            continue
        f = tmp / f"{label}{src.suffix}"
        if src.suffix == ".json":
            code = main(["repair", str(src), *args, "--out", str(f), "--json"])
        else:
            shutil.copyfile(src, f)
            os.chmod(f, 0o644)
            code = main(["repair", str(f), *args, "--write", "--json"])
        io = capsys.readouterr()
        assert code == 0, (label, io.err)
        if plan["after"]["holes"] == 0 and plan["after"]["orphans"] == 0 and (plan["before"]["holes"] or plan["before"]["orphans"]):
            HEALED.append(label)
        out.append((label, f, backend))
    return out


def _sent_id(call_id: str | None) -> str | None:
    """ADK strips the ids it generated ("adk-…") before a request goes out
    (flows/llm_flows/tools/_functions.py:76, utils/_function_call_names.py:19)."""
    return None if call_id is None or call_id.startswith("adk-") else call_id


def _block_parts(rec: Any, calls: list[str] | None = None) -> list[dict[str, Any]]:
    """REC's parts as the comparison sees them (CALLS: the calls the prediction keeps, where ADK
    drops a call no response answers, `drop_orphaned_function_calls`: never one without an id)."""
    out: list[dict[str, Any]] = []
    for b in rec.message.blocks:
        if b.type == "tool_call" and calls is not None and b.call_id and b.call_id not in calls:
            continue
        if b.type == "tool_call":
            out.append({"function_call": [_sent_id(b.call_id), b.name]})
        elif b.type == "tool_result":
            out.append({"function_response": [_sent_id(b.call_id), b.name]})
        elif b.type in ("text", "thinking"):
            out.append({"text": b.text})
        elif b.type == "other":  # (a part of another shape, sent as it is: `_adk_parts`' "other")
            out.append({"other": None})
    return out


OTHER_AGENT_PREAMBLE = "For context:"  # ADK's OTHER_AGENT_CONTEXT_PREAMBLE opens it (_fencing.py)


def _adk_parts(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One content's parts; another agent's event presented as user context (flows/llm_flows/
    context/_fencing.py `_present_other_agent_message`) as the agent it quotes."""
    texts = [p.get("text") or "" for p in parts]
    if texts and texts[0].startswith(OTHER_AGENT_PREAMBLE):
        authors = {t[1 : t.index("]")] for t in texts[1:] if t.startswith("[") and "]" in t}
        return [{"other_agent": sorted(authors)}]
    out: list[dict[str, Any]] = []
    for p in parts:
        if "function_call" in p:
            out.append({"function_call": [p["function_call"]["id"], p["function_call"]["name"]]})
        elif "function_response" in p:
            out.append({"function_response": [p["function_response"]["id"], p["function_response"]["name"]]})
        elif "text" in p:
            out.append({"text": p["text"]})
        else:
            out.append({"other": None})
    return out


def _summary_parts(f: Path, rec: Any) -> list[dict[str, Any]]:
    """A summary's parts as its compaction event stores them (`compacted_content`, which ADK sends
    as it is: flows/llm_flows/context/_compaction.py:119-128), held to the summary inspector reads
    in them (its text parts, joined). A content of no parts is sent with none (`[]`), where the
    summary inspector sends is empty."""
    assert rec.checkpoint is not None
    if f.suffix == ".json":
        event = next(e for e in json.loads(f.read_bytes())["events"] if e.get("id") == rec.id)
    else:
        with contextlib.closing(sqlite3.connect(f"file:{f}?mode=ro", uri=True)) as con:
            (data,) = con.execute("SELECT event_data FROM events WHERE id = ?", (rec.id,)).fetchone()
        event = json.loads(data)
    parts = event["actions"]["compaction"]["compacted_content"].get("parts") or []
    assert "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str)) == rec.checkpoint.summary, rec.id
    return _adk_parts(parts)


def predicted_contents(f: Path, items: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The contents `inspector context --json`'s ITEMS (of F) say ADK sends next, spelled as ADK's contents."""
    led = load(str(f))
    recs = led.records
    agent = (led.header or {}).get("next_agent")
    out: list[tuple[str, list[dict[str, Any]]]] = []
    for it in items:
        rec = recs[it["seq"]]
        author = str((rec.extra or {}).get("author") or "")
        if it["kind"] == "summary":
            out.append(("model", _summary_parts(f, rec)))
        elif it["role"] == "user" and (rec.role != "user" or (agent and author not in (agent, "user"))):  # another agent's turn, as context
            out.append(("user", [{"other_agent": [author]}]))
        else:
            assert rec.message is not None, it
            out.append((_ROLE[it["role"]], _block_parts(rec, it.get("tool_call_ids") if it["role"] == "assistant" else None)))
    return out


def predicted(f: Path, capsys: pytest.CaptureFixture[str]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The contents `inspector context --json` says ADK sends next, spelled as ADK's contents."""
    assert main(["context", str(f), "--json"]) == 0
    return predicted_contents(f, json.loads(capsys.readouterr().out)["messages"])


def resumed_as_predicted(sent: Any, want: list[tuple[str, list[dict[str, Any]]]], judge_sent: bool = True) -> Any:
    """What ADK sent on resuming a repaired session (SENT: the driver's contents, or its error)
    against the WANTed contents (`predicted`): None when it is exactly those, then the judge's
    message (none, JUDGE_SENT false: inspector says the user's next message is left out, a task's
    `next_message_scoped`); else the first difference (ADK's error, the last content, or where
    they part)."""
    if isinstance(sent, dict):
        return sent["error"]
    actual = [(c["role"], _adk_parts(c["parts"])) for c in sent]
    if judge_sent and (not actual or actual[-1] != ("user", [{"text": JUDGE_MESSAGE}])):
        return {"last content is not the judge's message": actual[-1:]}
    if not judge_sent:
        actual.append(("user", [{"text": JUDGE_MESSAGE}]))  # (compared below as if sent: it must not be)
    if actual[:-1] != want:
        at = next((i for i, (a, b) in enumerate(zip(actual, want, strict=False)) if a != b), min(len(actual) - 1, len(want)))
        return {"first difference at": at, "adk": actual[at : at + 2], "predicted": want[at : at + 2], "lengths": (len(actual) - 1, len(want))}
    return None


def _job(label: str, f: Path, backend: str) -> dict[str, Any]:
    led = load(str(f))
    h = led.header or {}
    return {"name": label, "path": str(f), "backend": backend, "app": h["app_name"], "user": h["user_id"],
            "session": led.session_id, "agent": h.get("next_agent") or "assistant"}


def test_adk_resumes_every_repaired_session(adk_python: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    sessions = _sessions()
    assert sessions, f"the ADK peer corpus is missing ({CORPUS})"
    cases = [c for name, src, backend in sessions for c in _repair(name, src, backend, tmp_path, capsys)]
    assert {backend for _, _, backend in cases} == {"sqlite", "v1", "json"}
    expected = {label: predicted(f, capsys) for label, f, _ in cases}  # before ADK appends its turn
    healed = {label: Outlook.of(analyze(load(str(f)), window=8000, reserve=1000)) for label, f, _ in cases if label in HEALED}
    assert HEALED and all(o.holes == 0 and o.orphans == 0 for o in healed.values()), HEALED
    jobs = [_job(label, f, backend) for label, f, backend in cases]
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    r = subprocess.run([adk_python, str(DRIVER), str(tmp_path / "jobs.json"), str(tmp_path / "out.json")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads((tmp_path / "out.json").read_text())
    wrong: dict[str, Any] = {}
    for label, want in expected.items():
        problem = resumed_as_predicted(got[label], want)
        if problem is not None:
            wrong[label] = problem
        else:
            assert want[0][0] == "model" and want[0][1][0]["text"], label  # our summary leads
    assert not wrong, json.dumps(wrong, indent=1, default=str)[:6000]
    print(f"google-adk 2.13.0 resumed {len(cases)} repaired sessions as predicted; healed (holes/orphans to 0): "
          f"{HEALED}; refused: {REFUSED or 'none'}")
    assert len(cases) >= 20, len(cases)


V0 = REPO / "tests" / "data" / "adk" / "token_threshold.v0.db"  # (tests/test_adk.py's; made by make_v0.py beside it)


def test_v0_stores_adk_cannot_resume_are_refused_as_adk_refuses_them(adk_python: str, tmp_path: Path) -> None:
    """Real v0 stores (committed to public repositories by google-adk's early users) lack columns
    today's ADK selects: the real ADK 2.13 fails on every session of them ("no such column"), and
    inspector says so (`resume_refused`). A store without the session's app or user state row (its
    `append_event` requires both, made by create_session) fails at the first append: so too. A v0
    store with every column and both rows reads as before."""
    cases = {"complete": ((), True), "old": (("custom_metadata", "input_transcription", "output_transcription"), True),
             "stateless": ((), False)}  # fmt: skip
    jobs = []
    for label, (drop, rows) in cases.items():
        db = tmp_path / f"{label}.db"
        db.write_bytes(V0.read_bytes())
        with contextlib.closing(sqlite3.connect(db)) as con:
            for col in drop:
                con.execute(f"ALTER TABLE events DROP COLUMN {col}")
            if rows:
                app, user = con.execute("SELECT app_name, user_id FROM sessions").fetchone()
                con.execute("INSERT INTO app_states VALUES (?, '{}', '2026-01-01 00:00:00.000000')", (app,))
                con.execute("INSERT INTO user_states VALUES (?, ?, '{}', '2026-01-01 00:00:00.000000')", (app, user))
            con.commit()
        refusals = [d.message for d in load(str(db)).diagnostics if d.problem == "resume_refused"]
        if label == "complete":
            assert not refusals, refusals
        elif label == "old":
            assert len(refusals) == 1 and "no column custom_metadata, input_transcription, output_transcription" in refusals[0]
        else:
            assert [m.split(": ")[1].split(" for ")[0] for m in refusals] == ["no app state row (app_states)", "no user state row (user_states)"]
        jobs.append(_job(label, db, "v1"))
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    r = subprocess.run([adk_python, str(DRIVER), str(tmp_path / "jobs.json"), str(tmp_path / "out.json")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads((tmp_path / "out.json").read_text())
    assert isinstance(got["complete"], list) and got["complete"], got["complete"]
    assert isinstance(got["old"], dict) and "no such column" in got["old"]["error"], got["old"]
    assert isinstance(got["stateless"], dict) and "App state missing" in got["stateless"]["error"], got["stateless"]
