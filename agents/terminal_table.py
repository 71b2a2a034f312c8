"""What the terminal shows of the table, from the person's seat only: the table (their hand,
the pile, the melds and their owners, each seat's cards and scores), the other seats' moves as
the seat sees them, the end of each hand, the cards at the end and the result
(:class:`SeatTable`, the part of :class:`~rummy_agents.terminal_game.TerminalGame` that
prints). Other hands and the stock stay face down, and so do a Gin knocker's face-down discard
and, with 4 players, everything of the other table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_agents.terminal_paint import (
    STYLE_ME,
    Group,
    Painter,
    Panel,
    Table,
    Text,
    count_cards,
    mask_cards,
)
from rummy_env.encodings import five_hundred_rum as E500
from rummy_env.encodings import gin_rummy as EG
from rummy_env.encodings import rummy51 as E51

TITLES = {"gin_rummy": "Gin Rummy", "five_hundred_rum": "500 Rum", "rummy51": "Rummy 51"}


class SeatTable:
    """Printing the table and the game's events as the person's seat sees them: a part of
    :class:`~rummy_agents.terminal_game.TerminalGame`, which sets the attributes below.

    Attributes:
        env: the game's env.
        game: the game's name.
        console: where everything is shown.
        names: the seats' agent names.
        me: the person's agent name.
        seat: the person's seat.
        labels: who plays each seat.
        config: the env's rule options.
        players: the number of players.
        multi: Gin Rummy with 3 or 4 players (the hands are played at 2-player tables).
        paint: how cards are written.
        returns: each seat's rewards so far.
        steps: decisions played.
    """

    env: Any
    game: str
    console: Any
    names: list[str]
    me: str
    seat: int
    labels: dict[str, str]
    config: Any
    players: int
    multi: bool
    paint: Painter
    returns: dict[str, float]
    steps: int

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
