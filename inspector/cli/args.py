"""Argument types shared by the commands: every numeric flag has a range a user would find sensible.

A value outside it is a usage error (argparse: exit 2) that names the flag, the range and the value,
never a number that later overflows an encoder or a loop. The ranges:

- tokens (a context window, a reserve, a budget, a threshold): up to 100,000,000, far past any
  model's window;
- a line of a session file: up to 1,000,000,000;
- a count of events or invocations: up to 1,000,000;
- seconds (a request timeout): finite, more than 0, up to one day;
- a ratio: in (0, 1].

NaN and infinity are refused everywhere (they are not numbers a user means).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

MAX_TOKENS = 100_000_000
MAX_LINE = 1_000_000_000
MAX_COUNT = 1_000_000
MAX_SECONDS = 86_400.0

_SHOWN = 40  # characters of a refused value quoted back (a pasted megabyte is not echoed)


def _shown(value: str) -> str:
    return repr(value if len(value) <= _SHOWN else value[:_SHOWN] + "…")


def whole_number(minimum: int, maximum: int) -> Callable[[str], int]:
    """An argparse type: a whole number in [minimum, maximum], with a message saying which."""

    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:  # also the digit strings too long to convert
            n = None
        if n is None or not minimum <= n <= maximum:
            raise argparse.ArgumentTypeError(f"expected a whole number between {minimum:,} and {maximum:,}, got {_shown(value)}")
        return n

    return parse


def _real(value: str) -> float | None:
    try:
        x = float(value)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def ratio(value: str) -> float:
    """An argparse type: a fraction in (0, 1]."""
    r = _real(value)
    if r is None or not 0 < r <= 1:
        raise argparse.ArgumentTypeError(f"expected a ratio more than 0 and at most 1, got {_shown(value)}")
    return r


def seconds(value: str) -> float:
    """An argparse type: a finite duration in seconds, more than 0 and at most a day."""
    s = _real(value)
    if s is None or not 0 < s <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"expected seconds more than 0 and at most {MAX_SECONDS:,.0f}, got {_shown(value)}")
    return s


tokens = whole_number(1, MAX_TOKENS)  # a window, a reserve, a budget
tokens_or_zero = whole_number(0, MAX_TOKENS)  # where 0 means something (a summary of 0 tokens, no reserve)
line_number = whole_number(1, MAX_LINE)
count = whole_number(0, MAX_COUNT)  # events or invocations
positive_count = whole_number(1, MAX_COUNT)
