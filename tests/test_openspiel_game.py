"""The rummy games as OpenSpiel Python games (rummy_agents.integrations.openspiel)."""

from __future__ import annotations

import random
import time
from collections import Counter

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel (open_spiel) is not installed")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from open_spiel.python.algorithms import evaluate_bots  # noqa: E402

import rummy_env  # noqa: E402
from rummy_agents.integrations import openspiel as osg  # noqa: E402

SLOW = settings(deadline=None, max_examples=5, suppress_health_check=list(HealthCheck))

# (game, options): every game, several player counts and a rule variant
SIM_CONFIGS = [
    ("gin_rummy", {}),
    ("gin_rummy", {"knock_limit": 5, "gin_bonus": 25, "auto_meld": False}),
    ("gin_rummy", {"oklahoma": True, "reward": "normalized"}),
    ("gin_rummy", {"num_players": 3}),
    ("gin_rummy", {"num_players": 4}),
    ("five_hundred_rum", {}),
    ("five_hundred_rum", {"num_players": 3}),
    ("five_hundred_rum", {"num_players": 5}),
    ("rummy51", {}),
    ("rummy51", {"num_players": 4, "reward": "zero_sum"}),
]


def load(game: str, **options: object) -> osg.RummyGame:
    return pyspiel.load_game(osg.SHORT_NAMES[game], options)


def deal(state: osg.RummyState, rng: random.Random) -> list[int]:
    """Play the deal's chance nodes with ``rng``; the chance actions."""
    out = []
    while state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes(), strict=True)
        a = rng.choices(actions, probs)[0]
        out.append(a)
        state.apply_action(a)
    return out


def play(state: osg.RummyState, rng: random.Random, steps: int) -> None:
    for _ in range(steps):
        if state.is_terminal():
            return
        if state.is_chance_node():
            deal(state, rng)
        else:
            state.apply_action(rng.choice(state.legal_actions()))


@pytest.mark.parametrize(("game", "options"), SIM_CONFIGS)
def test_random_sim_test_with_serialization(game: str, options: dict) -> None:
    g = load(game, **options)
    pyspiel.random_sim_test(g, num_sims=2, serialize=True, verbose=False)


def test_registered_and_game_info() -> None:
    names = set(pyspiel.registered_names())
    for game in osg.GAME_NAMES:
        assert osg.SHORT_NAMES[game] in names
        g = load(game)
        env = rummy_env.ENV_MODULES[game].raw_env()
        t, info = g.get_type(), g
        assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
        assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
        assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
        assert t.reward_model == pyspiel.GameType.RewardModel.REWARDS
        zero = pyspiel.GameType.Utility.ZERO_SUM
        assert (t.utility == zero) == (game == "gin_rummy")
        assert info.num_distinct_actions() == env.game.num_actions
        assert info.observation_tensor_shape() == [env.game.obs_size]
        assert info.information_state_tensor_shape() == [env.game.obs_size]
        assert info.num_players() == 2
        assert info.min_utility() < info.max_utility()
        assert info.max_chance_outcomes() >= 52
        # every rule option is a parameter, with the env's default (None -> 0)
        spec = osg.parameter_specification(game)
        assert set(spec) == {f for f in env.config.__dataclass_fields__}
        assert set(g.get_parameters()) == set(spec)


def test_player_counts_supported() -> None:
    for game, (lo, hi) in {"gin_rummy": (2, 4), "five_hundred_rum": (2, 8),
                           "rummy51": (2, 6)}.items():  # fmt: skip
        assert load(game).get_type().min_num_players == lo
        assert load(game).get_type().max_num_players == hi
        for n in range(lo, hi + 1):
            g = load(game, num_players=n)
            assert g.num_players() == n
            s = g.new_initial_state()
            deal(s, random.Random(n))
            assert 0 <= s.current_player() < n


