from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("INSPECTOR_SHARED", REPO.parent / "shared"))
SAMPLES = REPO / "sample_sessions"


@pytest.fixture(autouse=True)
def _offline_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests count tokens the way a machine without internet does: deterministic everywhere."""
    monkeypatch.setenv("INSPECTOR_FORCE_OFFLINE_TOKENIZER", "1")


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (Textual's Pilot) run on asyncio through anyio's pytest plugin (anyio comes
    with httpx)."""
    return "asyncio"
