"""The layer contract (DESIGN §7): ledger < formats < analysis < compaction < store | providers <
cli | tui, checked by import-linter on the contracts in pyproject.toml (each exception commented
there). tests/test_import_hygiene.py checks the same core at run time."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports() -> str:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:  # pragma: no cover - a test dependency (pyproject [test])
        pytest.fail("lint-imports is not installed: pip install -e '.[test]'")
    return exe


def _run(config: Path | None = None) -> subprocess.CompletedProcess[str]:
    args = [_lint_imports(), "--no-cache"]
    if config is not None:
        args += ["--config", str(config)]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=240)


def test_the_layers_are_kept() -> None:
    p = _run()
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 broken" in p.stdout


def test_the_contract_would_catch_an_upward_import(tmp_path: Path) -> None:
    """The same packages with formats put above analysis: analysis imports formats, so
    import-linter must report the contract broken (the check is live, not vacuous)."""
    config = tmp_path / "upside_down.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "inspector"\n\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "formats above analysis"\ntype = "layers"\n'
        'layers = ["inspector.formats", "inspector.analysis"]\n'
    )
    p = _run(config)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "BROKEN" in p.stdout and "inspector.analysis" in p.stdout
