"""The person's typed input in the terminal: the commands (:data:`QUIT`, :data:`HELP`) and
:func:`match_move`, which reads a typed key, move name or beginning of one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rummy_env.core.cards import SUIT_SYMBOLS, SUITS

QUIT = ("q", "quit", "exit")
HELP = ("?", "help")


def _canon(text: str) -> str:
    """A move name or typed text reduced to lower-case letters and digits, suit symbols as
    letters and a ten as ``t`` (so ``discard 10♥`` reads as ``DISCARD[Th]``).
    """
    for sym, letter in zip(SUIT_SYMBOLS, SUITS, strict=True):
        text = text.replace(sym, letter)
    text = re.sub(r"[^0-9a-z]", "", text.lower())
    return re.sub(r"(?<![0-9])10(?=[cdhs](?![a-z]))", "t", text)


def match_move(text: str, names: Sequence[str]) -> int | str:
    """The index in ``names`` of the move typed as ``text``: a key (``1`` .. ``len(names)``), a
    move name (case, spaces and brackets do not matter) or a beginning of exactly one name;
    otherwise a message saying why not.
    """
    typed = text.strip()
    if typed.isdigit():
        k = int(typed)
        if 1 <= k <= len(names):
            return k - 1
        return f"no move has the key {typed}: the keys are 1 to {len(names)}"
    want = _canon(typed)
    if not want:
        return "type the key of a move (a number) or its name; ? lists the commands"
    canon = [_canon(n) for n in names]
    exact = [i for i, c in enumerate(canon) if c == want]
    if exact:
        return exact[0]
    starts = [i for i, c in enumerate(canon) if c.startswith(want)]
    if len(starts) == 1:
        return starts[0]
    if starts:
        shown = ", ".join(names[i] for i in starts[:6]) + (", ..." if len(starts) > 6 else "")
        return f"{typed!r} could be {len(starts)} moves ({shown}): type more of the name or a key"
    return f"{typed!r} is not a legal move now: type a key from the list, or ? for help"