def test_bounds_follow_options() -> None:
    g = load("gin_rummy", max_steps=40)
    assert g.max_game_length() == 40
    assert load("gin_rummy", reward="normalized").max_utility() == 1.0
    assert load("gin_rummy", oklahoma=True).max_utility() == 2 * load("gin_rummy").max_utility()
    assert load("rummy51").max_utility() == 0.0  # penalties: minus the hand's penalty
    assert load("rummy51", reward="payout", num_players=4).max_utility() == 3.0
    m = load("gin_rummy", episode="match", max_steps=500)
    assert m.max_game_length() == 500
    assert (
        load("gin_rummy", max_pile_draws=200).max_game_length()
        > load("gin_rummy").max_game_length()
    )


def test_bad_parameters_raise_naming_them() -> None:
    with pytest.raises(pyspiel.SpielError, match="bogus"):
        pyspiel.load_game("rummy_env_gin_rummy(bogus=1)")
    with pytest.raises(ValueError, match="bogus"):
        osg.GinRummyGame({"bogus": 1})
    with pytest.raises(pyspiel.SpielError, match="knock_limit"):
        pyspiel.load_game("rummy_env_gin_rummy(knock_limit=True)")  # wrong type
    with pytest.raises(ValueError, match="knock_limit"):
        load("gin_rummy", knock_limit=-1)
    with pytest.raises(ValueError, match="reward"):
        load("rummy51", reward="money")
    for game, bad in (("gin_rummy", 5), ("five_hundred_rum", 9), ("rummy51", 1)):
        with pytest.raises(ValueError, match="num_players"):
            load(game, num_players=bad)
    with pytest.raises(ValueError, match="max_steps"):
        load("rummy51", episode="match")
    with pytest.raises(ValueError, match="unknown game"):
        osg.load_game("poker")
    assert osg.load_game("gin_rummy", target=None).options["target"] is None


# -- differential: the OpenSpiel game against the AEC env -----------------------------------
DIFF_CONFIGS = [
    ("gin_rummy", {}),
    ("gin_rummy", {"auto_meld": False, "knock_limit": 7}),
    ("gin_rummy", {"episode": "match", "max_steps": 400}),
    ("gin_rummy", {"num_players": 3}),
    ("gin_rummy", {"num_players": 4}),
    ("five_hundred_rum", {"num_players": 3}),
    ("five_hundred_rum", {"episode": "game", "max_steps": 300}),
    ("rummy51", {}),
    ("rummy51", {"num_players": 3, "max_reshuffles": 0, "reward": "zero_sum"}),
]


@pytest.mark.parametrize(("game", "options"), DIFF_CONFIGS)
@SLOW
@given(seed=st.integers(0, 2**31))
def test_same_as_aec_env_at_every_step(game: str, options: dict, seed: int) -> None:
    g = load(game, **options)
    rng = random.Random(seed)
    s = g.new_initial_state()
    chance = deal(s, rng)
    env = rummy_env.ENV_MODULES[game].raw_env(**options)
    dealer, cards = chance[0], chance[1:]
    if options.get("num_players") == 4:
        dl: object = [dealer & 1, 2 + (dealer >> 1)]
        deck: object = [cards[:52], cards[52:]]
    else:
        dl, deck = dealer, cards
    env.reset(seed=osg.deal_seed(dealer, cards), options={"deck": deck, "dealer": dl})
    names = env.possible_agents
    cumulative = dict.fromkeys(names, 0.0)
    for _ in range(3000):  # every episode here ends sooner (max_game_length)
        done = all(env.terminations[a] or env.truncations[a] for a in names)
        assert s.is_terminal() == done
        assert s.returns() == [cumulative[a] for a in names]
        for p, a in enumerate(names):
            np.testing.assert_array_equal(s.observation_tensor(p), env.observe(a)["observation"])
        if done:
            break
        assert len(s.history()) - len(chance) < g.max_game_length()
        agent = env.agent_selection
        assert s.current_player() == names.index(agent)
        legal = np.flatnonzero(env.observe(agent)["action_mask"]).tolist()
        assert s.legal_actions() == legal
        a = rng.choice(legal)
        assert s.action_to_string(s.current_player(), a) == env.action_name(a)
        s.apply_action(a)
        env.step(a)
        for n in names:
            cumulative[n] += env.rewards[n]
        assert s.rewards() == [env.rewards[n] for n in names]


