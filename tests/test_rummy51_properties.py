"""Property tests over random Rummy 51 games with random options (hypothesis).

At every decision: the mask equals the slow pure-Python reference of the rules
(``reference_rummy51``), the 108 cards are conserved and every table meld is valid, each player's
observation (and the mask of the player to act) is unchanged when only cards hidden from that
player are shuffled. At every hand end: the winner scores 0 and the others the penalty of their
cards (+25 after a Rummy), the rewards follow the reward option, matches eliminate at the
threshold; every episode ends. Crafted positions (random tables with jokers, hands near them,
random opening states and obligations) compare the masks as well.

The players act at random with a bias towards melding, so that openings, lay-offs and joker
retrievals happen often.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from joker_helpers import all_cards, hidden_shuffle
from reference_five_hundred_rum import card_at, is_valid_meld, meld_cards, table_of
from reference_rummy51 import penalty, reference_mask

from rummy_env import rummy51_v1
from rummy_env.encodings import rummy51 as E
from rummy_env.rules.rummy51 import kernels as K

DECK = {c: 2 for c in range(52)} | {52: 4}

OPTIONS = st.fixed_dictionaries(
    {"num_players": st.sampled_from([2, 2, 3, 4, 6])},
    optional={
        "opening_threshold": st.sampled_from([51, 51, 30, 10, 80]),
        "max_reshuffles": st.sampled_from([0, 1, 2]),
        "retrieved_joker_must_be_melded": st.booleans(),
        "discard_draw_requires_opening": st.booleans(),
        "episode": st.sampled_from(["hand", "match"]),
        "elimination": st.sampled_from([101, 60]),
        "reward": st.sampled_from(["penalty", "zero_sum", "normalized"]),
        "max_pile_draws": st.sampled_from([100, 5]),
    },
)


def _choose(lay, legal, rng, meld_bias):
    places = [a for a in legal if lay.meld_base <= a < lay.discard_base]
    if places and rng.random() < meld_bias:
        return int(rng.choice(places))
    if 1 in legal and rng.random() < 0.3:
        return 1
    return int(rng.choice(legal))


def _expected_rewards(pen, winner, out, config):
    n_p = config.num_players
    live = [q for q in range(n_p) if not out[q]]
    r = [0.0] * n_p
    for q in live:
        if config.reward == "penalty":
            r[q] = -pen[q]
        else:
            r[q] = sum(pen[o] - pen[q] for o in live if o != q) / (len(live) - 1)
            if config.reward == "normalized":
                r[q] = max(-1.0, min(1.0, r[q] / 100))
    if config.reward == "normalized" and config.episode == "match":
        r = [0.0] * n_p
    return r


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), opts=OPTIONS, meld_bias=st.sampled_from([0.3, 0.9]))
def test_random_games_match_the_reference_and_keep_every_invariant(seed, opts, meld_bias):
    env = rummy51_v1.raw_env(**opts)
    config = env.config
    lay = env.layout
    n_p = config.num_players
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for step in range(3000):
        rec = env.state_record
        if rec["done"]:
            break
        p = int(rec["cur"])
        mask = env.observe(env.agent_selection)["action_mask"]
        legal = sorted(np.flatnonzero(mask).tolist())
        ref = reference_mask(rec, config)
        assert set(legal) == ref, [lay.action_name(a) for a in sorted(set(legal) ^ ref)]
        assert all_cards(rec, config) == DECK
        for m, meld in enumerate(table_of(rec)):
            assert is_valid_meld(meld), meld
            assert 0 <= int(rec["m_owner"][m]) < n_p
        assert (rec["known"] <= rec["hands"]).all()
        assert not rec["out"][p]
        if step % 5 == 0:
            for q in range(n_p):
                r2 = hidden_shuffle(rec, q, n_p, rng)
                o2 = np.empty(lay.obs_size, np.float32)
                K.write_obs(r2, env.game.cfg, q, o2)
                assert np.array_equal(env.game.observe(0, q), o2)
                if q == p:
                    saved = rec.copy()
                    env.game.states[0] = r2
                    env.game.refresh_masks()
                    assert np.array_equal(env.game.action_mask(0), mask)
                    env.game.states[0] = saved
                    env.game.refresh_masks()
        a = _choose(lay, legal, rng, meld_bias)
        hands_before = np.array(rec["hands"], np.int64)
        if a >= lay.discard_base:
            hands_before[p][a - lay.discard_base] -= 1  # the hands as the hand ends
        pen_before = np.array(rec["penalties"], np.int64)
        out_before = [bool(x) for x in rec["out"]]
        opened_now, built = bool(rec["opened_now"]), bool(rec["built_others"])
        played = int(rec["hands_played"])
        env.step(a)
        rec = env.state_record
        if int(rec["hands_played"]) == played:
            continue
        # the hand is over
        went_out = a >= lay.discard_base and hands_before[p].sum() == 0
        outcome = int(rec["outcome"])
        assert outcome == (E.OUT_WENT_OUT if went_out else E.OUT_DRAW)
        winner = p if went_out else -1
        assert int(rec["hand_winner"]) == winner
        rummy = went_out and opened_now and not built
        assert bool(rec["rummy"]) == rummy
        pen = [0] * n_p
        for q in range(n_p):
            if out_before[q] or q == winner:
                continue
            pen[q] = sum(penalty(c) * int(hands_before[q][c]) for c in range(53))
            pen[q] += 25 if rummy else 0
        assert list(rec["hand_penalty"]) == pen
        totals = pen_before + np.array(pen)
        assert list(rec["penalties"]) == list(totals)
        expect = _expected_rewards(pen, winner, out_before, config)
        if not (config.episode == "match" and rec["done"] and config.reward == "normalized"):
            assert np.allclose([env.rewards[ag] for ag in env.possible_agents], expect)
        if config.episode == "match":
            live = [q for q in range(n_p) if not out_before[q]]
            low = min(int(totals[q]) for q in live)
            stay = [q for q in live if totals[q] < config.elimination]
            out_now = [
                q for q in live if totals[q] >= config.elimination and (stay or totals[q] > low)
            ]
            assert [bool(x) for x in rec["out"]] == [
                out_before[q] or q in out_now for q in range(n_p)
            ]
            left = [q for q in live if q not in out_now]
            assert bool(rec["done"]) == (len(left) == 1)
            if rec["done"]:
                assert int(rec["winner"]) == left[0]
            else:
                assert int(rec["pile_n"]) == 1 and int(rec["n_melds"]) == 0
                for q in range(n_p):
                    assert int(rec["hands"][q].sum()) == (0 if rec["out"][q] else 13)
        else:
            assert rec["done"]
    assert env.state_record["done"] or config.episode == "match"


# -- crafted positions ------------------------------------------------------------------------


def _craft(env, rng):
    """Random valid table melds (jokers anywhere), a hand biased towards cards that fit them,
    and a random opening state, taken card, owed joker or owed discard.
    """
    cfg = env.config
    avail = Counter(DECK)
    rec = env.game.states[0]
    rec["m_kind"][:] = 0
    rec["m_nat"][:] = 0
    rec["m_jok"][:] = 0
    melds = []
    for _ in range(int(rng.integers(0, 7))):
        if rng.random() < 0.4:
            r, j = int(rng.integers(13)), int(rng.integers(0, 3))
            suits = [s for s in range(4) if rng.random() < 0.6][: 4 - j]
            used = [s * 13 + r for s in suits] + [52] * j
            meld = (1, r, 0, 0, sum(1 << s for s in suits), j)
        else:
            s, n = int(rng.integers(4)), int(rng.integers(3, 9))
            lo = int(rng.integers(0, 15 - n))
            jok = sum(1 << pos for pos in range(lo, lo + n) if rng.random() < 0.25)
            nat = sum(1 << pos for pos in range(lo, lo + n)) & ~jok
            meld = (2, s, lo, lo + n - 1, nat, jok)
            used = list(meld_cards(meld))
        if not is_valid_meld(meld) or Counter(used) - avail:
            continue
        avail -= Counter(used)
        melds.append(meld)
    for m, meld in enumerate(melds):
        for f, v in zip(("m_kind", "m_key", "m_lo", "m_hi", "m_nat", "m_jok"), meld, strict=True):
            rec[f][m] = v
        rec["m_owner"][m] = int(rng.integers(cfg.num_players))
    rec["n_melds"] = len(melds)
    near = {52}
    for kind, key, lo, hi, _, _ in melds:
        if kind == 1:
            near |= {s * 13 + key for s in range(4)}
        else:
            near |= {card_at(key, q) for q in range(lo - 3, hi + 4) if 0 <= q <= 13}
    pool = [int(c) for c in rng.permutation(list(avail.elements()))]
    pool.sort(key=lambda c: 0 if c in near and rng.random() < 0.6 else 1)
    hn = int(rng.integers(1, 15))
    hand, rest = pool[:hn], pool[hn:]
    pile, rest = rest[: int(rng.integers(1, 8))], rest[8:]
    rec["hands"][:] = 0
    rec["known"][:] = 0
    for c in hand:
        rec["hands"][0][c] += 1
    for q in range(1, cfg.num_players):
        for c in rest[:5]:
            rec["hands"][q][c] += 1
        rest = rest[5:]
    rec["pile"][: len(pile)] = pile
    rec["pile_n"] = len(pile)
    rec["deck_pos"] = cfg.deck_size - len(rest)
    rec["deck"][cfg.deck_size - len(rest) :] = rest
    rec["cur"] = 0
    rec["out"][:] = 0
    rec["oblig"] = rec["taken_single"] = -1
    rec["owed"] = rec["open_pts"] = rec["opened_now"] = rec["built_others"] = 0
    rec["pile_draws"] = 0
    rec["phase"] = E.PH_DRAW if rng.random() < 0.2 else E.PH_PLAY
    opened = rng.random() < 0.5
    rec["opened"][0] = opened
    held = sorted(set(hand))
    if rec["phase"] == E.PH_PLAY:
        u = rng.random()
        if u < 0.4:
            rec["taken_single"] = int(rng.choice(held))
            if cfg.discard_draw_requires_opening and not opened and rng.random() < 0.7:
                rec["oblig"] = rec["taken_single"]
        if not opened and rng.random() < 0.4:
            rec["open_pts"] = int(rng.integers(1, max(cfg.opening_threshold, 2)))
        if opened and cfg.retrieved_joker_must_be_melded and hand.count(52) and rng.random() < 0.5:
            rec["owed"] = int(rng.integers(1, hand.count(52) + 1))
    return rec


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), opts=OPTIONS)
def test_crafted_positions_match_the_reference(seed, opts):
    env = rummy51_v1.raw_env(**opts)
    env.reset(seed=seed)
    rec = _craft(env, np.random.default_rng(seed))
    env.game.refresh_masks()
    got = set(np.flatnonzero(env.game.action_mask(0)).tolist())
    ref = reference_mask(rec, env.config)
    assert got == ref, [env.layout.action_name(a) for a in sorted(got ^ ref)]
