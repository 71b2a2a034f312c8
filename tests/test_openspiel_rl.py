"""OpenSpiel's RL environment and PyTorch learners on the rummy games
(``rummy_agents.integrations.openspiel``), and the example ``examples/openspiel_algorithms.py``.

``open_spiel.python.rl_environment.Environment`` plays each registered game; OpenSpiel's
PyTorch ``DQN`` trains on it by self-play; random agents play many option sets (hypothesis).
Skipped without OpenSpiel (``pip install -c constraints.txt -e ".[openspiel]"``); the learner
and the example also need torch (``".[train]"``).
"""

from __future__ import annotations

import math
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="needs OpenSpiel: pip install -c constraints.txt -e '.[openspiel]'"
)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from open_spiel.python import rl_environment  # noqa: E402
from open_spiel.python.algorithms import random_agent  # noqa: E402

import rummy_env  # noqa: E402
from rummy_agents.integrations import openspiel as osg  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "openspiel_algorithms.py"
TORCH_REASON = "needs torch: pip install -c constraints.txt -e '.[train]'"
TIMEOUT = 900  # seconds: a cold numba cache compiles the games' kernels first

# the three games with 2 players, and a multi-player one
RL_CONFIGS = [
    ("gin_rummy", {}),
    ("five_hundred_rum", {}),
    ("rummy51", {}),
    ("five_hundred_rum", {"num_players": 3}),
]
# random play: more player counts, reward variants and a multi-hand episode (max_steps)
RANDOM_CONFIGS = [
    *RL_CONFIGS,
    ("gin_rummy", {"num_players": 3}),
    ("gin_rummy", {"num_players": 4}),
    ("gin_rummy", {"oklahoma": True, "reward": "normalized"}),
    ("gin_rummy", {"episode": "match", "max_steps": 150}),
    ("five_hundred_rum", {"num_players": 5}),
    ("rummy51", {"num_players": 4, "reward": "zero_sum"}),
]
DQN_STEPS = 3000  # decisions per game: some 5-20 s on one core with cached kernels


def load(game: str, options: dict[str, Any]) -> Any:
    return pyspiel.load_game(osg.SHORT_NAMES[game], options)


def aec_sizes(game: str, options: dict[str, Any]) -> tuple[int, int]:
    """The AEC env's observation vector size and number of actions for ``options``."""
    env = rummy_env.ENV_MODULES[game].raw_env(**options)
    agent = env.possible_agents[0]
    return env.observation_space(agent)["observation"].shape[0], env.action_space(agent).n


def check_spec(env: Any, game: Any, name: str, options: dict[str, Any]) -> int:
    """The environment's specs are the game's tensor size and action count, which are the
    AEC env's; returns the size.
    """
    size, num_actions = aec_sizes(name, options)
    assert game.information_state_tensor_size() == game.observation_tensor_size() == size
    assert env.observation_spec()["info_state"] == (size,)
    assert env.action_spec()["num_actions"] == game.num_distinct_actions() == num_actions
    return size


def check_time_step(time_step: Any, env: Any, size: int) -> None:
    """One time step's invariants: every seat's tensor is its env observation vector (the
    information state tensor), only the seat to act has legal actions, discounts are 0 at the
    end only.
    """
    state = env.get_state
    obs = time_step.observations
    n = env.num_players
    for p in range(n):
        assert len(obs["info_state"][p]) == size
        np.testing.assert_array_equal(obs["info_state"][p], state.observation_vector(p))
    if time_step.last():
        assert state.is_terminal() and obs["current_player"] == pyspiel.PlayerId.TERMINAL
        assert time_step.discounts == [0.0] * n
        assert all(not legal for legal in obs["legal_actions"])
        return
    cur = obs["current_player"]
    assert cur == state.current_player() and 0 <= cur < n
    assert obs["legal_actions"][cur] == state.legal_actions()
    assert obs["legal_actions"][cur], "the seat to act has a legal action"
    assert all(not obs["legal_actions"][p] for p in range(n) if p != cur)
    if time_step.rewards is not None:  # not the first step
        assert time_step.discounts == [1.0] * n


def check_end(env: Any, game: Any, summed: np.ndarray, decisions: int) -> list[float]:
    """The episode's rewards add up to the state's returns, within the game's bounds; the
    length is within ``max_game_length``; Gin is zero-sum. Returns the returns.
    """
    state = env.get_state
    returns = state.returns()
    np.testing.assert_allclose(summed, returns, rtol=0, atol=1e-6)
    assert all(game.min_utility() <= r <= game.max_utility() for r in returns), returns
    assert decisions <= game.max_game_length()
    if game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM:
        assert abs(sum(returns)) < 1e-6, returns
    return returns


