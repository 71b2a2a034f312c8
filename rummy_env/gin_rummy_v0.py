"""Versioned entry point of Gin Rummy (see ``rummy_env.envs.gin_rummy`` for the spec)."""

from rummy_env.envs.gin_rummy import __doc__, env, raw_env  # noqa: F401

__all__ = ["env", "raw_env"]
