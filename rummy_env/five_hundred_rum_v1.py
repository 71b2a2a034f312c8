"""Versioned entry point of 500 Rum (see ``rummy_env.envs.five_hundred_rum`` for the spec)."""

from rummy_env.envs.five_hundred_rum import __doc__, env, raw_env  # noqa: F401

__all__ = ["env", "raw_env"]
