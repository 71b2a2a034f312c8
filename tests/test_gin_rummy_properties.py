"""Property tests over random Gin Rummy games with random options (hypothesis).

At every decision: the mask equals a slow pure-Python reference of the rules, cards are
conserved, the observation of each player is unchanged when only cards hidden from that player
are shuffled. At every hand end: the score follows from the deadwood and the options.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_gin_rummy import brute_deadwood, is_valid_meld, reference_mask, value

from rummy_env import gin_rummy_v0
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy import kernels as K

OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "knock_limit": st.integers(0, 25),
        "auto_meld": st.booleans(),
        "allow_discard_of_drawn_upcard": st.booleans(),
        "fiftieth_card_action": st.booleans(),
        "episode": st.sampled_from(["hand", "match"]),
        "gin_bonus": st.sampled_from([20, 25]),
        "undercut_bonus": st.sampled_from([10, 20, 25]),
        "target": st.integers(20, 150),
    },
)
OKLAHOMA = st.fixed_dictionaries(
    {"oklahoma": st.just(True)},
    optional={"oklahoma_ace_gin_only": st.booleans(), "oklahoma_extra_boxes": st.booleans()},
)


def _options(draw_opts, okla, eleven):
    opts = dict(draw_opts)
    if okla is not None:
        opts.update(okla)
    elif eleven:
        opts["eleven_card_deal"] = True
    return opts


def _all_cards(rec) -> list[int]:
    """Every card the record accounts for: hands, melds, pile, stock, face-down knock card."""
    out: list[int] = []
    for p in range(2):
        out += [c for c in range(52) if int(rec["hands"][p]) >> c & 1]
        for s in range(int(rec["n_melds"][p])):
            out += [c for c in range(52) if int(rec["melds"][p][s]) >> c & 1]
    out += [int(c) for c in rec["pile"][: int(rec["pile_n"])]]
    out += [int(c) for c in rec["deck"][int(rec["deck_pos"]) :]]
    if int(rec["knock_card"]) >= 0 and int(rec["knocker"]) >= 0:
        out.append(int(rec["knock_card"]))
    return out


def _hidden_shuffle(rec, p, rng):
    """A copy of the record where the cards hidden from ``p`` (the opponent's unknown cards and
    the stock) are dealt differently.
    """
    r = rec.copy()
    o = 1 - p
    opp_hidden = [
        c for c in range(52) if int(r["hands"][o]) >> c & 1 and not int(r["known"][o]) >> c & 1
    ]
    pos = int(r["deck_pos"])
    stock = [int(c) for c in r["deck"][pos:]]
    pool = np.array(opp_hidden + stock, dtype=np.int64)
    rng.shuffle(pool)
    new_opp = int(r["hands"][o]) & ~sum(1 << c for c in opp_hidden)
    for c in pool[: len(opp_hidden)]:
        new_opp |= 1 << int(c)
    r["hands"][o] = np.uint64(new_opp)
    r["deck"][pos:] = pool[len(opp_hidden) :]
    return r


def _check_hand_score(rec, config):
    out = E.OUTCOME_NAMES[int(rec["outcome"])]
    if out == "dead_hand":
        assert list(rec["hand_points"]) == [0, 0]
        return
    k = int(rec["knocker"])
    d = 1 - k
    kd, dd = int(rec["deadwood"][k]), int(rec["deadwood"][d])
    assert kd == value(int(rec["hands"][k])) and dd == value(int(rec["hands"][d]))
    assert kd <= int(rec["knock_limit"])
    for p in range(2):
        for s in range(int(rec["n_melds"][p])):
            assert is_valid_meld(int(rec["melds"][p][s]))
    mult = 2 if rec["spade_double"] else 1
    if out == "gin":
        assert kd == 0 and not rec["laid_off"]
        assert int(rec["hand_points"][k]) == mult * (config.gin_bonus + dd)
    elif out == "knock":
        assert kd < dd and int(rec["hand_points"][k]) == mult * (dd - kd)
    else:
        assert out == "undercut" and kd >= dd and kd > 0
        assert int(rec["hand_points"][d]) == mult * (kd - dd + config.undercut_bonus)
    if config.auto_meld:
        # the environment's arrangements are optimal: knocker at minimum deadwood
        knocker_cards = int(rec["hands"][k])
        for s in range(int(rec["n_melds"][k])):
            knocker_cards |= int(rec["melds"][k][s]) & ~int(rec["laid_off"])
        assert kd == brute_deadwood(knocker_cards)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    opts=OPTIONS,
    okla=st.none() | OKLAHOMA,
    eleven=st.booleans(),
    knock_p=st.sampled_from([0.0, 0.5, 1.0]),
)
def test_random_games_masks_conservation_scores_and_no_leaks(seed, opts, okla, eleven, knock_p):
    options = _options(opts, okla, eleven)
    env = gin_rummy_v0.raw_env(**options)
    config = env.config
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(400):
        rec = env.state_record
        if rec["done"]:
            break
        agent = env.agent_selection
        p = int(rec["cur"])
        mask = env.observe(agent)["action_mask"]
        # exact mask
        assert set(np.flatnonzero(mask).tolist()) == reference_mask(rec, config)
        # cards conserved
        assert sorted(_all_cards(rec)) == list(range(52))
        # no leak: for both players, shuffling what they cannot see changes nothing they observe
        for q in range(2):
            r2 = _hidden_shuffle(rec, q, rng)
            o1 = env.game.observe(0, q)
            o2 = np.empty_like(o1)
            K.write_obs(r2, env.game.cfg, q, o2)
            assert np.array_equal(o1, o2)
            if q == p:
                m2 = np.zeros(E.NUM_ACTIONS_MANUAL, np.int8)
                K.legal_mask(r2, env.game.cfg, K.TABLES, m2)
                assert np.array_equal(m2[: len(mask)], mask)
        legal = np.flatnonzero(mask)
        knocks = legal[(legal >= E.KNOCK_BASE) & (legal < E.MELD_BASE)]
        if knocks.size and rng.random() < knock_p:
            a = int(rng.choice(knocks))
        else:
            a = int(rng.choice(legal))
        before = int(rec["hands_played"])
        env.step(a)
        rec = env.state_record
        if int(rec["hands_played"]) > before:
            if config.episode == "hand" or rec["done"]:
                _check_hand_score(rec, config)
            rewards = [env.rewards[a_] for a_ in env.possible_agents]
            assert abs(sum(rewards)) < 1e-6  # zero-sum
    rec = env.state_record
    if rec["done"] and config.episode == "match" and not rec["truncated"]:
        assert max(rec["scores"]) >= config.target
        assert rec["totals"].max() > rec["totals"].min()


def test_match_rewards_sum_to_the_final_difference():
    """Over whole random matches, each player's rewards add up to its final match result."""
    for seed in range(5):
        env = gin_rummy_v0.raw_env(episode="match", target=40)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        total = {a: 0.0 for a in env.possible_agents}
        while not env.state_record["done"]:
            mask = env.observe(env.agent_selection)["action_mask"]
            legal = np.flatnonzero(mask)
            knocks = legal[(legal >= E.KNOCK_BASE) & (legal < E.MELD_BASE)]
            env.step(int(rng.choice(knocks if knocks.size else legal)))
            for a in total:
                total[a] += env.rewards[a]
        tot = env.state_record["totals"]
        assert total["player_0"] == float(tot[0] - tot[1])
        assert total["player_1"] == float(tot[1] - tot[0])
        assert max(env.state_record["scores"]) >= 40
