"""The suite's schedule (tests/conftest.py `SLOWEST_FIRST`): every file it starts first exists, so a
renamed one is not silently queued last again (CI's 15 minutes)."""

from __future__ import annotations

from tests.conftest import REPO, SLOWEST_FIRST


def test_every_file_scheduled_first_exists() -> None:
    missing = [name for name in SLOWEST_FIRST if not (REPO / "tests" / name).is_file()]
    assert not missing, f"tests/conftest.py SLOWEST_FIRST names files that are gone: {missing}"
    assert len(set(SLOWEST_FIRST)) == len(SLOWEST_FIRST)
