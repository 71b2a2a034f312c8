"""``rummy-env play``: a person against agents in the terminal (rummy_agents.terminal).

Whole games of every game are driven through scripted input (keys, names typed in any case,
bad input, commands) against random agents. After every decision the text shown so far is
checked against the state: it never names a card the person's seat cannot see (another hand's
hidden cards, the stock, a face-down knock discard, the other table with 4 players). Each game's
record replays to the printed result; ``q`` and the end of input save a stopped record; every
user error is one line before anything is played.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rich")

from rich.console import Console  # noqa: E402

from rummy_agents.cli import PROG, main  # noqa: E402
from rummy_agents.move_words import describe_moves  # noqa: E402
from rummy_agents.terminal import (  # noqa: E402
    HUMAN,
    Painter,
    TerminalGame,
    make_setup,
    match_move,
    play,
)
from rummy_env.core.cards import RANKS, SUIT_SYMBOLS, SUITS  # noqa: E402
from rummy_env.game_records import read_record, replay  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

GAMES = [
    # simple knocks: its face-down discard must stay hidden
    pytest.param("gin_rummy", {}, "simple", id="gin_2p"),
    pytest.param("gin_rummy", {"num_players": 3}, "random", id="gin_3p"),
    pytest.param("gin_rummy", {"num_players": 4}, "simple", id="gin_4p"),
    # several hands: a game to 200 points
    pytest.param(
        "five_hundred_rum",
        {"num_players": 3, "episode": "game", "target": 200},
        "random",
        id="500_3p",
    ),
    # no reshuffle: the hand ends when the stock is spent
    pytest.param("rummy51", {"max_reshuffles": 0}, "random", id="rummy51_2p"),
]


# ---------------------------------------------------------------------------------------------
# what the person's seat may see


def _gin_visible(rec: np.void, seat: int, players: int, done: bool) -> tuple[set[int], set[int]]:
    """(cards the seat sees, cards hidden from it) of a Gin Rummy record, by card id."""
    if players == 2:
        boards, mine, local = [rec], 0, seat
    else:
        boards = list(rec["boards"])
        mine, local = max(int(rec["board_of"][seat]), 0), int(rec["local"][seat])
    b = boards[mine]
    cards = lambda m: {c for c in range(52) if int(m) >> c & 1}  # noqa: E731
    seen = {int(c) for c in b["pile"][: int(b["pile_n"])]} | cards(b["laid_off"])
    seen |= cards(b["known"][0]) | cards(b["known"][1])
    for q in range(2):
        for m in b["melds"][q][: int(b["n_melds"][q])]:
            seen |= cards(m)
    if local >= 0:
        seen |= cards(b["hands"][local])
    hidden = set(range(52)) if players == 4 else set()  # the other table: all of it
    if done:  # the end of the game shows every hand and every table's melds
        for board in boards:
            seen |= cards(board["hands"][0]) | cards(board["hands"][1]) | cards(board["laid_off"])
            for q in range(2):
                for m in board["melds"][q][: int(board["n_melds"][q])]:
                    seen |= cards(m)
    return seen, hidden


def _joker_visible(rec: np.void, seat: int, done: bool) -> set[int]:
    seen = {int(c) for c in np.flatnonzero(rec["hands"][seat][:52])}
    seen |= {int(c) for c in rec["pile"][: int(rec["pile_n"])] if c < 52}
    seen |= {int(c) for c in np.flatnonzero(rec["known"][:, :52].sum(0))}
    for m in range(int(rec["n_melds"])):
        key, nat = int(rec["m_key"][m]), int(rec["m_nat"][m])
        if int(rec["m_kind"][m]) == 1:
            seen |= {s * 13 + key for s in range(4) if nat >> s & 1}
        else:  # naturals and the cards jokers stand for
            seen |= {key * 13 + p % 13 for p in range(int(rec["m_lo"][m]), int(rec["m_hi"][m]) + 1)}
    if done:
        seen |= {int(c) for c in np.flatnonzero(rec["hands"][:, :52].sum(0))}
    return seen


def hidden_cards(env, seat: int) -> set[int]:
    """Natural cards the seat cannot see now (types: a copy seen anywhere makes a type seen)."""
    game = env.unwrapped.game
    rec = game.states[0]
    done = bool(rec["done"])
    hidden = {c for c in game.hidden_cards(0, seat) if c < 52}
    if env.unwrapped.metadata["name"].startswith("gin"):
        seen, more = _gin_visible(rec, seat, len(env.possible_agents), done)
        hidden |= more
    else:
        seen = _joker_visible(rec, seat, done)
    return hidden - seen


def card_pattern(c: int) -> re.Pattern[str]:
    """A card as the output may write it: ``7h`` (move names) or ``7♥`` (the table, the moves'
    words); a ten as ``T`` or ``10``.
    """
    rank = "(?:T|10)" if c % 13 == 9 else re.escape(RANKS[c % 13])
    suit = SUITS[c // 13] + SUIT_SYMBOLS[c // 13]
    return re.compile(rf"(?<![A-Za-z0-9]){rank}[{suit}](?![A-Za-z0-9])")


def check_shown(text: str, hidden: set[int], where: str) -> None:
    # a joker's stand-in (JK(7♣): in a meld on the table or one the person may lay) names the
    # card it plays as, not where that card is
    text = re.sub(r"JK\([^()]*\)", "JK", text)
    leaked = [c for c in sorted(hidden) if card_pattern(c).search(text)]
    assert not leaked, f"{where}: the output names hidden cards {leaked}:\n{text[-3000:]}"


CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])([A2-9TJQK])([cdhs])(?![A-Za-z0-9])")


def revealed_by(env, action: int, actor: str, seat: int, before: np.void) -> set[int]:
    """The cards a move shows everyone (a discard, a meld, a lay-off), from its name: none for
    a Gin knock (its discard is face down) or a move at the other table (4 players).
    """
    name = env.unwrapped.action_name(action)
    if env.unwrapped.metadata["name"].startswith("gin"):
        if name.startswith("KNOCK"):
            return set()
        if "boards" in before.dtype.names:
            mine, theirs = before["board_of"][seat], before["board_of"][int(actor.split("_")[1])]
            if len(env.possible_agents) == 4 and mine != theirs:
                return set()
    return {SUITS.index(s) * 13 + RANKS.index(r) for r, s in CARD_TOKEN.findall(name)}


class Watch:
    """Checks, before every decision and at the end, the text shown since the last check: it
    may name the cards the seat sees now, and those it saw or was shown since the last check
    (the cards seen before the last decision, and those the decision showed everyone: a
    discard, a meld, before a new deal hides them again); no others.
    """

    def __init__(self, game: TerminalGame, console: Console) -> None:
        self.game = game
        self.console = console
        self.before: set[int] | None = None
        self.shown: set[int] = set()
        self.checks = 0
        env = game.env
        step = env.step

        def checked_step(action: int) -> None:
            self.check()
            state = env.unwrapped.game.states[0:1].copy()[0]
            actor = env.agent_selection
            self.shown = revealed_by(env, action, actor, game.seat, state)
            step(action)

        env.step = checked_step

    def check(self) -> None:
        now = hidden_cards(self.game.env, self.game.seat)
        hidden = now if self.before is None else now & self.before
        check_shown(
            self.console.export_text(clear=True), hidden - self.shown, f"check {self.checks}"
        )
        self.before = now
        self.checks += 1


# ---------------------------------------------------------------------------------------------
# scripted input


BAD = ["", "   ", "xyz", "0", "999", "[]", "discard", "?", "help", "table", "log"]


def script(game: TerminalGame, quit_after: int | None = None):
    """An ``input_fn``: first every kind of bad input and command, then the first listed move,
    typed as its key, its name in lower case with spaces, or its name as shown; ``q`` after
    ``quit_after`` moves.
    """
    calls = itertools.count()
    moves = itertools.count()

    def input_fn(prompt: str) -> str:
        assert prompt.startswith("your move (1")
        k = next(calls)
        if k < len(BAD):
            return BAD[k]
        m = next(moves)
        if quit_after is not None and m >= quit_after:
            return "q"
        name = game.env.action_name(game.legal_moves()[0])
        if m % 3 == 1:
            return name.lower().replace("[", " ").replace("]", "").replace(",", " ")
        return name if m % 3 == 2 else "1"

    return input_fn


def new_game(
    game: str, options: dict, tmp_path: Path, opponent: str = "random", **kw
) -> tuple[TerminalGame, Console]:
    setup = make_setup(
        game, [opponent], seed=kw.pop("seed", 11), options=options, record=tmp_path / "g.jsonl",
        **kw,
    )  # fmt: skip
    console = Console(file=io.StringIO(), record=True, width=110, color_system=None)
    return TerminalGame(setup, console), console


def printed_returns(text: str) -> dict[str, str]:
    """The result table's return column: player -> ``+6``."""
    block = text[text.rindex("result") :]
    return dict(re.findall(r"(player_\d+)\s+\S+\s+([+-]\d+(?:\.\d+)?)\s", block))


