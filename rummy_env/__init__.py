"""rummy_env: rummy card games as PettingZoo environments over one batched numba core.

from rummy_env import gin_rummy_v0
env = gin_rummy_v0.env()

import rummy_env
venv = rummy_env.make_vec("gin_rummy", 1024, seed=0)
"""

from __future__ import annotations

import pettingzoo as _pz

from rummy_env import five_hundred_rum_v0, gin_rummy_v0, rummy51_v0
from rummy_env.vector import RummyVectorEnv, make_vec

__version__ = "0.1.0"

ENV_IDS = {
    "rummy/gin_rummy-v0": "rummy_env.gin_rummy_v0:env",
    "rummy/five_hundred_rum-v0": "rummy_env.five_hundred_rum_v0:env",
    "rummy/rummy51-v0": "rummy_env.rummy51_v0:env",
}

for _id, _entry in ENV_IDS.items():
    if _id not in _pz.aec_registry:
        _pz.register("aec", _id, entry_point=_entry)

__all__ = [
    "ENV_IDS",
    "RummyVectorEnv",
    "five_hundred_rum_v0",
    "gin_rummy_v0",
    "make_vec",
    "rummy51_v0",
]
