"""Command-line pieces the training examples share; the standard library only.

The examples (``sb3_maskable_ppo.py``, ``tianshou_dqn_masked.py``, ``rllib_ppo_masked.py``)
import this before they parse their arguments, so ``--help`` answers at once: numpy, torch, the
frameworks and the games come after parsing. They run as ``python examples/NAME.py``, which puts
this folder on ``sys.path``; a program that loads an example by its path puts the folder there
first. Their evaluation (the counts and the printed line) is
``rummy_agents.integrations.evaluate`` and ``evaluation_line``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

GAMES = ("gin_rummy", "five_hundred_rum", "rummy51")

DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {
    "gin_rummy": {"knock_limit": 30, "reward": "normalized"}
}
"""Rule options of a game unless ``--option`` says otherwise: with the standard knock limit of
10 untrained and random policies almost never knock, and nearly every hand is a dead hand."""


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected an integer >= {low}, got {text!r}"
            ) from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {value}")
        return value

    return parse


def parse_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with a JSON value (``true``, ``3``, ``"match"``) or a plain string."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--option needs KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def add_game_arguments(parser: argparse.ArgumentParser) -> None:
    """``--game`` and ``--option KEY=VALUE`` (repeatable); :func:`game_options` reads them."""
    parser.add_argument("--game", default="gin_rummy", choices=GAMES)
    parser.add_argument(
        "--option",
        type=parse_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rule option (repeatable); Gin Rummy defaults to knock_limit=30 reward=normalized",
    )


def game_options(args: argparse.Namespace) -> dict[str, Any]:
    """The game's rule options: its :data:`DEFAULT_OPTIONS`, then ``--option`` in order."""
    return {**DEFAULT_OPTIONS.get(args.game, {}), **dict(args.option)}


def describe_setting(game: str, options: dict[str, Any]) -> str:
    """The game and its options as the evaluation lines print them: ``gin_rummy knock_limit=30``."""
    return game + "".join(f" {k}={v}" for k, v in options.items())