# -- nothing hidden leaks -------------------------------------------------------------------
def _visible(state: osg.RummyState, p: int) -> set[int]:
    """Card types that appear anywhere in ``p``'s observation."""
    eng = state._c.eng
    obs = np.asarray(state.observation_tensor(p))
    seen: set[int] = set()
    for piece in eng.pieces:
        if piece.shape[-1] in (52, 53):
            v = obs[piece.offset : piece.offset + piece.size].reshape(-1, piece.shape[-1])
            seen |= set(np.flatnonzero(v.any(axis=0)).tolist())
    return seen


def _hand(state: osg.RummyState, q: int) -> list[int]:
    eng = state._c.eng
    return np.flatnonzero(state.observation_vector(q)[: eng.hand_width]).tolist()


LEAK_CONFIGS = [
    ("gin_rummy", {}),
    ("gin_rummy", {"num_players": 3}),
    ("gin_rummy", {"num_players": 4}),
    ("five_hundred_rum", {"num_players": 3}),
    ("rummy51", {}),
]


@pytest.mark.parametrize(("game", "options"), LEAK_CONFIGS)
@SLOW
@given(seed=st.integers(0, 2**31))
def test_hidden_cards_do_not_leak(game: str, options: dict, seed: int) -> None:
    g = load(game, **options)
    rng = random.Random(seed)
    a_state = g.new_initial_state()
    chance = deal(a_state, rng)
    p = a_state.current_player()
    q = next(x for x in range(g.num_players()) if x != p and _hand(a_state, x))
    seen = _visible(a_state, p)
    c = next(x for x in _hand(a_state, q) if x not in seen)  # in q's hand, hidden from p
    copies = Counter(chance[1:])  # exchanged types must have as many copies (not a joker)
    b = next(x for x in reversed(chance[1:]) if x not in seen and x != c and copies[x] == copies[c])
    # the same deal with card types c and b exchanged everywhere: hidden from p either way
    relabel = {c: b, b: c}
    b_state = g.new_initial_state()
    for i, x in enumerate(chance):
        b_state.apply_action(x if i == 0 else relabel.get(x, x))
    assert str(a_state) != str(b_state)  # the records differ
    compared = 0
    hands = int(a_state.record["hands_played"][0])
    for _ in range(30):
        if a_state.is_terminal() or int(a_state.record["hands_played"][0]) != hands:
            break  # the end of a hand shows every hand (and a next one is dealt from the deal)
        assert a_state.current_player() == b_state.current_player()
        assert a_state.observation_string(p) == b_state.observation_string(p)
        assert a_state.information_state_string(p) == b_state.information_state_string(p)
        assert a_state.observation_tensor(p) == b_state.observation_tensor(p)
        assert a_state.information_state_tensor(p) == b_state.information_state_tensor(p)
        if a_state.is_terminal():
            break
        cur = a_state.current_player()
        legal = a_state.legal_actions()
        if cur == p:
            assert legal == b_state.legal_actions()
            # a stock draw (action 0) may show p a relabelled card: its view may then differ
            legal = [x for x in legal if x != 0]
            if not legal:
                break
        else:
            # a meld or lay-off template may be filled with different cards (a joker for the
            # relabelled one): a public difference the deals make, not a leak; leave them out
            legal = [
                x
                for x in sorted(set(legal) & set(b_state.legal_actions()))
                if not a_state.action_to_string(cur, x).startswith(("MELD", "LAYOFF"))
            ]
            if not legal:
                break
        a = rng.choice(legal)
        a_state.apply_action(a)
        b_state.apply_action(a)
        compared += 1
    assert compared >= 2


def test_impossible_actions_are_refused_before_anything_changes() -> None:
    g = load("rummy51")
    s = g.new_initial_state()
    with pytest.raises(ValueError, match="not a dealer"):
        s.apply_action(7)
    s.apply_action(0)
    for _ in range(4):  # the four jokers
        s.apply_action(52)
    before = str(s), s.history()
    with pytest.raises(ValueError, match="not a card left to deal"):
        s.apply_action(52)
    assert (str(s), s.history()) == before
    rng = random.Random(0)
    while s.is_chance_node():
        actions, probs = zip(*s.chance_outcomes(), strict=True)
        s.apply_action(rng.choices(actions, probs)[0])
    illegal = next(a for a in range(g.num_distinct_actions()) if a not in s.legal_actions())
    before = str(s), s.history()
    with pytest.raises(ValueError, match="not legal"):
        s.apply_action(illegal)
    assert (str(s), s.history()) == before


