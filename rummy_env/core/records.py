"""Stable names for numba record types, so that cached kernels never collide.

numba names a compiled function after its argument types, and a record type by a number handed
out in creation order in each process (plus a per-process compile counter). Two processes that
compile one function for two record layouts (say 2 and 8 players) can thus both cache it under
one symbol name; a third process that loads both entries links one of them for both layouts and
writes through the wrong field offsets (seen: a hand of 64 cards, "double free or corruption",
segfaults). Naming record types after a digest of their layout makes the names differ whenever
the layouts do, and stay equal across processes when they do not.

The patch is process-wide and must be in place before any kernel taking a record compiles:
``rummy_env.core`` imports this module, and every kernels module imports from ``rummy_env.core``.
"""

from __future__ import annotations

import hashlib

from numba import types


def record_mangling_args(rec: types.Record) -> tuple[str, tuple[str, ...]]:
    """Numba's mangling arguments for a record type: its class and a digest of its layout."""
    return type(rec).__name__, ("h" + hashlib.sha1(rec.name.encode()).hexdigest()[:20],)


# a deliberate patch of numba's class (a method there, a property here)
types.Record.mangling_args = property(record_mangling_args)  # type: ignore[method-assign,assignment]
