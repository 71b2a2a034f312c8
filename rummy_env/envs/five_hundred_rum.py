"""500 Rum (RULES.md §2): 2-8 players, jokers, deep discard draws, "Rummy!" calls.

| Import             | ``from rummy_env import five_hundred_rum_v1``                 |
|--------------------|---------------------------------------------------------------|
| Registered id      | ``rummy/five_hundred_rum-v1``                                 |
| Actions            | Discrete(n), n = 1 + D + 685 + 54 M + 53 + 1 (1766 for 2-4 players) |
| Agents             | ``player_0`` .. ``player_{P-1}``                              |
| Observation        | flat float32 from named pieces (``Layout.pieces``)            |
| Vector env         | ``rummy_env.make_vec("five_hundred_rum", num_envs, **options)`` |

``D`` = cards in play (54 with 1 deck, 108 with 2; 52/104 without jokers), ``M = D // 3`` table
meld slots, ``P`` players.

A turn: draw (the stock top, or the discard pile down to any depth - every card above comes too,
and the deepest card taken must be melded this turn), then any number of new melds and lay-offs
onto anyone's melds, then a discard (unless every card was melded). Each card melded or laid off
scores for the player who played it; cards left in hand count against. After a discard, a pile
card that can be melded using only the table melds and the pile cards above it may be claimed
with "Rummy!" by the other players, asked one at a time from the discarder's left. The cards
above it may form new melds, lay off on table melds, or extend a meld first so that the card
fits after them (a chain: with J-Q-K of spades on the table and the pile 10 of spades, Q of
hearts, J of diamonds, 9 of spades from the top, the 9 is callable); cards below it never
count. The caller takes the pile down to it, must meld it (a lay-off will do), then discards
(``rummy_call="layoff_only"``: only the latest discard, laid off, and no discard).

## Arguments

| option                | default | meaning                                                 |
|-----------------------|---------|---------------------------------------------------------|
| num_players           | 2       | 2 to 8                                                  |
| num_decks             | None    | 1 (up to 4 players) or 2 (5 or more) unless given       |
| no_jokers             | False   | play without jokers (52 or 104 cards)                   |
| values_5_10_15        | False   | 2-9 worth 5, 10-K 10, A and jokers 15, low ace 5        |
| rummy_call            | full    | or layoff_only, none                                    |
| must_meld_discard     | False   | even the top discard must be melded when taken          |
| deepest_card_new_meld | False   | the deepest card taken must go into a new meld          |
| going_out             | any     | or discard_required, floating, unplayable_discard       |
| must_go_out_to_win    | False   | only the player who goes out can win (with target)      |
| target                | 500     | game ends when a single player leads with this total    |
| episode               | hand    | or game                                                 |
| reward                | raw     | or normalized                                           |
| max_steps             | None    | truncate after this many decisions                      |
| max_pile_draws        | 100     | then every draw is from the stock (hands end)           |

``reset(seed=None, options={"deck": [...], "dealer": 0})``: a stacked deck of all ``D`` cards,
top first (ids, or text like ``"As"``, ``"JK"``; a joker is either joker id, 52 or 53), dealt
one at a time starting left of the dealer; then the upcard; the rest is the stock.

Every argument is checked before anything changes: ``seed`` is None or an integer >= 0,
``dealer`` a seat (0..P-1), ``deck`` a full deck of this game; a refused ``reset`` raises
``TypeError`` (wrong type; also a ``ValueError``) or ``ValueError`` naming the argument and leaves
the game, its random stream and the agents as they were. ``step`` takes a Python or numpy integer
(``None`` for a finished agent, as in PettingZoo); ``observe``, ``action_space``,
``observation_space`` and ``sample_worlds`` take a name in ``possible_agents``; ``bool`` is never
an integer. ``step`` and ``observe`` before the first ``reset`` raise ``RuntimeError``
(also a ``ValueError``).

## Observation

``{"observation": float32 (O,), "action_mask": int8 (n,)}`` for the observing player; players
are seat-relative (index 0 = observer, 1 = the next player clockwise, ...). Named views:
``rummy_env.encodings.five_hundred_rum.Layout(P, D).split(obs)``.

| piece         | size     | content                                                        |
|---------------|----------|----------------------------------------------------------------|
| hand          | 53       | count of each card type in the hand / 2 (type 52 = joker)      |
| pile_sequence | D        | pile from the top: (card type + 1) / 53                        |
| pile_counts   | 53       | count of each type in the pile / 2                             |
| pile_depth    | 53       | 1 - depth/D of the shallowest copy of each type                |
| known         | (P-1)*53 | cards each other player is known to hold (taken from the pile) |
| meld_kind     | M*2      | per slot: group / run                                          |
| meld_owner    | M*P      | per slot: who laid it down (seat-relative)                     |
| meld_cards    | M*52     | per slot: its natural cards                                    |
| meld_jokers   | M*14     | per slot: run positions held by jokers (groups: count / 4)     |
| meld_ends     | M*2      | per slot: run low / high position / 13 (groups: rank / 12)     |
| hand_sizes    | P        | cards in each hand / 13                                        |
| stock_size    | 1        | stock / D                                                      |
| melded_points | P        | points melded this hand / 100                                  |
| scores        | P        | game totals / target                                           |
| floating      | P        | players who melded out and float                               |
| dealer        | P        | one-hot dealer                                                 |
| phase         | 5        | draw, play, rummy_call_offer, rummy_call_layoff, hand_over     |
| obligation    | 53       | the card type that must still be melded this turn              |
| taken_single  | 53       | the single top discard taken this turn (not discardable)       |

``known`` counts the copies a player took from the pile less the copies of that card it has
played since, whichever copy went: it never depends on copies nobody saw. Every piece lies in
``[0, 1]`` except ``hand``, ``pile_counts`` and ``known`` (up to the most copies of a card
type, halved), ``hand_sizes`` (up to D/13), ``melded_points`` (unbounded above) and ``scores``
(unbounded, negative totals included); the observation space declares exactly these bounds.

## Actions

| action             | ids          | meaning                                               |
|--------------------|--------------|-------------------------------------------------------|
| DRAW_STOCK         | 0            | draw the stock top                                    |
| TAKE_DISCARD[d]    | 1 .. D       | take the pile down to depth d (0 = top); also a call  |
| MELD[t]            | D+1 .. D+685 | new meld by template t (``core.jmelds``)              |
| LAYOFF[c, m]       | next 52*M    | lay natural c off on slot m (id base + c*M + m)       |
| LAYOFF_JOKER[m, e] | next 2*M     | lay a joker off on slot m, e: 0 group/low, 1 high     |
| DISCARD[c]         | next 53      | discard card type c                                   |
| PASS               | last         | decline a call / (stock empty) do not draw: hand ends |

Meld templates: a group is (rank, suits of its natural cards, number of jokers), 3 or 4 cards; a
run is (suit, low, high) on the positions A(low) 2 .. K A(high). The engine takes the template's
natural cards from the hand and fills every position the hand lacks with a joker (so a joker
never replaces a natural the player holds); jokers keep the card they stand for. Masks are exact:
a deep draw is allowed only if the deepest card can still be melded this turn, a meld or lay-off
only if the turn stays completable, a discard only once the deepest card is melded.

## Rewards

``episode="hand"``: each player's hand score (melded minus held); ``reward="normalized"``
divides by 100, clipped to [-1, 1]. ``episode="game"``: every hand pays its scores (so rewards
sum to the final totals); normalized game rewards are +1 to the winner and -1/(P-1) to the others
at the end. Not zero-sum (raw): 500 Rum scores are not.

## Episode end

A hand ends when a player has no cards left (or, floating variants, discards the last one), or
when the stock is empty and the player to draw passes. ``episode="game"``: when after a hand a
single player leads with ``target`` or more (ties for the lead play on; ``must_go_out_to_win``:
only the player who went out, with ``target``). ``max_steps`` truncates.

## Infos

Keys that mean the same in every game are spelled alike (``outcome``, ``hands_played``, and
``score``, ``winner`` where a game has them); each agent's infos after every step:

| key               | when       | meaning                                                     |
|-------------------|------------|-------------------------------------------------------------|
| ``outcome``       | every step | how the last finished hand ended (``"none"`` before)      |
| ``hands_played``  | every step | hands finished in this episode                              |
| ``hand_points``   | every step | this seat's score of the last finished hand (melded - held) |
| ``score``         | every step | this seat's cumulative score                                |
| ``winner``        | game end   | seat that won the game (``episode="game"``)                 |

Vector env (``make_vec``): ``reset`` and ``step`` infos hold ``current_player`` (N,); ``step``
adds, for the games where ``_final_observation`` is True (an episode just ended; other rows
are undefined), ``final_observation`` (N, players, obs), ``outcome`` (index into
``OUTCOME_NAMES`` of the encoding), ``episode_length`` (decisions) and ``final_points``
(N, players: ``score`` for ``episode="game"``, else ``hand_points``).

## Departures from the printed rules

- Jokers fill exactly the positions the hand lacks (see Actions).
- An ace laid off on a 2..K run goes high (15 points, never fewer than the low end's 1 point).
- With two decks, "the card just taken" may be discarded if another copy of it is held.
- "Rummy!" offers skip players who have no legal call, and are made only after discards.
- Once the stock is empty every player gets at most one more turn, then the hand ends (stock
  exhausted); and after ``max_pile_draws`` (100) draws from the discard pile in a hand every
  draw is from the stock. Together they make every hand end.

## Version history

- v0: initial release.
- v1: a pile card is "Rummy!"-callable through a chain of lay-offs of the pile cards above it
  (RULES.md §2.5 Decision); the ``known`` piece no longer depends on hidden copies (a player who
  played a copy of a card it took stayed "known" to hold it when it held another, hidden, copy);
  the observation space declares each piece's bounds (``scores`` may be negative).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv

from rummy_env.encodings import five_hundred_rum as E
from rummy_env.envs.base import RummyAECEnv, wrap
from rummy_env.render.table import TableView, joker_view
from rummy_env.render.text import meld_text, render_joker_table  # noqa: F401 - meld_text re-exported
from rummy_env.rules.five_hundred_rum.config import FiveHundredRumConfig
from rummy_env.rules.five_hundred_rum.game import FiveHundredRumGame


def env(render_mode: str | None = None, **options: Any) -> AECEnv:
    """500 Rum with PettingZoo's standard wrappers (an illegal move ends the game, -1)."""
    return wrap(raw_env(render_mode=render_mode, **options))


