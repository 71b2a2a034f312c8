"""Agents for the rummy_env environments, installed as ``rummy_agents`` (see
:mod:`rummy_agents.base` for the protocol, :mod:`rummy_agents.arena.registry` for agents by name).
"""

from pathlib import Path

# first, before any kernel loads: numba's caches of edited kernel sources (here or in
# rummy_env, whose kernels ours call) are dropped
from rummy_env.core import jitcache as _jitcache

_jitcache.ensure_fresh_dependent(Path(__file__).parent)

from rummy_agents.arena.registry import agent_spec, make_agent  # noqa: E402
from rummy_agents.base import Agent, SeatView  # noqa: E402
from rummy_agents.gin_rummy_rules import (  # noqa: E402
    GinRummyNoviceAgent,
    GinRummyPlannerAgent,
    GinRummySimpleAgent,
)
from rummy_agents.published import published_agent  # noqa: E402
from rummy_agents.random_agent import RandomAgent  # noqa: E402
from rummy_agents.table_seat import TableSeatAgent  # noqa: E402
from rummy_env import __version__  # noqa: E402  (one version string for both packages)
from rummy_env.renamed import renamed_attributes  # noqa: E402

# names before 0.1.0's one-name-per-game rename, deprecated (CHANGELOG)
__getattr__ = renamed_attributes(
    __name__,
    {
        "GinNoviceAgent": "GinRummyNoviceAgent",
        "GinPlannerAgent": "GinRummyPlannerAgent",
        "GinSimpleAgent": "GinRummySimpleAgent",
    },
)

__all__ = [
    "Agent",
    "GinRummyNoviceAgent",
    "GinRummyPlannerAgent",
    "GinRummySimpleAgent",
    "RandomAgent",
    "SeatView",
    "TableSeatAgent",
    "__version__",
    "agent_spec",
    "make_agent",
    "published_agent",
]