def make_env(game: Any, seed: int) -> Any:
    """``rl_environment.Environment`` over ``game`` with its chance sampler seeded (its
    ``seed=`` keyword is a game parameter, ignored when it is given a game object).
    """
    env = rl_environment.Environment(game, enable_legality_check=True)
    env.seed(seed)
    return env


def play_random(game: Any, seed: int, size: int) -> tuple[list[float], list[int]]:
    """One episode of OpenSpiel's random agents on ``rl_environment`` (chance and agents
    seeded by ``seed``), every step checked; the returns and the actions.
    """
    env = make_env(game, seed)
    n = game.num_players()
    np.random.seed(seed)  # RandomAgent draws from numpy's global stream
    agents = [random_agent.RandomAgent(p, game.num_distinct_actions()) for p in range(n)]
    time_step = env.reset()
    assert time_step.first() and time_step.rewards is None
    summed, actions = np.zeros(n), []
    check_time_step(time_step, env, size)
    while not time_step.last():
        player = time_step.observations["current_player"]
        out = agents[player].step(time_step)
        assert out.action in time_step.observations["legal_actions"][player]
        actions.append(int(out.action))
        time_step = env.step([out.action])
        summed += time_step.rewards
        check_time_step(time_step, env, size)
    return check_end(env, game, summed, len(actions)), actions


@given(config=st.sampled_from(RANDOM_CONFIGS), seed=st.integers(0, 2**31 - 1))
@settings(deadline=None, max_examples=15, suppress_health_check=list(HealthCheck))
def test_random_agents_on_rl_environment(config, seed):
    name, options = config
    game = load(name, options)
    size = check_spec(rl_environment.Environment(game), game, name, options)
    returns, actions = play_random(game, seed, size)
    # the same seeds play the same episode: the deal and the later shuffles replay
    assert play_random(game, seed, size) == (returns, actions)


# -- DQN ----------------------------------------------------------------------------------------


@pytest.fixture
def torch_one_thread():
    torch = pytest.importorskip("torch", reason=TORCH_REASON)
    pytest.importorskip("open_spiel.python.pytorch.dqn", reason=TORCH_REASON)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(threads)


@pytest.mark.parametrize(("name", "options"), RL_CONFIGS, ids=[f"{g}-{o}" for g, o in RL_CONFIGS])
def test_dqn_trains_by_self_play_on_rl_environment(torch_one_thread, name, options):
    torch = torch_one_thread
    from open_spiel.python.pytorch import dqn

    game = load(name, options)
    env = make_env(game, 7)
    size = check_spec(env, game, name, options)
    n = game.num_players()
    np.random.seed(7)
    agents = [
        dqn.DQN(
            player_id=p, state_representation_size=size,
            num_actions=game.num_distinct_actions(), hidden_layers_sizes=[32], batch_size=32,
            replay_buffer_capacity=2 * DQN_STEPS, min_buffer_size_to_learn=64, learn_every=4,
            update_target_network_every=100, learning_rate=1e-3, optimizer_str="adam",
            loss_str="huber", epsilon_decay_duration=DQN_STEPS, seed=p,
        )
        for p in range(n)
    ]  # fmt: skip
    before = [[t.detach().clone() for t in a._q_network.parameters()] for a in agents]
    decisions, final_rewards = 0, [[] for _ in range(n)]
    while decisions < DQN_STEPS:
        time_step = env.reset()
        summed, length = np.zeros(n), 0
        check_time_step(time_step, env, size)
        while not time_step.last():
            player = time_step.observations["current_player"]
            legal = time_step.observations["legal_actions"][player]
            out = agents[player].step(time_step)
            assert out.action in legal, (out.action, legal)
            probs = np.asarray(out.probs)
            assert probs.shape == (game.num_distinct_actions(),)
            assert math.isclose(probs.sum(), 1.0) and set(np.flatnonzero(probs)) <= set(legal)
            time_step = env.step([out.action])
            summed += time_step.rewards
            length += 1
            check_time_step(time_step, env, size)
        for agent in agents:  # each learner records the episode's end
            assert agent.step(time_step) is None
        returns = check_end(env, game, summed, length)
        for p in range(n):
            final_rewards[p].append(time_step.rewards[p])
        assert time_step.rewards == pytest.approx(returns)  # one hand: paid at the end
        decisions += length
    for p, agent in enumerate(agents):
        loss = agent.loss
        assert loss is not None and math.isfinite(loss), (p, loss)
        after = list(agent._q_network.parameters())
        assert any(not torch.equal(b, a.detach()) for b, a in zip(before[p], after, strict=True))
        assert all(torch.isfinite(a).all() for a in after)
        # every episode's last transition carries the seat's final reward
        buf = agent.replay_buffer
        final = buf.experience.is_final_step[: len(buf)]
        got = sorted(buf.experience.reward[: len(buf)][final].tolist())
        assert got == pytest.approx(sorted(final_rewards[p]))


