"""Argument types shared by the commands."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least `minimum`, with a message saying which."""

    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
        if n < minimum:
            raise argparse.ArgumentTypeError(f"expected a number of at least {minimum}, got {n}")
        return n

    return parse
