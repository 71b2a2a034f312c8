"""Shared validation for the rule-option dataclasses of every game."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T", bound="RuleOptions")


class RuleOptions:
    """Mixin for a game's frozen option dataclass: checks that name the bad option, and a
    constructor from keyword arguments that rejects unknown names.
    """

    GAME_NAME = "rummy"

    def _check_int(self, name: str, lo: int, hi: int) -> None:
        v = getattr(self, name)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {v!r}")
        if not lo <= v <= hi:
            raise ValueError(f"{name} must be in [{lo}, {hi}], got {v}")

    def _check_choice(self, name: str, options: tuple[str, ...]) -> None:
        v = getattr(self, name)
        if v not in options:
            raise ValueError(f"{name} must be one of {options}, got {v!r}")

    def _check_bool(self, *names: str) -> None:
        for name in names:
            v = getattr(self, name)
            if not isinstance(v, (bool, np.bool_)):
                raise ValueError(f"{name} must be a bool, got {v!r}")

    @classmethod
    def from_kwargs(cls: type[T], **kwargs: Any) -> T:
        """Build the options, rejecting unknown names with a clear error."""
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(kwargs) - names)
        if unknown:
            raise ValueError(
                f"unknown {cls.GAME_NAME} option(s) {unknown}; valid options: {sorted(names)}"
            )
        return cls(**kwargs)

    def replace(self: T, **kwargs: Any) -> T:
        """A copy with some options changed (validated)."""
        return dataclasses.replace(self, **kwargs)  # type: ignore[type-var]
