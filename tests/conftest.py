from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("INSPECTOR_SHARED", REPO.parent / "shared"))
SAMPLES = REPO / "sample_sessions"


def need_shared(path: Path) -> Path:
    """The real sessions and the peers' corpora are part of the test setup (README: the checkout
    expects ../shared next to it). A missing one fails the test that needs it, naming the path:
    a skip would let a broken setup pass as green."""
    if not path.exists():
        pytest.fail(f"{path} is missing: the tests expect ../shared next to the checkout (or INSPECTOR_SHARED)", pytrace=False)
    return path


# The test files that take longest, slowest first (seconds of one run of the suite on two workers,
# `pytest -n 2 --junitxml`, summed per file: session 35; the two OpenClaw probe files since they
# resume three and two probes live; the other files marked ~ from a later `--durations`). With
# `--dist loadfile` a file runs whole on one worker; pytest-xdist queues files in collection order (`--no-loadscope-reorder`,
# pyproject), so these start first and the many short files fill in around them, instead of a real
# runtime's probes (one test of minutes) starting last, alone on a core, while the other worker idles.
SLOWEST_FIRST: tuple[str, ...] = (
    "test_openclaw_accepts.py",  # 122 s: the real OpenClaw on six repaired stores
    "test_differential.py",  # 95 s
    "test_bad_input_types.py",  # 88 s
    "test_codex_repair_probe.py",  # 85 s
    "test_claude_code_line_rule.py",  # 57 s
    "test_openclaw_line_rule.py",  # ~55 s
    "test_openclaw_runtime_context.py",  # ~55 s: the real OpenClaw resuming stores with runtime-context rows
    "test_claude_code_repair_probe.py",  # 43 s
    "test_adk_heads.py",  # 42 s
    "test_tui_lazy_static.py",  # 41 s
    "test_openclaw_heartbeat.py",  # ~40 s: the real OpenClaw resuming two heartbeat stores
    "test_fuzz.py",  # 36 s
    "test_codex_line_rule.py",  # ~35 s
    "test_incremental_stores.py",  # 34 s
    "test_openclaw_leaf_rule.py",  # ~32 s
    "test_large_lines.py",  # 29 s
    "test_incremental.py",  # 29 s
    "test_claude_code_compacts_first.py",  # ~29 s: 32 resumes by the real CLI
    "test_fuzz_live.py",  # 26 s
    "test_pi_line_rule.py",  # 26 s
    "test_openclaw_transcript_only.py",  # ~25 s
    "test_openclaw_turns.py",  # ~25 s: the real OpenClaw resuming a store of every shape, its transcript policy run by node
    "test_tui_session.py",  # 22 s
    "test_adk_repair_probe.py",  # ~21 s
    "test_differential_cc.py",  # ~19 s
    "test_claude_code_accepts.py",  # ~18 s
    "test_pi_compacts_first.py",  # ~15 s: 27 resumes by the real pi
    "test_differential_codex.py",  # ~13 s
    "test_pi_repair_probe.py",  # ~11 s
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first (`SLOWEST_FIRST`), the rest in their order (a stable sort)."""
    rank = {name: k for k, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda it: rank.get(it.path.name, len(rank)))


@pytest.fixture(autouse=True)
def _offline_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests count tokens the way a machine without internet does: deterministic everywhere."""
    monkeypatch.setenv("INSPECTOR_FORCE_OFFLINE_TOKENIZER", "1")


@pytest.fixture(autouse=True)
def _own_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's scans (the CLI's, the triage browser's) go to an index of its own, never the
    user's cache dir."""
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "inspector-cache"))


@pytest.fixture(autouse=True)
def _runtime_homes_at_their_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that points HOME at a scratch folder finds each runtime's default places there,
    whatever `$NEXTCLAW_HOME`, `$OPENCLAW_STATE_DIR`, ... the machine sets (`Format.homes`)."""
    from inspector.formats import registry

    for f in registry.REGISTRY:
        for home in f.homes:
            for o in home.overrides:
                monkeypatch.delenv(o.variable, raising=False)


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (Textual's Pilot) run on asyncio through anyio's pytest plugin (anyio comes
    with httpx)."""
    return "asyncio"


# How long a TUI test waits for the app to get somewhere. By the clock, not a count of pauses: a
# count ran out on a loaded machine (CI beside a benchmark), where each pause takes longer.
APP_WAIT_S = 30.0


async def app_reaches(pilot, cond, what: str = "the app", seconds: float = APP_WAIT_S) -> None:  # type: ignore[no-untyped-def]
    """Pause until `cond()` holds (returns as soon as it does); fails naming `what` after `seconds`."""
    import time

    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened within {seconds:.0f} s: {what}")
        await pilot.pause(0.02)
