"""Baseline agents for the rummy_env environments (see ``rummy_agents.base`` for the protocol)."""

from rummy_agents.base import Agent, SeatView
from rummy_agents.gin_rules import GinNoviceAgent, GinPlannerAgent, GinSimpleAgent
from rummy_agents.random_agent import RandomAgent

__all__ = [
    "Agent",
    "GinNoviceAgent",
    "GinPlannerAgent",
    "GinSimpleAgent",
    "RandomAgent",
    "SeatView",
]
