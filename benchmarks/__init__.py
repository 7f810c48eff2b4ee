"""Benchmarks: one command each (see the README). A report, never a test."""

from __future__ import annotations


def precompile(repo: str) -> None:
    """inspector's bytecode written into its __pycache__, as an installed copy has it (pip compiles a
    wheel's modules; an editable install's are cached at its first run), so that no measured process
    compiles source. compileall writes even under PYTHONDONTWRITEBYTECODE (set on these machines),
    which only stops the import system writing it."""
    import compileall
    import os

    compileall.compile_dir(os.path.join(repo, "inspector"), quiet=1)
