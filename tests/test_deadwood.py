"""The exact deadwood solver against a brute-force oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_gin_rummy import brute_deadwood

from rummy_env.core import cards_to_mask, deadwood, deadwood_after_discard


def _hands(masks: list[int]) -> np.ndarray:
    h = np.zeros((len(masks), 52), np.int8)
    for i, m in enumerate(masks):
        for c in range(52):
            h[i, c] = m >> c & 1
    return h


def _random_masks(rng, n, size, pool=52):
    out = []
    for _ in range(n):
        base = rng.choice(52, size=pool, replace=False)
        out.append(sum(1 << int(c) for c in rng.choice(base, size=size, replace=False)))
    return out


@pytest.mark.parametrize("size", [0, 3, 7, 10, 11])
def test_random_and_dense_hands_match_brute_force(size):
    rng = np.random.default_rng(size)
    # uniform hands, and adversarial ones drawn from a few ranks so groups and runs overlap
    masks = _random_masks(rng, 400, size)
    for _ in range(400):
        ranks = rng.choice(13, size=4, replace=False)
        pool = [s * 13 + int(r) for s in range(4) for r in ranks] + [
            s * 13 + int(r) + 1 for s in range(4) for r in ranks if r < 12
        ]
        pool = sorted(set(pool))
        pick = rng.choice(pool, size=min(size, len(pool)), replace=False)
        masks.append(sum(1 << int(c) for c in pick))
    masks = [m for m in masks if bin(m).count("1") == size]
    got = deadwood(_hands(masks))
    want = [brute_deadwood(m) for m in masks]
    assert got.tolist() == want


def test_after_discard_matches_brute_force():
    rng = np.random.default_rng(7)
    masks = _random_masks(rng, 300, 11, pool=24)
    got = deadwood_after_discard(_hands(masks))
    want = [min(brute_deadwood(m & ~(1 << c)) for c in range(52) if m >> c & 1) for m in masks]
    assert got.tolist() == want


@settings(max_examples=300, deadline=None)
@given(st.sets(st.integers(0, 51), min_size=0, max_size=11))
def test_hypothesis_hands(cards):
    m = sum(1 << c for c in cards)
    assert int(deadwood(_hands([m]))[0]) == brute_deadwood(m)


@pytest.mark.parametrize(
    "hand,dw",
    [
        ("Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc", 0),  # one long run
        ("7c 7d 7h 7s 8s 9s 5h 6h Kd Qd", 31),  # 7♣7♦7♥ + 7-8-9♠ beats 5-6-7♥ + 7♣7♦7♠
        ("7c 7d 7h 8h 9h 2s 3s 4s Ks Kd", 34),  # 7♥ in the run (7+7 left) beats the group (8+9)
        ("Qc Kc Ac 2d 3d 4d 5d 9h 9s 9c", 21),  # Q-K-A is not a run (ace low only)
        ("As 2s 3s 4s 4c 4d 4h 5h 6h 7h", 0),
    ],
)
def test_known_hands(hand, dw):
    assert int(deadwood(_hands([cards_to_mask(hand)]))[0]) == dw


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="shape"):
        deadwood(np.zeros((2, 54), np.int8))
    with pytest.raises(ValueError, match="0/1"):
        deadwood(np.full((1, 52), 2, np.int8))
    with pytest.raises(ValueError, match="12 cards"):
        deadwood(_hands([(1 << 12) - 1]))
    with pytest.raises(ValueError, match="10 cards"):
        deadwood_after_discard(_hands([(1 << 10) - 1]))
