"""Rummy 51 (RULES.md §3): 2-6 players, two decks and four jokers, the 51-point opening.

| Import             | ``from rummy_env import rummy51_v1``                          |
|--------------------|---------------------------------------------------------------|
| Registered id      | ``rummy/rummy51-v1``                                          |
| Actions            | Discrete(3188)                                                |
| Agents             | ``player_0`` .. ``player_{P-1}``                              |
| Observation        | flat float32 from named pieces (``Layout.pieces``)            |
| Vector env         | ``rummy_env.make_vec("rummy51", num_envs, **options)``        |

108 cards (two decks of 52 and four jokers), 13 cards each, ``M = 36`` table meld slots, ``P``
players.

A turn: draw (the stock top or the top discard), then - once opened - any number of new melds,
lay-offs onto anyone's melds and joker retrievals, then a compulsory discard. A player's first
melding turn must lay down new melds worth at least ``opening_threshold`` (51) points, jokers
counting as the card they stand for; after that, in the same turn and later, the player may lay
off and take jokers back. A player goes out by melding all cards but one and discarding it; a
player who does that in one turn without having opened before and without building on others'
melds makes "Rummy", and every other player gets 25 more penalty points. Penalties: the cards left
in hand (A 11, 2-10 face value, J Q K 10, joker 25); the winner scores 0.

## Arguments

| option                         | default | meaning                                           |
|--------------------------------|---------|---------------------------------------------------|
| num_players                    | 2       | 2 to 6                                            |
| opening_threshold              | 51      | points the opening melds must reach               |
| max_reshuffles                 | 2       | pile reshuffles; then a spent stock draws       |
| retrieved_joker_must_be_melded | False   | a joker taken back must be melded that turn       |
| discard_draw_requires_opening  | False   | before opening, the discard only into it        |
| episode                        | hand    | or match (penalties add up; elimination)          |
| elimination                    | 101     | match: a player at this total is out              |
| reward                         | penalty | or zero_sum, normalized, payout                   |
| max_steps                      | None    | truncate after this many decisions                |
| max_pile_draws                 | 100     | then every draw is from the stock                 |

``reset(seed=None, options={"deck": [...], "dealer": 0})``: a stacked deck of all 108 cards, top
first (ids, or text like ``"As"``, ``"JK"``; a joker is either joker id, 52 or 53), dealt one
at a time starting left of the dealer; then the upcard; the rest is the stock
(``rummy_env.testing.joker_deck(..., num_decks=2)`` builds one).

Every argument is checked before anything changes: ``seed`` is None or an integer >= 0,
``dealer`` a seat (0..P-1), ``deck`` a full deck of this game; a refused ``reset`` raises
``TypeError`` (wrong type; also a ``ValueError``) or ``ValueError`` naming the argument and leaves
the game, its random stream and the agents as they were. ``step`` takes a Python or numpy integer
(``None`` for a finished agent, as in PettingZoo); ``observe``, ``action_space``,
``observation_space`` and ``sample_worlds`` take a name in ``possible_agents``; ``bool`` is never
an integer. ``step`` and ``observe`` before the first ``reset`` raise ``RuntimeError``
(also a ``ValueError``).

## Observation

``{"observation": float32 (O,), "action_mask": int8 (3188,)}`` for the observing player; players
are seat-relative (index 0 = observer, 1 = the next player clockwise, ...). Named views:
``rummy_env.encodings.rummy51.Layout(P).split(obs)``.

| piece           | size     | content                                                      |
|-----------------|----------|--------------------------------------------------------------|
| hand            | 53       | count of each card type in the hand / 2 (type 52 = joker)    |
| pile_sequence   | 108      | pile from the top: (card type + 1) / 53                      |
| pile_counts     | 53       | count of each type in the pile / 2                           |
| known           | (P-1)*53 | cards each other player is known to hold (taken, retrieved)  |
| meld_kind       | M*2      | per slot: group / run                                        |
| meld_owner      | M*P      | per slot: who laid it down (seat-relative)                   |
| meld_cards      | M*52     | per slot: its natural cards                                  |
| meld_jokers     | M*14     | per slot: run positions held by jokers (groups: count / 4)   |
| meld_ends       | M*2      | per slot: run low / high position / 13 (groups: rank / 12)   |
| hand_sizes      | P        | cards in each hand / 13                                      |
| stock_size      | 1        | stock / 108                                                  |
| opened          | P        | players who have opened                                      |
| penalties       | P        | match penalty totals / elimination                           |
| eliminated      | P        | players out of the match                                     |
| dealer          | P        | one-hot dealer                                               |
| phase           | 3        | draw, play, hand_over                                        |
| opening_points  | 1        | points laid this turn towards the opening / threshold        |
| obligation      | 53       | the taken discard still owed to the opening melds            |
| taken_single    | 53       | the discard taken this turn (not discardable)                |
| owed_jokers     | 1        | retrieved jokers still to be melded this turn / 4            |
| reshuffles_left | 1        | reshuffles left before a spent stock draws the hand / max    |

``known`` counts the copies a player took from the pile (or retrieved from a meld) less the
copies of that card it has played since, whichever copy went: it never depends on copies
nobody saw. Every piece lies in ``[0, 1]`` except ``hand``, ``pile_counts`` and ``known``
(up to 2), ``hand_sizes`` (up to 108/13), ``penalties`` and ``opening_points`` (unbounded
above); the observation space declares exactly these bounds.

## Actions

| action             | ids         | meaning                                                 |
|--------------------|-------------|---------------------------------------------------------|
| DRAW_STOCK         | 0           | draw the stock top                                      |
| TAKE_DISCARD       | 1           | take the top discard                                    |
| MELD[t]            | 2 .. 686    | new meld by template t (``core.jmelds``)                |
| LAYOFF[c, m]       | next 52*M   | lay natural c off on slot m (id base + c*M + m)         |
| LAYOFF_JOKER[m, e] | next 2*M    | lay a joker off on slot m, e: 0 group/low, 1 high       |
| RETRIEVE[m, k]     | next 14*M   | natural in place of a joker: run pos. / group suit k    |
| DISCARD[c]         | last 53     | discard card type c (ends the turn; the last goes out)  |

Meld templates: a group is (rank, suits of its natural cards, number of jokers), 3 or 4 cards; a
run is (suit, low, high) on the positions A(low) 2 .. K A(high). The engine takes the template's
natural cards from the hand and fills every position the hand lacks with a joker; jokers keep
the card they stand for until taken back. Laying a natural of a missing suit on a group of 3
holding a joker is either LAYOFF (the group closes at 4, its joker locked for good) or RETRIEVE
(the natural takes the joker's place; the joker goes to the hand).

Masks are exact: before opening, a meld is allowed only while new melds from the hand can still
bring this turn's total to the threshold with a card left to discard, and no discard is allowed
with an opening begun but short; lay-offs and retrievals only once opened; every move only if the
turn can still end with a legal discard.

## Rewards

Given when a hand ends, to the players still in. ``penalty``: minus the player's penalty for the
hand. ``zero_sum``: the mean over the other players of (their penalty - the player's), so rewards
sum to zero (two players: the winner gets the loser's penalty). ``normalized``: ``zero_sum`` / 100
clipped to [-1, 1] for hands; for matches +1 to the winner and -1/(P-1) to the others at the end
and nothing before. ``payout`` (hands only): every player stakes 1; the winner takes 75% of the
pot, the other 25% goes to the losers whose penalty is below 100 in proportion to (100 -
penalty) (to the winner if none qualifies); the reward is the amount received minus the stake
(a drawn hand returns the stakes). The step's ``infos`` carry the hand's penalties.

## Episode end

A hand ends when a player discards the last card (goes out), or as a draw when the stock is spent
after ``max_reshuffles`` reshuffles (everyone scores the penalty of the hand). ``episode="hand"``:
after one hand. ``episode="match"``: penalties add up over hands; after each hand, players at
``elimination`` points or more are out (if that would leave nobody, those with the lowest total
stay in); the last player left wins. ``max_steps`` truncates.

## Infos

Keys that mean the same in every game are spelled alike (``outcome``, ``hands_played``, and
``score``, ``winner`` where a game has them; Rummy 51 counts penalties, not points, so its
per-hand and total keys say so); each agent's infos after every step:

| key               | when       | meaning                                                     |
|-------------------|------------|-------------------------------------------------------------|
| ``outcome``       | every step | how the last finished hand ended (``"none"`` before)      |
| ``hands_played``  | every step | hands finished in this episode                              |
| ``hand_penalty``  | every step | penalty this seat took in the last finished hand            |
| ``penalty_total`` | every step | this seat's cumulative penalty                              |
| ``hand_winner``   | every step | seat that went out in the last hand, -1 (draw or none yet)  |
| ``rummy``         | every step | the last hand was won with a Rummy (all cards at once)      |
| ``winner``        | match end  | last player left (``episode="match"``)                      |

Vector env (``make_vec``): ``reset`` and ``step`` infos hold ``current_player`` (N,); ``step``
adds, for the games where ``_final_observation`` is True (an episode just ended; other rows
are undefined), ``final_observation`` (N, players, obs), ``outcome`` (index into
``OUTCOME_NAMES`` of the encoding), ``episode_length`` (decisions), ``final_penalty`` (N, players:
``penalty_total`` for matches, else ``hand_penalty``), ``winner`` (the match winner for matches,
else ``hand_winner``) and ``rummy``.

## Departures from the printed rules

- Matches (``episode="match"``) are an extension beyond the rule text, and ``max_reshuffles``,
  ``max_pile_draws`` and the draw on a spent stock are the environment's own (every episode
  ends). Eliminated players stay in ``agents`` until the match ends but are never dealt in.
- The stock is renewed when it is spent at the end of a turn (the pile but its top card,
  shuffled); with no card to renew it from, the hand is a draw.
- Jokers fill exactly the positions the hand lacks (see Actions). An ace laid off on a 2..K run
  goes high.
- With two decks, the card just taken from the pile may be discarded if another copy is held.
- Decisions where the rules are silent: once the opening is down, the player may also take jokers
  back in the same turn (as lay-offs are allowed); a retrieval from another player's meld, like a
  lay-off on it, spoils a Rummy; with ``discard_draw_requires_opening`` the taken card must be in
  a meld laid before the opening total is reached (or in the meld that reaches it).

## Version history

- v0: initial release.
- v1: the ``known`` piece no longer depends on hidden copies (a player who played a copy of a
  card it took stayed "known" to hold it when it held another, hidden, copy); the observation
  space declares each piece's bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv

from rummy_env.encodings import rummy51 as E
from rummy_env.envs.base import RummyAECEnv, wrap
from rummy_env.render.table import TableView, joker_view
from rummy_env.render.text import render_joker_table
from rummy_env.rules.rummy51.config import Rummy51Config
from rummy_env.rules.rummy51.game import Rummy51Game


def env(render_mode: str | None = None, **options: Any) -> AECEnv:
    """Rummy 51 with PettingZoo's standard wrappers (an illegal move ends the game, -1)."""
    return wrap(raw_env(render_mode=render_mode, **options))


