"""Baseline agents for the rummy_env environments (see ``agents.base`` for the protocol)."""

from agents.base import Agent, SeatView
from agents.gin_rules import GinNoviceAgent, GinPlannerAgent, GinSimpleAgent
from agents.random_agent import RandomAgent

__all__ = [
    "Agent",
    "GinNoviceAgent",
    "GinPlannerAgent",
    "GinSimpleAgent",
    "RandomAgent",
    "SeatView",
]