@pytest.mark.parametrize("game, options, opponent", GAMES)
def test_whole_game_through_scripted_input(game, options, opponent, tmp_path):
    seat = 2 if options.get("num_players") == 3 else 0  # seed 11: player_1 deals, sits out
    tg, console = new_game(game, options, tmp_path, opponent, seat=seat)
    watch = Watch(tg, console)
    tg.input_fn = script(tg)
    full = io.StringIO()
    export = console.export_text

    def export_and_keep(clear: bool = True) -> str:
        text = export(clear=clear)
        full.write(text)
        return text

    console.export_text = export_and_keep
    result = tg.run()
    watch.check()  # the end: every hand is shown, the stock and a knock discard are not
    text = full.getvalue()
    assert result.finished and result.steps > 0
    assert watch.checks > result.steps // 2
    for message in ("is not a legal move now", "no move has the key 999", "a name", "log"):
        assert message in text, message
    assert "game over" in text and "cards at the end:" in text
    # the record: labels, the person's moves by name, and it replays to the printed result
    record = read_record(result.record)
    n = len(record.agents)
    assert record.labels == {f"player_{s}": HUMAN if s == seat else opponent for s in range(n)}
    if opponent == "simple":  # it knocked: the move shows without its (face-down) card
        assert re.search(r"\(simple\) KNOCK  (discarding face down|at the other table)", text)
    assert record.result["terminated"] and not record.result["truncated"]
    rep = replay(record)
    assert rep.matches and rep.finished
    assert rep.returns == pytest.approx(result.returns)
    shown = printed_returns(text)
    assert shown == {a: f"{r:+g}" for a, r in rep.returns.items()}
    assert f"game record saved to {result.record}\n" in text
    if result.winners:
        assert " ".join(sorted(result.winners)) in text.replace(" and ", " ")


