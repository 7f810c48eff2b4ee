#!/usr/bin/env python3
"""Write the sample sessions: each one reproduces a compaction incident from the seeds.

    python sample_sessions/generate.py             # rewrite sample_sessions/{pi,native}/ and README.md
    python sample_sessions/generate.py --out DIR   # write the same bytes under DIR instead

Every sample is one story (a coding agent working on `invoicer`, a small Python billing service)
built once and rendered twice: as a pi v3 session file (the entry shapes pi 0.73 writes, copied
from shared/peers/pi/corpus) and as a native ledger (docs/native-format.md: checkpoints state
their boundary, represents and retains explicitly).

Deterministic on purpose: ids are hashes of (sample, counter), clocks start at a fixed instant and
advance by hashed jitter, tool outputs are computed from an in-memory copy of the repository. No
randomness, no wall clock, no environment: a regeneration is byte-identical.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------- ids, time

_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def digest(*parts: object) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()


def b62(*parts: object, n: int) -> str:
    v = int(digest(*parts), 16)
    out = []
    for _ in range(n):
        v, r = divmod(v, 62)
        out.append(_B62[r])
    return "".join(out)


def jitter(key: object, lo: int, hi: int) -> int:
    """A deterministic integer in [lo, hi] derived from key."""
    return lo + int(digest("jitter", key)[:8], 16) % (hi - lo + 1)


def session_uuid(name: str) -> str:
    """A UUIDv7-shaped id, like the ones pi writes into the header."""
    h = digest("session", name)
    return f"{h[:8]}-{h[8:12]}-7{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def epoch_ms(t: datetime) -> int:
    return int(t.timestamp() * 1000)


def est_tokens(text: str) -> int:
    """pi's own estimate: chars / 4."""
    return (len(text) + 3) // 4


def dumps(obj: object) -> str:
    """JSON.stringify's output: compact, non-ASCII kept as is."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------------------- models


@dataclass(frozen=True)
class Model:
    provider: str
    model_id: str
    price_in: float  # USD per million input tokens
    price_out: float
    system_tokens: int  # pi's system prompt + tool schemas, as the provider counts them
    local: bool = False


GPT41 = Model("openai", "gpt-4.1", 2.0, 8.0, 2_310)
QWEN_LOCAL = Model("ollama", "qwen2.5-coder:7b", 0.0, 0.0, 1_180, local=True)
PI_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
PI_SUMMARY_SUFFIX = "\n</summary>"

# ---------------------------------------------------------------------------------------- repository

FILES: dict[str, str] = {
    "pyproject.toml": """[project]
name = "invoicer"
version = "2.7.0"
requires-python = ">=3.11"
dependencies = ["httpx>=0.27", "psycopg[binary]>=3.1"]

