"""Named pieces of flat observation vectors (OpenSpiel's observer idea), shared by all games."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np


@dataclass(frozen=True)
class Piece:
    """One named piece of a flat observation vector."""

    name: str
    offset: int
    shape: tuple[int, ...]
    doc: str
    high: float = np.inf  # upper bound of its values
    low: float = 0.0  # lower bound of its values

    @property
    def size(self) -> int:
        """Number of floats."""
        return math.prod(self.shape)  # not np.prod: called per view, and 10x faster


def piece_bounds(pieces: tuple[Piece, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32 bounds of a flat observation laid out as ``pieces`` (its Box)."""
    last = pieces[-1]
    low = np.empty(last.offset + last.size, np.float32)
    high = np.empty_like(low)
    for p in pieces:
        low[p.offset : p.offset + p.size] = p.low
        high[p.offset : p.offset + p.size] = p.high
    return low, high


Spec = tuple  # (name, shape, doc) or (name, shape, doc, (low, high)); bounds default to [0, 1]


def build_pieces(specs: tuple[Spec, ...]) -> tuple[Piece, ...]:
    """Pieces laid end to end from (name, shape, doc[, (low, high)]) specs."""
    out, off = [], 0
    for name, shape, doc, *bounds in specs:
        low, high = bounds[0] if bounds else (0.0, 1.0)
        piece = Piece(name, off, shape, doc, high, low)
        out.append(piece)
        off += piece.size
    return tuple(out)


def table_specs(max_melds: int, num_players: int) -> tuple[tuple[str, tuple[int, ...], str], ...]:
    """The table-meld pieces of the joker games (written by ``core.table.write_table_obs``)."""
    m, p = max_melds, num_players
    return (
        ("meld_kind", (m, 2), "per table slot: one-hot group / run (zeros: empty)"),
        ("meld_owner", (m, p), "per slot: one-hot of the player who laid it (seat-relative)"),
        ("meld_cards", (m, 52), "per slot: natural cards in the meld"),
        ("meld_jokers", (m, 14), "per slot: run positions held by jokers; groups: count in [0]"),
        ("meld_ends", (m, 2), "per slot: run low and high position / 13 (groups: rank / 12)"),
    )


class PieceLayout:
    """Mixin for a layout with a ``pieces`` tuple: its size, offsets and named views."""

    if TYPE_CHECKING:  # what the layouts define (a cached property of theirs)

        @property
        def pieces(self) -> tuple[Piece, ...]:
            """The named observation pieces, in order."""
            ...

    @property
    def obs_size(self) -> int:
        """Length of the observation vector."""
        last = self.pieces[-1]
        return last.offset + last.size

    def offset(self, name: str) -> int:
        """Offset of a named piece."""
        for piece in self.pieces:
            if piece.name == name:
                return piece.offset
        raise KeyError(name)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) bounds of the observation vector."""
        return piece_bounds(self.pieces)

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named views of a flat observation (leading axes kept)."""
        lead = obs.shape[:-1]
        out = {}
        for name, start, stop, shape in self._spans:
            view = obs[..., start:stop]
            # a flat piece of a flat observation is already its own shape
            out[name] = view if not lead and len(shape) == 1 else view.reshape(lead + shape)
        return out

    @cached_property
    def _spans(self) -> tuple[tuple[str, int, int, tuple[int, ...]], ...]:
        """(name, start, stop, shape) of each piece, worked out once: ``split`` runs for every
        decision of the rule agents, and the attribute work was most of its cost.
        """
        return tuple((p.name, p.offset, p.offset + p.size, p.shape) for p in self.pieces)
