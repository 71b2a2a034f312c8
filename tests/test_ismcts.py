"""ISMCTS agent: legal moves, determinism, tiny budgets, generic hooks, and strength."""

from __future__ import annotations

import numpy as np
import pytest

from rummy_agents.base import SeatView
from rummy_agents.ismcts import (
    GENERIC_HOOKS,
    GIN_OPPONENT_DEADWOOD,
    HOOKS,
    GinBelief,
    ISMCTSAgent,
    gin_belief_worlds,
    gin_hand_deadwood,
    gin_rollout_actions,
    objective_values,
)
from rummy_agents.random_agent import RandomAgent
from rummy_env import gin_rummy_v0
from rummy_env.core import str_to_card
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy import kernels as K
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.rules.gin_rummy.game import GinRummyGame


def _play_hand(env, agents, seed: int) -> list[int]:
    """One episode; every action is checked against the mask before it is played."""
    env.reset(seed=seed)
    actions = []
    while not env.state_record["done"]:
        name = env.agent_selection
        obs = env.observe(name)
        a = agents[env.possible_agents.index(name)].act(obs, SeatView(env, name))
        assert obs["action_mask"][a] == 1, E.action_name(a)
        actions.append(int(a))
        env.step(a)
    return actions


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"fiftieth_card_action": True, "allow_discard_of_drawn_upcard": True},
        {"oklahoma": True, "oklahoma_ace_gin_only": True},
        {"eleven_card_deal": True},
        {"auto_meld": False},
        {"episode": "match", "target": 30},
    ],
)
def test_only_legal_actions(options: dict) -> None:
    env = gin_rummy_v0.raw_env(**options)
    agent = ISMCTSAgent(iterations=48, batch_size=16, seed=1)
    for g in range(2):
        _play_hand(env, [agent, RandomAgent(seed=g)], seed=10 + g)
    assert agent.move_seconds


@pytest.mark.parametrize("root", ["halving", "ucb"])
@pytest.mark.parametrize("belief", ["evidence", "uniform"])
def test_deterministic_for_a_seed(root: str, belief: str) -> None:
    env = gin_rummy_v0.raw_env()

    def run() -> list[int]:
        a = ISMCTSAgent(iterations=64, batch_size=16, root=root, belief=belief, seed=7)
        b = ISMCTSAgent(iterations=64, batch_size=16, root=root, belief=belief, seed=8)
        return _play_hand(env, [a, b], seed=3)

    assert run() == run()


def test_tiny_budgets() -> None:
    env = gin_rummy_v0.raw_env()
    for agent in (
        ISMCTSAgent(iterations=1, batch_size=1, seed=0),
        ISMCTSAgent(iterations=1, batch_size=1, root="halving", knock="search", seed=0),
        ISMCTSAgent(iterations=24, batch_size=8, root="halving", knock="search", seed=0),
        ISMCTSAgent(iterations=None, time_limit=0.001, batch_size=4, seed=0),
        ISMCTSAgent(iterations=5, time_limit=10.0, batch_size=64, max_depth=1, seed=0),
        ISMCTSAgent(iterations=8, rollout="random", objective="win", widening=None, seed=0),
    ):
        _play_hand(env, [agent, RandomAgent(seed=0)], seed=5)
        assert agent.last.iterations >= 1


def test_objective_values() -> None:
    # rollout margins of a win by 30 points, a loss by 250 (clipped) and a drawn hand
    acc = np.array([[30.0, -30.0], [-250.0, 250.0], [0.0, 0.0]])
    pts = objective_values(acc, "points", 100.0)
    np.testing.assert_allclose(pts[:, 0], [0.3, -1.0, 0.0])
    np.testing.assert_allclose(objective_values(acc, "win", 100.0)[:, 0], [1.0, -1.0, 0.0])
    mixed = objective_values(acc, "mixed", 100.0, win_weight=0.5)
    np.testing.assert_allclose(mixed[:, 0], [0.65, -1.0, 0.0])
    np.testing.assert_allclose(objective_values(acc, "mixed", 100.0, 0.0), pts)


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError):
        ISMCTSAgent(iterations=None, time_limit=None)
    for kwargs in (
        {"iterations": 0},
        {"iterations": "many"},
        {"root_k": 0},
        {"time_limit": -1.0},
        {"batch_size": 0},
        {"rollout": "greedy"},
        {"objective": "margin"},
        {"objective": "mixed", "win_weight": 1.5},
        {"belief": "oracle"},
        {"root": "puct"},
        {"knock": "never"},
        {"rollout_eps": 2.0},
    ):
        with pytest.raises(ValueError):
            ISMCTSAgent(**kwargs)
    env = gin_rummy_v0.raw_env()
    env.reset(seed=0)
    agent = ISMCTSAgent(iterations=4)
    with pytest.raises(ValueError, match="view"):
        agent.act(env.observe(env.agent_selection))


