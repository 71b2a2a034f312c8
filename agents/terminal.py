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
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rummy_agents.arena.play import make_env, probe_agent
from rummy_agents.arena.registry import check_agent, make_agent
from rummy_agents.base import SeatView
from rummy_agents.cli import BASELINES, CLIError, check_out_dir, make_config, parse_options
from rummy_agents.table_seat import seat_at_tables
from rummy_env.core.cards import RANKS, SUIT_SYMBOLS, SUITS, str_to_card
from rummy_env.core.jmelds import TPL_A, TPL_B, TPL_C, TPL_KIND
from rummy_env.encodings import five_hundred_rum as E500
from rummy_env.encodings import gin_rummy as EG
from rummy_env.encodings import rummy51 as E51
from rummy_env.game_records import MAX_SEED, GameRecorder
from rummy_env.games import GAMES
from rummy_env.render.table import meld_cards

try:  # the extra "play"; without it only the parser works, and the command says what to install
    from rich.columns import Columns
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text
except ImportError:  # pragma: no cover - checked in a subprocess with rich blocked
    Columns = Console = Group = Panel = Table = Text = None  # type: ignore[assignment,misc]

HUMAN = "human"
"""The person's label in the game record."""

INSTALL = (
    "rummy-env play needs rich, which is not installed (pip install 'rummy_env[play]'; "
    "in a checkout: pip install -c constraints.txt -e '.[play]')"
)

TITLES = {"gin_rummy": "Gin Rummy", "five_hundred_rum": "500 Rum", "rummy51": "Rummy 51"}

SUIT_ORDER = (3, 2, 0, 1)
"""Display order of the suits, spades hearts clubs diamonds: the colours alternate."""

STYLE_BLACK = "bold"
STYLE_RED = "bold red"
STYLE_JOKER = "bold magenta"
STYLE_ME = "bold cyan"

QUIT = ("q", "quit", "exit")
HELP = ("?", "help")

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


# ---------------------------------------------------------------------------------------------
# Setup: everything checked before the game starts


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


# ---------------------------------------------------------------------------------------------
# Cards as text


