"""Agents for the rummy_env environments, installed as ``rummy_agents`` (see
:mod:`rummy_agents.base` for the protocol, :mod:`rummy_agents.arena.registry` for agents by name).
"""

from rummy_agents.arena.registry import agent_spec, make_agent
from rummy_agents.base import Agent, SeatView
from rummy_agents.gin_rummy_rules import (
    GinRummyNoviceAgent,
    GinRummyPlannerAgent,
    GinRummySimpleAgent,
)
from rummy_agents.random_agent import RandomAgent

__all__ = [
    "Agent",
    "GinRummyNoviceAgent",
    "GinRummyPlannerAgent",
    "GinRummySimpleAgent",
    "RandomAgent",
    "SeatView",
    "agent_spec",
    "make_agent",
]
