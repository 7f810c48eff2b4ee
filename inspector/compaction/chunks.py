"""Chunked re-summarization (ADR 0302): a range too large for one summarizer request is split into
contiguous chunks that each fit the request budget. Each request after the first carries the
previous chunk's summary through the update prompt, and the range's file list rides on the last
one, so the budget of a chunk depends on its place: the first pays for the carried summary (if
any), later ones for the previous chunk's summary at its output budget, the last for the file list.

The chunks partition the range exactly: chunk k covers path positions [lo_k, hi_k) with lo_1 = the
range start, lo_{k+1} = hi_k and hi_last = the range end. A single message larger than any chunk
can hold is clipped *in the prompt only* (head and tail kept, the middle elided), so every message
of the range is still read by some request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

MAX_REQUESTS = 16


@dataclass(slots=True)
class Chunk:
    lo: int  # path positions [lo, hi) this request covers
    hi: int
    positions: list[int]  # message positions in [lo, hi), in order
    texts: list[str]  # serialized messages ("" for one never sent, which costs nothing)
    tokens: list[int]
    clipped: list[int] = field(default_factory=list)  # positions whose text was clipped
    prompt_tokens: int = 0  # exact, with a carried summary counted at its budget
    budget: int = 0
    carry_tokens: int = 0
    file_list: bool = False


@dataclass(frozen=True, slots=True)
class ChunkBudget:
    request: int  # max prompt tokens of one request (system prompt included)
    first_carry: int  # tokens of the summary the first request carries (0: none)
    later_carry: int  # tokens a later request carries: the previous chunk's output budget
    file_list: int  # tokens the file list adds to the last request
    overhead: int  # system prompt + instructions + tags, without carried summary or messages


def split_range(
    lo: int,
    hi: int,
    positions: list[int],
    parts: list[tuple[str, int]],
    budget: ChunkBudget,
    is_boundary: Callable[[int], bool],
    clip: Callable[[str, int], str],
    count: Callable[[str], int],
    exact: Callable[[list[str], bool, bool], int],
    max_requests: int = MAX_REQUESTS,
) -> list[Chunk] | None:
    """Contiguous chunks of [lo, hi) that each fit `budget.request`, or None when even one
    message cannot fit any request (no room after the carried summary and instructions).

    `exact(texts, carries, file_list)` is the exact prompt size of a request without the carried
    summary; chunks are packed on additive estimates, then checked with it and shrunk if needed.
    Returns more than `max_requests` chunks when the range needs them (the caller falls back).
    """
    if _fits_one(positions, parts, budget):
        one = _build(lo, hi, positions, [t for t, _ in parts], [n for _, n in parts], set(), [0], budget, exact)
        if one[0].prompt_tokens <= budget.request:
            return one
    laid = _estimated_starts(positions, parts, budget, is_boundary, clip, count)
    if laid is None:
        return None
    texts, tokens, clipped, starts = laid
    chunks = _build(lo, hi, positions, texts, tokens, clipped, starts, budget, exact)
    # Exact check: estimates add a separator per message, so this rarely moves anything.
    guard = 0
    while guard < 4 * len(positions) + 4:
        guard += 1
        bad = next((i for i, ch in enumerate(chunks) if ch.prompt_tokens > ch.budget and len(ch.positions) > 1), None)
        if bad is None:
            break
        s = starts.index(_index_of(positions, chunks[bad].positions[0]))
        end = starts[s + 1] if s + 1 < len(starts) else len(positions)
        starts.insert(s + 1, end - 1)
        chunks = _build(lo, hi, positions, texts, tokens, clipped, starts, budget, exact)
    return chunks  # more than `max_requests` of them: the caller reports the bound


def least_chunks(
    positions: list[int],
    parts: list[tuple[str, int]],
    budget: ChunkBudget,
    is_boundary: Callable[[int], bool],
    clip: Callable[[str, int], str],
    count: Callable[[str], int],
) -> int | None:
    """How many chunks `split_range` makes of the range at the least (None: it makes none),
    without an exact count: the chunks packed on estimates, which its exact check only splits."""
    if _fits_one(positions, parts, budget):
        return 1
    laid = _estimated_starts(positions, parts, budget, is_boundary, clip, count)
    return None if laid is None else len(laid[3])


def _fits_one(positions: list[int], parts: list[tuple[str, int]], budget: ChunkBudget) -> bool:
    """A range that goes into one request on estimates (it needs no room for a later one)."""
    room_first = budget.request - budget.overhead - budget.first_carry
    return bool(positions) and sum(n + 1 for t, n in parts if t) <= room_first - budget.file_list


def _estimated_starts(
    positions: list[int],
    parts: list[tuple[str, int]],
    budget: ChunkBudget,
    is_boundary: Callable[[int], bool],
    clip: Callable[[str, int], str],
    count: Callable[[str], int],
) -> tuple[list[str], list[int], set[int], list[int]] | None:
    """The messages' texts and tokens (clipped to what the tightest chunk holds) and the chunk
    starts packed on their estimates; None when one message cannot fit any request."""
    room_first = budget.request - budget.overhead - budget.first_carry
    room_later = budget.request - budget.overhead - budget.later_carry
    # One message (with its separator) must fit the tightest chunk: a later one with the file list.
    per_message = min(room_first, room_later) - budget.file_list - 2
    if per_message <= 0:
        return None
    texts, tokens, clipped = _clip_to(positions, parts, per_message, clip, count)
    costs = [n + 1 if t else 0 for t, n in zip(texts, tokens, strict=True)]  # + the blank-line separator
    starts = _greedy_starts(positions, costs, room_first, room_later, is_boundary)
    _split_last(starts, costs, room_first, room_later, budget.file_list)
    return texts, tokens, clipped, starts


def _clip_to(
    positions: list[int],
    parts: list[tuple[str, int]],
    per_message: int,
    clip: Callable[[str, int], str],
    count: Callable[[str], int],
) -> tuple[list[str], list[int], set[int]]:
    """Each message's text and tokens, a message above `per_message` clipped to it (and named)."""
    texts: list[str] = []
    tokens: list[int] = []
    clipped: set[int] = set()
    for p, (t, n) in zip(positions, parts, strict=True):
        if n > per_message:
            t = clip(t, per_message)
            n = count(t)
            clipped.add(p)
        texts.append(t)
        tokens.append(n)
    return texts, tokens, clipped