def test_single_legal_action_is_played_without_search() -> None:
    agent = ISMCTSAgent(iterations=10)
    mask = np.zeros(E.NUM_ACTIONS_AUTO, np.int8)
    mask[E.DRAW_STOCK] = 1
    assert agent.act({"observation": None, "action_mask": mask}, None) == E.DRAW_STOCK
    assert agent.move_seconds == []


class _GenericView(SeatView):
    """A seat view that hides the game's name, so the generic (random) hooks are used."""

    game = "some_other_game"

    def __init__(self, env, agent) -> None:
        super().__init__(env, agent)
        self.game = "some_other_game"


def test_generic_hooks() -> None:
    env = gin_rummy_v0.raw_env()
    env.reset(seed=11)
    agent = ISMCTSAgent(iterations=32, batch_size=8, seed=0)
    for _ in range(6):
        name = env.agent_selection
        obs = env.observe(name)
        a = agent.act(obs, _GenericView(env, name))
        assert obs["action_mask"][a] == 1
        env.step(a)


def test_rollout_policy_is_legal_and_finishes_hands() -> None:
    cfg = GinRummyConfig()
    game = GinRummyGame(cfg, 64)
    game.reset(seed=0, write_obs=False)
    out = np.zeros(64, np.int64)
    for _ in range(400):
        if game.states["done"].all():
            break
        gin_rollout_actions(game.states, game.masks, K.TABLES, game.num_actions, 0.0, out)
        live = ~game.states["done"].astype(bool)
        assert (game.masks[np.flatnonzero(live), out[live]] == 1).all()
        game.step(out, autoreset=False, write_obs=False, check=False)
    assert game.states["done"].all()
    # heuristic play ends most hands by a knock or gin, not at the wall
    assert (game.states["outcome"] != E.OUT_DEAD).mean() > 0.8


def test_belief_worlds_keep_the_information_and_lower_the_deadwood() -> None:
    env = gin_rummy_v0.raw_env()
    env.reset(seed=2)
    agents = [RandomAgent(seed=0), RandomAgent(seed=1)]
    rec = env.state_record
    while 52 - int(rec["deck_pos"]) > 20 or int(rec["phase"]) != E.PH_DRAW:
        name = env.agent_selection
        env.step(agents[env.possible_agents.index(name)].act(env.observe(name)))
        rec = env.state_record
    name = env.agent_selection
    view = SeatView(env, name)
    seat = view.seat
    rng = np.random.default_rng(0)
    worlds = gin_belief_worlds(view, 256, rng, GinBelief())
    uniform = view.sample_worlds(256, rng)
    for i in range(worlds.num_games):
        assert np.array_equal(worlds.observe(i, seat), env.observe(name)["observation"])
        s = worlds.states[i]
        cards = int(s["hands"][0]) | int(s["hands"][1])
        cards |= sum(1 << int(c) for c in s["deck"][int(s["deck_pos"]) :])
        cards |= sum(1 << int(c) for c in s["pile"][: int(s["pile_n"])])
        assert cards == (1 << 52) - 1
    d_t = np.empty(256)
    d_u = np.empty(256)
    gin_hand_deadwood(worlds.states, 1 - seat, K.TABLES, d_t)
    gin_hand_deadwood(uniform.states, 1 - seat, K.TABLES, d_u)
    assert d_t.mean() < d_u.mean() - 10
    assert abs(d_t.mean() - GIN_OPPONENT_DEADWOOD[52 - int(rec["deck_pos"])]) < 6