class raw_env(RummyAECEnv):  # noqa: N801 - PettingZoo naming convention
    """Rummy 51 as a PettingZoo AEC environment (see the module docstring for the spec)."""

    metadata = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "name": "rummy51_v1",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    config_cls = Rummy51Config
    game_cls = Rummy51Game

    def _hand_info(self, rec: np.void, i: int, done: bool) -> dict[str, Any]:
        info = {
            "outcome": E.OUTCOME_NAMES[int(rec["outcome"])],
            "hand_penalty": int(rec["hand_penalty"][i]),
            "penalty_total": int(rec["penalties"][i]),
            "hand_winner": int(rec["hand_winner"]),
            "rummy": bool(rec["rummy"]),
            "hands_played": int(rec["hands_played"]),
        }
        if done and self.config.episode == "match":
            info["winner"] = int(rec["winner"])
        return info

    def render_text(self) -> str:
        """The table (all hands shown: the referee's view)."""
        rec = self.game.states[0]
        header = (
            f"Rummy 51 | phase {E.PHASE_NAMES[int(rec['phase'])]} | dealer "
            f"{self.possible_agents[int(rec['dealer'])]} | stock "
            f"{self.config.deck_size - int(rec['deck_pos'])} | reshuffles "
            f"{int(rec['reshuffles'])}/{self.config.max_reshuffles}"
        )

        def status(q: int) -> str:
            state = "out" if rec["out"][q] else ("opened" if rec["opened"][q] else "not opened")
            return f"{state} | penalties {int(rec['penalties'][q])}"

        return render_joker_table(rec, self.possible_agents, header, status)

    def _table_view(self, rec: np.void, viewer: int | None, names: dict[str, str]) -> TableView:
        info = [
            f"hand {int(rec['hands_played']) + (0 if rec['done'] else 1)}",
            f"phase {E.PHASE_NAMES[int(rec['phase'])]}",
            f"opening {self.config.opening_threshold}",
            f"reshuffles {int(rec['reshuffles'])}/{self.config.max_reshuffles}",
        ]

        def status(q: int) -> str:
            state = "out" if rec["out"][q] else ("opened" if rec["opened"][q] else "not opened")
            return f"penalties {int(rec['penalties'][q])}, {state}"

        result = ""
        if int(rec["outcome"]):
            pen = ", ".join(
                f"{a} {int(rec['hand_penalty'][q])}" for q, a in enumerate(self.possible_agents)
            )
            result = f"last hand: {E.OUTCOME_NAMES[int(rec['outcome'])]} (penalties {pen})"
            if rec["rummy"]:
                result += ", rummy"
        if rec["done"] and int(rec["winner"]) >= 0:
            result += f"; winner {self.possible_agents[int(rec['winner'])]}"
        return joker_view(
            rec,
            self.possible_agents,
            viewer,
            names,
            "Rummy 51",
            info,
            self.config.deck_size - int(rec["deck_pos"]),
            status,
            result.strip("; "),
        )
