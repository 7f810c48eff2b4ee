"""The functional core never imports the shell (DESIGN §7): no Textual, httpx or rich."""

from __future__ import annotations

import subprocess
import sys

CORE = ["inspector.ledger.model", "inspector.formats", "inspector.analysis", "inspector.analysis.export",
        "inspector.compaction.protocol", "inspector.compaction.types", "inspector.compaction.prompts",
        "inspector.compaction.cut", "inspector.compaction.chunks", "inspector.compaction.entries",
        "inspector.compaction.recovery", "inspector.compaction.plan", "inspector.compaction.execute",
        "inspector.compaction.export"]
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


def test_hygiene_check_would_catch_a_leak() -> None:
    code = "import sys\nimport inspector.cli.render\nprint('rich' in sys.modules)\n"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "True"
