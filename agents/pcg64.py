"""numpy's ``default_rng(seed)`` and ``Generator.integers(n)`` in compiled code, over a plain
state array: per-game agent generators that a compiled loop can hold thousands of.

The Gymnasium vector env builds the joker games' rule opponents once per game and episode,
each seeded ``default_rng(seed)`` from the game's stream, and their ties are drawn with
``rng.integers(n)``. :func:`seed_state` reproduces ``np.random.default_rng(seed)`` (numpy's
``SeedSequence`` hashing and ``PCG64``'s seeding, for a seed in ``[0, 2**32)``) into a
(:data:`STATE_SIZE`,) uint64 array and :func:`integers` draws what ``Generator.integers(n)``
draws (the 128-bit LCG with its XSL-RR output, the 32-bit buffered draw and Lemire's bounded
method), advancing the array as the generator's state advances; :func:`to_generator` makes the
numpy generator of a state. ``tests/test_pcg64.py`` compares them with numpy.

State layout: ``[state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import types
from numba.extending import overload

from rummy_env.core.jit import kernel
from rummy_env.core.rng import seed_sequence_words

STATE_SIZE = 6
_M32 = np.uint64(0xFFFFFFFF)
_MUL_HI = np.uint64(0x2360ED051FC65DA4)
_MUL_LO = np.uint64(0x4385DF649FCCF645)


@kernel(inline="always")
def _mulhi(a, b):
    """The high 64 bits of the 128-bit product ``a * b``."""
    a0 = a & _M32
    a1 = a >> np.uint64(32)
    b0 = b & _M32
    b1 = b >> np.uint64(32)
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    mid = (p00 >> np.uint64(32)) + (p01 & _M32) + (p10 & _M32)
    return a1 * b1 + (p01 >> np.uint64(32)) + (p10 >> np.uint64(32)) + (mid >> np.uint64(32))


@kernel(inline="always")
def _step(st):
    """The LCG step ``state = state * MULT + inc`` (mod 2**128)."""
    hi, lo = st[0], st[1]
    new_hi = _mulhi(lo, _MUL_LO) + hi * _MUL_LO + lo * _MUL_HI
    new_lo = lo * _MUL_LO
    s_lo = new_lo + st[3]
    carry = np.uint64(1) if s_lo < new_lo else np.uint64(0)
    st[0] = new_hi + st[2] + carry
    st[1] = s_lo


@kernel(inline="always")
def next64(st):
    """The next 64 random bits (``PCG64``'s ``next_uint64``: step, then XSL-RR)."""
    _step(st)
    x = st[0] ^ st[1]
    rot = st[0] >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@kernel(inline="always")
def next32(st):
    """The next 32 random bits (``next_uint32``: half of a 64-bit draw, the other half kept)."""
    if st[4] != 0:
        st[4] = 0
        return st[5]
    x = next64(st)
    st[4] = 1
    st[5] = x >> np.uint64(32)
    return x & _M32


@kernel
def integers(st, n):
    """``Generator.integers(n)`` for ``1 <= n <= 2**32`` (int64; ``n == 1`` draws nothing)."""
    if n <= 1:
        return np.int64(0)
    rng_excl = np.uint64(n)
    m = next32(st) * rng_excl
    leftover = m & _M32
    if leftover < rng_excl:
        threshold = (_M32 - (rng_excl - np.uint64(1))) % rng_excl
        while leftover < threshold:
            m = next32(st) * rng_excl
            leftover = m & _M32
    return np.int64(m >> np.uint64(32))


@kernel
def seed_state(seed, st):
    """Fill ``st`` with the state of ``np.random.default_rng(seed)`` (``0 <= seed < 2**32``)."""
    words = np.empty(4, np.uint64)  # SeedSequence(seed).generate_state(4, np.uint64)
    seed_sequence_words(seed, words)
    init_hi, init_lo, seq_hi, seq_lo = words[0], words[1], words[2], words[3]
    # PCG64 seeds state = (w0, w1), inc = (w2, w3)
    st[0] = 0
    st[1] = 0
    st[2] = (seq_hi << np.uint64(1)) | (seq_lo >> np.uint64(63))
    st[3] = (seq_lo << np.uint64(1)) | np.uint64(1)
    _step(st)
    lo = st[1] + init_lo
    carry = np.uint64(1) if lo < st[1] else np.uint64(0)
    st[0] = st[0] + init_hi + carry
    st[1] = lo
    _step(st)
    st[4] = 0
    st[5] = 0


def draw(rng, n):
    """A tie-break ``rng.integers(n)`` of the compiled agents (``n >= 2``), from a numpy
    ``Generator`` (``rng.integers(0, n)``) or a state array of this module (:func:`integers`).
    """
    raise NotImplementedError


# numba takes cache= here, though its stubs leave it out of the options' TypedDict
@overload(draw, jit_options={"cache": True}, inline="always")  # type: ignore[typeddict-unknown-key]
def _draw(rng, n):
    if isinstance(rng, types.NumPyRandomGeneratorType):
        return lambda rng, n: rng.integers(0, n)
    if isinstance(rng, types.Array) and rng.dtype == types.uint64 and rng.ndim == 1:
        return lambda rng, n: integers(rng, n)
    return None


class SeededGenerator:
    """Mixin of the rule agents: ``self.rng`` is ``np.random.default_rng(seed)``, built at its
    first use, and :meth:`write_rng_state` seeds a state array of this module straight from the
    seed while the generator is still unbuilt. The Gymnasium envs build their opponents anew
    every episode and play them compiled, from state arrays: a numpy generator costs about
    16 us to build and 5 us to read, most of a short episode's reset. Draws are the same as an
    eager ``default_rng(seed)``'s; a seed other than a plain int in ``[0, 2**32)`` builds the
    generator at once (its errors, or its entropy, at construction as before).
    """

    rng_from_seed = True
    """An agent built with an int seed differs from another of its class and arguments only
    in ``default_rng(seed)`` (a subclass that seeds anything else sets it False): the
    Gymnasium env then keeps its compiled policy from one episode to the next."""

    _rng: np.random.Generator | None = None
    _rng_seed: int = 0

    def _init_rng(self, seed: Any) -> None:
        if type(seed) is int and 0 <= seed < 2**32:
            self._rng, self._rng_seed = None, seed
        else:
            self._rng = np.random.default_rng(seed)

    @property
    def rng(self) -> np.random.Generator:
        """The agent's generator (its ties)."""
        if self._rng is None:
            self._rng = np.random.default_rng(self._rng_seed)
        return self._rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self._rng = value

    def rng_is_generator(self) -> bool:
        """Whether ``self.rng`` is a numpy ``Generator`` (what the compiled decisions draw
        from), without building it.
        """
        return self._rng is None or type(self._rng) is np.random.Generator

    def write_rng_state(self, st: np.ndarray) -> None:
        """Write the state of ``self.rng`` into ``st`` (a PCG64 generator's, as
        :func:`state_of`), from the seed if the generator is unbuilt.
        """
        if self._rng is None:
            seed_state(self._rng_seed, st)
        else:
            state_of(self._rng, st)


def _state_dict(st: np.ndarray) -> dict[str, Any]:
    """``bit_generator.state`` of a ``PCG64`` generator in the state ``st`` holds."""
    return {
        "bit_generator": "PCG64",
        "state": {
            "state": (int(st[0]) << 64) | int(st[1]),
            "inc": (int(st[2]) << 64) | int(st[3]),
        },
        "has_uint32": int(st[4]),
        "uinteger": int(st[5]),
    }


def to_generator(st: np.ndarray) -> np.random.Generator:
    """A numpy generator in the state ``st`` holds."""
    gen = np.random.Generator(np.random.PCG64())
    gen.bit_generator.state = _state_dict(st)
    return gen


def read_rng(agent: Any, st: np.ndarray) -> bool:
    """Write the state of ``agent.rng`` into ``st`` (from the seed, without building it, for
    an unbuilt :class:`SeededGenerator` one); False, ``st`` untouched, if it does not draw
    from ``PCG64``.
    """
    seeded = isinstance(agent, SeededGenerator)
    rng = agent._rng if seeded else agent.rng
    if rng is not None and (
        type(rng) is not np.random.Generator or type(rng.bit_generator) is not np.random.PCG64
    ):
        return False
    if seeded:
        agent.write_rng_state(st)
    else:
        state_of(agent.rng, st)
    return True


def write_rng(agent: Any, st: np.ndarray) -> None:
    """Put ``agent.rng`` (the same generator object) in the state ``st`` holds."""
    agent.rng.bit_generator.state = _state_dict(st)


def state_of(gen: np.random.Generator, st: np.ndarray) -> None:
    """Write the state of numpy generator ``gen`` (a ``PCG64`` one) into ``st``."""
    s = gen.bit_generator.state
    if s["bit_generator"] != "PCG64":
        raise ValueError(f"gen must draw from PCG64, got {s['bit_generator']}")
    state, inc = s["state"]["state"], s["state"]["inc"]
    mask = (1 << 64) - 1
    st[:] = (state >> 64, state & mask, inc >> 64, inc & mask, s["has_uint32"], s["uinteger"])


__all__ = [
    "SeededGenerator",
    "STATE_SIZE",
    "draw",
    "integers",
    "next32",
    "next64",
    "read_rng",
    "seed_state",
    "state_of",
    "to_generator",
    "write_rng",
]
