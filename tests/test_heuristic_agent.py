"""The compiled heuristic as a player: it reads only what the seat observes, plays only legal
moves, single and batched, and plugs into the arena's registry."""

from __future__ import annotations

import numpy as np
import pytest

import rummy_env
from rummy_agents.arena.registry import make_agent
from rummy_agents.base import SeatView
from rummy_agents.heuristic import HeuristicAgent
from rummy_agents.random_agent import RandomAgent

GAMES = ("gin_rummy", "five_hundred_rum", "rummy51")
ENVS = {
    "gin_rummy": rummy_env.gin_rummy_v0,
    "five_hundred_rum": rummy_env.five_hundred_rum_v1,
    "rummy51": rummy_env.rummy51_v1,
}


@pytest.mark.parametrize("game", GAMES)
def test_reads_only_the_seats_information(game: str) -> None:
    """At every decision of hands played by the heuristic (with random moves mixed in), its
    move on the real state equals its move on any world sampled from the seat's information:
    hidden cards never change what it plays."""
    env = ENVS[game].raw_env()
    agent = HeuristicAgent(seed=0)
    mover = RandomAgent(seed=1)
    rng = np.random.default_rng(2)
    checked = 0
    for seed in range(3):
        env.reset(seed=seed)
        for _ in range(400):
            name = env.agent_selection
            if env.terminations[name] or env.truncations[name]:
                break
            obs = env.observe(name)
            view = SeatView(env, name)
            real = int(agent.act_game(env.unwrapped.game)[0])
            if obs["action_mask"].sum() > 1:
                for _ in range(3):  # a fresh world each time
                    assert agent.act(obs, view) == real
                checked += 1
            a = real if rng.random() < 0.7 else mover.act(obs)
            env.step(a)
    assert checked >= 30


@pytest.mark.parametrize("game", GAMES)
def test_batched_moves_are_legal(game: str) -> None:
    venv = rummy_env.make_vec(game, 64, seed=0)
    obs, _ = venv.reset()
    agent = make_agent("heuristic", seed=0, game=game)
    for _ in range(150):
        a = agent.act_game(venv.game)
        assert (obs["action_mask"][np.arange(64), a] == 1).all()
        rows = np.arange(0, 64, 3)
        np.testing.assert_array_equal(agent.act_game(venv.game, rows), a[rows])
        obs, *_ = venv.step(a)


def test_errors() -> None:
    env = rummy_env.rummy51_v1.raw_env()
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    agent = HeuristicAgent(seed=0)
    with pytest.raises(ValueError, match="view"):
        agent.act(obs)
    with pytest.raises(ValueError, match="no legal action"):
        agent.act({"observation": obs["observation"], "action_mask": obs["action_mask"] * 0})

    class Other:
        game = "canasta"

        def sample_worlds(self, n, seed):  # pragma: no cover - never reached
            raise AssertionError

    with pytest.raises(ValueError, match="canasta"):
        agent.act(obs, Other())


def test_single_agent_wrapper_opponent() -> None:
    """As a named opponent of the Gymnasium wrapper (it acts through the seat's view)."""
    from rummy_agents import agent_spec
    from rummy_env.wrappers import RummySingleAgentEnv

    env = RummySingleAgentEnv("rummy51", opponents=agent_spec("heuristic"))
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    done, steps = False, 0
    while not done and steps < 500:
        legal = np.flatnonzero(env.action_masks())
        obs, reward, term, trunc, info = env.step(int(rng.choice(legal)))
        done, steps = term or trunc, steps + 1
    assert done
