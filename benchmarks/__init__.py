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


def generate_apart(module: str, *args: str) -> None:
    """Run a generator (`benchmarks.<module>`, with its command-line `args`) in a process of its own.

    Never in the measuring process: on Linux a child's peak RSS (ru_maxrss, as `wait4` and the
    child's own getrusage report it) starts at its parent's high-water mark, through fork and exec
    alike. A parent that had built a 600 MB file in memory made every process it spawned afterwards
    report a peak of at least 600 MB, whatever that process used."""
    import os
    import subprocess
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run([sys.executable, "-m", f"benchmarks.{module}", *args], cwd=repo, check=True, stdout=subprocess.DEVNULL)