def _greedy_starts(
    positions: list[int], costs: list[int], room_first: int, room_later: int, is_boundary: Callable[[int], bool]
) -> list[int]:
    """Chunk starts packed greedily on estimates; a chunk closes at a natural boundary (a safe cut) if it can."""
    starts: list[int] = [0] if positions else []
    used = 0
    room = room_first
    j = 0
    start = 0
    while j < len(positions):
        c = costs[j]
        if used + c <= room or j == start:
            used += c
            j += 1
            continue
        k = j
        while k > start + 1 and not is_boundary(positions[k]):
            k -= 1
        if k == start + 1 and not is_boundary(positions[k]):
            k = j
        starts.append(k)
        start = k
        used = sum(costs[k:j])
        room = room_later
    return starts


def _split_last(starts: list[int], costs: list[int], room_first: int, room_later: int, file_list: int) -> None:
    """The last chunk also carries the file list: split its tail off until it fits (in place)."""
    n = len(costs)
    while starts and n - starts[-1] > 1:
        last_room = (room_first if len(starts) == 1 else room_later) - file_list
        if sum(costs[starts[-1]:n]) <= last_room:
            break
        acc = 0
        k = n
        while k - 1 > starts[-1] and acc + costs[k - 1] <= room_later - file_list:
            acc += costs[k - 1]
            k -= 1
        if k == n:
            break
        starts.append(k)


def _index_of(positions: list[int], p: int) -> int:
    from bisect import bisect_left

    return bisect_left(positions, p)


def _build(
    lo: int,
    hi: int,
    positions: list[int],
    texts: list[str],
    tokens: list[int],
    clipped: set[int],
    starts: list[int],
    budget: ChunkBudget,
    exact: Callable[[list[str], bool, bool], int],
) -> list[Chunk]:
    chunks: list[Chunk] = []
    n = len(starts)
    for k, a in enumerate(starts):
        b = starts[k + 1] if k + 1 < n else len(positions)
        c_lo = lo if k == 0 else positions[a]
        c_hi = positions[b] if b < len(positions) else hi
        carry = budget.first_carry if k == 0 else budget.later_carry
        last = k == n - 1
        ch = Chunk(
            c_lo,
            c_hi,
            positions[a:b],
            texts[a:b],
            tokens[a:b],
            [p for p in positions[a:b] if p in clipped],
            budget=budget.request,
            carry_tokens=carry,
            file_list=last,
        )
        ch.prompt_tokens = exact([t for t in ch.texts if t], carry > 0, last) + carry
        chunks.append(ch)
    return chunks