def test_deal_shows_no_cards() -> None:
    g = load("gin_rummy")
    s = g.new_initial_state()
    s.apply_action(0)
    t = s.clone()
    s.apply_action(5)
    t.apply_action(7)
    for p in range(2):
        assert s.observation_string(p) == t.observation_string(p)
        assert s.information_state_string(p) == t.information_state_string(p)
        assert not any(s.observation_tensor(p))
    assert s.action_to_string(pyspiel.PlayerId.CHANCE, 12) == "Deal Kc"


# -- clone, serialize, resample -------------------------------------------------------------
@pytest.mark.parametrize(("game", "options"), [("gin_rummy", {}), ("gin_rummy", {"num_players": 4}),
                                               ("rummy51", {})])  # fmt: skip
def test_clone_is_independent(game: str, options: dict) -> None:
    g = load(game, **options)
    rng = random.Random(3)
    s = g.new_initial_state()
    for k in range(3):  # during the deal, then in play
        before = (str(s), s.history(), s.returns())
        c = s.clone()
        assert str(c) == before[0]
        play(c, random.Random(k), 60)
        assert (str(s), s.history(), s.returns()) == before
        if not s.is_terminal():
            obs = [s.information_state_string(p) for p in range(g.num_players())]
            legal = s.legal_actions()
            c2 = s.clone()
            play(c2, random.Random(k + 10), 30)
            assert [s.information_state_string(p) for p in range(g.num_players())] == obs
            assert s.legal_actions() == legal
        play(s, rng, 20 if k else 200)


def test_serialize_roundtrip() -> None:
    g = load("rummy51", num_players=3)
    s = g.new_initial_state()
    play(s, random.Random(1), 150)
    g2, s2 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(g, s))
    assert str(s2) == str(s)
    assert s2.history() == s.history()
    assert s2.information_state_string(1) == s.information_state_string(1)
    play(s, random.Random(5), 40)
    play(s2, random.Random(5), 40)
    assert str(s2) == str(s)


RESAMPLE_CONFIGS = [
    ("gin_rummy", {}),
    ("gin_rummy", {"num_players": 3}),
    ("gin_rummy", {"num_players": 4}),
    ("five_hundred_rum", {}),
    ("rummy51", {}),
]


@pytest.mark.parametrize(("game", "options"), RESAMPLE_CONFIGS)
def test_resample_keeps_the_infostate(game: str, options: dict) -> None:
    g = load(game, **options)
    s = g.new_initial_state()
    play(s, random.Random(2), 31)  # the deal, then 30 decisions
    assert not s.is_terminal()
    p = s.current_player()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    records = set()
    for _ in range(20):
        w = s.resample_from_infostate(p, sampler)
        assert w.information_state_string(p) == s.information_state_string(p)
        assert w.observation_tensor(p) == s.observation_tensor(p)
        assert w.legal_actions() == s.legal_actions()
        records.add(w.record.tobytes())
        play(w, random.Random(0), 10)  # a world plays on
    assert len(records) > 1  # hidden cards dealt anew
    # during the deal: the dealt prefix is dealt anew, the view unchanged
    d = g.new_initial_state()
    for a in (0, 5, 9, 13):  # the dealer, then three cards
        d.apply_action(a)
    w = d.resample_from_infostate(0, sampler)
    assert w.information_state_string(0) == d.information_state_string(0)
    assert sum(w.chance_outcomes()[i][1] for i in range(len(w.chance_outcomes()))) == (
        pytest.approx(1.0)
    )