# -- the example --------------------------------------------------------------------------------

LINE = re.compile(
    r"^(\w+)\s+(.+?)\s*: (\d+) games, (\d+) wins, (\d+) losses, (\d+) draws \(", re.MULTILINE
)


def _run(args: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT,
        env=env,
    )  # fmt: skip


def test_example_smoke_prints_the_counts():
    pytest.importorskip("torch", reason=TORCH_REASON)
    proc = _run([str(EXAMPLE), "--smoke"])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    rows = LINE.findall(proc.stdout)
    rule = {"gin_rummy": "simple", "five_hundred_rum": "greedy", "rummy51": "greedy"}
    want = []
    for g in ("five_hundred_rum", "rummy51", "gin_rummy"):
        want += [
            (g, "ismcts(sims=2) vs random", 1),
            (g, f"ismcts(sims=2) vs {rule[g]}", 1),
            (g, "dqn(300 steps) vs random", 2),
        ]
    assert [(g, label, int(n)) for g, label, n, *_ in rows] == want, proc.stdout
    for *_, n, wins, losses, draws in rows:
        assert int(wins) + int(losses) + int(draws) == int(n)
    assert "training" in proc.stdout and "steps/s" in proc.stdout


def test_example_help_is_fast_and_imports_nothing_heavy():
    code = (
        "import sys, runpy\n"
        f"sys.path.insert(0, {str(EXAMPLE.parent)!r})\n"  # the examples import _common
        f"mod = runpy.run_path({str(EXAMPLE)!r}, run_name='example')\n"
        "try:\n"
        "    mod['main'](['--help'])\n"
        "except SystemExit as exc:\n"
        "    print('EXIT', exc.code)\n"
        "heavy = ('torch', 'pyspiel', 'numpy', 'rummy_env', 'rummy_agents')\n"
        "print('HEAVY', sorted(m for m in heavy if m in sys.modules))\n"
    )
    proc = _run(["-c", code])
    assert proc.returncode == 0, proc.stderr
    assert "--dqn-steps" in proc.stdout and "--smoke" in proc.stdout
    assert "EXIT 0" in proc.stdout and "HEAVY []" in proc.stdout, proc.stdout


@pytest.fixture(scope="module")
def example():
    if str(EXAMPLE.parent) not in sys.path:  # the examples import _common (examples/_common.py)
        sys.path.insert(0, str(EXAMPLE.parent))
    return runpy.run_path(str(EXAMPLE), run_name="example")


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--games", "poker"], "--games"),
        (["--matches", "-1"], "--matches"),
        (["--sims", "0"], "--sims"),
        (["--rollouts", "x"], "--rollouts"),
        (["--dqn-steps", "-5"], "--dqn-steps"),
        (["--eval-episodes", "0"], "--eval-episodes"),
        (["--num-players", "1"], "--num-players"),
        (["--hidden", "0"], "--hidden"),
    ],
)
def test_example_refuses_bad_arguments_naming_them(example, capsys, argv, named):
    with pytest.raises(SystemExit) as exc:
        example["parse_args"](argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {named}" in err and argv[1] in err, err


@given(returns=st.lists(st.integers(-3, 3), min_size=2, max_size=8), data=st.data())
def test_example_outcome_is_win_loss_or_draw(example, returns, data):
    seat = data.draw(st.integers(0, len(returns) - 1))
    got = example["outcome"]([float(r) for r in returns], seat)
    others = returns[:seat] + returns[seat + 1 :]
    want = (
        "win" if returns[seat] > max(others) else "draw" if returns[seat] == max(others) else "loss"
    )
    assert got == want


@pytest.mark.parametrize(
    ("game", "players"), [("gin_rummy", 5), ("rummy51", 7), ("five_hundred_rum", 9)]
)
def test_example_refuses_a_player_count_the_game_lacks(example, game, players):
    pytest.importorskip("torch", reason=TORCH_REASON)
    argv = ["--games", game, "--num-players", str(players), "--matches", "0", "--dqn-steps", "0"]
    with pytest.raises(SystemExit) as exc:
        example["main"](argv)
    msg = str(exc.value.code)
    assert f"--num-players {players} for {game}" in msg and "num_players" in msg, msg
