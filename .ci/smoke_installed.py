"""Smoke test of an installed rummy_env, run from outside the checkout (.ci/wheel and
.ci/min-versions): every game's AEC env passes the contract checker, the vector env and the
single-agent env step, the Gymnasium ids pass check_env (a picture drawn) and their native
vector env runs under RecordEpisodeStatistics, and each published agent plays a game with numpy
alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium
import numba
import numpy as np
import pettingzoo
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import rummy_env
from rummy_agents import published_agent
from rummy_env.testing.api import check_aec_env
from rummy_env.wrappers import RummySingleAgentEnv

assert "site-packages" in rummy_env.__file__, f"not the installed package: {rummy_env.__file__}"
assert not (Path.cwd() / "rummy_env").exists(), "run from outside the checkout"
print(
    f"python {sys.version.split()[0]}, numpy {np.__version__}, numba {numba.__version__}, "
    f"gymnasium {gymnasium.__version__}, pettingzoo {pettingzoo.__version__}"
)
CASES = [("gin_rummy", {}), ("gin_rummy", {"num_players": 4}),
         ("five_hundred_rum", {"num_players": 3}), ("rummy51", {})]  # fmt: skip
for game, options in CASES:
    module = rummy_env.ENV_MODULES[game]
    check_aec_env(lambda module=module, options=options: module.env(**options), num_cycles=100)
    venv = rummy_env.make_vec(game, 8, seed=0, **options)
    obs, _ = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(50):
        acts = (rng.random(obs["action_mask"].shape) * obs["action_mask"]).argmax(1)
        obs, *_ = venv.step(acts)
    single = RummySingleAgentEnv(game, **options)
    single.reset(seed=0)
    for _ in range(10):
        legal = np.flatnonzero(single.action_masks())
        _, _, term, trunc, _ = single.step(int(legal[0]))
        if term or trunc:
            single.reset()
    print(f"{game} {options}: ok")
for gym_id in ("rummy/GinRummy-v0", "rummy/FiveHundredRum-v1", "rummy/Rummy51-v1"):
    genv = gymnasium.make(gym_id, opponent="random", render_mode="rgb_array")
    check_env(genv.unwrapped)  # the render check draws a picture (Pillow at its lower bound)
    vec = RecordEpisodeStatistics(gymnasium.make_vec(gym_id, num_envs=4, opponent="random"))
    obs, info = vec.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(30):
        masks = info["action_mask"]
        obs, _, _, _, info = vec.step((rng.random(masks.shape) * masks).argmax(1))
    print(f"{gym_id}: ok")
for game in ("gin_rummy", "five_hundred_rum", "rummy51"):
    env = rummy_env.ENV_MODULES[game].env()
    env.reset(seed=1)
    agent = published_agent(game)
    for _name in env.agent_iter(max_iter=400):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else agent.act(obs))
    print(f"published {game} agent: ok")
