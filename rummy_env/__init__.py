"""rummy_env: rummy card games as PettingZoo environments over one batched numba core.

from rummy_env import gin_rummy_v0
env = gin_rummy_v0.env()

import rummy_env
venv = rummy_env.make_vec("gin_rummy", 1024, seed=0)

import gymnasium, rummy_env  # one learner against the game's rule-based agent
env = gymnasium.make("rummy/GinRummy-v0")
venv = gymnasium.make_vec("rummy/GinRummy-v0", num_envs=256)
"""

from __future__ import annotations

import types as _types

# first, before any kernel loads: numba's caches of edited kernel sources are dropped
from rummy_env.core import jitcache as _jitcache

_jitcache.ensure_fresh()

from rummy_env.core import compile_notice as _compile_notice  # noqa: E402

_compile_notice.install()  # one line on stderr when a first run compiles for long

import gymnasium as _gym  # noqa: E402
import pettingzoo as _pz  # noqa: E402

from rummy_env import five_hundred_rum_v1, gin_rummy_v0, rummy51_v1  # noqa: E402
from rummy_env.vector import RummyVectorEnv, make_vec  # noqa: E402

__version__ = "0.1.0"

# The current version of each game's env module, by game name.
ENV_MODULES = {
    "gin_rummy": gin_rummy_v0,
    "five_hundred_rum": five_hundred_rum_v1,
    "rummy51": rummy51_v1,
}

ENV_IDS = {
    "rummy/gin_rummy-v0": "rummy_env.gin_rummy_v0:env",
    "rummy/five_hundred_rum-v1": "rummy_env.five_hundred_rum_v1:env",
    "rummy/rummy51-v1": "rummy_env.rummy51_v1:env",
}

for _id, _entry in ENV_IDS.items():
    if _id not in _pz.aec_registry:
        _pz.register("aec", _id, entry_point=_entry)

GYM_IDS = {
    "rummy/GinRummy-v0": "gin_rummy",
    "rummy/FiveHundredRum-v1": "five_hundred_rum",
    "rummy/Rummy51-v1": "rummy51",
}
"""Gymnasium ids: one learner seat against opponents (default: the game's rule-based agent),
``gymnasium.make(id)`` a ``RummySingleAgentEnv``, ``gymnasium.make_vec(id, num_envs=N)`` a
``RummySingleAgentVectorEnv``. Their entry points resolve opponents by name, so they live with
the agents (``rummy_agents.gym_envs``, a string here: this package never imports that one)."""

for _id, _game in GYM_IDS.items():
    if _id not in _gym.registry:  # importing twice (or reloading) must not re-register
        _gym.register(
            _id,
            entry_point="rummy_agents.gym_envs:make_env",
            vector_entry_point="rummy_agents.gym_envs:make_vec_env",
            kwargs={"game": _game},
        )


def __getattr__(name: str) -> object:
    """An older version of a game's env module (``five_hundred_rum_v0``) as PettingZoo has it:
    importable, and its ``env``/``raw_env``/``parallel_env`` raise ``DeprecatedEnv`` naming the
    current module; any other unknown name is an ``AttributeError``.
    """
    game, sep, version = name.rpartition("_v")
    current = ENV_MODULES.get(game)
    if sep and version.isdigit() and current is not None:
        now = int(current.__name__.rpartition("_v")[2])
        if int(version) < now:
            from pettingzoo.utils.deprecated_module import DeprecatedEnv

            msg = f"{name} is now {game}_v{now}: use rummy_env.{game}_v{now} instead"

            def _deprecated(*args: object, **kwargs: object) -> None:
                raise DeprecatedEnv(msg)

            module = _types.ModuleType(f"{__name__}.{name}", msg)
            for attr in ("env", "raw_env", "parallel_env"):
                setattr(module, attr, _deprecated)

            def _gone(attr: str) -> object:
                raise AttributeError(f"{msg} (no {attr!r} here)")

            setattr(module, "__getattr__", _gone)  # noqa: B010 - PEP 562 on the stub
            return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ENV_IDS",
    "GYM_IDS",
    "ENV_MODULES",
    "RummyVectorEnv",
    "five_hundred_rum_v1",
    "gin_rummy_v0",
    "make_vec",
    "rummy51_v1",
]
