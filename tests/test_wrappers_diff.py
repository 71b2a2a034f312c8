"""``env()`` behaves exactly as PettingZoo's standard wrappers around ``raw_env``.

``env()`` replaces the outer ``OrderEnforcingWrapper`` by ``FastOrderEnforcing``, which reads
the raw env directly on the common calls. These tests run the same call sequences, scripted
and fuzzed (hypothesis), through ``env()`` and through PettingZoo's own
``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(raw_env, -1)))``,
and compare every return value, the error type and message of every failing call, the
warnings logged, and the whole public state (agents, rewards, cumulative rewards,
terminations, truncations, infos) after every call.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

import rummy_env
from rummy_env.envs.base import FastOrderEnforcing

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("gin_rummy", {}),
    ("gin_rummy", {"oklahoma": True, "auto_meld": False}),
    ("gin_rummy", {"num_players": 3}),
    ("gin_rummy", {"num_players": 4, "episode": "match", "target": 30}),
    ("five_hundred_rum", {"num_players": 3}),
    ("rummy51", {}),
]

STATE = ("agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations",
         "truncations", "infos")  # fmt: skip


def reference_env(game: str, **options: Any) -> Any:
    """``raw_env`` in PettingZoo's standard wrappers, as ``env()`` was built before."""
    env = rummy_env.ENV_MODULES[game].raw_env(**options)
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def canon(x: Any) -> Any:
    """A comparable form of a return value (arrays with their dtype and shape)."""
    if isinstance(x, np.ndarray):
        return ("ndarray", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, dict):
        return {k: canon(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [canon(v) for v in x]
    if isinstance(x, np.generic):
        return ("np", type(x).__name__, x.item())
    return (type(x).__name__, x)


def call(env: Any, op: str, arg: Any, its: dict[str, Any]) -> Any:
    """Do one call on ``env``; returns ("ok", value) or ("error", type, message), plus the
    warnings PettingZoo's logger queued during the call.
    """
    EnvLogger.flush()
    try:
        if op == "reset":
            out = env.reset(seed=arg)
        elif op == "last":
            out = env.last(arg)
        elif op == "observe":
            out = env.observe(arg)
        elif op == "step":
            out = env.step(arg)
        elif op == "iter":
            its["it"] = iter(env.agent_iter(arg))
            out = None
        elif op == "next":
            out = next(its["it"]) if "it" in its else None
        elif op == "attr":
            out = getattr(env, arg)
        else:  # pragma: no cover - a typo in a script
            raise AssertionError(op)
        result: tuple[Any, ...] = ("ok", canon(out))
    except StopIteration:
        result = ("stop",)
    except Exception as e:  # noqa: BLE001 - the point is to compare every error
        result = ("error", type(e).__name__, str(e))
    return result, list(EnvLogger.mqueue)


def state_of(env: Any) -> Any:
    """The public state, or the error reading it raises (before ``reset``)."""
    out = {}
    for name in STATE:
        try:
            out[name] = canon(getattr(env, name))
        except Exception as e:  # noqa: BLE001
            out[name] = ("error", type(e).__name__, str(e))
    out["_has_updated"] = env._has_updated
    out["_has_reset"] = env._has_reset
    return out


def action_for(kind: int, env: Any, rnd: random.Random) -> Any:
    """An action of one of many kinds, read from the reference env's current mask."""
    raw = env.unwrapped
    n = raw.action_space(raw.possible_agents[0]).n
    mask = raw.game.masks[0, :n] if raw._was_reset else np.zeros(n, np.int8)
    legal = np.flatnonzero(mask).tolist()
    illegal = np.flatnonzero(mask == 0).tolist()
    pick_legal = legal[rnd.randrange(len(legal))] if legal else 0
    choices = [
        pick_legal,  # the common case, many times over
        pick_legal,
        pick_legal,
        pick_legal,
        np.int64(pick_legal),
        np.int32(pick_legal),
        np.array(pick_legal),
        illegal[rnd.randrange(len(illegal))] if illegal else 0,
        None,
        -1,
        n,
        n + 7,
        float(pick_legal),
        bool(pick_legal % 2),
        "DRAW",
        [pick_legal],
    ]
    return choices[kind % len(choices)]


def run_script(game: str, options: dict[str, Any], script: list[tuple[str, int]], seed: int):
    """Play ``script`` (ops with an integer argument) through both stacks, comparing."""
    ours, ref = rummy_env.ENV_MODULES[game].env(**options), reference_env(game, **options)
    assert isinstance(ours, FastOrderEnforcing)
    its_o: dict[str, Any] = {}
    its_r: dict[str, Any] = {}
    rnd_o, rnd_r = random.Random(seed), random.Random(seed)
    agents = ref.unwrapped.possible_agents
    for k, (op, x) in enumerate(script):
        if op == "reset":
            arg_o = arg_r = x
        elif op == "last":
            arg_o = arg_r = bool(x % 3)
        elif op == "observe":
            arg_o = arg_r = (agents + ["nobody", 0])[x % (len(agents) + 2)]
        elif op == "step":
            arg_o, arg_r = action_for(x, ref, rnd_o), action_for(x, ref, rnd_r)
        elif op == "iter":
            arg_o = arg_r = 1 + x % 300
        elif op == "attr":
            arg_o = arg_r = (*STATE, "num_agents", "max_num_agents", "_secret")[x % 10]
        else:
            arg_o = arg_r = None
        got = call(ours, op, arg_o, its_o)
        want = call(ref, op, arg_r, its_r)
        assert got == want, f"call {k}: {op}({arg_r!r}) differs"
        assert state_of(ours) == state_of(ref), f"state after call {k}: {op}({arg_r!r})"


OPS = st.sampled_from(["reset", "last", "observe", "step", "step", "step", "step", "iter",
                       "next", "next", "attr"])  # fmt: skip


@pytest.mark.parametrize(("game", "options"), CONFIGS, ids=lambda x: str(x))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    script=st.lists(st.tuples(OPS, st.integers(0, 10_000)), min_size=1, max_size=120),
    seed=st.integers(0, 2**16),
)
def test_fuzzed_call_sequences_match_pettingzoo(game, options, script, seed):
    """Random calls, legal or not, in any order (before reset included)."""
    run_script(game, options, script, seed)


@pytest.mark.parametrize(("game", "options"), CONFIGS, ids=lambda x: str(x))
def test_played_episodes_match_pettingzoo(game, options):
    """Whole episodes of the standard loop (mostly legal moves, some illegal or odd ones),
    several resets: the long sequences a fuzzer rarely builds.
    """
    rnd = random.Random(7)
    script: list[tuple[str, int]] = []
    for episode in range(4):
        script += [("reset", episode), ("iter", 2000)]
        for _ in range(700):
            script += [("next", 0), ("last", 1)]
            r = rnd.random()
            kind = 0 if r < 0.97 or episode == 0 else rnd.randrange(16)
            script.append(("step", kind))
        script += [("step", 8), ("step", 8), ("step", 0), ("next", 0)]
    run_script(game, options, script, seed=11)


def test_before_reset_errors_match_pettingzoo():
    """Every call before ``reset`` fails as PettingZoo's wrappers make it fail."""
    script = [("step", 0), ("observe", 0), ("last", 1), ("iter", 5), ("next", 0)]
    script += [("attr", i) for i in range(10)]
    run_script("gin_rummy", {}, script, seed=0)


def test_illegal_move_terminates_with_minus_one():
    """PettingZoo's ``TerminateIllegalWrapper`` convention: the mover gets -1, the others 0,
    everyone is terminated and truncated, and the warning is logged.
    """
    env = rummy_env.gin_rummy_v0.env()
    env.reset(seed=3)
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    mover = env.agent_selection
    EnvLogger.flush()
    env.step(illegal)
    assert any("Illegal move" in str(m) for m in EnvLogger.mqueue)
    assert env.rewards[mover] == -1.0
    assert all(env.terminations.values()) and all(env.truncations.values())
    assert env._cumulative_rewards[mover] == -1.0


def test_observations_handed_out_never_change():
    """An observation the user holds stays as it was, whatever is stepped after."""
    env = rummy_env.gin_rummy_v0.env()
    env.reset(seed=5)
    kept = []
    rnd = random.Random(5)
    for agent in env.agent_iter(400):
        obs, *_rest, term, trunc, _info = env.last()
        other = env.observe(env.possible_agents[1 - env.possible_agents.index(agent)])
        kept.append((obs, {k: v.copy() for k, v in obs.items()}))
        kept.append((other, {k: v.copy() for k, v in other.items()}))
        legal = np.flatnonzero(obs["action_mask"])
        env.step(None if term or trunc else int(legal[rnd.randrange(len(legal))]))
    for handed, copy in kept:
        for key in copy:
            assert np.array_equal(handed[key], copy[key])
