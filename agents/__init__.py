"""Baseline agents for the rummy_env environments."""

from agents.random_agent import RandomAgent

__all__ = ["RandomAgent"]
