"""Properties of 3- and 4-player Gin Rummy (RULES.md §1.10), as classes of cases.

- the PettingZoo API and seed tests, for several options;
- every table conserves its 52 cards, masks equal the rules reference at the acting table, only
  the agent to act has legal actions, rewards are zero-sum, observations lie in their space;
- a vector env of N games equals N single games;
- no leak across tables or to the seat sitting out: twins that differ only in cards hidden from
  an observer look the same to it, step by step (lock-step), through the AEC env, the vector env
  and ``sample_worlds``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, seed_test
from reference_gin_rummy import reference_mask

import rummy_env
from rummy_env import gin_rummy_v0
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy import kernels as K
from rummy_env.testing import gin_deck

OPTIONS = [
    {},
    {"episode": "match", "target": 40},
    {"auto_meld": False},
    {"oklahoma": True, "oklahoma_extra_boxes": True, "episode": "match", "target": 60},
    {"eleven_card_deal": True, "fiftieth_card_action": True},
    {"reward": "normalized", "episode": "match", "target": 30, "max_steps": 900},
]
CASES = [(n, i) for n in (3, 4) for i in range(len(OPTIONS))]


def _pick(rng: np.random.Generator, mask: np.ndarray, obs: np.ndarray | None = None) -> int:
    """A random legal action, knocking (and ending manual melding) whenever possible; given
    the observation, mostly the discard that keeps the least deadwood (so that hands end).
    """
    legal = np.flatnonzero(mask)
    knocks = legal[(legal >= E.KNOCK_BASE) & (legal < E.MELD_BASE)]
    if knocks.size and rng.random() < 0.9:
        return int(rng.choice(knocks))
    if E.END_MELDING in legal and rng.random() < 0.5:
        return E.END_MELDING
    discards = legal[(legal >= E.DISCARD_BASE) & (legal < E.KNOCK_BASE)]
    if obs is not None and discards.size and rng.random() < 0.8:
        hand = 0
        for c in np.flatnonzero(obs[:52]):
            hand |= 1 << int(c)
        dw = [K.mindw_check(np.uint64(hand & ~(1 << int(a - E.DISCARD_BASE))), K.TABLES)
              for a in discards]  # fmt: skip
        return int(discards[int(np.argmin(dw))])
    return int(rng.choice(legal))


@pytest.mark.parametrize(("n", "which"), CASES)
def test_pettingzoo_api_and_seed_tests(n, which):
    options = OPTIONS[which]
    api_test(gin_rummy_v0.env(num_players=n, **options), num_cycles=400)
    seed_test(lambda: gin_rummy_v0.env(num_players=n, **options), num_cycles=400)


def _cards_of_table(b: np.void) -> list[int]:
    """Every card of a 2-player hand record by where it lies (with multiplicity)."""
    out: list[int] = []
    masks = [int(b["hands"][0]), int(b["hands"][1])]
    masks += [int(m) for m in np.asarray(b["melds"]).ravel()]
    for m in masks:
        out += [c for c in range(52) if m >> c & 1]
    out += [int(c) for c in b["pile"][: int(b["pile_n"])]]
    out += [int(c) for c in b["deck"][int(b["deck_pos"]) :]]
    if int(b["knock_card"]) >= 0:
        out.append(int(b["knock_card"]))
    return out


def check_invariants(env) -> None:
    rec = env.state_record
    cfg = env.game.hand_config
    for t in range(rec["boards"].shape[0]):
        b = rec["boards"][t]
        assert sorted(_cards_of_table(b)) == list(range(52)), t
    if not rec["done"]:
        t = int(rec["turn"])
        want = reference_mask(rec["boards"][t], cfg)
        got = set(np.flatnonzero(env.game.action_mask(0)).tolist())
        assert got == want
        assert int(rec["cur"]) == int(rec["seat"][t][int(rec["boards"][t]["cur"])])
    for a in env.possible_agents:
        obs = env.observe(a)
        assert env.observation_space(a).contains(obs)
        if a != env.agent_selection:
            assert not obs["action_mask"].any()
    if env.config.num_players == 3 and not rec["done"]:
        out = int(np.flatnonzero(rec["board_of"] == -1)[0])
        assert env.possible_agents[out] != env.agent_selection
        assert not env.observe(f"player_{out}")["observation"][:52].any()


@pytest.mark.parametrize(("n", "which"), CASES)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1))
def test_cards_conserved_masks_exact_rewards_zero_sum(n, which, seed):
    env = gin_rummy_v0.raw_env(num_players=n, **OPTIONS[which])
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total = dict.fromkeys(env.possible_agents, 0.0)
    for _ in range(500):
        check_invariants(env)
        if env.state_record["done"]:
            break
        o = env.observe(env.agent_selection)
        env.step(_pick(rng, o["action_mask"], o["observation"]))
        assert sum(env.rewards.values()) == pytest.approx(0.0, abs=1e-6)
        for a in env.possible_agents:
            total[a] += env.rewards[a]
    rec = env.state_record
    if rec["done"] and not rec["truncated"] and env.config.reward == "raw":
        for q, a in enumerate(env.possible_agents):
            share = 2 if n == 4 else 1
            assert total[a] * share == pytest.approx(float(rec["settle"][q]))


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("options", [{}, {"auto_meld": False}, {"episode": "match", "target": 1}])
def test_batch_of_n_equals_n_single_games(n, options):
    games, seed, steps = 5, 99, 1200
    venv = rummy_env.make_vec("gin_rummy", games, seed=seed, num_players=n, **options)
    obs, info = venv.reset()
    envs = [gin_rummy_v0.raw_env(num_players=n, **options) for _ in range(games)]
    for i, e in enumerate(envs):
        e.reset(seed=seed + i)
    rngs = [np.random.default_rng(i) for i in range(games)]
    finished = 0
    for _ in range(steps):
        actions = np.empty(games, np.int64)
        for i, e in enumerate(envs):
            agent = e.agent_selection
            assert info["current_player"][i] == e.possible_agents.index(agent)
            o = e.observe(agent)
            assert np.array_equal(o["observation"], obs["observation"][i])
            assert np.array_equal(o["action_mask"], obs["action_mask"][i])
            actions[i] = _pick(rngs[i], o["action_mask"], o["observation"])
        obs, rewards, term, trunc, info = venv.step(actions)
        for i, e in enumerate(envs):
            agent = e.agent_selection
            e.step(int(actions[i]))
            assert [e.rewards[a] for a in e.possible_agents] == list(rewards[i])
            assert e.terminations[agent] == bool(term[i])
            if term[i] or trunc[i]:
                finished += 1
                rec = e.state_record
                assert list(info["final_points"][i]) == [int(x) for x in rec["settle"]]
                for q, a in enumerate(e.possible_agents):
                    assert np.array_equal(
                        e.observe(a)["observation"], info["final_observation"][i, q]
                    )
                e.reset()
    assert finished >= games


# -- no leaks -----------------------------------------------------------------------------------

MAX_STEPS = 300
SUITS_PERM = (1, 2, 0, 3)  # clubs -> diamonds -> hearts -> clubs; spades stay (Oklahoma)


def _bits(mask: int) -> list[int]:
    return [c for c in range(52) if int(mask) >> c & 1]


def _relabel(c: int, perm=SUITS_PERM) -> int:
    return perm[c // 13] * 13 + c % 13


def twin_tables(env, p: int, rng: np.random.Generator) -> tuple[list, list]:
    """Stacked decks (3 players: one; 4 players: per table) of the real deal and of a twin that
    differs only in what seat ``p`` cannot see: at its table (3 players: the one table, also
    when ``p`` sits out) the hands it does not hold and the stock, dealt anew; with 4 players
    the other table's deck relabelled by a permutation of clubs, diamonds and hearts (a table
    played alike, with other cards).
    """
    rec = env.state_record
    decks_a, decks_b = [], []
    for t in range(rec["boards"].shape[0]):
        b = rec["boards"][t]
        local = int(rec["local"][p]) if int(rec["board_of"][p]) == t else -1
        stock = [int(c) for c in b["deck"][int(b["deck_pos"]) :]]
        upcard = int(b["pile"][0]) if int(b["pile_n"]) else None
        hands = [_bits(b["hands"][q]) for q in range(2)]
        dealer = int(b["dealer"])
        nd = 1 - dealer
        real = gin_deck(hands[nd], hands[dealer], upcard, stock)
        decks_a.append(real)
        if rec["boards"].shape[0] == 2 and int(rec["board_of"][p]) != t:
            decks_b.append([_relabel(c) for c in real])
            continue
        others = [q for q in range(2) if q != local]
        keep = int(rng.choice([0, len(stock) // 2, len(stock)]))
        pool = [c for q in others for c in hands[q]] + stock[keep:]
        pool = [int(c) for c in rng.permutation(pool)]
        twin = [list(h) for h in hands]
        k = 0
        for q in others:
            twin[q] = pool[k : k + len(hands[q])]
            k += len(hands[q])
        decks_b.append(gin_deck(twin[nd], twin[dealer], upcard, stock[:keep] + pool[k:]))
    return decks_a, decks_b


def public_view(rec: np.void, p: int) -> dict[str, Any]:
    """What seat ``p`` may know of a match record: the match fields, its table less the cards
    it cannot see, and of another table only whether its hand is over and the result.
    """
    hidden = {"boards", "rng"}
    view: dict[str, Any] = {f: rec[f].tobytes() for f in rec.dtype.names if f not in hidden}
    me = int(rec["board_of"][p])
    for t in range(rec["boards"].shape[0]):
        b = rec["boards"][t]
        if me >= 0 and t != me:
            view[f"other_{t}"] = (int(b["done"]), int(b["outcome"]), b["hand_points"].tobytes())
            continue
        local = int(rec["local"][p]) if t == me else -1
        secret = ("hands", "known", "deck", "rng", "knock_card")
        keep = {f: b[f].tobytes() for f in b.dtype.names if f not in secret}
        keep["own"] = b["hands"][local].tobytes() if local >= 0 else b""
        keep["known"] = b["known"].tobytes()
        keep["sizes"] = [bin(int(h)).count("1") for h in b["hands"]]
        if int(b["knocker"]) >= 0:
            keep["laid_out"] = b["hands"][int(b["knocker"])].tobytes()
            if int(b["knocker"]) == local:
                keep["knock_card"] = int(b["knock_card"])
        view[f"table_{t}"] = keep
    return view


def lockstep(n: int, options: dict[str, Any], seed: int, seat: int) -> int:
    """Play twins in lock-step for seat ``seat``; returns the steps compared."""
    rng = np.random.default_rng(seed)
    probe = gin_rummy_v0.raw_env(num_players=n, **options)
    probe.reset(seed=seed)
    p = seat % n
    me = f"player_{p}"
    decks_a, decks_b = twin_tables(probe, p, rng)
    if n == 3:
        dealer: Any = int(probe.state_record["dealer"])
        deck_a, deck_b = decks_a[0], decks_b[0]
    else:
        dealer = [int(d) for d in probe.state_record["table_dealer"]]
        deck_a, deck_b = decks_a, decks_b
    envs = [gin_rummy_v0.raw_env(num_players=n, **options) for _ in range(2)]
    for env, deck in zip(envs, (deck_a, deck_b), strict=True):
        env.reset(seed=seed, options={"deck": deck, "dealer": dealer})
    venv = rummy_env.make_vec("gin_rummy", 2, num_players=n, **options)
    vobs, vinfo = venv.reset(
        seed=[seed, seed], options={"decks": [deck_a, deck_b], "dealers": [dealer, dealer]}
    )
    a, b = envs
    steps = 0
    while steps < MAX_STEPS:
        ra, rb = a.state_record, b.state_record
        if public_view(ra, p) != public_view(rb, p):
            break
        oa, ob = a.observe(me), b.observe(me)
        assert np.array_equal(oa["observation"], ob["observation"]), (n, options, steps)
        assert np.array_equal(oa["action_mask"], ob["action_mask"])
        assert a.rewards[me] == b.rewards[me] and a.infos[me] == b.infos[me]
        assert a.agent_selection == b.agent_selection
        if ra["done"]:
            break
        cur = int(vinfo["current_player"][0])
        if cur == p:
            assert np.array_equal(vobs["observation"][0], vobs["observation"][1])
            assert np.array_equal(vobs["observation"][0], oa["observation"])
        if steps % 5 == 0:
            wa, wb = a.sample_worlds(me, 2, seed=steps), b.sample_worlds(me, 2, seed=steps)
            assert wa.states.tobytes() == wb.states.tobytes(), (n, options, steps)
        t = int(ra["turn"])
        own_table = int(ra["board_of"][p]) == t or n == 3
        ma, mb = a.game.action_mask(0), b.game.action_mask(0)
        if own_table:
            legal = np.flatnonzero(ma & mb)
            if not legal.size:
                break
            act_a = act_b = _pick(rng, (ma & mb))
        else:
            # the other table, relabelled in twin b: the same move on the relabelled card
            act_a = _pick(rng, ma)
            act_b = _relabel_action(act_a)
            if not mb[act_b]:
                break
        a.step(act_a)
        b.step(act_b)
        vobs, _, _, _, vinfo = venv.step(np.array([act_a, act_b]))
        steps += 1
    return steps


def _relabel_action(a: int) -> int:
    if E.DISCARD_BASE <= a < E.KNOCK_BASE:
        return E.DISCARD_BASE + _relabel(a - E.DISCARD_BASE)
    if E.KNOCK_BASE <= a < E.MELD_BASE:
        return E.KNOCK_BASE + _relabel(a - E.KNOCK_BASE)
    if E.MELD_BASE <= a < E.LAYOFF_BASE or E.LAYOFF_BASE <= a < E.END_MELDING:
        from rummy_env.core.melds import GIN_MELD_MASKS

        if a < E.LAYOFF_BASE:
            m = int(GIN_MELD_MASKS[a - E.MELD_BASE])
            mm = 0
            for c in _bits(m):
                mm |= 1 << _relabel(c)
            return E.MELD_BASE + int(np.flatnonzero(GIN_MELD_MASKS == np.uint64(mm))[0])
        c, s = divmod(a - E.LAYOFF_BASE, E.MAX_MELD_SLOTS)
        return E.LAYOFF_BASE + E.MAX_MELD_SLOTS * _relabel(c) + s
    return a


LEAK_OPTIONS = [{}, {"auto_meld": False}, {"oklahoma": True}, {"episode": "match"}]


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("which", range(len(LEAK_OPTIONS)))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), seat=st.integers(0, 3))
def test_twins_look_the_same_to_the_observer(n, which, seed, seat):
    assert lockstep(n, LEAK_OPTIONS[which], seed, seat) >= 1


@pytest.mark.parametrize("n", [3, 4])
def test_lockstep_compares_long_stretches(n):
    """The property is not vacuous: twins stay publicly equal for many steps on average, the
    seat sitting out (3 players) and the other table (4 players) included.
    """
    total = runs = 0
    for seed in range(8):
        total += lockstep(n, {}, seed, seed)
        runs += 1
    assert total / runs >= 15, total / runs


@pytest.mark.parametrize("seed", range(3))
def test_worlds_keep_the_seat_s_cards_and_deal_the_rest_anew(seed):
    """4 players: a world keeps the seat's own hand and table, deals its opponent's hidden
    cards anew, and never holds the other table's real cards or deal."""
    env = gin_rummy_v0.raw_env(num_players=4)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(7):  # a few decisions at both tables
        o = env.observe(env.agent_selection)
        env.step(_pick(rng, o["action_mask"], o["observation"]))
    rec = env.state_record
    for p in range(4):
        t, j = int(rec["board_of"][p]), int(rec["local"][p])
        worlds = env.sample_worlds(f"player_{p}", 6, seed=seed)
        real_other = rec["boards"][1 - t]
        own = worlds.states["boards"][:, t]
        assert (own["hands"][:, j] == rec["boards"][t]["hands"][j]).all()
        assert (own["pile"] == rec["boards"][t]["pile"]).all()
        other = worlds.states["boards"][:, 1 - t]
        assert not (other["deck"] == real_other["deck"]).all(axis=1).any()
        for w in range(6):
            assert sorted(_cards_of_table(other[w])) == list(range(52))
        if int(rec["cur"]) == p:  # the seat acts: the worlds give it the same moves
            assert np.array_equal(worlds.masks, np.tile(env.game.masks[0], (6, 1)))
