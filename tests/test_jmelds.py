"""Joker meld templates: the table, and the O(1) check against the direct one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_env.core.jmelds import (
    NUM_GROUP_TEMPLATES,
    NUM_TEMPLATES,
    TPL_A,
    TPL_B,
    TPL_C,
    TPL_KIND,
    TPL_WIN,
    feasible_templates,
    hand_masks,
    template_jokers,
    template_needs,
    template_str,
)


def test_template_counts_and_shapes():
    assert NUM_GROUP_TEMPLATES == 13 * 29  # per rank: natural suit sets x jokers, 3-4 cards
    assert NUM_TEMPLATES - NUM_GROUP_TEMPLATES == 4 * 77  # per suit: runs on A..K..A, no A-A
    strs = {template_str(t) for t in range(NUM_TEMPLATES)}
    assert len(strs) == NUM_TEMPLATES
    # 9 + two jokers: a group, or the runs 7-8-9, 8-9-T, 9-T-J (four distinct templates)
    assert "group 9: h + 2 JK" in strs
    assert {"run h 7..9", "run h 8..T", "run h 9..J"} <= strs
    assert "run s Q..A" in strs and "run s A..3" in strs and "run s K..2" not in strs


def summarised(cards: list[int], jokers: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A hand of ``cards`` (at most two copies each) and ``jokers``, with its ``hand_masks``."""
    hand = np.zeros(53, np.int8)
    for c in cards:
        hand[c] = min(hand[c] + 1, 2)
    hand[52] = jokers
    rs = np.zeros(13, np.int64)
    sp = np.zeros(4, np.int64)
    hand_masks(hand, rs, sp)
    return hand, rs, sp


@settings(max_examples=300, deadline=None)
@given(
    counts=st.lists(st.integers(0, 3), min_size=52, max_size=52),
    jokers=st.integers(0, 4),
)
def test_hand_masks_are_the_suits_by_rank_and_positions_by_suit(counts, jokers):
    # the summaries by their definition: suit s of rank r held -> bit s of rank_suits[r];
    # rank r of suit s held -> bit r of suit_pos[s], an ace also bit 13 (garbage in the
    # buffers beforehand: every entry is written)
    hand = np.array([*counts, jokers], np.int8)
    rs = np.full(13, -7, np.int64)
    sp = np.full(4, -7, np.int64)
    hand_masks(hand, rs, sp)
    for r in range(13):
        assert rs[r] == sum(1 << s for s in range(4) if counts[13 * s + r] >= 1)
    for s in range(4):
        want = sum(1 << r for r in range(13) if counts[13 * s + r] >= 1)
        assert sp[s] == want | (1 << 13 if counts[13 * s] >= 1 else 0)


@settings(max_examples=300, deadline=None)
@given(
    cards=st.lists(st.integers(0, 51), min_size=0, max_size=20),
    jokers=st.integers(0, 4),
)
def test_fast_check_equals_direct_check(cards, jokers):
    hand, rs, sp = summarised(cards, jokers)
    for t in range(NUM_TEMPLATES):
        fast = template_jokers(t, jokers, rs, sp, TPL_KIND, TPL_A, TPL_B, TPL_C, TPL_WIN)
        assert fast == template_needs(t, hand, TPL_KIND, TPL_A, TPL_B, TPL_C), template_str(t)


@settings(max_examples=300, deadline=None)
@given(
    cards=st.lists(st.integers(0, 51), min_size=0, max_size=24),
    jokers=st.integers(0, 4),
)
def test_feasible_templates_are_every_playable_template_in_order(cards, jokers):
    # the ranks and suits it skips hold no playable template: the same list as the check of
    # every template, in template order
    hand, rs, sp = summarised(cards, jokers)
    out_t = np.full(NUM_TEMPLATES, -1, np.int64)
    out_j = np.full(NUM_TEMPLATES, -1, np.int64)
    n = feasible_templates(jokers, rs, sp, TPL_WIN, out_t, out_j)
    want = [
        (t, j)
        for t in range(NUM_TEMPLATES)
        if (j := template_needs(t, hand, TPL_KIND, TPL_A, TPL_B, TPL_C)) >= 0
    ]
    assert list(zip(out_t[:n].tolist(), out_j[:n].tolist(), strict=True)) == want