def test_beats_random_clearly() -> None:
    env = gin_rummy_v0.raw_env()
    wins = 0
    points = 0.0
    for g in range(6):  # three duplicate deals, seats swapped
        agent = ISMCTSAgent(iterations=200, seed=g)
        seat = g % 2
        agents = [agent, RandomAgent(seed=g)] if seat == 0 else [RandomAgent(seed=g), agent]
        _play_hand(env, agents, seed=900 + g // 2)
        pts = env.state_record["hand_points"]
        wins += int(pts[seat] > pts[1 - seat])
        points += float(pts[seat]) - float(pts[1 - seat])
    assert wins >= 5
    assert points > 100


def test_knock_always_plays_the_best_knock_at_once() -> None:
    nd = "Ac 2c 3c 4d 4h 4s 7h 8h 9h Qs".split()
    de = "5c 6c 9c Tc 2d 3d 6d 8d 9d Td".split()
    cards = [str_to_card(c) for c in nd + de + ["Kd"]]
    deck = [c for pair in zip(cards[:10], cards[10:20], strict=True) for c in pair]
    deck += [cards[20]] + [c for c in range(52) if c not in set(cards)]
    env = gin_rummy_v0.raw_env()
    env.reset(options={"deck": deck, "dealer": 1})
    env.step(E.TAKE_DISCARD)  # the non-dealer takes the Kd upcard
    agent = ISMCTSAgent(iterations=64, seed=0)
    a = agent.act(env.observe("player_0"), SeatView(env, "player_0"))
    assert a == E.KNOCK_BASE + str_to_card("Qs")  # Kd was just taken: Qs leaves 10
    assert agent.move_seconds == []
    searching = ISMCTSAgent(iterations=64, knock="search", seed=0)
    b = searching.act(env.observe("player_0"), SeatView(env, "player_0"))
    assert env.observe("player_0")["action_mask"][b] == 1
    assert len(searching.move_seconds) == 1


# -- the joker games ----------------------------------------------------------------------------

JOKER_GAMES = [
    ("five_hundred_rum", {}),
    ("five_hundred_rum", {"num_players": 3, "rummy_call": "layoff_only"}),
    ("rummy51", {}),
    ("rummy51", {"num_players": 3, "discard_draw_requires_opening": True}),
]


def _joker_env(game: str, options: dict):
    from rummy_env import five_hundred_rum_v1, rummy51_v1

    module = five_hundred_rum_v1 if game == "five_hundred_rum" else rummy51_v1
    return module.raw_env(**options)


def _play_joker(env, agents, seed: int, max_steps: int = 400) -> list[int]:
    """Up to ``max_steps`` decisions of one episode, every action checked against the mask."""
    env.reset(seed=seed)
    actions = []
    for _ in range(max_steps):
        if env.state_record["done"]:
            break
        name = env.agent_selection
        obs = env.observe(name)
        a = agents[env.possible_agents.index(name)].act(obs, SeatView(env, name))
        assert obs["action_mask"][a] == 1, env.layout.action_name(a)
        actions.append(int(a))
        env.step(a)
    return actions


@pytest.mark.parametrize(("game", "options"), JOKER_GAMES)
def test_joker_games_only_legal_actions(game: str, options: dict) -> None:
    env = _joker_env(game, options)
    agent = ISMCTSAgent(iterations=24, batch_size=8, seed=1)
    others = [RandomAgent(seed=q) for q in range(1, env.config.num_players)]
    _play_joker(env, [agent, *others], seed=4, max_steps=150)
    assert agent.move_seconds


@pytest.mark.parametrize("root", ["ucb", "paired"])
@pytest.mark.parametrize("game", ["five_hundred_rum", "rummy51"])
def test_joker_games_deterministic_for_a_seed(game: str, root: str) -> None:
    env = _joker_env(game, {})

    def run() -> list[int]:
        a = ISMCTSAgent(iterations=24, batch_size=8, root=root, seed=7)
        b = ISMCTSAgent(iterations=24, batch_size=8, root=root, anchor=False, seed=8)
        return _play_joker(env, [a, b], seed=3, max_steps=60)

    assert run() == run()


@pytest.mark.parametrize("game", ["five_hundred_rum", "rummy51"])
def test_paired_root_keeps_the_anchor_without_evidence(game: str) -> None:
    """With an impossible margin to beat, ``root="paired"`` plays the anchor's (greedy) move at
    every searched draw and discard; in Rummy 51 (the ``unsearched`` hook) also the anchor's own
    melds, lay-offs and joker retrievals, played without a search, so every move is greedy's.
    """
    env = _joker_env(game, {})
    env.reset(seed=9)
    agent = ISMCTSAgent(iterations=32, batch_size=16, root="paired", paired_z=1e9, seed=0)
    anchor_moves = []
    inner = agent._anchor_move

    def spy(observation, view):
        anchor_moves.append(inner(observation, view))
        return anchor_moves[-1]

    agent._anchor_move = spy
    searched = unsearched = 0
    for _ in range(80):
        if env.state_record["done"]:
            break
        name = env.agent_selection
        obs = env.observe(name)
        before = (len(agent.move_seconds), len(anchor_moves))
        a = agent.act(obs, SeatView(env, name))
        if len(agent.move_seconds) > before[0]:
            searched += 1
            assert a == anchor_moves[-1] == agent.last.first, env.layout.action_name(a)
        elif len(anchor_moves) > before[1]:  # Rummy 51: the anchor's move, without a search
            unsearched += 1
            assert a == anchor_moves[-1], env.layout.action_name(a)
        env.step(a)
    assert searched > 0 and (unsearched > 0) == (game == "rummy51")


def test_anchor_by_registry_name() -> None:
    """``anchor="greedy_plus"`` builds that registry agent for the game searched, and with an
    impossible margin to beat every searched move is its move."""
    from rummy_agents.rummy51_greedy import Rummy51GreedyAgent

    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        ISMCTSAgent(anchor="nope")
    env = _joker_env("rummy51", {})
    env.reset(seed=4)
    agent = ISMCTSAgent(iterations=16, batch_size=8, paired_z=1e9, anchor="greedy_plus", seed=0)
    searched = 0
    for _ in range(40):
        if env.state_record["done"]:
            break
        name = env.agent_selection
        n = len(agent.move_seconds)
        a = agent.act(env.observe(name), SeatView(env, name))
        if len(agent.move_seconds) > n:
            searched += 1
            assert a == agent.last.first
        env.step(a)
    built = agent._anchors["rummy51"]
    assert isinstance(built, Rummy51GreedyAgent) and searched > 0
    assert (built.take_gain, built.near_order) == ("any", True)
    assert (built.joker_layoff, built.hold_melds) == ("out", 3)


def test_root_leaves_melding_to_an_anchor_that_holds_its_melds() -> None:
    """When the anchor declines to meld now (``hold_melds``), the root compares discards
    only; without the hold the anchor's meld is played without a search."""
    from rummy_env import rummy51_v1
    from rummy_env.testing import joker_deck

    loose = "2c 4d 6h 8s Tc Qd 3s 5c 7d 9h Jc Kh 2h"
    p0 = "Ks Kh Kd 9c Tc Jc 2c 3c 4c Qs Qh Qd 5h"
    env = rummy51_v1.raw_env()
    deck = joker_deck([p0, loose], "4s", "2s 3s 6d", num_decks=2, jokers=4, dealer=1)
    env.reset(options={"deck": deck, "dealer": 1})
    lay = env.layout
    ids = {lay.action_name(a): a for a in range(lay.num_actions)}
    # player_0 opens with K K K and 9-10-J c; player_1 draws and discards; player_0 draws the 6d
    for n in ["DRAW_STOCK", "MELD[group K: d h s]", "MELD[run c 9..J]", "DISCARD[2s]"]:
        env.step(ids[n])
    for n in ["DRAW_STOCK", "DISCARD[3s]", "DRAW_STOCK"]:
        env.step(ids[n])
    obs = env.observe("player_0")
    assert obs["action_mask"][ids["MELD[group Q: d h s]"]]
    view = SeatView(env, "player_0")
    hold = ISMCTSAgent(iterations=16, batch_size=8, anchor="greedy@hold_melds=12", seed=0)
    a = hold.act(obs, view)
    assert hold.last.first == ids["DISCARD[6d]"]
    assert lay.action_name(a).startswith("DISCARD")
    assert all(lay.action_name(x).startswith("DISCARD") for x in hold.last.root_visits)
    assert len(hold.last.root_visits) == 2
    n = len(hold.move_seconds)
    greedy = ISMCTSAgent(iterations=16, batch_size=8, seed=0)
    assert lay.action_name(greedy.act(obs, view)).startswith("MELD")
    assert len(greedy.move_seconds) == 0 and n == 1


@pytest.mark.parametrize(
    ("game", "expected"),
    [("gin_rummy", (1000, "ucb", 4)), ("rummy51", (256, "paired", 2)), ("x", (1000, "ucb", 4))],
)
def test_auto_settings_are_the_games(game: str, expected: tuple) -> None:
    agent = ISMCTSAgent()
    agent.configure(HOOKS.get(game, GENERIC_HOOKS))
    assert (agent.iterations, agent.root, agent.root_k) == expected
    agent = ISMCTSAgent(iterations=8, root="halving", root_k=3)
    agent.configure(HOOKS[game] if game in HOOKS else GENERIC_HOOKS)
    assert (agent.iterations, agent.root, agent.root_k) == (8, "halving", 3)