def test_clone_cost(capsys: pytest.CaptureFixture[str]) -> None:
    for game in osg.GAME_NAMES:
        s = load(game).new_initial_state()
        play(s, random.Random(0), 120)
        n = 500
        t = time.perf_counter()
        for _ in range(n):
            s.clone()
        us = (time.perf_counter() - t) / n * 1e6
        with capsys.disabled():
            print(f"\n{game}: clone {us:.1f} us")
        assert us < 2000  # a copy of bytes, never a rebuild (a rebuild takes milliseconds)


# -- bots -----------------------------------------------------------------------------------
BOT_CONFIGS = [
    ("gin_rummy", {}, 1),
    ("gin_rummy", {"num_players": 3}, 1),
    ("five_hundred_rum", {}, 0),
    ("rummy51", {}, 0),
]


@pytest.mark.parametrize(("game", "options", "rollouts"), BOT_CONFIGS)
def test_ismcts_and_uniform_random_play_full_games(game: str, options: dict,
                                                    rollouts: int) -> None:  # fmt: skip
    g = load(game, **options)
    n = g.num_players()
    bots = [osg.ismcts_bot(g, max_simulations=3, seed=1, rollouts=rollouts)]
    bots += [pyspiel.make_uniform_random_bot(p, p) for p in range(1, n)]
    returns = evaluate_bots.evaluate_bots(g.new_initial_state(), bots, np.random.RandomState(0))
    assert len(returns) == n
    assert all(g.min_utility() <= r <= g.max_utility() for r in returns)


def test_a_seeded_ismcts_bot_plays_the_same_game_again() -> None:
    """Its sampled worlds come from its seeded stream, not OpenSpiel's unseeded sampler."""
    g = load("five_hundred_rum")

    def game_of(seed: int) -> list[int]:
        bots = [osg.ismcts_bot(g, max_simulations=4, seed=seed), osg.as_bot("random", g, 1, 0)]
        s = g.new_initial_state()
        rng = np.random.RandomState(0)
        while not s.is_terminal():
            if s.is_chance_node():
                actions, probs = zip(*s.chance_outcomes(), strict=True)
                s.apply_action(int(rng.choice(actions, p=probs)))
            else:
                s.apply_action(bots[s.current_player()].step(s))
        return s.history()

    assert game_of(3) == game_of(3)


@pytest.mark.parametrize(("game", "options", "spec"), [
    ("gin_rummy", {}, "simple"),
    ("gin_rummy", {"num_players": 4}, "simple"),
    ("five_hundred_rum", {"num_players": 3}, "greedy"),
    ("rummy51", {}, "greedy"),
])  # fmt: skip
def test_our_agents_play_as_bots(game: str, options: dict, spec: str) -> None:
    g = load(game, **options)
    n = g.num_players()
    bots = [osg.as_bot(spec, g, 0, seed=0)]
    bots += [osg.as_bot("random", g, p, seed=p) for p in range(1, n)]
    state = g.new_initial_state()
    returns = evaluate_bots.evaluate_bots(state, bots, np.random.RandomState(1))
    assert state.is_terminal()
    assert returns == state.returns()


def test_as_bot_takes_an_agent_object_and_checks_it() -> None:
    g = load("gin_rummy")
    calls = []

    class First:
        def act(self, observation: dict, view: object) -> int:
            calls.append(view)
            return int(np.flatnonzero(observation["action_mask"])[0])

    bots = [osg.as_bot(First(), g, 0), osg.as_bot("random", g, 1, seed=1)]
    evaluate_bots.evaluate_bots(g.new_initial_state(), bots, np.random.RandomState(2))
    assert calls and calls[0].seat == 0

    class Illegal:
        def act(self, observation: dict, view: object) -> int:
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])

    s = g.new_initial_state()
    deal(s, random.Random(0))
    with pytest.raises(ValueError, match="illegal"):
        osg.as_bot(Illegal(), g, s.current_player()).step(s)
    with pytest.raises(ValueError, match="not to act"):
        osg.as_bot(First(), g, 1 - s.current_player()).step(s)
    with pytest.raises(TypeError, match="act"):
        osg.as_bot(object(), g, 0)
    with pytest.raises(ValueError, match="player"):
        osg.as_bot("random", g, 2)
    with pytest.raises(TypeError, match="game"):
        osg.as_bot("random", pyspiel.load_game("kuhn_poker"), 0)
