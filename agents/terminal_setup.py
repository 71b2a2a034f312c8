"""The setup of a terminal game (``rummy-env play``): the game, its rule options, the person's
seat, the opponents, the seed and the record's path, all checked before anything is played
(:func:`make_setup` builds a :class:`PlaySetup`). Needs no ``rich``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rummy_agents.arena.play import probe_agent
from rummy_agents.arena.registry import check_agent
from rummy_agents.cli import BASELINES, CLIError, check_out_dir, make_config
from rummy_env.game_records import MAX_SEED
from rummy_env.games import GAMES

HUMAN = "human"
"""The person's label in the game record."""


@dataclass(frozen=True)
class PlaySetup:
    """A checked game for :func:`play` (:func:`make_setup` builds it).

    Attributes:
        game: game name.
        options: rule options of the env.
        seat: the person's seat.
        opponents: agent spec of each other seat, by agent name (``player_1``, ...).
        seed: the reset seed (the agents' seeds derive from it).
        record: where the game record is written.
    """

    game: str
    options: dict[str, Any]
    seat: int
    opponents: dict[str, str]
    seed: int
    record: Path

    @property
    def labels(self) -> dict[str, str]:
        """Who plays each seat, for the record: ``human`` and the agents' specs."""
        out = dict(self.opponents)
        out[f"player_{self.seat}"] = HUMAN
        return dict(sorted(out.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[1])))


def default_record(game: str, seed: int) -> Path:
    """``rummy-env-play-<game>-<seed>.jsonl`` in the current folder (``-2``, ``-3``, ... added
    when the file exists, so an earlier game is not overwritten).
    """
    path = Path(f"rummy-env-play-{game}-{seed}.jsonl")
    k = 2
    while path.exists():
        path = Path(f"rummy-env-play-{game}-{seed}-{k}.jsonl")
        k += 1
    return path


def check_record_path(path: Path) -> Path:
    """``path`` if a record can be written there (``--record``).

    Raises:
        CLIError: for a folder, or a path under a file or in a folder that cannot be written.
    """
    if path.is_dir():
        raise CLIError(f"--record {str(path)!r} is a folder: name a file (e.g. game.jsonl)")
    check_out_dir(path.parent, "--record")
    return path


def make_setup(
    game: str,
    opponents: Sequence[str] = (),
    seat: int = 0,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    record: str | Path | None = None,
) -> PlaySetup:
    """Check a game to play and build its :class:`PlaySetup`.

    Args:
        game: game name (``gin_rummy``, ``five_hundred_rum``, ``rummy51``).
        opponents: agent specs: one for every other seat, or one per other seat in seat order
            (empty: the game's strongest baseline, ``simple`` or ``greedy``).
        seat: the person's seat.
        seed: the reset seed (``None``: a random one).
        options: rule options (``num_players`` included).
        record: the record's path (``None``: :func:`default_record`).

    Raises:
        CLIError: for an unknown game, a bad option, seat or seed, a wrong number of opponents,
            an agent that does not play this game with these options, or a record path that
            cannot be written.
    """
    if game not in GAMES:
        raise CLIError(f"unknown game {game!r}; available: {', '.join(GAMES)}")
    options = dict(options or {})
    players = make_config(game, options).num_players
    if not 0 <= seat < players:
        raise CLIError(
            f"--seat must be a seat of the {players} players: 0..{players - 1}, got {seat}"
        )
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint32)[0])
    if not 0 <= seed <= MAX_SEED:  # a record keeps its seed: replay takes these
        raise CLIError(f"--seed must be an integer in 0..{MAX_SEED}, got {seed}")
    others = [f"player_{s}" for s in range(players) if s != seat]
    specs = list(opponents) or [BASELINES[game].split(",")[-1]]
    if len(specs) == 1:
        specs *= len(others)
    elif len(specs) != len(others):
        raise CLIError(
            f"--opponent: give one agent for every other seat, or one per other seat "
            f"({len(others)}: {', '.join(others)}), got {len(specs)}"
        )
    for spec in dict.fromkeys(specs):
        try:
            check_agent(spec, game)
        except (ValueError, TypeError) as e:
            raise CLIError(f"--opponent {spec!r}: {e}") from None
        try:
            probe_agent(game, options, spec)
        except ValueError as e:
            raise CLIError(
                f"--opponent {spec!r} cannot play {game} with these rules: {e}"
            ) from None
    path = default_record(game, seed) if record is None else check_record_path(Path(record))
    return PlaySetup(game, options, seat, dict(zip(others, specs, strict=True)), seed, path)
