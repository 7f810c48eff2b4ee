"""The functional core never imports the shell (DESIGN §7): no Textual, httpx or rich."""

from __future__ import annotations

import subprocess
import sys

CORE_PACKAGES = ("inspector.ledger", "inspector.formats", "inspector.analysis", "inspector.compaction")


def _core_modules() -> list[str]:
    """Every module of the core packages, found on disk: a new module is checked without a list
    to update."""
    import importlib.util
    import pkgutil

    out: list[str] = []
    for pkg in CORE_PACKAGES:
        spec = importlib.util.find_spec(pkg)
        assert spec is not None and spec.submodule_search_locations
        out.append(pkg)
        out += [f"{pkg}.{m.name}" for m in pkgutil.iter_modules(spec.submodule_search_locations)]
    return out


CORE = _core_modules()
SHELL = ("textual", "httpx", "rich")


def test_core_imports_no_shell_module() -> None:
    code = (
        "import sys\n"
        f"for m in {CORE!r}: __import__(m)\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {SHELL!r})\n"
        "print(','.join(bad))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "", f"core pulled in: {p.stdout.strip()}"


def test_the_core_list_covers_the_new_modules() -> None:
    for m in ("inspector.analysis.simulate", "inspector.formats.adk", "inspector.formats.claude_code",
              "inspector.formats.codex", "inspector.analysis.engine", "inspector.compaction.plan"):
        assert m in CORE


def test_hygiene_check_would_catch_a_leak() -> None:
    code = "import sys\nimport inspector.cli.render\nprint('rich' in sys.modules)\n"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "True"