class raw_env(RummyAECEnv):  # noqa: N801 - PettingZoo naming convention
    """500 Rum as a PettingZoo AEC environment (see the module docstring for the spec)."""

    metadata = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "name": "five_hundred_rum_v1",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    config_cls = FiveHundredRumConfig
    game_cls = FiveHundredRumGame

    def _hand_info(self, rec: np.void, i: int, done: bool) -> dict[str, Any]:
        info = {
            "outcome": E.OUTCOME_NAMES[int(rec["outcome"])],
            "hand_points": int(rec["hand_points"][i]),
            "score": int(rec["scores"][i]),
            "hands_played": int(rec["hands_played"]),
        }
        if done and self.config.episode == "game":
            info["winner"] = int(rec["winner"])
        return info

    def render_text(self) -> str:
        """The table (all hands shown: the referee's view)."""
        rec = self.game.states[0]
        header = (
            f"500 Rum | phase {E.PHASE_NAMES[int(rec['phase'])]} | dealer "
            f"{self.possible_agents[int(rec['dealer'])]} | stock "
            f"{self.config.deck_size - int(rec['deck_pos'])}"
        )
        return render_joker_table(
            rec,
            self.possible_agents,
            header,
            lambda q: f"melded {int(rec['melded_pts'][q])} | score {int(rec['scores'][q])}",
        )

    def _table_view(self, rec: np.void, viewer: int | None, names: dict[str, str]) -> TableView:
        info = [
            f"hand {int(rec['hands_played']) + (0 if rec['done'] else 1)}",
            f"phase {E.PHASE_NAMES[int(rec['phase'])]}",
            f"game to {self.config.target}",
        ]
        result = ""
        if int(rec["outcome"]):
            pts = ", ".join(
                f"{a} {int(rec['hand_points'][q]):+d}" for q, a in enumerate(self.possible_agents)
            )
            result = f"last hand: {E.OUTCOME_NAMES[int(rec['outcome'])]} ({pts})"
        if rec["done"] and int(rec["winner"]) >= 0:
            result += f"; winner {self.possible_agents[int(rec['winner'])]}"
        return joker_view(
            rec,
            self.possible_agents,
            viewer,
            names,
            "500 Rum",
            info,
            self.config.deck_size - int(rec["deck_pos"]),
            lambda q: f"score {int(rec['scores'][q])}, melded {int(rec['melded_pts'][q])}",
            result.strip("; "),
        )
