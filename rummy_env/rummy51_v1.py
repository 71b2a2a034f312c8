"""Versioned entry point of Rummy 51 (see ``rummy_env.envs.rummy51`` for the spec)."""

from rummy_env.envs.rummy51 import __doc__, env, raw_env  # noqa: F401

__all__ = ["env", "raw_env"]
