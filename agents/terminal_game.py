"""The game loop of a terminal game: the person's turn (the legal moves with their keys and
their words from :mod:`rummy_agents.move_words`, the typed input, the commands), the agents'
moves, the record (:class:`rummy_env.game_records.GameRecorder`) and the result
(:class:`TerminalGame`, :func:`play`). What is printed of the table comes from
:class:`~rummy_agents.terminal_table.SeatTable`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rummy_agents.arena.play import make_env
from rummy_agents.arena.registry import make_agent
from rummy_agents.base import SeatView
from rummy_agents.cli import CLIError
from rummy_agents.move_words import MoveWords, describe_moves
from rummy_agents.table_seat import seat_at_tables
from rummy_agents.terminal_input import HELP, QUIT, match_move
from rummy_agents.terminal_paint import (
    STYLE_ME,
    Columns,
    Console,
    Painter,
    Table,
    Text,
    card_key,
)
from rummy_agents.terminal_setup import PlaySetup
from rummy_agents.terminal_table import TITLES, SeatTable
from rummy_env.core.cards import SUIT_SYMBOLS, SUITS
from rummy_env.encodings import five_hundred_rum as E500
from rummy_env.encodings import gin_rummy as EG
from rummy_env.encodings import rummy51 as E51
from rummy_env.game_records import GameRecorder

INSTALL = (
    "rummy-env play needs rich, which is not installed (pip install 'rummy_env[play]'; "
    "in a checkout: pip install -c constraints.txt -e '.[play]')"
)


PHASE_HELP = {
    "gin_rummy": {
        "upcard_offer": "upcard offer: take the upcard or pass",
        "draw": "draw from the stock or take the top discard",
        "discard": "discard a card, or knock (deadwood within the knock limit)",
        "fiftieth_card_offer": "50th card: take it to knock, or pass",
        "fiftieth_card_knock": "knock with the 50th card",
        "knocker_melds": "lay out your melds",
        "defender_melds": "lay out your melds and lay off on the knocker's",
    },
    "five_hundred_rum": {
        "draw": "draw from the stock, or take the pile down to any card (the deepest card "
        "taken must be melded this turn)",
        "play": "meld, lay off (on anyone's melds), then discard",
        "rummy_call_offer": "Rummy! call: claim a pile card that can be melded, or pass",
        "rummy_call_layoff": "meld the called card",
    },
    "rummy51": {
        "draw": "draw from the stock or take the top discard",
        "play": "meld (opening: new melds worth the threshold), lay off, take jokers back, "
        "then discard",
    },
}


@dataclass
class PlayResult:
    """How a terminal game ended.

    Attributes:
        record: the record's path.
        returns: each agent's rewards summed over the game.
        outcome: the env's outcome of the last hand (None if it has none).
        steps: decisions played.
        finished: the game reached its end (not stopped by the person).
        winners: the seats with the best result (empty: a draw or no result).
    """

    record: Path
    returns: dict[str, float]
    outcome: str | None
    steps: int
    finished: bool
    winners: list[str] = field(default_factory=list)


class _Quit(Exception):
    """The person quit (``q``, end of input, Ctrl-C)."""


class _AgentFailed(Exception):
    """An agent could not move (an error of its own, or an illegal move)."""


class TerminalGame(SeatTable):
    """One game between a person and agents, shown and asked through a rich console.

    Args:
        setup: the checked game (:func:`make_setup`).
        console: where everything is shown.
        input_fn: reads one line of the person's input, given the prompt (``console.input``
            by default); ``EOFError`` or ``KeyboardInterrupt`` quits the game.
    """

    def __init__(
        self,
        setup: PlaySetup,
        console: Console,
        input_fn: Callable[[str], str] | None = None,
    ) -> None:
        self.setup = setup
        self.console = console
        self.input_fn = input_fn or self._read
        self.env = make_env(setup.game, setup.options)
        self.game = setup.game
        self.names = list(self.env.possible_agents)
        self.me = self.names[setup.seat]
        self.seat = setup.seat
        self.labels = setup.labels
        self.config = self.env.config
        self.players = len(self.names)
        self.multi = self.game == "gin_rummy" and self.players > 2
        utf = console.encoding.lower().startswith("utf")
        self.paint = Painter(SUIT_SYMBOLS if utf else SUITS)
        self.agents: dict[str, Any] = {}
        self.views = {a: SeatView(self.env, a) for a in self.names}
        for s, name in enumerate(self.names):
            if name == self.me:
                continue
            seed = int(np.random.SeedSequence([setup.seed, 1 + s]).generate_state(1)[0])
            agent = make_agent(setup.opponents[name], seed, self.game)
            self.agents[name] = seat_at_tables(agent) if self.views[name].plays_tables else agent
        self.recorder = GameRecorder(self.env, self.labels)
        self.returns = dict.fromkeys(self.names, 0.0)
        self.steps = 0
        self.hand_log: list[Text] = []

    def _read(self, prompt: str) -> str:
        """The default input: a line from stdin, echoed when it does not come from a terminal
        (piped moves then show in the output as typed ones do).
        """
        text = self.console.input(prompt)
        if not sys.stdin.isatty():
            self.console.print(text, markup=False, highlight=False)
        return text

    # -- moves ----------------------------------------------------------------------------------
    def legal_moves(self) -> list[int]:
        """The person's legal moves, in the action table's order of kinds, the moves of one
        card each (discards, knocks, lay-offs) in the hand's display order.
        """
        mask = self.env.observe(self.me)["action_mask"]
        return sorted((int(a) for a in np.flatnonzero(mask == 1)), key=self._move_key)

    def _move_key(self, a: int) -> tuple[int, tuple[int, int], int]:
        if self.game == "gin_rummy":
            ranges = [(EG.DISCARD_BASE, 1), (EG.KNOCK_BASE, 1), (EG.LAYOFF_BASE, EG.MAX_MELD_SLOTS)]
            ends = [EG.KNOCK_BASE, EG.MELD_BASE, EG.END_MELDING]
        else:
            lay = self.env.layout
            ranges = [(lay.layoff_base, lay.max_melds), (lay.discard_base, 1)]
            ends = [lay.joker_base, lay.discard_base + 53]
        for (base, per), end in zip(ranges, ends, strict=True):
            if base <= a < end:
                return base, card_key((a - base) // per), a
        return a, (0, 0), a

    def _hint(self, a: int, words: MoveWords | None = None) -> Text:
        """One of the person's legal moves in words, its cards painted: the words of
        :func:`rummy_agents.move_words.describe_moves` (``words``, or read now), which name only
        what the seat sees (its hand, the pile, the melds on the table).
        """
        if words is None:
            words = describe_moves(self.env, self.me, [a])[0]
        return self.paint.words(words.text)

    def show_moves(self, legal: list[int]) -> None:
        """Print the person's legal moves with their keys: the name to type and its words."""
        items = []
        # one call for every move: the Gin deadwood after each discard is counted once
        words = describe_moves(self.env, self.me, legal)
        for k, (a, w) in enumerate(zip(legal, words, strict=True), 1):
            line = Text.assemble((f"{k:>3} ", "bold yellow"), (self.env.action_name(a), "bold"))
            line.append("  · ", style="dim")
            line.append_text(self._hint(a, w))
            items.append(line)
        self.console.print(Text("your moves:", style="bold"))
        if len(items) <= 12:
            for line in items:
                self.console.print(line)
        else:
            self.console.print(Columns(items, column_first=True, padding=(0, 4)))

    def show_help(self, names: Sequence[str]) -> None:
        """Print the commands (the examples are moves of ``names``, the legal ones now)."""
        example = next((n for n in names if "[" in n), names[0])
        typed = " ".join(re.sub(r"[\[\],_]", " ", example.lower()).split())
        rows = [
            ("1, 2, ...", "play the move with that key"),
            ("a name", f"play the move of that name: {example} or {typed} (case, spaces "
                       "and brackets do not matter; a unique beginning of one name will do)"),
            ("table", "show the table and the moves again"),
            ("log", "the moves of this hand so far"),
            ("? or help", "this list"),
            ("q or quit", "stop the game (the record is saved, marked stopped)"),
        ]  # fmt: skip
        table = Table(box=None, show_header=False, padding=(0, 2))
        table.add_column(style="bold yellow")
        table.add_column()
        for key, what in rows:
            table.add_row(key, what)
        self.console.print(table)
        self.console.print(
            "Cards: rank A 2 .. 9 T J Q K (T is the ten) and suit; in move names the suits are "
            "c d h s (clubs, diamonds, hearts, spades). JK is a joker; in a meld JK(card) is a "
            "joker standing for that card (JK(rank) in a group).",
            style="dim",
        )

    def ask(self) -> int:
        """The person's move: prompts until a legal move is typed.

        Raises:
            _Quit: on ``q``, the end of input or Ctrl-C.
        """
        legal = self.legal_moves()
        names = [self.env.action_name(a) for a in legal]
        self.show_table()
        phase = self._phase_help()
        if phase:
            self.console.print(Text(phase, style="italic"))
        self.show_moves(legal)
        keys = "1" if len(legal) == 1 else f"1-{len(legal)}"
        prompt = f"your move ({keys} or a name; ? for help, q to quit): "
        while True:
            try:
                text = self.input_fn(prompt)
            except (EOFError, KeyboardInterrupt):
                self.console.print()  # end the prompt's line
                raise _Quit from None
            word = text.strip().lower()
            if word in QUIT:
                raise _Quit
            if word in HELP:
                self.show_help(names)
                continue
            if word == "table":
                self.show_table()
                self.show_moves(legal)
                continue
            if word == "log":
                for line in self.hand_log or [Text("no move yet this hand", style="dim")]:
                    self.console.print(line)
                continue
            found = match_move(text, names)
            if isinstance(found, int):
                return legal[found]
            self.console.print(Text(found, style="red"))

    def _phase_help(self) -> str:
        if self.game == "gin_rummy":
            board, _, _ = self._my_board()
            name = EG.PHASE_NAMES[int(board["phase"])]
        else:
            phases = E500.PHASE_NAMES if self.game == "five_hundred_rum" else E51.PHASE_NAMES
            name = phases[int(self.rec["phase"])]
        return PHASE_HELP[self.game].get(name, "")

    # -- the loop -------------------------------------------------------------------------------
    def run(self) -> PlayResult:
        """Play the game to its end (or until the person quits), write the record, print
        the result.
        """
        env = self.env
        others = ", ".join(f"{a} {self.labels[a]}" for a in self.names if a != self.me)
        self.console.print(
            Text.assemble(
                (f"{TITLES[self.game]}", "bold"),
                f", {self.players} players, seed {self.setup.seed}: you are ",
                (self.me, STYLE_ME),
                f"; {others}. Type ? for help.",
            )
        )
        seed = self.recorder.start(self.setup.seed)
        env.reset(seed=seed)
        self.recorder.dealt()
        self._show_deal()
        finished = True
        failed: _AgentFailed | None = None
        try:
            while not all(env.terminations[a] or env.truncations[a] for a in self.names):
                agent = env.agent_selection
                if agent == self.me:
                    action = self.ask()
                else:
                    action = self._agent_move(agent)
                self._play(agent, action)
        except _Quit:
            finished = False
        except _AgentFailed as e:
            finished, failed = False, e
        truncated = any(env.truncations[a] for a in self.names)
        record = self.recorder.finish(stopped=not finished)
        path = record.write(self.setup.record)
        if failed is not None:
            raise CLIError(f"{failed}; the game so far is saved to {path}")
        winners: list[str] = []
        if finished:
            self.console.print(Text("game over", style="bold green"))
            winners = self.show_end()
        self.show_result(winners, finished, truncated)
        # soft wrap: a long path stays on one line, to be copied
        self.console.print(f"game record saved to {path}", soft_wrap=True)
        self.console.print(f"replay it: rummy-env replay {path}", soft_wrap=True)
        info = env.infos.get(self.names[0], {})
        outcome = info.get("outcome")
        return PlayResult(
            record=path,
            returns=dict(self.returns),
            outcome=None if outcome is None else str(outcome),
            steps=self.steps,
            finished=finished,
            winners=winners,
        )

    def _agent_move(self, agent: str) -> int:
        """The move of an agent's seat.

        Raises:
            _AgentFailed: when the agent raises ``ValueError`` (as a net on rules it was not
                trained for does) or chooses an illegal move.
        """
        obs = self.env.observe(agent)
        who = f"agent {self.labels[agent]!r} ({agent})"
        try:
            if self.console.is_terminal:  # a search may take a while: say who is thinking
                with self.console.status(f"{agent} ({self.labels[agent]}) is thinking..."):
                    a = int(self.agents[agent].act(obs, self.views[agent]))
            else:
                a = int(self.agents[agent].act(obs, self.views[agent]))
        except ValueError as e:
            raise _AgentFailed(f"{who} failed: {e}") from None
        if not (0 <= a < obs["action_mask"].shape[0]) or obs["action_mask"][a] != 1:
            raise _AgentFailed(f"{who} chose an illegal move ({a})")
        return a

    def _play(self, agent: str, action: int) -> None:
        """Apply a move, record it and show it (and the end of a hand)."""
        env = self.env
        before = self.env.unwrapped.game.states[0:1].copy()[0]
        hands = int(before["hands_played"])
        self.recorder.add(agent, action)
        env.step(action)
        self.steps += 1
        for a in self.names:
            self.returns[a] += float(env.rewards.get(a, 0.0))
        self.recorder.rewards(env.rewards)
        name, note = self.public_move(agent, action, before)
        line = Text.assemble(self.who(agent), " ", (name, "bold"))
        if note is not None:
            line.append("  ")
            line.append_text(note)
        self.console.print(line)
        self.hand_log.append(line)
        if int(self.rec["hands_played"]) > hands:
            self.hand_over(agent, before)
            self.hand_log = []
            if not self.rec["done"]:
                self._show_deal()

    def _show_deal(self) -> None:
        """Show a new deal's table, unless the person acts first (the prompt shows it then)."""
        if self.env.agent_selection != self.me:
            self.show_table()


def play(
    setup: PlaySetup,
    console: Console | None = None,
    input_fn: Callable[[str], str] | None = None,
) -> PlayResult:
    """Play one game in a terminal: the person in ``setup.seat``, agents in the other seats.

    Args:
        setup: the checked game (:func:`make_setup`).
        console: a rich ``Console`` (default: the terminal's).
        input_fn: reads the person's input given a prompt (default ``console.input``).

    Returns:
        How the game ended (the record is written to ``setup.record``).
    """
    if Console is None:
        raise CLIError(INSTALL)
    console = console or Console()
    return TerminalGame(setup, console, input_fn).run()