def card_key(c: int) -> tuple[int, int]:
    """Sort key of a card in display order: by suit (spades, hearts, clubs, diamonds), then
    rank; jokers last.
    """
    return (4, 0) if c >= 52 else (SUIT_ORDER.index(c // 13), c % 13)


def sort_cards(cards: Iterable[int]) -> list[int]:
    """Cards in display order (:func:`card_key`)."""
    return sorted(cards, key=card_key)


def mask_cards(mask: int) -> list[int]:
    """The cards of a 52-bit Gin mask, ascending."""
    m = int(mask)
    return [c for c in range(52) if m >> c & 1]


def count_cards(counts: np.ndarray) -> list[int]:
    """The cards of a count vector over card types (53: 52 is the joker), one per copy."""
    return [int(c) for c in np.repeat(np.arange(len(counts)), np.maximum(counts, 0))]


class Painter:
    """Cards as rich text: rank and suit symbol, ``♠ ♣`` in one colour, ``♥ ♦`` in red.

    Args:
        symbols: the suit symbols (``♣♦♥♠``), or the suit letters (``cdhs``) for a terminal
            that cannot show them.
    """

    def __init__(self, symbols: str = SUIT_SYMBOLS) -> None:
        self.symbols = symbols

    def name(self, c: int) -> str:
        """Plain text of a card (``7♥``, ``JK``)."""
        return "JK" if c >= 52 else RANKS[c % 13] + self.symbols[c // 13]

    def card(self, c: int) -> Text:
        """One card, coloured."""
        if c >= 52:
            return Text("JK", style=STYLE_JOKER)
        return Text(self.name(c), style=STYLE_RED if c // 13 in (1, 2) else STYLE_BLACK)

    def cards(self, cards: Iterable[int], sort: bool = False) -> Text:
        """Cards separated by spaces (``-`` for none)."""
        cards = sort_cards(cards) if sort else list(cards)
        if not cards:
            return Text("-", style="dim")
        return Text(" ").join(self.card(c) for c in cards)

    def stand_in(self, text: str, card: int | None = None) -> Text:
        """A joker standing for a card (or a rank): ``JK(7♥)``."""
        inner = self.card(card) if card is not None else Text(text, style="bold")
        return Text.assemble(Text("JK(", style=STYLE_JOKER), inner, Text(")", style=STYLE_JOKER))

    def table_meld(self, rec: np.void, m: int) -> Text:
        """Slot ``m`` of a joker game's table: its cards, each joker with its stand-in."""
        parts = []
        for c in meld_cards(rec, m):
            if c.face < 52:
                parts.append(self.card(c.face))
            elif len(c.stand_in) > 1:  # in a run: the very card
                parts.append(self.stand_in("", str_to_card(c.stand_in)))
            else:  # in a group: the rank
                parts.append(self.stand_in(c.stand_in))
        return Text(" ").join(parts)

    def template(self, t: int, hand: np.ndarray) -> Text:
        """The cards a new meld by template ``t`` takes from ``hand`` (count vector): its
        naturals, and jokers (``JK``) where the hand lacks them, as the engine fills them.
        """
        if TPL_KIND[t] == 1:
            r, suits, jokers = int(TPL_A[t]), int(TPL_B[t]), int(TPL_C[t])
            parts = [self.card(s * 13 + r) for s in range(4) if suits >> s & 1]
            return Text(" ").join(parts + [self.stand_in(RANKS[r])] * jokers)
        s, lo, hi = int(TPL_A[t]), int(TPL_B[t]), int(TPL_C[t])
        cards = [s * 13 + pos % 13 for pos in range(lo, hi + 1)]
        # a plain JK: its place in the run says what it stands for
        return Text(" ").join(self.card(c) if hand[c] > 0 else self.card(52) for c in cards)


# ---------------------------------------------------------------------------------------------
# Typed input


def _canon(text: str) -> str:
    """A move name or typed text reduced to lower-case letters and digits, suit symbols as
    letters and a ten as ``t`` (so ``discard 10♥`` reads as ``DISCARD[Th]``).
    """
    for sym, letter in zip(SUIT_SYMBOLS, SUITS, strict=True):
        text = text.replace(sym, letter)
    text = re.sub(r"[^0-9a-z]", "", text.lower())
    return re.sub(r"(?<![0-9])10(?=[cdhs](?![a-z]))", "t", text)


def match_move(text: str, names: Sequence[str]) -> int | str:
    """The index in ``names`` of the move typed as ``text``: a key (``1`` .. ``len(names)``), a
    move name (case, spaces and brackets do not matter) or a beginning of exactly one name;
    otherwise a message saying why not.
    """
    typed = text.strip()
    if typed.isdigit():
        k = int(typed)
        if 1 <= k <= len(names):
            return k - 1
        return f"no move has the key {typed}: the keys are 1 to {len(names)}"
    want = _canon(typed)
    if not want:
        return "type the key of a move (a number) or its name; ? lists the commands"
    canon = [_canon(n) for n in names]
    exact = [i for i, c in enumerate(canon) if c == want]
    if exact:
        return exact[0]
    starts = [i for i, c in enumerate(canon) if c.startswith(want)]
    if len(starts) == 1:
        return starts[0]
    if starts:
        shown = ", ".join(names[i] for i in starts[:6]) + (", ..." if len(starts) > 6 else "")
        return f"{typed!r} could be {len(starts)} moves ({shown}): type more of the name or a key"
    return f"{typed!r} is not a legal move now: type a key from the list, or ? for help"


# ---------------------------------------------------------------------------------------------
# The game


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


class TerminalGame:
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

    # -- names -------------------------------------------------------------------------------
    @property
    def rec(self) -> np.void:
        """The state record (the referee's view: only public parts and the person's are shown)."""
        return self.env.unwrapped.game.states[0]

    def who(self, name: str) -> Text:
        """``player_1 (greedy)`` or ``player_0 (you)``."""
        if name == self.me:
            return Text(f"{name} (you)", style=STYLE_ME)
        return Text(f"{name} ({self.labels[name]})", style="bold")

    def _hand_no(self) -> str:
        """``hand 3`` (4-player Gin Rummy: ``round 2``, each round a hand at each table)."""
        rec = self.rec
        n = int(rec["hands_played"])
        if self.multi and self.players == 4:
            return f"round {n // 2 + (0 if rec['done'] else 1)}"
        return f"hand {n + (0 if rec['done'] else 1)}"

    # -- the person's table (Gin) ---------------------------------------------------------------
    def _my_board(self) -> tuple[np.void, list[str], int]:
        """(2-player hand record of the person's table, its players, the person's index there,
        -1 when sitting out).
        """
        rec = self.rec
        if not self.multi:
            return rec, self.names, self.seat
        t = int(rec["board_of"][self.seat])
        local = int(rec["local"][self.seat])
        t = max(t, 0)  # 3 players: the one table, watched while sitting out
        seats = [self.names[int(s)] for s in rec["seat"][t]]
        return rec["boards"][t], seats, local

    def _gin_table(self) -> list[Any]:
        board, seats, me = self._my_board()
        p = self.paint
        out: list[Any] = []
        phase = EG.PHASE_NAMES[int(board["phase"])]
        notes = [f"knock limit {int(board['knock_limit'])}"]
        if board["spade_double"]:
            notes.append("spades double")
        if self.multi:
            notes.insert(0, f"your table: {seats[0]} vs {seats[1]}")
        out.append(Text(" · ".join(notes) + f" · phase {phase}"))
        pile = [int(c) for c in board["pile"][: int(board["pile_n"])]]
        out.append(self._pile_line(52 - int(board["deck_pos"]), pile))
        for local, name in enumerate(seats):
            n = int(board["n_melds"][local])
            if n:
                melds = [
                    Text.assemble("[", p.cards(mask_cards(m)), "]")
                    for m in board["melds"][local][:n]
                ]
                out.append(Text.assemble("melds of ", self.who(name), ": ", Text(" ").join(melds)))
        if int(board["laid_off"]):
            out.append(Text.assemble("laid off: ", p.cards(mask_cards(board["laid_off"]), True)))
        if int(board["knocker"]) >= 0:
            gin = " (gin)" if board["gin"] else ""
            out.append(Text.assemble(self.who(seats[int(board["knocker"])]), f" knocked{gin}"))
        if self.multi and self.players == 4:
            other = 1 - max(int(self.rec["board_of"][self.seat]), 0)
            ob = self.rec["boards"][other]
            oseats = [self.names[int(s)] for s in self.rec["seat"][other]]
            state = "in play (its cards are never shown)"
            if ob["done"]:
                pts = ", ".join(f"{oseats[i]} {int(ob['hand_points'][i])}" for i in range(2))
                state = f"over: {EG.OUTCOME_NAMES[int(ob['outcome'])]} ({pts})"
            out.append(Text(f"other table: {oseats[0]} vs {oseats[1]}, {state}", style="dim"))
        if me < 0:
            out.append(Text("you deal this hand and sit it out", style="italic"))
            return out
        mask = int(board["hands"][me])
        out.append(Text.assemble("your hand: ", p.cards(mask_cards(mask), sort=True)))
        if phase in (
            "upcard_offer",
            "draw",
            "discard",
            "fiftieth_card_offer",
            "fiftieth_card_knock",
        ):
            out.append(self._gin_melds_line(mask))
        return out

    def _gin_melds_line(self, mask: int) -> Text:
        """The best arrangement of the person's hand: melds, unmelded cards, deadwood (the
        browser app's hints: :func:`rummy_agents.move_words.gin_arrangement`).
        """
        from rummy_agents.gin_rummy_rules import deadwood_per_discard
        from rummy_agents.move_words import gin_arrangement

        found, rest, value = gin_arrangement(mask_cards(mask))
        melds = [Text.assemble("[", self.paint.cards(m, True), "]") for m in found]
        line = Text("  melds: ")
        line.append_text(Text(" ").join(melds) if melds else Text("none", style="dim"))
        line.append("  unmelded: ")
        line.append_text(self.paint.cards(rest, sort=True))
        line.append(f" (deadwood {value})")
        if bin(mask).count("1") == 11:
            best = int(deadwood_per_discard(mask).min())
            line.append(f"; after your best discard: {best}")
        return line

    # -- the person's table (500 Rum, Rummy 51) -------------------------------------------------
    def _joker_table(self) -> list[Any]:
        rec = self.rec
        p = self.paint
        out: list[Any] = []
        phases = E500.PHASE_NAMES if self.game == "five_hundred_rum" else E51.PHASE_NAMES
        stock = self.env.layout.deck_size - int(rec["deck_pos"])
        notes = [f"phase {phases[int(rec['phase'])]}"]
        if self.game == "rummy51":
            notes.append(f"opening {self.config.opening_threshold} points")
            notes.append(f"reshuffles {int(rec['reshuffles'])}/{self.config.max_reshuffles}")
        elif self.config.episode == "game":
            notes.append(f"game to {self.config.target}")
        out.append(Text(" · ".join(notes)))
        pile = [int(c) for c in rec["pile"][: int(rec["pile_n"])]]
        out.append(self._pile_line(stock, pile))
        for m in range(int(rec["n_melds"])):
            owner = self.names[int(rec["m_owner"][m])]
            out.append(Text.assemble(f"  meld {m} · ", self.who(owner), ": ", p.table_meld(rec, m)))
        hand = count_cards(rec["hands"][self.seat])
        out.append(Text.assemble("your hand: ", p.cards(hand, sort=True)))
        if int(rec["cur"]) == self.seat and not rec["done"]:
            out += self._joker_duties(rec)
        return out

    def _joker_duties(self, rec: np.void) -> list[Text]:
        """What the person still owes this turn: the card to meld, the opening total."""
        out = []
        oblig = int(rec["oblig"])
        if oblig >= 0:
            what = "meld" if self.game == "five_hundred_rum" else "use in your opening melds"
            out.append(
                Text.assemble("  you must ", what, " ", self.paint.card(oblig), " this turn")
            )
        if self.game == "rummy51":
            if not rec["opened"][self.seat] and int(rec["phase"]) == E51.PH_PLAY:
                need = self.config.opening_threshold
                out.append(Text(f"  not opened: {int(rec['open_pts'])} of {need} points laid"))
            if int(rec["owed"]):
                out.append(Text(f"  retrieved jokers still to meld: {int(rec['owed'])}"))
        return out

    def _pile_line(self, stock: int, pile: list[int]) -> Text:
        line = Text(f"stock: {stock} cards · discard pile (bottom → top): ")
        if not pile:
            return line.append("empty", style="dim")
        for c in pile[:-1]:
            line.append_text(self.paint.card(c)).append(" ")
        return line.append_text(Text.assemble("[", self.paint.card(pile[-1]), "]"))

    # -- the seats' table ---------------------------------------------------------------------
    def _seats(self) -> Table:
        rec = self.rec
        table = Table(box=None, pad_edge=False, padding=(0, 2), show_edge=False)
        for col in ("player", "agent", "cards", *self._score_columns(), ""):
            table.add_column(col, justify="left" if col in ("player", "agent", "") else "right")
        cur = int(rec["cur"])
        for s, name in enumerate(self.names):
            marks = []
            if self._dealer() == s:
                marks.append("dealer")
            if not rec["done"] and cur == s:
                marks.append("← to act")
            label = Text("you", style=STYLE_ME) if name == self.me else Text(self.labels[name])
            row: list[Text | str] = [Text(name, style=STYLE_ME if name == self.me else ""), label]
            row += [self._card_count(s), *self._scores(s), Text(", ".join(marks), style="yellow")]
            table.add_row(*row)
        return table

    def _dealer(self) -> int:
        rec = self.rec
        if self.multi and self.players == 4:
            return -1  # each table has its dealer
        return int(rec["dealer"])

    def _card_count(self, s: int) -> str:
        rec = self.rec
        if self.game != "gin_rummy":
            return str(int(rec["hands"][s].sum()))
        if not self.multi:
            return str(bin(int(rec["hands"][s])).count("1"))
        t = int(rec["board_of"][s])
        mine = max(int(rec["board_of"][self.seat]), 0)
        if t < 0:
            return "sits out"
        if self.players == 4 and t != mine:
            return "?"  # the other table: nothing of it is shown
        return str(bin(int(rec["boards"][t]["hands"][int(rec["local"][s])])).count("1"))

    def _score_columns(self) -> tuple[str, ...]:
        if self.game == "gin_rummy":
            team = ("team",) if self.players == 4 else ()
            if self.config.episode != "match":
                return team
            return (*team, "team score" if team else "score", "boxes")
        if self.game == "five_hundred_rum":
            return ("melded", "score")
        return ("opened", "penalties")

    def _scores(self, s: int) -> list[str]:
        rec = self.rec
        if self.game == "gin_rummy":
            team = [f"{s % 2}+{s % 2 + 2}"] if self.players == 4 else []
            if self.config.episode != "match":
                return team
            return [*team, str(int(rec["scores"][s])), str(int(rec["boxes"][s]))]
        if self.game == "five_hundred_rum":
            float_ = " (floating)" if rec["floating"][s] else ""
            return [str(int(rec["melded_pts"][s])) + float_, str(int(rec["scores"][s]))]
        opened = "eliminated" if rec["out"][s] else ("yes" if rec["opened"][s] else "no")
        return [opened, str(int(rec["penalties"][s]))]

    def show_table(self) -> None:
        """Print the table as the person's seat sees it."""
        head = f"{TITLES[self.game]} · {self.players} players · {self._hand_no()}"
        if self.game == "gin_rummy" and self.config.episode == "match":
            head += f" · match to {self.config.target}"
        body = self._gin_table() if self.game == "gin_rummy" else self._joker_table()
        parts: list[Any] = [self._seats(), Text(""), *body]
        self.console.print(Panel(Group(*parts), title=head, title_align="left", expand=True))

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

    def _hint(self, a: int) -> Text | None:
        """A short explanation of one of the person's legal moves (what it takes or leaves)."""
        rec = self.rec
        p = self.paint
        if self.game == "gin_rummy":
            board, _, me = self._my_board()
            pile_n = int(board["pile_n"])
            if a == EG.TAKE_DISCARD and pile_n:
                return Text.assemble("take ", p.card(int(board["pile"][pile_n - 1])))
            if EG.DISCARD_BASE <= a < EG.MELD_BASE:
                from rummy_agents.gin_rummy_rules import deadwood_per_discard

                mask = int(board["hands"][me])
                if bin(mask).count("1") != 11:
                    return None
                card = (a - EG.DISCARD_BASE) % 52
                dw = int(deadwood_per_discard(mask)[card])
                return Text("gin!" if dw == 0 and a >= EG.KNOCK_BASE else f"deadwood {dw}")
            return None
        lay = self.env.layout
        pile = [int(c) for c in rec["pile"][: int(rec["pile_n"])]]
        if self.game == "five_hundred_rum" and lay.take_base <= a < lay.meld_base:
            d = a - lay.take_base
            taken = pile[len(pile) - 1 - d :]
            line = Text.assemble(f"take {len(taken)}: ", p.cards(taken[::-1]))
            if d:
                line.append_text(Text.assemble(" (meld ", p.card(taken[0]), ")"))
            return line
        if self.game == "rummy51" and a == lay.take_discard and pile:
            return Text.assemble("take ", p.card(pile[-1]))
        if lay.meld_base <= a < lay.layoff_base:
            return p.template(a - lay.meld_base, rec["hands"][self.seat])
        if lay.layoff_base <= a < lay.joker_base:
            return Text.assemble("on ", p.table_meld(rec, (a - lay.layoff_base) % lay.max_melds))
        if lay.joker_base <= a < lay.joker_base + 2 * lay.max_melds:
            return Text.assemble("on ", p.table_meld(rec, (a - lay.joker_base) // 2))
        retrieve = getattr(lay, "retrieve_base", None)
        if retrieve is not None and retrieve <= a < lay.discard_base:
            m, k = divmod(a - retrieve, 14)
            key = int(rec["m_key"][m])
            card = k * 13 + key if int(rec["m_kind"][m]) == 1 else key * 13 + k % 13
            return Text.assemble(p.card(card), " for the joker of ", p.table_meld(rec, m))
        return None

    def show_moves(self, legal: list[int]) -> None:
        """Print the person's legal moves with their keys."""
        items = []
        for k, a in enumerate(legal, 1):
            line = Text.assemble((f"{k:>3} ", "bold yellow"), (self.env.action_name(a), "bold"))
            hint = self._hint(a)
            if hint is not None:
                line.append("  · ", style="dim")
                line.append_text(hint)
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

    # -- what the others see of a move ----------------------------------------------------------
    def public_move(self, agent: str, a: int, before: np.void) -> tuple[str, Text | None]:
        """(name, note) of ``agent``'s move ``a`` as the person may see it, ``before`` being the
        state it was played in: a Gin knock's discard is face down, and with 4 players nothing
        of the other table's cards is shown.
        """
        # the env's public name hides what is played face down (a Gin knock's discard)
        name = self.env.action_name(a) if agent == self.me else self.env.public_action_name(a)
        p = self.paint
        if self.game == "gin_rummy":
            if self.multi:
                t = int(before["board_of"][self.names.index(agent)])
                board = before["boards"][t]
                if self.players == 4 and t != int(before["board_of"][self.seat]):
                    return name.split("[")[0], Text("at the other table", style="dim")
            else:
                board = before
            if name == "KNOCK":
                return name, Text("discarding face down", style="dim")
            if a == EG.TAKE_DISCARD and int(board["pile_n"]):
                return name, Text.assemble(
                    "takes ", p.card(int(board["pile"][int(board["pile_n"]) - 1]))
                )
            return name, None
        lay = self.env.layout
        rec = self.rec
        if int(rec["hands_played"]) > int(before["hands_played"]) and not rec["done"]:
            return name, None  # the move ended a hand and the next one is dealt: no table now
        pile = [int(c) for c in before["pile"][: int(before["pile_n"])]]
        if self.game == "five_hundred_rum" and lay.take_base <= a < lay.meld_base:
            taken = pile[len(pile) - 1 - (a - lay.take_base) :]
            return name, Text.assemble("takes ", p.cards(taken[::-1]))
        if self.game == "rummy51" and a == lay.take_discard and pile:
            return name, Text.assemble("takes ", p.card(pile[-1]))
        if lay.meld_base <= a < lay.layoff_base and int(rec["n_melds"]):
            m = int(rec["n_melds"]) - 1
            return name, Text.assemble(f"meld {m}: ", p.table_meld(rec, m))
        if lay.layoff_base <= a < lay.discard_base:
            if a < lay.joker_base:
                m = (a - lay.layoff_base) % lay.max_melds
            elif a < lay.joker_base + 2 * lay.max_melds:
                m = (a - lay.joker_base) // 2
            else:
                m = (a - lay.retrieve_base) // 14
            return name, Text.assemble(f"meld {m}: ", p.table_meld(rec, m))
        return name, None

    # -- hands and the end --------------------------------------------------------------------
    def hand_over(self, actor: str, before: np.void) -> None:
        """Print the end of a hand: how it ended and its points (from the env's infos);
        ``actor`` played the move that ended it, in state ``before``.
        """
        if self.game == "gin_rummy":
            self._gin_hand_over(actor, before)
            return
        infos = self.env.infos
        info = infos[self.names[0]]
        out = Text(f"hand {int(self.rec['hands_played'])} over: ", style="bold green")
        outcome = str(info.get("outcome", "none"))
        if self.game == "five_hundred_rum":
            what = f"{actor} went out" if outcome == "went_out" else "the stock ran out"
            pts = ", ".join(f"{a} {int(infos[a]['hand_points']):+d}" for a in self.names)
            tot = ", ".join(f"{a} {int(infos[a]['score'])}" for a in self.names)
            out.append(what, style="bold")
            out.append(f"; points: {pts}; scores: {tot}")
        else:
            w = int(info.get("hand_winner", -1))
            what = "a draw (the stock ran out)"
            if w >= 0:
                what = f"{self.names[w]} went out"
                what += " with a Rummy (25 more penalty for the others)" if info["rummy"] else ""
            pen = ", ".join(
                f"{a} {int(infos[a]['hand_penalty'])} (total {int(infos[a]['penalty_total'])})"
                for a in self.names
            )
            out.append(what, style="bold")
            out.append(f"; penalties: {pen}")
        self.console.print(out)

    def _gin_hand_over(self, actor: str, before: np.void) -> None:
        infos = self.env.infos
        seats = self.names
        mine = True
        if self.multi:  # the table of the player whose move ended the hand
            t = int(before["board_of"][self.names.index(actor)])
            seats = [self.names[int(s)] for s in before["seat"][t]]
            mine = self.players == 3 or t == int(before["board_of"][self.seat])
        outcome = str(infos[seats[0]].get("outcome", "none")).replace("_", " ")
        out = Text("hand over" + (f" ({seats[0]} vs {seats[1]})" if self.multi else ""))
        out.append(": ")
        out.stylize("bold green")
        out.append(outcome, style="bold")
        if outcome != "dead hand":
            won = [a for a in seats if int(infos[a].get("hand_points", 0)) > 0]
            out.append(f"; {won[0]} scores {int(infos[won[0]]['hand_points'])}" if won else "")
            if mine:  # the other table's deadwood is not shown to a seat (only its points)
                dws = ", ".join(f"{a} {int(infos[a].get('deadwood', 0))}" for a in seats)
                out.append(f" (deadwood: {dws})")
        self.console.print(out)
        rec = self.rec
        if self.players == 4:
            teams = [f"{self.names[q]}+{self.names[q + 2]}" for q in (0, 1)]
            if int(rec["hands_played"]) % 2 == 0:  # both tables are over: the round is scored
                pts = ", ".join(
                    f"{teams[q]} {int(infos[self.names[q]].get('round_points', 0))}" for q in (0, 1)
                )
                self.console.print(f"round over; round points: {pts}")
            if self.config.episode == "match":
                scores = ", ".join(f"{teams[q]} {int(rec['scores'][q])}" for q in (0, 1))
                self.console.print(f"team scores (match to {self.config.target}): {scores}")
        elif self.config.episode == "match":
            scores = ", ".join(f"{a} {int(rec['scores'][q])}" for q, a in enumerate(self.names))
            self.console.print(f"match scores (to {self.config.target}): {scores}")

    def _winners(self) -> list[str]:
        info = self.env.infos.get(self.names[0], {})
        for key in ("winner", "hand_winner"):  # a match's or game's winner; Rummy 51's hand
            if key in info:
                w = int(info[key])
                return [self.names[w]] if w >= 0 else []
        best = max(self.returns.values())
        top = [a for a, r in self.returns.items() if r == best]
        return [] if len(top) == len(self.names) else top

    def show_end(self) -> list[str]:
        """Print the cards left at the end (everything is shown once the game is over, but a
        Gin knocker's face-down discard); returns the winners.
        """
        rec = self.rec
        p = self.paint
        lines: list[Text] = []
        if self.game == "gin_rummy":
            boards = [rec] if not self.multi else list(rec["boards"])
            for t, board in enumerate(boards):
                seats = self.names
                if self.multi:
                    seats = [self.names[int(s)] for s in rec["seat"][t]]
                lines += self._gin_layout(board, seats)
        else:
            for q, name in enumerate(self.names):
                left = p.cards(count_cards(rec["hands"][q]), True)
                lines.append(Text.assemble(self.who(name), ": ", left))
        self.console.print(Text("cards at the end:", style="bold"))
        for line in lines:
            self.console.print(line)
        return self._winners()

    def _gin_layout(self, board: np.void, seats: list[str]) -> list[Text]:
        """Each hand of a finished Gin hand: its melds (after a knock) and other cards."""
        p = self.paint
        out = []
        for local, name in enumerate(seats):
            line = Text.assemble(self.who(name), ": ")
            for m in board["melds"][local][: int(board["n_melds"][local])]:
                line.append_text(Text.assemble("[", p.cards(mask_cards(m), True), "] "))
            word = "deadwood" if int(board["knocker"]) >= 0 else "hand"  # laid out after a knock
            line.append_text(
                Text.assemble(f"{word} ", p.cards(mask_cards(board["hands"][local]), True))
            )
            if int(board["laid_off"]) and local != int(board["knocker"]):
                line.append_text(
                    Text.assemble("; laid off ", p.cards(mask_cards(board["laid_off"]), True))
                )
            out.append(line)
        return out

    def show_result(self, winners: list[str], finished: bool, truncated: bool) -> None:
        """Print each seat's result and who won."""
        table = Table(title="result", title_justify="left", box=None, padding=(0, 2))
        table.add_column("player")
        table.add_column("agent")
        table.add_column("return", justify="right")
        extra = {"gin_rummy": "points", "five_hundred_rum": "score", "rummy51": "penalties"}
        table.add_column(extra[self.game], justify="right")
        infos = self.env.infos
        rec = self.rec
        for s, name in enumerate(self.names):
            info = infos.get(name, {})
            keys: tuple[str, ...]
            # the game's own count: Gin's settlement, match total or hand points (before a
            # hand ends: the match points), 500 Rum's score, Rummy 51's penalties
            if self.game == "gin_rummy":
                keys, now = ("settlement", "totals", "hand_points"), rec["scores"][s]
            elif self.game == "five_hundred_rum":
                keys, now = ("score",), rec["scores"][s]
            else:
                keys, now = ("penalty_total",), rec["penalties"][s]
            value = next((info[k] for k in keys if k in info), int(now))
            label = "you" if name == self.me else self.labels[name]
            table.add_row(name, label, f"{self.returns[name]:+g}", str(value))
        self.console.print(table)
        if not finished:
            self.console.print(f"stopped after {self.steps} decisions", style="bold yellow")
        elif truncated:
            self.console.print(f"the game was cut after {self.steps} decisions (max_steps)")
        elif not winners:
            self.console.print("no winner: a draw", style="bold")
        else:
            who = " and ".join(winners)
            verdict = "you win!" if self.me in winners else "you lose"
            self.console.print(
                f"{who} {'win' if len(winners) > 1 else 'wins'}: {verdict}", style="bold"
            )

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


# ---------------------------------------------------------------------------------------------
# The command


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
