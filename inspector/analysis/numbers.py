"""One number style for counts and tokens, everywhere (CLI, app, plot ticks): thousands
separators, and a whole number never shows a decimal point ("22,122", not "22122.0")."""

from __future__ import annotations

import math


def count(n: int | float) -> str:
    """A count or a token number as people read it."""
    if isinstance(n, float):
        if not math.isfinite(n):
            return str(n)
        if not n.is_integer():
            return f"{n:,.1f}"
        n = int(n)
    return f"{n:,}"


def nice_ticks(top: float, most: int = 5) -> list[int]:
    """At most `most` + 1 round tick values from 0 up to at least `top` (1, 2 or 5 times a power of ten apart)."""
    if top <= 0:
        return [0]
    raw = top / most
    base = 10 ** math.floor(math.log10(raw))
    step = next(m * base for m in (1, 2, 5, 10) if m * base >= raw)
    step = max(1, int(step))
    return list(range(0, math.ceil(top / step) * step + 1, step))
