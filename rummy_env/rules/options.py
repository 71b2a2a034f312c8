"""Shared validation for the rule-option dataclasses of every game."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from rummy_env.core.validate import check_bool, check_choice, check_int

T = TypeVar("T", bound="RuleOptions")


class RuleOptions:
    """Mixin for a game's frozen option dataclass: checks that name the bad option, and a
    constructor from keyword arguments that rejects unknown names.
    """

    GAME_NAME = "rummy"
    # every game's dataclass has this field (an annotation only: not a field of this mixin)
    num_players: int
    if TYPE_CHECKING:  # every subclass is a dataclass (what dataclasses.fields takes)
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def _check_int(self, name: str, lo: int, hi: int) -> None:
        check_int(name, getattr(self, name), lo, hi)

    def _check_choice(self, name: str, options: tuple[str, ...]) -> None:
        check_choice(name, getattr(self, name), options)

    def _check_bool(self, *names: str) -> None:
        for name in names:
            check_bool(name, getattr(self, name))

    @classmethod
    def from_kwargs(cls: type[T], **kwargs: Any) -> T:
        """Build the options, rejecting unknown names with a clear error."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(kwargs) - names)
        if unknown:
            raise ValueError(
                f"unknown {cls.GAME_NAME} option(s) {unknown}; valid options: {sorted(names)}"
            )
        return cls(**kwargs)

    def replace(self: T, **kwargs: Any) -> T:
        """A copy with some options changed (validated)."""
        return dataclasses.replace(self, **kwargs)