[project.optional-dependencies]
dev = ["pytest>=8", "pytest-httpx>=0.30", "ruff>=0.6", "mypy>=1.10"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-q"

[tool.ruff]
line-length = 100
""",
    "CHANGELOG.md": """# Changelog

## 2.7.0
- Nightly export uploads totals to the ledger API v2.
- `INVOICER_RETRY_ATTEMPTS` controls how often a failed upload is retried.

## 2.6.1
- Fix: invoices with no line items were exported with an empty total.
""",
    "docs/configuration.md": """# Configuration

All settings come from the environment.

| setting | variable | default |
|---|---|---|
| export_dir | INVOICER_EXPORT_DIR | /var/lib/invoicer/exports |
| batch_size | INVOICER_BATCH_SIZE | 500 |
| retry_attempts | INVOICER_RETRY_ATTEMPTS | 3 |
| timeout | INVOICER_TIMEOUT | 10 |
| ledger_url | INVOICER_LEDGER_URL | https://ledger.internal/api/v2 |
""",
    "invoicer/__init__.py": '''"""invoicer: nightly invoice exports and ledger uploads."""

__version__ = "2.7.0"
''',
    "invoicer/config.py": '''"""Runtime settings, read from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    export_dir: str
    batch_size: int = 500
    retry_attempts: int = 3
    timeout: float = 10.0
    ledger_url: str = "https://ledger.internal/api/v2"


def load_settings(env: dict[str, str] | None = None) -> Settings:
    env = dict(os.environ if env is None else env)
    return Settings(
        export_dir=env.get("INVOICER_EXPORT_DIR", "/var/lib/invoicer/exports"),
        batch_size=int(env.get("INVOICER_BATCH_SIZE", "500")),
        retry_attempts=int(env.get("INVOICER_RETRY_ATTEMPTS", "3")),
        timeout=float(env.get("INVOICER_TIMEOUT", "10")),
        ledger_url=env.get("INVOICER_LEDGER_URL", "https://ledger.internal/api/v2"),
    )
''',
    "invoicer/models.py": '''"""Invoices and line items as the exporters see them."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal


@dataclass(frozen=True)
class LineItem:
    sku: str
    quantity: int
    unit_price: Decimal

    @property
    def amount(self) -> Decimal:
        return self.unit_price * self.quantity


@dataclass
class Invoice:
    number: str
    customer_id: str
    currency: str = "EUR"
    items: list[LineItem] = field(default_factory=list)

    @property
    def total(self) -> Decimal:
        return sum((item.amount for item in self.items), Decimal("0"))
''',
    "invoicer/store.py": '''"""Read invoices from the billing database."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal

from invoicer.db import connect
from invoicer.models import Invoice, LineItem

QUERY = """
    SELECT i.number, i.customer_id, i.currency, l.sku, l.quantity, l.unit_price
    FROM invoices i JOIN line_items l ON l.invoice_number = i.number
    WHERE i.issued_on = %s
    ORDER BY i.number, l.position
"""


def invoices_for_day(day: dt.date) -> Iterator[Invoice]:
    with connect() as conn, conn.cursor() as cur:
        cur.execute(QUERY, (day,))
        current: Invoice | None = None
        for number, customer_id, currency, sku, quantity, unit_price in cur.fetchall():
            if current is None or current.number != number:
                if current is not None:
                    yield current
                current = Invoice(number, customer_id, currency)
            current.items.append(LineItem(sku, quantity, Decimal(unit_price)))
        if current is not None:
            yield current
''',
    "invoicer/db.py": '''"""Database connections (psycopg 3)."""

from __future__ import annotations

import os

import psycopg


def connect() -> psycopg.Connection:
    return psycopg.connect(os.environ.get("INVOICER_DSN", "postgresql:///billing"))
''',
    "invoicer/exporters/__init__.py": "",
    "invoicer/exporters/csv_writer.py": '''"""Legacy exporter: builds the whole CSV in memory, then writes it."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from invoicer.models import Invoice

COLUMNS = ("number", "customer_id", "currency", "total")


class CsvInvoiceWriter:
    def __init__(self, path: str) -> None:
        self.path = path

    def write_all(self, invoices: Iterable[Invoice]) -> int:
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(COLUMNS)
        count = 0
        for inv in invoices:
            writer.writerow((inv.number, inv.customer_id, inv.currency, f"{inv.total:.2f}"))
            count += 1
        with open(self.path, "w", newline="") as fh:
            fh.write(buf.getvalue())
        return count
''',
    "invoicer/exporters/stream_writer.py": '''"""Streaming exporter: writes rows in batches so a large export stays flat in memory."""

from __future__ import annotations

import csv
from typing import TextIO

from invoicer.exporters.csv_writer import COLUMNS
from invoicer.models import Invoice


class StreamingInvoiceWriter:
    def __init__(self, fh: TextIO, batch_size: int = 500) -> None:
        self._fh = fh
        self._writer = csv.writer(fh)
        self._batch: list[tuple[str, ...]] = []
        self.batch_size = batch_size
        self.rows_written = 0
        self._writer.writerow(COLUMNS)

    def add(self, inv: Invoice) -> None:
        self._batch.append((inv.number, inv.customer_id, inv.currency, f"{inv.total:.2f}"))
        if len(self._batch) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        self._writer.writerows(self._batch)
        self.rows_written += len(self._batch)
        self._batch.clear()

    def close(self) -> None:
        self._fh.flush()
''',
    "invoicer/http/__init__.py": "",
    "invoicer/http/retry.py": '''"""Retry policy for calls to the ledger API."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

RETRYABLE = frozenset({429, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0

    def should_retry(self, status: int, attempt: int) -> bool:
        return status in RETRYABLE and attempt < self.attempts

    def delay(self, attempt: int) -> float:
        base = min(self.backoff * 2**attempt, self.max_backoff)
        return base * (0.5 + random.random())

    def sleep(self, attempt: int) -> None:
        time.sleep(self.delay(attempt))
''',
    "invoicer/http/client.py": '''"""Thin client for the ledger API's batch endpoint."""

from __future__ import annotations

import httpx

from invoicer.config import Settings
from invoicer.http.retry import RetryPolicy


class LedgerClient:
    def __init__(self, settings: Settings, policy: RetryPolicy | None = None) -> None:
        self.settings = settings
        self.policy = policy or RetryPolicy(attempts=settings.retry_attempts)
        self._http = httpx.Client(base_url=settings.ledger_url, timeout=settings.timeout)

    def post_batch(self, rows: list[dict[str, str]]) -> dict:
        attempt = 0
        while True:
            resp = self._http.post("/batches", json={"rows": rows})
            if resp.status_code < 400:
                return resp.json()
            if not self.policy.should_retry(resp.status_code, attempt):
                resp.raise_for_status()
            self.policy.sleep(attempt)
            attempt += 1
''',
    "invoicer/jobs/__init__.py": "",
    "invoicer/jobs/nightly.py": '''"""Nightly export job: dump the day's invoices and push their totals to the ledger."""

from __future__ import annotations

import datetime as dt
import os

from invoicer.config import Settings
from invoicer.exporters.csv_writer import CsvInvoiceWriter
from invoicer.http.client import LedgerClient
from invoicer.store import invoices_for_day


def run_nightly_export(settings: Settings, client: LedgerClient, day: dt.date) -> int:
    path = os.path.join(settings.export_dir, f"invoices-{day:%Y%m%d}.csv")
    invoices = list(invoices_for_day(day))
    count = CsvInvoiceWriter(path).write_all(invoices)
    client.post_batch([{"number": inv.number, "total": f"{inv.total:.2f}"} for inv in invoices])
    return count
''',
    "invoicer/cli.py": '''"""Command line entry point: `python -m invoicer.cli export --day 2026-03-02`."""

from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import replace

from invoicer.config import load_settings
from invoicer.http.client import LedgerClient
from invoicer.jobs.nightly import run_nightly_export


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="invoicer")
    sub = parser.add_subparsers(dest="command", required=True)
    export = sub.add_parser("export", help="export one day of invoices")
    export.add_argument("--day", type=dt.date.fromisoformat, default=dt.date.today())
    export.add_argument("--timeout", type=float, default=None)
    args = parser.parse_args(argv)
    settings = load_settings()
    if args.timeout is not None:
        settings = replace(settings, timeout=args.timeout)
    count = run_nightly_export(settings, LedgerClient(settings), args.day)
    print(f"exported {count} invoices for {args.day}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
''',
    "tests/conftest.py": """import pytest

from invoicer.config import Settings


@pytest.fixture
def settings(tmp_path):
    return Settings(export_dir=str(tmp_path), batch_size=2, retry_attempts=2, timeout=0.5)
""",
    "tests/test_config.py": """from invoicer.config import load_settings


def test_defaults():
    s = load_settings({})
    assert s.batch_size == 500
    assert s.timeout == 10.0


def test_env_overrides():
    s = load_settings({"INVOICER_TIMEOUT": "2.5", "INVOICER_BATCH_SIZE": "50"})
    assert s.timeout == 2.5
    assert s.batch_size == 50
""",
    "tests/test_client.py": """import httpx
import pytest

from invoicer.config import Settings
from invoicer.http.client import LedgerClient
from invoicer.http.retry import RetryPolicy


def test_post_batch_returns_json(httpx_mock):
    httpx_mock.add_response(json={"accepted": 2})
    client = LedgerClient(Settings(export_dir="/tmp", timeout=0.1))
    assert client.post_batch([{"number": "INV-1"}, {"number": "INV-2"}]) == {"accepted": 2}


def test_gives_up_after_attempts(httpx_mock):
    for _ in range(3):
        httpx_mock.add_response(status_code=503)
    client = LedgerClient(Settings(export_dir="/tmp"), RetryPolicy(attempts=2, backoff=0))
    with pytest.raises(httpx.HTTPStatusError):
        client.post_batch([])
""",
    "tests/test_retry.py": """from invoicer.http.retry import RetryPolicy


def test_retries_on_503_until_attempts_exhausted():
    policy = RetryPolicy(attempts=3)
    assert [policy.should_retry(503, a) for a in range(4)] == [True, True, True, False]


def test_does_not_retry_client_errors():
    assert not RetryPolicy().should_retry(404, 0)


def test_delay_is_capped():
    policy = RetryPolicy(backoff=1.0, max_backoff=4.0)
    assert all(policy.delay(10) <= 4.0 for _ in range(50))
""",
    "tests/test_stream_writer.py": """import io
from decimal import Decimal

from invoicer.exporters.stream_writer import StreamingInvoiceWriter
from invoicer.models import Invoice, LineItem


def _invoice(n: int) -> Invoice:
    return Invoice(f"INV-{n:05d}", "C-17", items=[LineItem("SKU-1", 2, Decimal("9.50"))])


def test_header_written_first():
    buf = io.StringIO()
    StreamingInvoiceWriter(buf, batch_size=2)
    assert buf.getvalue().splitlines() == ["number,customer_id,currency,total"]


def test_flushes_full_batches():
    buf = io.StringIO()
    w = StreamingInvoiceWriter(buf, batch_size=2)
    for n in range(4):
        w.add(_invoice(n))
    assert w.rows_written == 4


def test_close_flushes_partial_batch():
    buf = io.StringIO()
    w = StreamingInvoiceWriter(buf, batch_size=10)
    for n in range(3):
        w.add(_invoice(n))
    w.close()
    assert w.rows_written == 3
""",
    "tests/test_nightly.py": """import datetime as dt
from decimal import Decimal
from unittest import mock

from invoicer.jobs.nightly import run_nightly_export
from invoicer.models import Invoice, LineItem


def test_exports_and_uploads(settings):
    inv = Invoice("INV-00001", "C-17", items=[LineItem("SKU-1", 1, Decimal("12.00"))])
    client = mock.Mock()
    with mock.patch("invoicer.jobs.nightly.invoices_for_day", return_value=[inv]):
        assert run_nightly_export(settings, client, dt.date(2026, 3, 2)) == 1
    client.post_batch.assert_called_once_with([{"number": "INV-00001", "total": "12.00"}])
""",
    "tests/test_cli.py": """from unittest import mock

from invoicer import cli
from invoicer.config import Settings


def test_timeout_flag_overrides_settings(tmp_path):
    with (
        mock.patch.object(cli, "load_settings", return_value=Settings(export_dir=str(tmp_path))),
        mock.patch.object(cli, "run_nightly_export", return_value=0) as run,
        mock.patch.object(cli, "LedgerClient"),
    ):
        assert cli.main(["export", "--day", "2026-03-02", "--timeout", "3"]) == 0
    assert run.call_args.args[0].timeout == 3.0
""",
}


@dataclass
class ToolUse:
    """One tool call and the result the tool returned."""

    name: str
    args: dict
    output: str
    is_error: bool = False
    details: dict | None = None
    seconds: float = 0.1  # how long the tool ran
    call_id: str = ""


class Workspace:
    """An in-memory checkout of the repository; tool results are computed from it."""

    def __init__(self) -> None:
        self.files = dict(FILES)

    def line_of(self, path: str, needle: str) -> int:
        for n, line in enumerate(self.files[path].splitlines(), 1):
            if needle in line:
                return n
        raise KeyError(f"{needle!r} not in {path}")

    def test_names(self, path: str) -> list[str]:
        return re.findall(r"^def (test_\w+)", self.files[path], re.M)

    def read(self, path: str) -> ToolUse:
        return ToolUse("read", {"path": path}, self.files[path], seconds=0.02)

    def write(self, path: str, content: str) -> ToolUse:
        self.files[path] = content
        n = len(content.encode())
        return ToolUse("write", {"path": path, "content": content}, f"Successfully wrote {n} bytes to {path}")

    def edit(self, path: str, *pairs: tuple[str, str]) -> ToolUse:
        old_content = content = self.files[path]
        for old, new in pairs:
            assert content.count(old) == 1, f"edit of {path}: {old!r} occurs {content.count(old)} times"
            content = content.replace(old, new)
        self.files[path] = content
        diff, first = edit_diff(old_content, content)
        edits = [{"oldText": o, "newText": n} for o, n in pairs]
        return ToolUse(
            "edit",
            {"path": path, "edits": edits},
            f"Successfully replaced {len(pairs)} block(s) in {path}.",
            details={"diff": diff, "firstChangedLine": first},
            seconds=0.03,
        )

    def grep(self, pattern: str, *roots: str) -> ToolUse:
        rx = re.compile(pattern)
        hits = [
            f"{path}:{n}:{line}"
            for path in sorted(self.files)
            if any(path.startswith(r) for r in roots)
            for n, line in enumerate(self.files[path].splitlines(), 1)
            if rx.search(line)
        ]
        quoted = pattern.replace('"', '\\"')
        command = f'grep -rnE "{quoted}" {" ".join(roots)}'
        return bash(command, "\n".join(hits) + "\n" if hits else "", 0 if hits else 1, 0.05)

    def pytest(self, *paths: str, failures: dict[str, tuple[str, str]] | None = None) -> ToolUse:
        """`python -m pytest -q PATHS`; failures: test name -> (failing source line, E line)."""
        failures = failures or {}
        tests = [(p, t) for p in paths for t in self.test_names(p)]
        target = " ".join(paths) if paths else ""
        out = pytest_output(self, tests, failures, digest("pytest", target, len(tests)))
        command = f"python -m pytest -q {target}".rstrip()
        return bash(command, out, 1 if failures else 0, 0.4 + len(tests) * 0.07)

    def pytest_all(self, failures: dict[str, tuple[str, str]] | None = None) -> ToolUse:
        tests = sorted(p for p in self.files if p.startswith("tests/test_"))
        use = self.pytest(*tests, failures=failures)
        use.args = {"command": "python -m pytest -q"}
        return use

    def changed(self) -> list[str]:
        return sorted(p for p in self.files if FILES.get(p) != self.files[p])

    def diff_stat(self) -> ToolUse:
        rows, plus, minus = [], 0, 0
        for path in self.changed():
            old = FILES.get(path, "").splitlines()
            diff = list(difflib.ndiff(old, self.files[path].splitlines()))
            p, m = sum(d[0] == "+" for d in diff), sum(d[0] == "-" for d in diff)
            rows.append((path, p, m))
            plus, minus = plus + p, minus + m
        width = max(len(r[0]) for r in rows)
        lines = [f" {path.ljust(width)} | {p + m:>2} {'+' * p}{'-' * m}" for path, p, m in rows]
        lines.append(f" {len(rows)} files changed, {plus} insertions(+), {minus} deletions(-)")
        return bash("git diff --stat", "\n".join(lines) + "\n", 0, 0.03)

    def status(self) -> ToolUse:
        lines = [f"{' M' if p in FILES else '??'} {p}" for p in self.changed()]
        return bash("git status --short", "\n".join(lines) + "\n", 0, 0.03)


def bash(command: str, output: str, exit_code: int = 0, seconds: float = 0.2) -> ToolUse:
    """pi's bash tool: a non-zero exit is an error result carrying the output and the exit code."""
    text = output or "(no output)"
    if exit_code:
        text = (
            f"{output}\n\nCommand exited with code {exit_code}"
            if output
            else f"Command exited with code {exit_code}"
        )
    return ToolUse("bash", {"command": command}, text, is_error=bool(exit_code), seconds=seconds)


def edit_diff(old: str, new: str, context: int = 4) -> tuple[str, int]:
    """pi's generateDiffString, for the line-level edits this generator makes."""
    a, b = old.split("\n"), new.split("\n")
    width = len(str(max(len(a), len(b))))
    out: list[str] = []
    first = 0
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            lines = list(range(i1, i2))
            head = lines[:context] if k > 0 else []
            tail = lines[-context:] if k < len(ops) - 1 else []
            if k > 0 and k < len(ops) - 1 and len(lines) <= 2 * context:
                head, tail = lines, []
            for i in head:
                out.append(f" {str(i + 1).rjust(width)} {a[i]}")
            if len(head) + len(tail) < len(lines):
                out.append(f" {''.rjust(width)} ...")
            for i in tail:
                if i not in head:
                    out.append(f" {str(i + 1).rjust(width)} {a[i]}")
            continue
        first = first or j1 + 1
        out += [f"-{str(i + 1).rjust(width)} {a[i]}" for i in range(i1, i2)]
        out += [f"+{str(j + 1).rjust(width)} {b[j]}" for j in range(j1, j2)]
    return "\n".join(out), first


def pytest_output(
    ws: Workspace, tests: list[tuple[str, str]], failures: dict[str, tuple[str, str]], key: str
) -> str:
    dots = "".join("F" if t in failures else "." for _, t in tests)
    lines = [f"{dots}{' ' * max(1, 74 - len(dots))}[100%]"]
    failed = [(p, t) for p, t in tests if t in failures]
    if failed:
        lines.append(" FAILURES ".center(80, "="))
    for path, test in failed:
        source, error = failures[test]
        lineno = ws.line_of(path, source.strip())
        lines += [f" {test} ".center(80, "_"), "", f">   {source}", f"E   {error}", ""]
        lines.append(f"{path}:{lineno}: {error.split(':')[0] if ':' in error else 'AssertionError'}")
    if failed:
        lines.append(" short test summary info ".center(80, "="))
        lines += [f"FAILED {p}::{t} - {failures[t][1]}" for p, t in failed]
    seconds = jitter(key, 21, 96) / 100
    passed = len(tests) - len(failed)
    counts = ", ".join(x for x in (f"{len(failed)} failed" if failed else "", f"{passed} passed") if x)
    lines.append(f"{counts} in {seconds:.2f}s")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------- summaries


@dataclass
class Summary:
    """What a summarizer said, rendered in pi's template or in the summary protocol (seed 004)."""

    goal: list[str]
    constraints: list[str]
    done: list[str]
    in_progress: list[str]
    blocked: list[str]
    decisions: list[str]
    next_steps: list[str]
    critical: list[str]
    # pi split turn: (original request, early progress, context for suffix)
    turn: tuple[list[str], list[str], list[str]] | None = None


def _bullets(items: list[str], mark: str = "-") -> str:
    return "\n".join(f"{mark} {x}" for x in items) if items else "- (none)"


def pi_history(s: Summary) -> str:
    steps = "\n".join(f"{i}. {x}" for i, x in enumerate(s.next_steps, 1))
    return (
        f"## Goal\n{_bullets(s.goal)}\n\n"
        f"## Constraints & Preferences\n{_bullets(s.constraints)}\n\n"
        f"## Progress\n### Done\n{_bullets(s.done, '- [x]')}\n\n"
        f"### In Progress\n{_bullets(s.in_progress, '- [ ]')}\n\n"
        f"### Blocked\n{_bullets(s.blocked)}\n\n"
        f"## Key Decisions\n{_bullets(s.decisions)}\n\n"
        f"## Next Steps\n{steps}\n\n"
        f"## Critical Context\n{_bullets(s.critical)}"
    )


def pi_turn_prefix(turn: tuple[list[str], list[str], list[str]]) -> str:
    request, early, suffix = turn
    return (
        f"## Original Request\n{_bullets(request)}\n\n"
        f"## Early Progress\n{_bullets(early)}\n\n"
        f"## Context for Suffix\n{_bullets(suffix)}"
    )


def cut_before(text: str, heading: str, back: int) -> str:
    """The text as a summarizer cut at its output limit: `back` characters before `heading`."""
    return text[: text.index(heading) - back]


def pi_summary(s: Summary, files: tuple[list[str], list[str]], cut: tuple[str, int] | None = None) -> str:
    """pi's stored summary: model output (history [+ split-turn part]) + pi's file lists."""
    text = pi_history(s)
    if s.turn is not None:
        text += "\n\n---\n\n**Turn Context (split turn):**\n\n" + pi_turn_prefix(s.turn)
    if cut is not None:
        text = cut_before(text, *cut)
    read, modified = files
    blocks = []
    if read:
        blocks.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
    if modified:
        blocks.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
    return text + ("\n\n" + "\n\n".join(blocks) if blocks else "")


def protocol_summary(s: Summary, cut: tuple[str, int] | None = None) -> str:
    """The summary protocol: essential sections, the completion marker, closed optional sections."""
    request = s.goal + (s.turn[0] if s.turn else [])
    state = [f"Done: {x}" for x in s.done] + [f"In progress: {x}" for x in s.in_progress]
    state += [f"Blocked: {x}" for x in s.blocked]
    text = (
        f"## Active request\n{_bullets(request)}\n\n"
        f"## Current work state\n{_bullets(state)}\n\n"
        f"## Safety and user constraints\n{_bullets(s.constraints)}\n\n"
        f"## Continuation contract\n{_bullets(s.next_steps)}\n\n"
        "<!-- essential-complete -->\n\n"
        f"## Key decisions\n{_bullets(s.decisions)}\n<!-- end: Key decisions -->\n\n"
        f"## Critical context\n{_bullets(s.critical)}\n<!-- end: Critical context -->"
    )
    return cut_before(text, *cut) if cut is not None else text


# ---------------------------------------------------------------------------------------- story


@dataclass
class Msg:
    n: int  # position in the story (ids derive from it)
    role: str  # user | assistant | tool
    at: datetime
    text: str = ""
    uses: list[ToolUse] = field(default_factory=list)  # assistant: parallel tool calls
    use: ToolUse | None = None  # tool: the call it answers
    stop: str = "stop"  # assistant: stop | toolUse | error
    error: str | None = None
    usage: tuple[int, int] = (0, 0)  # assistant: (input, output)
    tokens: int = 0
    response: str = ""
    started: datetime | None = None  # assistant: when the request was sent


@dataclass
class Compaction:
    n: int
    at: datetime
    summary: str  # pi text
    native_summary: str
    first_kept: Msg | None
    first_kept_id: str | None  # pi: overrides the id of first_kept (a dangling reference)
    tokens_before: int
    details: dict | None  # pi details; None: not written
    from_hook: bool | None  # None: not written
    boundary: Msg | str | None  # native
    represents: list[tuple[Msg, Msg]]
    retains: list[Msg]
    shape: str | None
    trigger: str
    native_details: dict


@dataclass
class Meta:
    n: int
    at: datetime
    type: str  # model_change | thinking_level_change


class Story:
    """One session, built turn by turn; the renderers below write it as pi and as native."""

    def __init__(self, name: str, start: datetime, model: Model = GPT41) -> None:
        self.name, self.now, self.model = name, start, model
        self.start = start
        self.entries: list[Msg | Compaction | Meta] = []
        self.ws = Workspace()
        self.window_start = 0  # first entry still sent raw
        self.summary_tokens = 0
        self.calls = 0
        self.files: tuple[list[str], list[str]] = ([], [])  # pi's cumulative (read, modified)
        self.range_start = 0  # where the next compaction's summarized range starts
        self._meta("model_change")
        self._meta("thinking_level_change")

    # ------------------------------------------------------------------ time and context

    def _tick(self, lo_ms: int, hi_ms: int) -> datetime:
        self.now += timedelta(milliseconds=jitter((self.name, len(self.entries), lo_ms), lo_ms, hi_ms))
        return self.now

    def _meta(self, kind: str) -> None:
        self.entries.append(Meta(len(self.entries), self._tick(5, 12), kind))

    def context_tokens(self) -> int:
        sent = self.entries[self.window_start :]
        return self.summary_tokens + sum(e.tokens for e in sent if isinstance(e, Msg) and e.stop != "error")

    def messages(self) -> list[Msg]:
        return [e for e in self.entries if isinstance(e, Msg)]

    def _add(self, m: Msg) -> Msg:
        self.entries.append(m)
        return m

    # ------------------------------------------------------------------ turns

    def user(self, text: str) -> Msg:
        at = self._tick(18_000, 95_000)
        return self._add(Msg(len(self.entries), "user", at, text, tokens=est_tokens(text)))

    def _assistant(self, text: str, uses: list[ToolUse], stop: str) -> Msg:
        started = self.now + timedelta(milliseconds=jitter((self.name, "send", len(self.entries)), 3, 40))
        at = self._tick(1_800, 9_500)
        for u in uses:
            self.calls += 1
            u.call_id = "call_" + b62(self.name, "call", self.calls, n=24)
        body = text + "".join(u.name + dumps(u.args) for u in uses)
        out = est_tokens(body) + 6 * len(uses)
        m = Msg(len(self.entries), "assistant", at, text, uses, stop=stop, tokens=out, started=started)
        m.usage = (self.model.system_tokens + self.context_tokens(), out)
        m.response = self._response_id(m.n)
        return self._add(m)

    def _response_id(self, n: int) -> str:
        if self.model.local:
            return f"chatcmpl-{jitter((self.name, n), 100, 999)}"
        return "chatcmpl-" + b62(self.name, "resp", n, n=29)

    def step(self, text: str, *uses: ToolUse) -> Msg:
        """An assistant message with parallel tool calls, followed by their results in order."""
        m = self._assistant(text, list(uses), "toolUse")
        for u in uses:
            at = self._tick(int(u.seconds * 900) + 5, int(u.seconds * 1100) + 40)
            self._add(Msg(len(self.entries), "tool", at, use=u, tokens=est_tokens(u.output)))
        return m

    def answer(self, text: str) -> Msg:
        return self._assistant(text, [], "stop")

    def fail(self, error: str) -> Msg:
        """An assistant message pi persisted for a failed request (dropped at send time)."""
        m = self._assistant("", [], "error")
        m.error, m.usage, m.tokens = error, (0, 0), 0
        return m

    # ------------------------------------------------------------------ compaction

    def file_ops(self, msgs: list[Msg]) -> tuple[list[str], list[str]]:
        """pi's computeFileLists over a range, merged with the previous compaction's lists."""
        read, modified = set(self.files[0]), set(self.files[1])
        for m in msgs:
            for u in m.uses:
                if u.name == "read":
                    read.add(u.args["path"])
                elif u.name in ("edit", "write"):
                    modified.add(u.args["path"])
        return sorted(read - modified), sorted(modified)

    def pending_range(self, first_kept: Msg | None) -> list[Msg]:
        """The messages a compaction keeping from first_kept summarizes (pi: from the previous cut)."""
        end = first_kept.n if first_kept is not None else len(self.entries)
        return [m for m in self.messages() if self.range_start <= m.n < end]

    def compact(
        self,
        summary: Summary | None,
        first_kept: Msg | None,
        *,
        cut: tuple[str, int] | None = None,
        native_cut: tuple[str, int] | None = None,
        pi_text: str | None = None,
        native_text: str | None = None,
        first_kept_id: str | None = None,
        details: bool = True,
        extra_details: dict | None = None,
        usage_in_details: bool = False,
        from_hook: bool | None = False,
        boundary: Msg | str | bool | None = True,
        represents: list[tuple[Msg, Msg]] | None = None,
        retains: list[Msg] | None = None,
        shape: str | None = None,
        trigger: str = "auto",
        native_extra: dict | None = None,
    ) -> Compaction:
        """Append a compaction. Defaults are what pi writes for a threshold compaction that keeps
        from `first_kept`; the keyword arguments describe the incidents."""
        at = self._tick(6_000, 21_000)
        rng = self.pending_range(first_kept)
        files = self.file_ops(rng)
        assert summary is not None or (pi_text is not None and native_text is not None)
        text = pi_text if pi_text is not None else pi_summary(summary, files, cut)  # type: ignore[arg-type]
        ntext = native_text if native_text is not None else protocol_summary(summary, native_cut)  # type: ignore[arg-type]
        usage = self._summary_usage(rng, text)
        pi_details: dict = {"readFiles": files[0], "modifiedFiles": files[1]}
        if usage_in_details:
            pi_details["usage"] = {
                "input": usage["input"],
                "output": usage["output"],
                "cacheRead": 0,
                "cacheWrite": 0,
            }
        pi_details.update(extra_details or {})
        if boundary is True:
            boundary = self._last_before(first_kept)
        if represents is None:
            first = self.messages()[0]
            represents = [(first, boundary)] if isinstance(boundary, Msg) else []
        native_details = {"usage": usage, "failure_reason": None, "requests": 1, **(native_extra or {})}
        c = Compaction(
            len(self.entries), at, text, ntext, first_kept, first_kept_id,
            self.model.system_tokens + self.context_tokens(), pi_details if details else None, from_hook,
            boundary, represents, retains or [], shape, trigger, native_details,
        )  # fmt: skip
        self.entries.append(c)
        self.files = files
        self.range_start = first_kept.n if first_kept is not None else c.n + 1
        self.window_start = first_kept.n if first_kept is not None and first_kept_id is None else c.n + 1
        self.summary_tokens = est_tokens(PI_SUMMARY_PREFIX + text + PI_SUMMARY_SUFFIX)
        return c

    def _last_before(self, m: Msg | None) -> Msg | None:
        if m is None:
            return None
        before = [x for x in self.messages() if x.n < m.n]
        return before[-1] if before else None

    def _summary_usage(self, rng: list[Msg], text: str) -> dict:
        prompt = 640 + sum(m.tokens for m in rng)
        return {"input": prompt, "output": est_tokens(text), "cache_read": 0, "cache_write": 0}


# ---------------------------------------------------------------------------------------- pi


def pi_usage(model: Model, inp: int, out: int) -> dict:
    ci, co = round(inp * model.price_in / 1e6, 6), round(out * model.price_out / 1e6, 6)
    return {
        "input": inp,
        "output": out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": inp + out,
        "cost": {"input": ci, "output": co, "cacheRead": 0, "cacheWrite": 0, "total": round(ci + co, 6)},
    }


def pi_message(story: Story, m: Msg) -> dict:
    ts = epoch_ms(m.at) - jitter((story.name, "msgts", m.n), 1, 3)
    if m.role == "user":
        return {"role": "user", "content": [{"type": "text", "text": m.text}], "timestamp": ts}
    if m.role == "tool":
        u = m.use
        assert u is not None
        out: dict = {"role": "toolResult", "toolCallId": u.call_id, "toolName": u.name}
        out["content"] = [{"type": "text", "text": u.output}]
        if u.details is not None and not u.is_error:
            out["details"] = u.details
        out.update(isError=u.is_error, timestamp=ts)
        return out
    content: list[dict] = [{"type": "text", "text": m.text}] if m.text else []
    content += [{"type": "toolCall", "id": u.call_id, "name": u.name, "arguments": u.args} for u in m.uses]
    out = {"role": "assistant", "content": content, "api": "openai-completions"}
    out.update(provider=story.model.provider, model=story.model.model_id)
    out["usage"] = pi_usage(story.model, *m.usage)
    out["stopReason"] = m.stop
    assert m.started is not None
    out["timestamp"] = epoch_ms(m.started)
    if m.stop == "error":
        out["errorMessage"] = m.error
    else:
        out["responseId"] = m.response
    return out


def pi_lines(story: Story) -> list[dict]:
    header = {"type": "session", "version": 3, "id": session_uuid(story.name)}
    header.update(timestamp=iso(story.start), cwd="/home/dana/src/invoicer")
    out: list[dict] = [header]
    ids = {e.n: digest(story.name, "entry", e.n)[:8] for e in story.entries}
    parent = None
    for e in story.entries:
        base = {"type": "", "id": ids[e.n], "parentId": parent, "timestamp": iso(e.at)}
        if isinstance(e, Meta) and e.type == "model_change":
            entry = {
                **base,
                "type": e.type,
                "provider": story.model.provider,
                "modelId": story.model.model_id,
            }
        elif isinstance(e, Meta):
            entry = {**base, "type": e.type, "thinkingLevel": "off"}
        elif isinstance(e, Msg):
            entry = {**base, "type": "message", "message": pi_message(story, e)}
        else:
            entry = {**base, "type": "compaction", "summary": e.summary}
            kept = e.first_kept_id or (ids[e.first_kept.n] if e.first_kept is not None else None)
            entry.update(firstKeptEntryId=kept, tokensBefore=e.tokens_before)
            if e.details is not None:
                entry["details"] = e.details
            if e.from_hook is not None:
                entry["fromHook"] = e.from_hook
        out.append(entry)
        parent = ids[e.n]
    return out


# ---------------------------------------------------------------------------------------- native


def native_id(e: Msg | Compaction) -> str:
    return f"m{e.n:04d}" if isinstance(e, Msg) else f"cp-{e.n:04d}"


def native_message(m: Msg) -> dict:
    out: dict = {"type": "message", "id": native_id(m), "ts": iso(m.at)}
    if m.role == "assistant":
        out["run"] = "run-1"
    out["role"] = m.role
    if m.role == "tool":
        u = m.use
        assert u is not None
        out["content"] = [
            {"type": "tool_result", "call_id": u.call_id, "is_error": u.is_error, "text": u.output}
        ]
        return out
    content: list[dict] = [{"type": "text", "text": m.text}] if m.text else []
    content += [{"type": "tool_call", "id": u.call_id, "name": u.name, "args": u.args} for u in m.uses]
    out["content"] = content
    if m.role == "assistant":
        out["stop_reason"] = {"toolUse": "tool_use"}.get(m.stop, m.stop)
        out["stop_reason_raw"] = {"toolUse": "tool_calls", "stop": "stop"}.get(m.stop, m.stop)
        if m.stop == "error":
            out["error"] = m.error
        else:
            out["usage"] = {"input": m.usage[0], "output": m.usage[1], "cache_read": 0, "cache_write": 0}
    return out


def native_checkpoint(c: Compaction) -> dict:
    b = c.boundary
    return {
        "type": "checkpoint",
        "id": native_id(c),
        "ts": iso(c.at),
        "boundary": native_id(b) if isinstance(b, Msg) else b,
        "represents": [[native_id(x), native_id(y)] for x, y in c.represents],
        "retains": [native_id(m) for m in c.retains],
        "retained_tail_shape": c.shape,
        "summary": c.native_summary,
        "tokens_before": c.tokens_before,
        "trigger": c.trigger,
        "details": c.native_details,
    }


def native_lines(story: Story, producer: str, settings: dict) -> list[dict]:
    header = {"type": "ledger", "format": "inspector-ledger", "version": 1, "id": session_uuid(story.name)}
    header.update(created=iso(story.start), producer=producer, settings=settings)
    run_at = next(e.at for e in story.entries if isinstance(e, Meta))
    run = {"type": "run", "id": "run-1", "ts": iso(run_at), "model": story.model.model_id}
    run["connection"] = story.model.provider
    out: list[dict] = [header, run]
    for e in story.entries:
        if isinstance(e, Msg):
            out.append(native_message(e))
        elif isinstance(e, Compaction):
            out.append(native_checkpoint(e))
    return out


# ---------------------------------------------------------------------------------------- turns
# Each turn is one user request and the agent's work on it; it returns the user message.

NIGHTLY_STREAMING = """def run_nightly_export(settings: Settings, client: LedgerClient, day: dt.date) -> int:
    path = os.path.join(settings.export_dir, f"invoices-{day:%Y%m%d}.csv")
    totals: list[dict[str, str]] = []
    with open(path, "w", newline="") as fh:
        writer = StreamingInvoiceWriter(fh, batch_size=settings.batch_size)
        for inv in invoices_for_day(day):
            writer.add(inv)
            totals.append({"number": inv.number, "total": f"{inv.total:.2f}"})
        writer.close()
    client.post_batch(totals)
    return writer.rows_written
"""

PARITY_TEST = """import io
from decimal import Decimal

from invoicer.exporters.csv_writer import CsvInvoiceWriter
from invoicer.exporters.stream_writer import StreamingInvoiceWriter
from invoicer.models import Invoice, LineItem

INVOICES = [
    Invoice(f"INV-{n:05d}", f"C-{n % 3}", "EUR", [LineItem("SKU-9", n + 1, Decimal("3.30"))])
    for n in range(5)
]


def test_streaming_output_is_byte_identical(tmp_path):
    legacy = tmp_path / "legacy.csv"
    CsvInvoiceWriter(str(legacy)).write_all(INVOICES)
    buf = io.StringIO(newline="")
    writer = StreamingInvoiceWriter(buf, batch_size=2)
    for inv in INVOICES:
        writer.add(inv)
    writer.close()
    assert buf.getvalue().encode() == legacy.read_bytes()
"""


def turn_streaming(s: Story) -> Msg:
    ws = s.ws
    u = s.user(
        "The nightly export still goes through the legacy CsvInvoiceWriter, which builds the whole file "
        "in memory; the March 2 batch got the worker OOM-killed. Switch invoicer/jobs/nightly.py to "
        "StreamingInvoiceWriter. Keep the CSV byte-identical and don't rename any INVOICER_* variable."
    )
    s.step(
        "I'll read the job, both writers and the settings first.",
        ws.read("invoicer/jobs/nightly.py"),
        ws.read("invoicer/exporters/csv_writer.py"),
        ws.read("invoicer/exporters/stream_writer.py"),
        ws.read("invoicer/config.py"),
    )
    close_fail = {"test_close_flushes_partial_batch": ("assert w.rows_written == 3", "assert 0 == 3")}
    s.step(
        "Baseline for the exporter and job tests before I change anything.",
        ws.pytest("tests/test_stream_writer.py", "tests/test_nightly.py", failures=close_fail),
    )
    s.step(
        "`close()` only flushes the file handle, so a partial last batch never reaches the CSV. "
        "Fixing that first, since the job will rely on it.",
        ws.edit(
            "invoicer/exporters/stream_writer.py",
            (
                "    def close(self) -> None:\n",
                "    def close(self) -> None:\n        if self._batch:\n            self.flush()\n",
            ),
        ),
    )
    s.step(
        "Now the job: stream invoices from the cursor into the writer instead of building a list, "
        "and keep only (number, total) pairs for the ledger upload.",
        ws.edit(
            "invoicer/jobs/nightly.py",
            (
                "from invoicer.exporters.csv_writer import CsvInvoiceWriter",
                "from invoicer.exporters.stream_writer import StreamingInvoiceWriter",
            ),
            (ws.files["invoicer/jobs/nightly.py"].split("\n\n\n")[1], NIGHTLY_STREAMING),
        ),
    )
    s.step("Re-running the same tests.", ws.pytest("tests/test_stream_writer.py", "tests/test_nightly.py"))
    s.answer(
        "Done. `run_nightly_export` now streams `invoices_for_day()` straight into "
        "`StreamingInvoiceWriter(fh, batch_size=settings.batch_size)`; only the (number, total) pairs for "
        "the ledger upload stay in memory. I also fixed `StreamingInvoiceWriter.close()`, which dropped a "
        "partial last batch (`test_close_flushes_partial_batch` was failing with `assert 0 == 3`). "
        "Column order and the `INVOICER_*` variables are unchanged; exporter and job tests pass."
    )
    return u


def turn_parity(s: Story) -> Msg:
    ws = s.ws
    u = s.user(
        "Is the streaming output really byte-identical to the old writer? Prove it on a fixture with a partial last batch."
    )
    s.step(
        "Adding a parity test that writes the same five invoices through both writers (batch_size=2, so the last batch is partial).",
        ws.write("tests/test_writer_parity.py", PARITY_TEST),
    )
    s.step("Running it.", ws.pytest("tests/test_writer_parity.py"))
    s.answer(
        "Yes. `tests/test_writer_parity.py` writes five invoices through both writers, with batch_size=2 "
        "so the last batch is partial, and compares the bytes: identical, `\\r\\n` line endings included "
        "(both use `csv.writer` defaults). The test passes."
    )
    return u


def turn_dry_run(s: Story) -> Msg:
    ws = s.ws
    u = s.user("Add a --dry-run flag to `invoicer export` that writes the CSV but skips the ledger upload.")
    s.step("Reading the CLI and its test.", ws.read("invoicer/cli.py"), ws.read("tests/test_cli.py"))
    s.step(
        "Threading a keyword-only `dry_run` through the CLI and the job.",
        ws.edit(
            "invoicer/cli.py",
            (
                '    export.add_argument("--timeout", type=float, default=None)\n',
                '    export.add_argument("--timeout", type=float, default=None)\n    export.add_argument("--dry-run", action="store_true", help="write the CSV, skip the upload")\n',
            ),
            (
                "run_nightly_export(settings, LedgerClient(settings), args.day)",
                "run_nightly_export(settings, LedgerClient(settings), args.day, dry_run=args.dry_run)",
            ),
        ),
        ws.edit(
            "invoicer/jobs/nightly.py",
            (
                "client: LedgerClient, day: dt.date) -> int:",
                "client: LedgerClient, day: dt.date, *, dry_run: bool = False) -> int:",
            ),
            ("    client.post_batch(totals)\n", "    if not dry_run:\n        client.post_batch(totals)\n"),
        ),
    )
    s.step(
        "A test that the flag reaches the job.",
        ws.edit(
            "tests/test_cli.py",
            (
                "    assert run.call_args.args[0].timeout == 3.0\n",
                '    assert run.call_args.args[0].timeout == 3.0\n\n\ndef test_dry_run_flag(tmp_path):\n    with (\n        mock.patch.object(cli, "load_settings", return_value=Settings(export_dir=str(tmp_path))),\n        mock.patch.object(cli, "run_nightly_export", return_value=0) as run,\n        mock.patch.object(cli, "LedgerClient"),\n    ):\n        cli.main(["export", "--day", "2026-03-02", "--dry-run"])\n    assert run.call_args.kwargs == {"dry_run": True}\n',
            ),
        ),
    )
    s.step("Running the CLI and job tests.", ws.pytest("tests/test_cli.py", "tests/test_nightly.py"))
    s.answer(
        "Added `--dry-run` to `invoicer export`: it is passed as `run_nightly_export(..., dry_run=True)`, "
        "which still writes the CSV but skips `client.post_batch`. New test `test_dry_run_flag`; CLI and "
        "job tests pass."
    )
    return u


def turn_retry_after(s: Story) -> Msg:
    ws = s.ws
    u = s.user(
        "The ledger API has started answering 429 with a Retry-After header during the upload window. "
        "Make the client honour it (capped at max_backoff) instead of our own backoff."
    )
    s.step(
        "Reading the client, the retry policy and the client tests.",
        ws.read("invoicer/http/client.py"),
        ws.read("invoicer/http/retry.py"),
        ws.read("tests/test_client.py"),
    )
    s.step(
        "The policy decides the delay, so Retry-After goes there; the client just passes the header on.",
        ws.edit(
            "invoicer/http/retry.py",
            (
                "    def sleep(self, attempt: int) -> None:\n        time.sleep(self.delay(attempt))\n",
                "    def sleep(self, attempt: int, retry_after: str | None = None) -> None:\n        time.sleep(self.delay_for(attempt, retry_after))\n\n    def delay_for(self, attempt: int, retry_after: str | None) -> float:\n        if retry_after is not None and retry_after.isdigit():\n            return min(float(retry_after), self.max_backoff)\n        return self.delay(attempt)\n",
            ),
        ),
        ws.edit(
            "invoicer/http/client.py",
            (
                "            self.policy.sleep(attempt)\n",
                '            self.policy.sleep(attempt, resp.headers.get("Retry-After"))\n',
            ),
        ),
    )
    s.step("Checking nothing regressed.", ws.pytest("tests/test_client.py", "tests/test_retry.py"))
    s.answer(
        "The client now passes the `Retry-After` header to `RetryPolicy.sleep()`; the new "
        "`RetryPolicy.delay_for(attempt, retry_after)` uses the header's seconds, capped at `max_backoff`, and "
        "falls back to the jittered backoff when the header is missing. Existing client and retry tests pass."
    )
    return u


RETRY_AFTER_TESTS = """

def test_retry_after_seconds_are_used():
    assert RetryPolicy(max_backoff=8.0).delay_for(0, "3") == 3.0


def test_retry_after_is_capped():
    assert RetryPolicy(max_backoff=8.0).delay_for(0, "30") == 8.0


def test_fractional_retry_after():
    assert RetryPolicy().delay_for(0, "1.5") == 1.5
"""


def turn_retry_after_tests(s: Story) -> Msg:
    ws = s.ws
    u = s.user("Add tests for the Retry-After path, and make sure we never sleep longer than max_backoff.")
    last = "    assert all(policy.delay(10) <= 4.0 for _ in range(50))\n"
    s.step(
        "Adding policy-level tests for whole, capped and fractional Retry-After values.",
        ws.edit("tests/test_retry.py", (last, last + RETRY_AFTER_TESTS)),
    )
    fail = {
        "test_fractional_retry_after": (
            'assert RetryPolicy().delay_for(0, "1.5") == 1.5',
            "AssertionError: assert 0.6172 == 1.5",
        )
    }
    s.step("Running them.", ws.pytest("tests/test_retry.py", failures=fail))
    s.step(
        '`"1.5".isdigit()` is False, so a fractional header fell back to the jittered backoff. Parsing it as a float instead.',
        ws.edit(
            "invoicer/http/retry.py",
            (
                "        if retry_after is not None and retry_after.isdigit():\n            return min(float(retry_after), self.max_backoff)\n",
                "        if retry_after is not None:\n            try:\n                return min(float(retry_after), self.max_backoff)\n            except ValueError:\n                pass  # an HTTP date; fall back to our own backoff\n",
            ),
        ),
    )
    s.step("Again.", ws.pytest("tests/test_retry.py", "tests/test_client.py"))
    s.answer(
        "Three new tests in `tests/test_retry.py` (whole seconds, capped at `max_backoff`, fractional). The "
        "fractional one caught a bug: `delay_for` used `str.isdigit()`, so `Retry-After: 1.5` was ignored. It "
        "now parses a float and falls back to the backoff for an HTTP-date value. All retry and client tests pass."
    )
    return u


def turn_changelog(s: Story) -> Msg:
    ws = s.ws
    u = s.user("Add a CHANGELOG entry for the streaming export and the --dry-run flag.")
    s.step(
        "Adding an Unreleased section.",
        ws.edit(
            "CHANGELOG.md",
            (
                "# Changelog\n\n",
                "# Changelog\n\n## Unreleased\n- Nightly export streams rows in batches of `INVOICER_BATCH_SIZE` instead of building the file in memory.\n- `invoicer export --dry-run` writes the CSV without uploading totals.\n\n",
            ),
        ),
    )
    s.answer("Added an `## Unreleased` section to CHANGELOG.md with both entries.")
    return u


def turn_rename_timeout(s: Story) -> Msg:
    """10 tool steps, 42 results."""
    ws = s.ws
    u = s.user(
        "Rename Settings.timeout to timeout_s everywhere: it is seconds and people keep passing "
        "milliseconds. INVOICER_TIMEOUT and the --timeout flag stay as they are. Update every call site, "
        "the tests and docs/configuration.md."
    )
    s.step(
        "Finding every use first.",
        ws.grep("timeout", "invoicer/", "tests/", "docs/"),
        ws.read("invoicer/config.py"),
        ws.read("invoicer/http/client.py"),
        ws.read("invoicer/cli.py"),
    )
    log = "9c41e7a Read settings from the environment only\n52d0b18 Add INVOICER_RETRY_ATTEMPTS\n0f3a6d2 Initial settings module\n"
    s.step(
        "And the tests that construct Settings directly.",
        ws.read("tests/test_config.py"),
        ws.read("tests/conftest.py"),
        ws.read("tests/test_client.py"),
        bash("git log --oneline -5 -- invoicer/config.py", log),
    )
    s.step(
        "Renaming the field, the loader keyword and the two call sites, plus the tests that read it.",
        ws.edit(
            "invoicer/config.py",
            ("    timeout: float = 10.0", "    timeout_s: float = 10.0"),
            ("        timeout=float(", "        timeout_s=float("),
        ),
        ws.edit("invoicer/http/client.py", ("timeout=settings.timeout)", "timeout=settings.timeout_s)")),
        ws.edit(
            "invoicer/cli.py",
            ("replace(settings, timeout=args.timeout)", "replace(settings, timeout_s=args.timeout)"),
        ),
        ws.edit(
            "tests/test_config.py",
            ("    assert s.timeout == 10.0", "    assert s.timeout_s == 10.0"),
            ("    assert s.timeout == 2.5", "    assert s.timeout_s == 2.5"),
        ),
        ws.edit(
            "tests/test_client.py",
            ('Settings(export_dir="/tmp", timeout=0.1)', 'Settings(export_dir="/tmp", timeout_s=0.1)'),
        ),
    )
    kwarg = "TypeError: Settings.__init__() got an unexpected keyword argument 'timeout'"
    s.step(
        "Running the affected test files one by one.",
        ws.pytest("tests/test_config.py"),
        ws.pytest("tests/test_client.py"),
        ws.pytest(
            "tests/test_cli.py",
            failures={
                "test_timeout_flag_overrides_settings": (
                    "assert run.call_args.args[0].timeout == 3.0",
                    "AttributeError: 'Settings' object has no attribute 'timeout'",
                )
            },
        ),
        ws.pytest(
            "tests/test_nightly.py",
            failures={
                "test_exports_and_uploads": (
                    "assert run_nightly_export(settings, client, dt.date(2026, 3, 2)) == 1",
                    kwarg,
                )
            },
        ),
    )
    _finish_timeout_rename(s)
    s.answer(
        "`Settings.timeout` is now `Settings.timeout_s`: changed in invoicer/config.py (field and loader), "
        "invoicer/http/client.py, invoicer/cli.py (`--timeout` still sets it), tests/conftest.py, "
        "tests/test_config.py, tests/test_client.py, tests/test_cli.py and docs/configuration.md. "
        "`INVOICER_TIMEOUT` is unchanged. CHANGELOG has an Unreleased entry. Full suite, ruff and mypy are clean."
    )
    return u


def _finish_timeout_rename(s: Story) -> None:
    """The second half of the rename turn: fix what the tests found, verify, document."""
    ws = s.ws
    s.step(
        "test_cli still reads `.timeout`, and the `settings` fixture builds Settings(timeout=...). Looking at both.",
        ws.read("tests/test_cli.py"),
        ws.read("tests/test_nightly.py"),
        ws.grep("timeout", "tests/"),
        ws.grep(r"\.timeout\b", "invoicer/"),
    )
    s.step(
        "Fixing the fixture, the CLI test and the docs table.",
        ws.edit(
            "tests/test_cli.py",
            (
                "    assert run.call_args.args[0].timeout == 3.0",
                "    assert run.call_args.args[0].timeout_s == 3.0",
            ),
        ),
        ws.edit("tests/conftest.py", ("retry_attempts=2, timeout=0.5)", "retry_attempts=2, timeout_s=0.5)")),
        ws.edit(
            "docs/configuration.md",
            ("| timeout | INVOICER_TIMEOUT | 10 |", "| timeout_s | INVOICER_TIMEOUT | 10 (seconds) |"),
        ),
        ws.read("CHANGELOG.md"),
    )
    s.step(
        "Re-running the four files.",
        ws.pytest("tests/test_cli.py"),
        ws.pytest("tests/test_nightly.py"),
        ws.pytest("tests/test_config.py"),
        ws.pytest("tests/test_client.py"),
    )
    s.step(
        "Full suite, lint, and a check that nothing still says `.timeout`.",
        ws.pytest_all(),
        bash("ruff check invoicer tests", "All checks passed!\n"),
        ws.diff_stat(),
        ws.grep("timeout_s", "invoicer/", "tests/", "docs/"),
        bash(
            "python -c 'from invoicer.config import load_settings; print(load_settings({}).timeout_s)'",
            "10.0\n",
        ),
    )
    s.step(
        "Changelog entry, then a last look for stragglers outside the package.",
        ws.edit(
            "CHANGELOG.md",
            (
                "# Changelog\n\n",
                "# Changelog\n\n## Unreleased\n- `Settings.timeout` is now `Settings.timeout_s` (seconds). `INVOICER_TIMEOUT` and `--timeout` are unchanged.\n\n",
            ),
        ),
        ws.read("docs/configuration.md"),
        ws.status(),
        ws.grep("INVOICER_TIMEOUT", "invoicer/", "docs/", "tests/"),
    )
    help_text = (
        "usage: invoicer export [-h] [--day DAY] [--timeout TIMEOUT] [--dry-run]\n\noptions:\n"
        "  -h, --help         show this help message and exit\n  --day DAY\n  --timeout TIMEOUT\n"
        "  --dry-run          write the CSV, skip the upload\n"
    )
    s.step(
        "Sanity checks on the public surface.",
        bash("python -m invoicer.cli export --help", help_text),
        ws.read("invoicer/config.py"),
        bash(
            "mypy invoicer/config.py invoicer/http/client.py", "Success: no issues found in 2 source files\n"
        ),
        bash("git diff -- invoicer/config.py | head -20", _git_diff(ws, "invoicer/config.py")),
    )


def _git_diff(ws: Workspace, path: str) -> str:
    lines = difflib.unified_diff(
        FILES[path].splitlines(), ws.files[path].splitlines(), f"a/{path}", f"b/{path}", lineterm=""
    )
    return f"diff --git a/{path} b/{path}\n" + "\n".join(list(lines)[:19]) + "\n"


LOGGING_TEST = """import httpx
import pytest

from invoicer.config import Settings
from invoicer.http.client import LedgerClient
from invoicer.http.retry import RetryPolicy


def test_retry_is_logged(httpx_mock, caplog):
    httpx_mock.add_response(status_code=503)
    httpx_mock.add_response(json={"accepted": 0})
    client = LedgerClient(Settings(export_dir="/tmp"), RetryPolicy(attempts=2, backoff=0))
    client.post_batch([])
    assert caplog.messages == ["retrying /batches after HTTP 503 (attempt 1)"]
"""


def _add_logger(ws: Workspace, path: str, after_import: str, anchor: str) -> ToolUse:
    """`import logging` after `after_import` (isort order) and a module logger before `anchor`."""
    return ws.edit(
        path,
        (after_import, after_import + "import logging\n"),
        (anchor, "logger = logging.getLogger(__name__)\n\n" + anchor),
    )


def turn_logging(s: Story) -> Msg:
    """11 tool steps, 46 results."""
    ws = s.ws
    u = s.user(
        "Every module under invoicer/ should log through logging.getLogger(__name__). Add it where it is "
        "missing, and log upload retries and batch flushes at DEBUG so we can see them in the job logs."
    )
    s.step(
        "Checking which modules already have a logger, and reading the ones that will log.",
        ws.grep("getLogger|^import logging", "invoicer/"),
        ws.read("invoicer/store.py"),
        ws.read("invoicer/exporters/stream_writer.py"),
        ws.read("invoicer/http/retry.py"),
        ws.read("invoicer/jobs/nightly.py"),
    )
    s.step(
        "None do. Reading the rest of the package.",
        ws.read("invoicer/exporters/csv_writer.py"),
        ws.read("invoicer/__init__.py"),
        ws.read("invoicer/http/client.py"),
        ws.read("invoicer/cli.py"),
    )
    s.step(
        "Adding module loggers; the client logs each retry, the writer each flush.",
        ws.edit(
            "invoicer/http/client.py",
            (
                "from __future__ import annotations\n\nimport httpx\n",
                "from __future__ import annotations\n\nimport logging\n\nimport httpx\n",
            ),
            ("\n\nclass LedgerClient:", "\nlogger = logging.getLogger(__name__)\n\n\nclass LedgerClient:"),
            (
                "            self.policy.sleep(attempt, ",
                '            logger.debug("retrying /batches after HTTP %s (attempt %d)", resp.status_code, attempt + 1)\n            self.policy.sleep(attempt, ',
            ),
        ),
        ws.edit(
            "invoicer/exporters/stream_writer.py",
            ("import csv\n", "import csv\nimport logging\n"),
            (
                "\n\nclass StreamingInvoiceWriter:",
                "\nlogger = logging.getLogger(__name__)\n\n\nclass StreamingInvoiceWriter:",
            ),
            (
                "        self._writer.writerows(self._batch)\n",
                '        logger.debug("flushing %d rows", len(self._batch))\n        self._writer.writerows(self._batch)\n',
            ),
        ),
        _add_logger(ws, "invoicer/http/retry.py", "from __future__ import annotations\n\n", "RETRYABLE = "),
        ws.edit(
            "invoicer/store.py",
            ("import datetime as dt\n", "import datetime as dt\nimport logging\n"),
            ("QUERY = ", "logger = logging.getLogger(__name__)\n\nQUERY = "),
        ),
    )
    s.step(
        "The job logs one INFO line per export; the CLI gets --verbose.",
        ws.edit(
            "invoicer/jobs/nightly.py",
            ("import datetime as dt\n", "import datetime as dt\nimport logging\n"),
            (
                "\n\ndef run_nightly_export(",
                "\nlogger = logging.getLogger(__name__)\n\n\ndef run_nightly_export(",
            ),
            (
                "    return writer.rows_written\n",
                '    logger.info("exported %d invoices to %s", writer.rows_written, path)\n    return writer.rows_written\n',
            ),
        ),
        _add_logger(ws, "invoicer/exporters/csv_writer.py", "import io\n", "COLUMNS = "),
        ws.edit(
            "invoicer/cli.py",
            ("import datetime as dt\n", "import datetime as dt\nimport logging\n"),
            (
                "    args = parser.parse_args(argv)\n",
                '    parser.add_argument("-v", "--verbose", action="store_true")\n    args = parser.parse_args(argv)\n    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO)\n',
            ),
        ),
        ws.edit(
            "invoicer/__init__.py",
            (
                '__version__ = "2.7.0"\n',
                '__version__ = "2.7.0"\n\nlogging.getLogger(__name__).addHandler(logging.NullHandler())\n',
            ),
            ('"""\n\n__version__', '"""\n\nimport logging\n\n__version__'),
        ),
    )
    s.step(
        "Running the tests of every module I touched.",
        ws.pytest("tests/test_client.py"),
        ws.pytest("tests/test_stream_writer.py"),
        ws.pytest("tests/test_retry.py"),
        ws.pytest("tests/test_nightly.py"),
        ws.pytest("tests/test_cli.py"),
    )
    _test_logging(s)
    s.answer(
        "Every module under invoicer/ now has `logger = logging.getLogger(__name__)`; the package installs a "
        "NullHandler. `LedgerClient.post_batch` logs each retry at DEBUG (`retrying /batches after HTTP 503 "
        "(attempt 1)`), `StreamingInvoiceWriter.flush` logs each batch, and the job logs one INFO line per "
        "export. `invoicer -v` turns on DEBUG. New tests/test_logging.py (it needs `caplog.set_level(DEBUG)`). "
        "Suite, ruff and mypy are clean."
    )
    return u


def _test_logging(s: Story) -> None:
    """The second half of the logging turn: try it, write a caplog test, fix it, re-run."""
    ws = s.ws
    verbose = (
        "DEBUG:invoicer.exporters.stream_writer:flushing 500 rows\n" * 3
        + "DEBUG:invoicer.exporters.stream_writer:flushing 211 rows\n"
        + "INFO:invoicer.jobs.nightly:exported 1711 invoices to /var/lib/invoicer/exports/invoices-20260302.csv\n"
        + "exported 1711 invoices for 2026-03-02\n"
    )
    s.step(
        "Trying it for real on the March 2 fixture, and checking lint.",
        bash("python -m invoicer.cli -v export --day 2026-03-02 --dry-run 2>&1 | tail -6", verbose, 0, 3.8),
        ws.grep(r"logger\.", "invoicer/"),
        ws.read("tests/test_client.py"),
        bash("ruff check invoicer", "All checks passed!\n"),
    )
    s.step(
        "A test that a retry shows up in the log.",
        ws.write("tests/test_logging.py", LOGGING_TEST),
        ws.read("tests/conftest.py"),
        ws.grep("caplog", "tests/"),
        ws.read("pyproject.toml"),
    )
    empty_log = "AssertionError: assert [] == ['retrying /batches after HTTP 503 (attempt 1)']"
    s.step(
        "Running it.",
        ws.pytest(
            "tests/test_logging.py",
            failures={
                "test_retry_is_logged": (
                    'assert caplog.messages == ["retrying /batches after HTTP 503 (attempt 1)"]',
                    empty_log,
                )
            },
        ),
        ws.read("invoicer/http/client.py"),
        bash(
            "python -c 'import logging; print(logging.getLogger(\"invoicer.http.client\").getEffectiveLevel())'",
            "30\n",
        ),
        bash(
            "python -m pytest -q tests/test_logging.py -o log_level=DEBUG",
            "." + " " * 73 + "[100%]\n1 passed in 0.29s\n",
            0,
            0.6,
        ),
    )
    s.step(
        "caplog only sees WARNING and above by default; the test has to lower the level itself.",
        ws.edit(
            "tests/test_logging.py",
            (
                "def test_retry_is_logged(httpx_mock, caplog):\n",
                'def test_retry_is_logged(httpx_mock, caplog):\n    caplog.set_level(logging.DEBUG, logger="invoicer")\n',
            ),
            ("import httpx\n", "import logging\n\nimport httpx\n"),
        ),
        ws.read("tests/test_logging.py"),
        ws.status(),
        ws.diff_stat(),
    )
    s.step(
        "Re-running.",
        ws.pytest("tests/test_logging.py"),
        ws.pytest("tests/test_client.py"),
        ws.pytest("tests/test_stream_writer.py"),
        ws.pytest("tests/test_nightly.py"),
    )
    s.step(
        "Whole suite, lint and types.",
        ws.pytest_all(),
        bash("ruff check invoicer tests", "All checks passed!\n"),
        bash("mypy invoicer", "Success: no issues found in 14 source files\n", 0, 4.1),
        ws.diff_stat(),
    )


E2E_FAIL = """python -m pytest -q -m e2e tests/e2e
E                                                                        [100%]
==================================== ERRORS ====================================
_________________ ERROR at setup of test_export_matches_golden _________________
psycopg.OperationalError: connection failed: connection to server at "127.0.0.1", port 5433 failed: Connection refused
    Is the server running on that host and accepting TCP/IP connections?
=========================== short test summary info ============================
ERROR tests/e2e/test_export.py::test_export_matches_golden - psycopg.OperationalError: connection failed
1 error in 0.88s
make: *** [Makefile:14: e2e] Error 1"""

E2E_PASS = """python -m pytest -q -m e2e tests/e2e
..                                                                       [100%]
2 passed in 6.41s
"""


def turn_lint_and_e2e(s: Story) -> Msg:
    """10 tool steps, 43 results."""
    ws = s.ws
    u = s.user(
        "Run the full suite, ruff and mypy --strict, fix whatever they report, then run `make e2e` against the fixture database."
    )
    client = "invoicer/http/client.py"
    mypy_out = (
        f'{client}:{ws.line_of(client, "def post_batch")}: error: Missing type parameters for generic type "dict"  [type-arg]\n'
        f'{client}:{ws.line_of(client, "return resp.json()")}: error: Returning Any from function declared to return "dict[Any, Any]"  [no-any-return]\n'
        "Found 2 errors in 1 file (checked 14 source files)"
    )
    fmt_out = "Would reformat: invoicer/http/retry.py\nWould reformat: tests/test_writer_parity.py\n2 files would be reformatted, 17 files already formatted"
    s.step(
        "Running all four checks.",
        ws.pytest_all(),
        bash("ruff check invoicer tests", "All checks passed!\n"),
        bash("ruff format --check invoicer tests", fmt_out, 1),
        bash("mypy --strict invoicer", mypy_out, 1, 4.4),
    )
    fmt_diff = (
        "--- invoicer/http/retry.py\n+++ invoicer/http/retry.py\n@@ -21,7 +21,7 @@\n"
        "     def delay(self, attempt: int) -> float:\n"
        "-        base = min(self.backoff * 2**attempt, self.max_backoff)\n"
        "+        base = min(self.backoff * 2 ** attempt, self.max_backoff)\n"
        "--- tests/test_writer_parity.py\n+++ tests/test_writer_parity.py\n@@ -8,8 +8,7 @@\n"
        " INVOICES = [\n"
        '-    Invoice(f"INV-{n:05d}", f"C-{n % 3}", "EUR", [LineItem("SKU-9", n + 1, Decimal("3.30"))])\n'
        "-    for n in range(5)\n"
        '+    Invoice(f"INV-{n:05d}", f"C-{n % 3}", "EUR", [LineItem("SKU-9", n + 1, Decimal("3.30"))]) for n in range(5)\n'
        " ]\n\n2 files would be reformatted"
    )
    s.step(
        "Tests and ruff check are clean; format and mypy are not. Reading what they point at.",
        ws.read(client),
        ws.read("invoicer/http/retry.py"),
        ws.read("tests/test_writer_parity.py"),
        ws.read("pyproject.toml"),
        bash("ruff format --diff invoicer/http/retry.py tests/test_writer_parity.py", fmt_diff, 1),
    )
    s.step(
        "Typing the batch response and letting ruff format the two files.",
        ws.edit(
            client,
            ("import logging\n\nimport httpx\n", "import logging\nfrom typing import Any\n\nimport httpx\n"),
            (
                "    def post_batch(self, rows: list[dict[str, str]]) -> dict:\n",
                "    def post_batch(self, rows: list[dict[str, str]]) -> dict[str, Any]:\n",
            ),
            (
                "                return resp.json()\n",
                "                body: dict[str, Any] = resp.json()\n                return body\n",
            ),
        ),
        bash("ruff format invoicer/http/retry.py tests/test_writer_parity.py", "2 files reformatted\n"),
        bash("mypy --strict invoicer", "Success: no issues found in 14 source files\n", 0, 4.2),
        bash("ruff format --check invoicer tests", "19 files already formatted\n"),
    )
    s.step(
        "Confirming the suite is still green before the e2e run.",
        ws.pytest_all(),
        ws.pytest("tests/test_client.py"),
        ws.diff_stat(),
        ws.status(),
    )
    _run_e2e(s)
    s.answer(
        "Suite and `ruff check` were clean. Fixed: `ruff format` (invoicer/http/retry.py, "
        "tests/test_writer_parity.py) and two `mypy --strict` errors in invoicer/http/client.py "
        "(`post_batch` now returns `dict[str, Any]`). `make e2e` first failed because the fixture database "
        "wasn't running: `docker compose up -d db` (port 5433, DSN in .env.example). With it, "
        "`test_export_matches_golden` passes, `test_upload_payload` fails: it expects the job to upload in "
        "batches of `settings.batch_size` (4 requests for 1,711 invoices), which isn't implemented; its "
        "`xfail` marker was removed by commit 4d1c8e0. Everything else is green."
    )
    return u


def _run_e2e(s: Story) -> None:
    """The e2e half of the lint turn: the fixture database is down, then one test fails."""
    ws = s.ws
    makefile = "e2e:\n\tpython -m pytest -q -m e2e tests/e2e\n"
    s.step(
        "Now `make e2e`.",
        bash("make e2e", E2E_FAIL, 2, 1.4),
        bash("grep -n -A1 '^e2e:' Makefile", "14:" + makefile.replace("\n\t", "\n15-\t")),
        bash("docker compose ps", "NAME      IMAGE     COMMAND   SERVICE   CREATED   STATUS    PORTS\n"),
        bash(
            "grep -n DSN .env.example",
            "3:INVOICER_DSN=postgresql://invoicer:invoicer@127.0.0.1:5433/billing_fixture\n",
        ),
    )
    s.step(
        "The fixture database isn't running. Starting it.",
        bash(
            "docker compose up -d db",
            " Container invoicer-db-1  Creating\n Container invoicer-db-1  Created\n Container invoicer-db-1  Starting\n Container invoicer-db-1  Started\n",
            0,
            2.7,
        ),
        bash(
            "sleep 3 && docker compose exec db pg_isready -U invoicer",
            "/var/run/postgresql:5432 - accepting connections\n",
            0,
            3.3,
        ),
        bash(
            "psql postgresql://invoicer:invoicer@127.0.0.1:5433/billing_fixture -Atc 'select count(*) from invoices'",
            "1711\n",
        ),
        bash("ls tests/e2e", "__init__.py\ngolden\ntest_export.py\n"),
    )
    golden_fail = (
        E2E_PASS.replace("..", ".F")
        .replace("2 passed", "1 failed, 1 passed")
        .replace(
            "[100%]\n",
            "[100%]\nFAILED tests/e2e/test_export.py::test_upload_payload - AssertionError: 1711 rows posted in 1 request, expected 4 requests\n",
        )
        + "make: *** [Makefile:14: e2e] Error 1"
    )
    s.step(
        "Database is up with the 1,711 fixture invoices. Running e2e with the fixture DSN.",
        bash("set -a && . ./.env.example && make e2e", golden_fail, 2, 7.0),
        bash(
            "sed -n 1,40p tests/e2e/test_export.py",
            'import pytest\n\npytestmark = pytest.mark.e2e\n\n\ndef test_export_matches_golden(fixture_db, tmp_path): ...\n\n\ndef test_upload_payload(fixture_db, ledger_stub):\n    """The job must upload in batches of settings.batch_size (TODO: not implemented yet)."""\n    ...\n    assert ledger_stub.requests == 4\n',
        ),
        ws.read("invoicer/jobs/nightly.py"),
        bash(
            "git log --oneline -3 -- tests/e2e",
            "e81f0aa e2e: expect batched uploads (xfail until the job batches)\n3b9c2d1 e2e: golden export for 2026-03-02\n",
        ),
        bash(
            "git show e81f0aa --stat | tail -3",
            " tests/e2e/test_export.py | 9 +++++++--\n 1 file changed, 7 insertions(+), 2 deletions(-)\n",
        ),
    )
    s.step(
        "test_upload_payload expects batched uploads, which the job doesn't do yet; its commit says it should be xfail. Checking the marker.",
        bash("grep -n xfail tests/e2e/test_export.py", "", 1),
        bash(
            "git show e81f0aa -- tests/e2e/test_export.py | grep -n xfail",
            '12:+@pytest.mark.xfail(reason="job uploads one request per day", strict=True)\n',
        ),
        bash(
            "git log -1 --format=%H%n%s -- tests/e2e/test_export.py",
            "4d1c8e0b7a9f3e2d6c5b4a3928171605f4e3d2c1\ne2e: tidy fixtures\n",
        ),
        bash(
            "git show 4d1c8e0 -- tests/e2e/test_export.py | grep -n '^-.*xfail'",
            '18:-@pytest.mark.xfail(reason="job uploads one request per day", strict=True)\n',
        ),
    )
    s.step(
        "The marker was dropped by a later fixture cleanup, so the test now fails for a feature that isn't built. I'll leave it failing and report it rather than re-adding the xfail myself; checking the rest is green.",
        bash(
            "set -a && . ./.env.example && python -m pytest -q -m e2e tests/e2e -k golden",
            E2E_PASS.replace("..", ".").replace("2 passed", "1 passed"),
            0,
            5.2,
        ),
        bash("docker compose ps --format '{{.Service}} {{.Status}}'", "db Up 2 minutes (healthy)\n"),
        ws.pytest_all(),
        ws.diff_stat(),
    )
    s.step(
        "Final state.",
        ws.status(),
        bash(
            "ruff check invoicer tests && ruff format --check invoicer tests",
            "All checks passed!\n19 files already formatted\n",
        ),
        bash("mypy --strict invoicer", "Success: no issues found in 14 source files\n", 0, 4.0),
        bash("git stash list", ""),
        bash("docker compose ps --format '{{.Service}} {{.Ports}}'", "db 0.0.0.0:5433->5432/tcp\n"),
    )


# ---------------------------------------------------------------------------------------- summaries of turns


@dataclass(frozen=True)
class Facts:
    """What a faithful summarizer keeps from one turn."""

    goal: str = ""
    constraints: tuple[str, ...] = ()
    done: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    critical: tuple[str, ...] = ()


FACTS: dict[str, Facts] = {
    "streaming": Facts(
        "Switch the nightly export (invoicer/jobs/nightly.py) from the legacy CsvInvoiceWriter to "
        "StreamingInvoiceWriter; the March 2 batch OOM-killed the worker",
        (
            "CSV output must stay byte-identical to the legacy writer",
            "Do not rename any INVOICER_* environment variable",
        ),
        (
            "Fixed StreamingInvoiceWriter.close() (invoicer/exporters/stream_writer.py): it dropped a partial last "
            "batch; test_close_flushes_partial_batch failed with `assert 0 == 3`",
            "run_nightly_export streams invoices_for_day() into StreamingInvoiceWriter(fh, "
            "batch_size=settings.batch_size) and keeps only (number, total) pairs for client.post_batch",
        ),
        (
            "**Totals collected while streaming**: the ledger upload needs every total, so only (number, total) pairs stay in memory",
        ),
        ("tests/test_stream_writer.py and tests/test_nightly.py pass",),
    ),
    "parity": Facts(
        "Prove the streaming CSV is byte-identical to the legacy writer",
        (),
        (
            "tests/test_writer_parity.py: five invoices, batch_size=2 (partial last batch), identical bytes including \\r\\n line endings",
        ),
        (),
        ("Both writers use csv.writer defaults (\\r\\n line terminator)",),
    ),
    "dry_run": Facts(
        "Add `invoicer export --dry-run`: write the CSV, skip the ledger upload",
        (),
        (
            "--dry-run in invoicer/cli.py; run_nightly_export(..., *, dry_run=False) skips client.post_batch; test tests/test_cli.py::test_dry_run_flag",
        ),
        ("**dry_run is keyword-only** so positional callers cannot flip it by accident",),
    ),
    "retry_after": Facts(
        "Honour Retry-After on 429 responses from the ledger API, capped at max_backoff",
        (),
        (
            'RetryPolicy.delay_for(attempt, retry_after) in invoicer/http/retry.py; LedgerClient.post_batch passes resp.headers.get("Retry-After") to policy.sleep()',
        ),
        ("**Retry-After is handled in RetryPolicy**, not the client, so every caller gets the same cap",),
    ),
    "retry_after_tests": Facts(
        "",
        (),
        (
            'tests/test_retry.py covers whole, capped and fractional Retry-After; delay_for parses floats (`"1.5".isdigit()` was False) and falls back to the backoff for HTTP dates',
        ),
        (),
        ("All retry and client tests pass",),
    ),
    "capped_diagnosis": Facts(
        "Find why tests/test_retry.py::test_delay_is_capped fails on CI, then fix it and run the retry tests",
        (),
        (
            "Diagnosis: RetryPolicy.delay() caps the base, then multiplies by 0.5 + random(), so a delay can reach 1.5 × max_backoff",
        ),
    ),
}


def summary_of(
    turns: list[str],
    next_steps: list[str],
    in_progress: list[str] | None = None,
    turn: tuple[list[str], list[str], list[str]] | None = None,
) -> Summary:
    """A complete summary of the named turns (pi's update prompt keeps everything earlier)."""
    fs = [FACTS[t] for t in turns]
    return Summary(
        goal=[f.goal for f in fs if f.goal],
        constraints=[c for f in fs for c in f.constraints],
        done=[d for f in fs for d in f.done],
        in_progress=in_progress or [],
        blocked=[],
        decisions=[d for f in fs for d in f.decisions],
        next_steps=next_steps,
        critical=[c for f in fs for c in f.critical],
        turn=turn,
    )


WAIT = ["Wait for the user's next request"]
SAFEGUARD = "Summary unavailable due to context limits. Older messages were truncated."
ESSENTIAL_MARKER = "<!-- essential-complete -->"


def turns_after(s: Story, u: Msg, role: str) -> list[Msg]:
    return [m for m in s.messages() if m.n > u.n and m.role == role]


# ---------------------------------------------------------------------------------------- samples


def adr0302_amnesiac_fallback() -> Story:
    """Seed 000: the third automatic compaction failed; its fallback carried the second summary
    forward and kept only the active turn's user message, so three whole turns left the request."""
    s = Story("adr0302_amnesiac_fallback", datetime(2026, 9, 14, 8, 2, 11, 417000, tzinfo=UTC))
    turn_streaming(s)
    turn_parity(s)
    u3 = turn_dry_run(s)
    s.compact(summary_of(["streaming", "parity"], WAIT), u3, usage_in_details=True)
    turn_retry_after(s)
    turn_retry_after_tests(s)
    u6 = turn_rename_timeout(s)
    done = ["streaming", "parity", "dry_run", "retry_after", "retry_after_tests"]
    c2 = s.compact(summary_of(done, WAIT), u6, usage_in_details=True)
    turn_logging(s)
    turn_lint_and_e2e(s)
    active = s.user(
        "Good. Now make the nightly job upload in batches of settings.batch_size instead of one request "
        "for the whole day, so test_upload_payload passes, and rerun make e2e against the fixture database."
    )
    s.compact(
        None,
        active,
        pi_text=c2.summary,
        native_text=c2.native_summary,
        extra_details={"usage": None, "retainedTailShape": "latest_user_message"},
        boundary=active,
        represents=c2.represents,
        retains=[active],
        shape="latest_user_message",
        native_extra={"usage": None},
    )
    return s


def truncated_summary_loop() -> Story:
    """Seed 004: every summary is cut at the output limit before its last (pi) or essential
    (protocol) section, the boundary never moves, and the next message compacts again."""
    s = Story("truncated_summary_loop", datetime(2026, 8, 21, 14, 37, 2, 90000, tzinfo=UTC))
    turn_streaming(s)
    turn_parity(s)
    turn_dry_run(s)
    u4 = turn_retry_after(s)
    summary = summary_of(["streaming", "parity", "dry_run"], WAIT)
    loop = dict(native_extra={"truncated": True})
    s.compact(summary, u4, cut=("## Critical Context", 21), native_cut=(ESSENTIAL_MARKER, 29), **loop)
    s.user("What's still open on the exporter work?")
    s.answer(
        "From what I can see: the streaming export, the byte-parity test and `--dry-run` are done. Nothing is "
        "in progress; the Retry-After change in invoicer/http/retry.py has no dedicated tests yet."
    )
    s.compact(summary, u4, cut=("## Next Steps", 51), native_cut=("## Continuation contract", 44), **loop)
    s.user("Then add tests for the Retry-After path.")
    s.step("Reading the current retry tests.", s.ws.read("tests/test_retry.py"))
    s.compact(
        summary, u4, cut=("## Key Decisions", 12), native_cut=("## Safety and user constraints", 23), **loop
    )
    return s


def compaction_loop_nothing_summarized() -> Story:
    """OpenClaw with a small local model (shared/real_sessions/pi/SOURCES.md): the window is
    smaller than keepRecentTokens, so every compaction keeps everything, summarizes nothing and
    the overflow retry compacts again within the same turn."""
    s = Story(
        "compaction_loop_nothing_summarized", datetime(2026, 5, 3, 21, 14, 40, 512000, tzinfo=UTC), QWEN_LOCAL
    )
    ws = s.ws
    u1 = s.user("Make load_settings reject a negative INVOICER_BATCH_SIZE with a clear error.")
    s.step("Let me look at the config module.", ws.read("invoicer/config.py"))
    s.step(
        "I'll validate the batch size right after parsing it.",
        ws.edit(
            "invoicer/config.py",
            (
                "    env = dict(os.environ if env is None else env)\n",
                '    env = dict(os.environ if env is None else env)\n    batch_size = int(env.get("INVOICER_BATCH_SIZE", "500"))\n    if batch_size <= 0:\n        raise ValueError(f"INVOICER_BATCH_SIZE must be positive, got {batch_size}")\n',
            ),
            (
                '        batch_size=int(env.get("INVOICER_BATCH_SIZE", "500")),\n',
                "        batch_size=batch_size,\n",
            ),
        ),
    )
    s.answer(
        "Done: load_settings now raises `ValueError: INVOICER_BATCH_SIZE must be positive, got -5` for zero or negative values."
    )
    s.user(
        "The March 2 export has 1711 rows but the ledger reports 1709 invoices. Find the two that are missing."
    )
    export = "/var/lib/invoicer/exports/invoices-20260302.csv"
    s.step("Counting rows in the export first.", bash(f"wc -l {export}", f"1712 {export}\n"))
    s.step("Looking at the rows themselves.", bash(f"head -300 {export}", export_rows(300)))
    for _ in range(4):
        prompt = s.model.system_tokens + s.context_tokens()
        s.fail(
            f"400 This model's maximum context length is 4096 tokens. However, your messages resulted in "
            f"{prompt} tokens. Please reduce the length of the messages."
        )
        s.compact(
            None,
            u1,
            pi_text=SAFEGUARD,
            native_text=SAFEGUARD,
            details=False,
            from_hook=True,
            trigger="overflow",
            native_extra={"usage": None, "failure_reason": "no_new_history", "requests": 0},
        )
    prompt = s.model.system_tokens + s.context_tokens()
    s.fail(
        f"400 This model's maximum context length is 4096 tokens. However, your messages resulted in {prompt} tokens. Please reduce the length of the messages."
    )
    return s


def export_rows(n: int) -> str:
    """The first n lines of a day's export, as `head` prints them (CSV with \\r\\n endings)."""
    rows = ["number,customer_id,currency,total"]
    for k in range(n - 1):
        cents = jitter(("row", k), 1_250, 389_900)
        rows.append(
            f"INV-2026-03{k + 1:05d},C-{jitter(('cust', k), 10_000, 19_999)},EUR,{cents // 100}.{cents % 100:02d}"
        )
    return "".join(r + "\r\n" for r in rows)


def orphan_tool_result_after_cut() -> Story:
    """An external compactor kept from a toolResult entry (pi itself never cuts there): the next
    request starts with a tool result whose call was summarized away."""
    s = Story("orphan_tool_result_after_cut", datetime(2026, 6, 30, 10, 5, 58, 733000, tzinfo=UTC))
    ws = s.ws
    turn_streaming(s)
    s.user("tests/test_retry.py::test_delay_is_capped fails on CI since the jitter change. Find out why.")
    s.step(
        "Reading the policy and the test.", ws.read("invoicer/http/retry.py"), ws.read("tests/test_retry.py")
    )
    s.answer(
        "`RetryPolicy.delay()` caps the exponential base at `max_backoff` and only then multiplies by "
        "`0.5 + random()`, so a delay can reach 1.5 × max_backoff. The test samples `delay(10)` 50 times with "
        "max_backoff=4.0, so it fails almost every run. The cap has to apply after the jitter."
    )
    s.user("Fix it so the cap holds after jitter, and run the retry tests.")
    capped = ("assert all(policy.delay(10) <= 4.0 for _ in range(50))", "assert False")
    run = s.step(
        "Reproducing first.", ws.pytest("tests/test_retry.py", failures={"test_delay_is_capped": capped})
    )
    result = turns_after(s, run, "tool")[0]
    s.step(
        "Applying the jitter before the cap.",
        ws.edit(
            "invoicer/http/retry.py",
            (
                "        base = min(self.backoff * 2**attempt, self.max_backoff)\n        return base * (0.5 + random.random())\n",
                "        jittered = self.backoff * 2**attempt * (0.5 + random.random())\n        return min(jittered, self.max_backoff)\n",
            ),
        ),
    )
    s.step("Re-running the retry tests.", ws.pytest("tests/test_retry.py"))
    s.answer(
        "Fixed: `delay()` now jitters first and caps last, so it never exceeds `max_backoff`. tests/test_retry.py passes."
    )
    summary = summary_of(
        ["streaming", "capped_diagnosis"],
        ["Check the result of the retry tests that were just run"],
        in_progress=["Fix RetryPolicy.delay() so the cap holds after jitter"],
    )
    s.compact(summary, result, details=False, from_hook=None, boundary=run)
    return s


MEMRAY_RUN = (
    "Writing profile results into /tmp/nightly.bin\nexported 1711 invoices for 2026-03-02\n"
    "[memray] Successfully generated profile results.\n\nYou can now generate reports from the stored "
    "allocation records.\nSome example commands to generate reports:\n\n"
    "/usr/bin/python3 -m memray flamegraph /tmp/nightly.bin\n"
)
MEMRAY_STATS = """📏 Total allocations:
	3184552

📦 Total memory allocated:
	2.914GB

📊 Histogram of allocation size:
	min: 1.000B
	----------------------------------------
	< 6.000B   :   2341 ▇
	< 37.000B  : 1711982 ▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇
	< 226.000B : 1311204 ▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇
	< 1.329KB  : 158841 ▇▇▇
	----------------------------------------
	max: 184.512MB

🥇 Top 3 largest allocating locations (by size):
	- fetchall:psycopg/cursor.py:851 -> 1.706GB
	- invoices_for_day:invoicer/store.py:25 -> 612.402MB
	- __init__:<string>:3 -> 401.116MB

📈 Peak memory usage: 2.104GB
"""


def live_question_summarized() -> Story:
    """Seed 003: a mid-turn compaction (the turn is a long tool loop with no answer yet) removed
    the user's own request from the next prompt; only a summary of it is left."""
    s = Story("live_question_summarized", datetime(2026, 7, 8, 16, 20, 9, 301000, tzinfo=UTC))
    ws = s.ws
    turn_streaming(s)
    u2 = turn_parity(s)
    s.compact(summary_of(["streaming"], WAIT), u2)
    s.user(
        "The nightly job still peaks at 2.1 GB RSS on the March 2 batch. Find where the memory goes and get "
        "the peak under 500 MB without changing the CSV output."
    )
    memray = "python -m memray run -o /tmp/nightly.bin -m invoicer.cli export --day 2026-03-02 --dry-run"
    s.step("Profiling the job on the March 2 fixture.", bash(memray, MEMRAY_RUN, 0, 41.0))
    s.step(
        "Reading the allocation stats.", bash("python -m memray stats /tmp/nightly.bin", MEMRAY_STATS, 0, 2.2)
    )
    s.step("Most of it is `fetchall()` in `invoices_for_day`. Reading it.", ws.read("invoicer/store.py"))
    keep = s.step(
        "`fetchall()` materialises the whole day before the first invoice is yielded. A named (server-side) "
        "cursor streams rows in chunks instead.",
        ws.edit(
            "invoicer/store.py",
            (
                "    with connect() as conn, conn.cursor() as cur:\n",
                '    with connect() as conn, conn.cursor(name="invoices_for_day") as cur:\n        cur.itersize = 2000\n',
            ),
            ("in cur.fetchall():", "in cur:"),
        ),
    )
    prefix = (
        [
            "Find where the nightly job's memory goes (2.1 GB RSS peak on the March 2 batch) and get the peak under 500 MB without changing the CSV output"
        ],
        [
            "memray on the March 2 fixture: peak 2.104GB; fetchall in invoices_for_day (invoicer/store.py:25) allocates 1.706GB"
        ],
        [
            "The kept messages switch invoices_for_day to a named server-side cursor (itersize 2000); the job must be profiled again"
        ],
    )
    history = summary_of(["streaming", "parity"], ["Continue the memory investigation"])
    history.turn = prefix
    s.compact(history, keep)
    s.step("Profiling again with the server-side cursor.", bash(memray, MEMRAY_RUN, 0, 38.0))
    return s


DANGLING_ID = "4be1c07a"


def dangling_first_kept() -> Story:
    """An external compactor wrote a compaction whose firstKeptEntryId names no entry of this
    file (it computed the id against another copy of the session): pi keeps nothing raw."""
    s = Story("dangling_first_kept", datetime(2026, 4, 17, 9, 48, 33, 6000, tzinfo=UTC))
    turn_streaming(s)
    turn_parity(s)
    last_of_parity = s.messages()[-1]
    turn_dry_run(s)
    intended = summary_of(["streaming", "parity"], WAIT)
    s.compact(
        intended, None, first_kept_id=DANGLING_ID, details=False, from_hook=None,
        boundary=DANGLING_ID, represents=[(s.messages()[0], last_of_parity)],
    )  # fmt: skip
    turn_changelog(s)
    return s


def healthy_chained() -> Story:
    """Two chained threshold compactions done right: the first splits a turn, the second
    re-summarizes from the first one's firstKeptEntryId; every summary is complete."""
    s = Story("healthy_chained", datetime(2026, 10, 2, 11, 31, 45, 880000, tzinfo=UTC))
    turn_streaming(s)
    turn_parity(s)
    u3 = turn_dry_run(s)
    split_at = turns_after(s, u3, "assistant")[2]
    prefix = (
        ["Add `invoicer export --dry-run`: write the CSV, skip the ledger upload"],
        [
            "Read invoicer/cli.py and tests/test_cli.py; added --dry-run and a keyword-only dry_run to run_nightly_export"
        ],
        ["The kept messages add tests/test_cli.py::test_dry_run_flag and run the CLI and job tests"],
    )
    first = summary_of(["streaming", "parity"], ["Finish the --dry-run flag"], turn=prefix)
    s.compact(first, split_at)
    turn_retry_after(s)
    u5 = turn_retry_after_tests(s)
    s.compact(summary_of(["streaming", "parity", "dry_run", "retry_after"], WAIT), u5)
    turn_changelog(s)
    return s


# ---------------------------------------------------------------------------------------- catalogue


@dataclass(frozen=True)
class Sample:
    name: str
    build: Callable[[], Story]
    seed: str
    incident: str
    pi_reports: str  # what the analysis reports, as README states it (tests check the codes)
    native_reports: str
    # Native ledger settings; window and reserve only where the incident is about the window.
    window: int | None = None
    reserve: int | None = None
    keep_recent: int = 20_000


SAMPLES: tuple[Sample, ...] = (
    Sample(
        "adr0302_amnesiac_fallback",
        adr0302_amnesiac_fallback,
        "seed 000, ADR 0302",
        "3rd automatic compaction failed with no usage; its fallback carried the 2nd summary forward and kept only the active user message",
        "`hole` error (168 messages: 3 user / 34 assistant / 131 tool), `amnesiac_fallback` error, `usage_missing` warning",
        "same as pi: `hole` error (3 user / 34 assistant / 131 tool), `amnesiac_fallback` error, `usage_missing` warning",
    ),
    Sample(
        "truncated_summary_loop",
        truncated_summary_loop,
        "seed 004",
        "three summaries cut at the output limit (pi template before its last sections; protocol before the essential marker), same boundary every time",
        "`compaction_loop` error (3 checkpoints, same boundary), 3 × `truncated_summary` warning",
        "`compaction_loop` error, 3 × `truncated_summary` error (cut before the essential marker, `truncated: true`)",
    ),
    Sample(
        "compaction_loop_nothing_summarized",
        compaction_loop_nothing_summarized,
        "OpenClaw small-model loops, shared/real_sessions/pi/SOURCES.md",
        "window (4,096) below keepRecentTokens: four overflow compactions in one turn keep everything and summarize nothing",
        "`compaction_loop` error (4 checkpoints, same boundary), `compaction_storm` warning (4 in one turn), `compacts_first` warning (its last reply is the model's context overflow: pi compacts once more before the next prompt)",
        "`compaction_loop` error (same boundary), `over_budget` error (context above the 4,096 window), `compaction_storm` warning",
        window=4_096,
        reserve=512,
    ),
    Sample(
        "orphan_tool_result_after_cut",
        orphan_tool_result_after_cut,
        "design §3: pi never cuts at a toolResult",
        "external compaction keeps from a toolResult entry, so its tool call is summarized away",
        "`orphan_tool_result` error (1)",
        "`orphan_tool_result` error (1)",
    ),
    Sample(
        "live_question_summarized",
        live_question_summarized,
        "seed 003",
        "mid-turn compaction during a tool loop summarizes the active turn's own request",
        "`live_question_summarized` error",
        "`live_question_summarized` error",
    ),
    Sample(
        "dangling_first_kept",
        dangling_first_kept,
        "design §3: pi keeps nothing raw",
        "external compaction whose firstKeptEntryId names no entry of the file",
        "`dangling_first_kept` error",
        "`dangling_first_kept` error, `hole` error (the dry-run turn the summary never covered: 1 user / 5 assistant / 6 tool)",
    ),
    Sample(
        "healthy_chained",
        healthy_chained,
        "design §2, the control case",
        "two chained threshold compactions done right (split turn, then update from the previous firstKeptEntryId)",
        "no findings",
        "no findings",
    ),
)


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(dumps(r) + "\n" for r in records), encoding="utf-8")


def readme() -> str:
    lines = [
        "# Sample sessions",
        "",
        "Each file reproduces one compaction incident from the seeds (`shared/seeds/`) in a coding-agent",
        "session on a small Python service. `python sample_sessions/generate.py` writes all of them",
        "(deterministically: `tests/test_samples.py` checks a regeneration is byte-identical and asserts",
        "every finding listed here). `pi/` holds pi v3 session files, `native/` the same stories as native",
        "ledgers (docs/native-format.md).",
        "",
    ]
    for sm in SAMPLES:
        lines.append(f"- `pi/{sm.name}.jsonl` ({sm.seed}): {sm.incident}. Reports {sm.pi_reports}.")
        lines.append(f"- `native/{sm.name}.jsonl` ({sm.seed}): the same story. Reports {sm.native_reports}.")
    return "\n".join(lines) + "\n"


def write_all(out: Path) -> list[Path]:
    written = []
    for sm in SAMPLES:
        story = sm.build()
        pi_path, native_path = out / "pi" / f"{sm.name}.jsonl", out / "native" / f"{sm.name}.jsonl"
        write_jsonl(pi_path, pi_lines(story))
        settings = {"window": sm.window, "reserve": sm.reserve, "keep_recent": sm.keep_recent}
        settings = {k: v for k, v in settings.items() if v is not None}
        producer = f"sample_sessions/generate.py ({sm.seed})"
        write_jsonl(native_path, native_lines(story, producer, settings))
        written += [pi_path, native_path]
    (out / "README.md").write_text(readme(), encoding="utf-8")
    return [*written, out / "README.md"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--out", type=Path, default=HERE, help="directory to write into (default: next to this script)"
    )
    args = ap.parse_args(argv)
    for p in write_all(args.out):
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
