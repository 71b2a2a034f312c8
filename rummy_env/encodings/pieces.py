"""Named pieces of flat observation vectors (OpenSpiel's observer idea), shared by all games."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Piece:
    """One named piece of a flat observation vector."""

    name: str
    offset: int
    shape: tuple[int, ...]
    doc: str
    high: float = np.inf  # upper bound of its values (lower bound: 0 unless a game says)

    @property
    def size(self) -> int:
        """Number of floats."""
        return int(np.prod(self.shape))