@pytest.mark.parametrize("how", ["q", "eof"])
def test_quit_saves_a_stopped_record(how, tmp_path):
    tg, console = new_game("five_hundred_rum", {}, tmp_path)
    if how == "q":
        tg.input_fn = script(tg, quit_after=3)
    else:
        answers = iter(["1"] * 3)

        def three_then_eof(prompt: str) -> str:
            try:
                return next(answers)
            except StopIteration:
                raise EOFError from None

        tg.input_fn = three_then_eof
    result = tg.run()
    text = console.export_text()
    assert not result.finished
    assert "stopped after" in text and "cards at the end" not in text
    record = read_record(result.record)
    assert record.result["truncated"] and not record.result["terminated"]
    rep = replay(record)
    assert rep.matches and not rep.finished
    assert rep.returns == pytest.approx(result.returns)
    assert len(record.steps) == result.steps
    humans = [s for s in record.steps if s[0] == "player_0"]
    assert len(humans) == 3


def test_the_person_sitting_out_and_other_seats_by_spec(tmp_path):
    """3-player Gin Rummy, one spec per seat: the dealer sits out and the others play on."""
    setup = make_setup(
        "gin_rummy", ["simple", "random"], seat=1, seed=11, options={"num_players": 3},
        record=tmp_path / "g.jsonl",
    )  # fmt: skip
    assert setup.labels == {"player_0": "simple", "player_1": HUMAN, "player_2": "random"}
    console = Console(file=io.StringIO(), record=True, width=110, color_system=None)
    tg = TerminalGame(setup, console)
    tg.input_fn = script(tg)
    result = tg.run()
    assert result.finished
    text = console.export_text()
    assert "sits out" in text and "you deal this hand and sit it out" in text
    assert read_record(result.record).labels == setup.labels


