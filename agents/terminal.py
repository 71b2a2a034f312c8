"""Terminal play: a person against agents of the registry (``rummy-env play``).

The table is shown from the person's seat only: their hand (sorted, suits in colour), the discard
pile, the melds on the table with their owners (a joker with the card it stands for), each
seat's card count and scores, the phase and whose turn it is. Other hands and the stock stay
face down, and so do a Gin knocker's face-down discard and, with 4 players, everything of the
other table: the person sees what the env lets that seat observe. The legal moves are listed by
their action names (``env.action_name``) under number keys; the person types a key or a name
(a unique beginning of one will do). The other seats' moves are shown as they are played, then
the end of each hand with its points, and the result. The game is recorded
(:class:`rummy_env.game_records.GameRecorder`), so ``rummy-env replay FILE`` plays it back.

Input and output are injectable (:func:`play` takes an ``input_fn`` and a rich ``Console``), so
a game can be driven without a terminal. Needs ``rich`` (the extra ``play``); without it
``rummy-env play`` says what to install.
"""

from __future__ import annotations

import argparse

from rummy_agents.cli import BASELINES, CLIError, parse_options
from rummy_agents.terminal_game import INSTALL, PlayResult, TerminalGame, play
from rummy_agents.terminal_input import match_move
from rummy_agents.terminal_paint import Console, Painter
from rummy_agents.terminal_setup import HUMAN, PlaySetup, make_setup


def cmd_play(args: argparse.Namespace) -> int:
    """Run ``rummy-env play``: check everything, then play one game in the terminal."""
    try:
        import rich  # noqa: F401 - only whether it is installed
    except ImportError:
        raise CLIError(INSTALL) from None
    options = parse_options(args.option)
    for key, value in (("num_players", args.players), ("episode", args.episode)):
        if value is None:
            continue
        if key in options and options[key] != value:
            flag = "--players" if key == "num_players" else "--episode"
            raise CLIError(f"{flag} {value} and --option {key}={options[key]} disagree")
        options[key] = value
    setup = make_setup(args.game, args.opponent, args.seat, args.seed, options, args.record)
    play(setup, Console())
    return 0


def add_play_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``play`` command."""
    p = sub.add_parser(
        "play",
        help="play a game in the terminal against agents",
        description=(
            "Play a game in the terminal against agents of the arena's registry: your hand, "
            "the pile and the melds are shown from your seat, the legal moves are listed with "
            "keys, the agents' moves are shown as they play. The game is saved as a game "
            "record (rummy-env replay FILE plays it back). Needs rich: pip install "
            "'rummy_env[play]'."
        ),
    )
    p.add_argument("--game", default="gin_rummy", help="game name (default gin_rummy)")
    p.add_argument(
        "--opponent",
        action="append",
        default=[],
        metavar="AGENT",
        help="agent spec (as in arena: simple, greedy@hold_melds=3, ppo, ...): once for every "
        "other seat, or once per other seat in seat order; default: "
        + "; ".join(f"{g}: {a.split(',')[-1]}" for g, a in BASELINES.items()),
    )
    p.add_argument(
        "--players", type=int, default=None, metavar="N", help="number of players (num_players)"
    )
    p.add_argument(
        "--seat", type=int, default=0, metavar="K", help="your seat, 0 .. N-1 (default 0)"
    )
    p.add_argument(
        "--seed", type=int, default=None, metavar="N", help="deal seed (default: random, printed)"
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="rule option, repeatable (as in arena)",
    )
    p.add_argument(
        "--episode",
        choices=("hand", "match", "game"),
        default=None,
        help="one hand, or a Gin Rummy / Rummy 51 match, a 500 Rum game",
    )
    p.add_argument(
        "--record",
        default=None,
        metavar="PATH",
        help="game record file (default ./rummy-env-play-<game>-<seed>.jsonl)",
    )
    p.set_defaults(func=cmd_play)


__all__ = [
    "HUMAN",
    "INSTALL",
    "Painter",
    "PlayResult",
    "PlaySetup",
    "TerminalGame",
    "add_play_parser",
    "cmd_play",
    "make_setup",
    "match_move",
    "play",
]