def test_play_defaults_to_the_terminal_console(tmp_path, monkeypatch, capsys):
    """``play`` without a console prints to stdout and reads with ``console.input``."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    setup = make_setup("rummy51", ["greedy"], seed=2, record=tmp_path / "r.jsonl")
    result = play(setup)
    assert not result.finished and result.steps <= 2  # the agent plays first when it is to
    assert f"stopped after {result.steps} decisions" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# pieces


def test_match_move():
    names = ["DRAW_STOCK", "TAKE_DISCARD", "DISCARD[Th]", "DISCARD[7s]", "KNOCK[Th]"]
    assert match_move("1", names) == 0
    assert match_move(" 5 ", names) == 4
    assert match_move("draw_stock", names) == 0
    assert match_move("Draw Stock", names) == 0
    assert match_move("draw", names) == 0  # a unique beginning
    assert match_move("discard th", names) == 2
    assert match_move("DISCARD[10h]", names) == 2
    assert match_move("discard 10♥", names) == 2
    assert match_move("discard T♥", names) == 2
    assert match_move("knock", names) == 4
    assert "could be 2 moves" in match_move("disc", names)
    assert "not a legal move" in match_move("pass", names)
    assert "keys are 1 to 5" in match_move("6", names)
    assert "keys are 1 to 5" in match_move("0", names)
    assert "type the key" in match_move("", names)
    melds = ["MELD[run h 5..8]", "MELD[run h 5..T]", "LAYOFF[7h, 12]"]
    assert match_move("meld run h 5..8", melds) == 0
    assert match_move("layoff 7h 12", melds) == 2


def test_suit_colours():
    p = Painter()
    styles = {s: str(p.card(s * 13 + 6).style) for s in range(4)}
    assert styles[0] == styles[3]  # clubs and spades alike
    assert styles[1] == styles[2] and "red" in styles[1] and "red" not in styles[0]
    assert p.card(52).plain == "JK"
    assert p.cards([13 * 3 + 0, 13 * 2 + 9, 0], sort=True).plain == "A♠ T♥ A♣"
    assert Painter(SUITS).card(13 * 2 + 6).plain == "7h"


def test_move_words_are_painted_as_cards():
    p = Painter()
    text = p.words("Lay off the 10♠ on the spade run JK(7♠) 8♠ 9♠ (meld 2); A♦, JK")
    assert text.plain == "Lay off the T♠ on the spade run JK(7♠) 8♠ 9♠ (meld 2); A♦, JK"
    styled = {text.plain[s.start : s.end]: str(s.style) for s in text.spans}
    assert "red" in styled["A♦"] and "red" not in styled["T♠"]
    assert "magenta" in styled["JK"]
    assert "10" not in text.plain and "meld 2" in text.plain  # numbers that are not cards stay
    assert Painter(SUITS).words("Discard the 10♥").plain == "Discard the Th"


@pytest.mark.parametrize("game, options, opponent", GAMES)
def test_the_moves_shown_are_the_move_words(game, options, opponent, tmp_path):
    """At every turn of the person, each listed move carries the words of
    :func:`rummy_agents.move_words.describe_moves` (its cards painted as the table's)."""
    seat = 2 if options.get("num_players") == 3 else 0
    tg, console = new_game(game, options, tmp_path, opponent, seat=seat)
    turns = itertools.count()
    kinds: set[str] = set()

    def input_fn(prompt: str) -> str:
        legal = tg.legal_moves()
        words = describe_moves(tg.env, tg.me, legal)
        shown = console.export_text(clear=True)
        for a, w in zip(legal, words, strict=True):
            painted = tg._hint(a).plain
            assert painted == tg.paint.words(w.text).plain
            assert painted == re.sub(r"(?<![0-9])10(?=[♣♦♥♠])", "T", w.text)
            line = " ".join(f"{tg.env.action_name(a)}  · {painted}".split())
            # a long line wraps (in columns too): compare the words, whatever the spaces
            assert line in " ".join(shown.split()) or len(legal) > 12, line
            kinds.add(w.kind)
        return "q" if next(turns) >= 40 else "1"

    tg.input_fn = input_fn
    tg.run()
    assert {"draw", "discard"} <= kinds


# ---------------------------------------------------------------------------------------------
# the command


def test_cli_plays_a_game_from_stdin(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("bad\n" + "1\n" * 400))
    argv = ["play", "--game", "gin_rummy", "--opponent", "random", "--seed", "3"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    path = tmp_path / "rummy-env-play-gin_rummy-3.jsonl"
    assert path.exists()
    assert "game record saved to rummy-env-play-gin_rummy-3.jsonl" in out
    assert "'bad' is not a legal move now" in out
    # the same seed again keeps the first record
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    assert main(argv) == 0
    assert (tmp_path / "rummy-env-play-gin_rummy-3-2.jsonl").exists()
    out = capsys.readouterr().out
    assert "q to quit): q\n" in out  # piped input is echoed
    assert re.search(r"stopped after \d decisions", out)
    assert main(["replay", str(path), "--quiet"]) == 0
    assert "the replay matches the record's result" in capsys.readouterr().out
    header = json.loads(path.read_text().splitlines()[0])
    assert header["labels"] == {"player_0": HUMAN, "player_1": "random"}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--game", "nope"], "unknown game 'nope'"),
        (["--game", "gin_rummy", "--opponent", "greedy"], "agent 'greedy'"),
        (["--game", "rummy51", "--opponent", "nobody"], "unknown agent 'nobody' for rummy51"),
        (["--game", "gin_rummy", "--opponent", "simple@foo=1"], "foo"),
        (
            [
                "--game",
                "gin_rummy",
                "--players",
                "4",
                "--opponent",
                "random",
                "--opponent",
                "simple",
            ],
            "one per other seat (3: player_1, player_2, player_3), got 2",
        ),
        (["--game", "gin_rummy", "--option", "knock_limit=999"], "bad --option for gin_rummy"),
        (["--game", "rummy51", "--option", "nonsense=1"], "unknown Rummy 51 option"),
        (["--game", "gin_rummy", "--option", "knock_limit"], "bad --option 'knock_limit'"),
        (["--game", "gin_rummy", "--seat", "2"], "--seat must be a seat of the 2 players"),
        (["--game", "rummy51", "--seat", "-1"], "--seat must be a seat"),
        (["--game", "gin_rummy", "--seed", "-4"], "--seed must be an integer in 0.."),
        (["--seed", str(2**63)], "--seed must be an integer in 0..9223372036854775807"),
        (["--players", "3", "--option", "num_players=4"], "--players 3 and --option"),
        (["--game", "five_hundred_rum", "--players", "9"], "num_players"),
        (
            ["--game", "five_hundred_rum", "--players", "3", "--opponent", "ppo"],
            "cannot play five_hundred_rum with these rules",
        ),
        (["--record", "."], "is a folder"),
        (["--episode", "forever"], "invalid choice"),
    ],
)
def test_mistakes_are_one_line_before_any_game(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["play", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1 and err.startswith(f"{PROG}: error: "), err
    assert message in err
    assert list(tmp_path.iterdir()) == []  # no record: nothing was played


NO_RICH = """
import sys
from importlib.abc import MetaPathFinder


class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "rich":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, NotInstalled())
from rummy_agents.cli import build_parser, main

build_parser()  # every command's parser, play's included, builds without rich
sys.exit(main(sys.argv[1:]))
"""


def test_without_rich_the_command_names_the_extra(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, "-c", NO_RICH, "play", "--game", "gin_rummy"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"{PROG}: error: rummy-env play needs rich, which is not installed "
        "(pip install 'rummy_env[play]'; in a checkout: pip install -c constraints.txt "
        "-e '.[play]')"
    ]
    assert proc.stdout == ""
