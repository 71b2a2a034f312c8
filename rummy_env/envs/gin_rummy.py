"""Gin Rummy (RULES.md §1): 2 to 4 players, 52 cards, knock, gin, undercut, Oklahoma, matches.

| Import             | ``from rummy_env import gin_rummy_v0``                   |
|--------------------|----------------------------------------------------------|
| Registered id      | ``rummy/gin_rummy-v0`` (``pettingzoo.make("aec", ...)``) |
| Actions            | Discrete(107); Discrete(569) with ``auto_meld=False``    |
| Parallel API       | No (turn-based)                                          |
| Agents             | ``player_0`` .. ``player_{num_players - 1}``             |
| Observation shape  | (225,); (537,) with ``auto_meld=False`` (3, 4 players: below) |
| Observation values | [0, 1]; knock_limit [0, 10]; scores, boxes [0, inf)      |
| Vector env         | ``rummy_env.make_vec("gin_rummy", num_envs, **options)``  |

Each hand: 10 cards each, the 21st card is the upcard. The non-dealer may take the upcard or pass,
then the dealer; if both pass the non-dealer draws from the stock. A turn is a draw (stock or top
discard) then a discard; instead of discarding a player may knock, discarding face down, when the
remaining 10 cards can be melded to a deadwood of at most the knock limit (0 deadwood: gin). The
defender lays out melds and, unless the knocker went gin, lays off on the knocker's melds. The hand
is dead when the stock is down to 2 cards after a discard.

With ``num_players=3`` (RULES.md §1.10) the dealer deals to the two others and sits out; the
loser of a hand deals the next, so the winner and the previous dealer play it; a dead hand is dealt
again by the same dealer. Inside the hand, the seat after the dealer takes the non-dealer's part
(dealt first, first upcard offer) and the other seat the dealer's part. With ``num_players=4``,
teams A = {``player_0``, ``player_2``} and B = {``player_1``, ``player_3``} play two tables, each an
independent 2-player hand with its own deck: in round r ``player_0`` plays ``player_1`` (r even)
or ``player_3`` (r odd), ``player_2`` the other; the tables take turns one decision at a time
(``player_0``'s table first) until both hands are over, then the round is scored for the teams.
Every other option applies to each 2-player hand.

## Arguments

``gin_rummy_v0.env(render_mode=None, **options)``; every option is a field of
``GinRummyConfig`` (a value of the wrong type raises ``TypeError``, which is also a
``ValueError``; bad values or combinations raise ``ValueError``; both name the option):

| option                        | default   | meaning                                            |
|-------------------------------|-----------|----------------------------------------------------|
| knock_limit                   | 10        | highest deadwood allowed for a knock               |
| gin_bonus                     | 20        | bonus for gin (RULES: 20 or 25)                    |
| undercut_bonus                | 10        | bonus for undercutting the knocker (10, 20 or 25)  |
| box_bonus                     | 20        | points per box at the end of a match (20 or 25)    |
| game_bonus                    | 100       | bonus to the match winner                          |
| shutout                       | bonus_200 | or double_total (winner's total doubled)           |
| target                        | None      | match target: 100; 125 with 4 players (Oklahoma 150) |
| next_dealer                   | loser     | or winner, alternate (2 players only)              |
| eleven_card_deal              | False     | non-dealer 11 cards, no upcard, first a discard    |
| allow_discard_of_drawn_upcard | False     | a card taken from the pile may be discarded        |
| fiftieth_card_action          | False     | with 2 stock cards left, the discard only to knock |
| oklahoma                      | False     | upcard sets the knock limit, spade doubles         |
| oklahoma_ace_gin_only         | False     | Oklahoma: an ace upcard allows only gin            |
| oklahoma_extra_boxes          | False     | Oklahoma: extra boxes, undercut 1/2, gin 2/4       |
| episode                       | hand      | or match (hands until target)                      |
| reward                        | raw       | or normalized                                      |
| auto_meld                     | True      | environment arranges melds and lay-offs            |
| max_steps                     | None      | truncate after this many decisions                 |
| max_pile_draws                | 50        | then every draw is from the stock (hands end)      |
| num_players                   | 2         | 3 (dealer sits out) or 4 (two teams, two tables)   |

``reset(seed=None, options={"deck": [...], "dealer": 0})``: ``deck`` is a stacked deck of all 52
cards, top card first (ids or text like ``"As"``, ``"Td"``), dealt one card at a time starting with
the non-dealer; ``dealer`` fixes the first dealer (otherwise drawn from the seeded stream). Without
a seed the game's stream continues, so repeated resets give new deals. With 3 players ``dealer``
is the seat that deals first and sits out, and ``deck`` deals starting with the seat after it.
With 4 players ``deck`` is a list of two decks (``player_0``'s table, then ``player_2``'s) and
``dealer`` the pair ``[dealer at player_0's table (0 or 1), dealer at player_2's (2 or 3)]`` of
round 0. ``rummy_env.testing.gin_deck`` builds a deck from hands; ``gin_deck_3p`` and
``gin_decks_4p`` take the hands by seat.

Every argument is checked before anything changes: ``seed`` is None or an integer >= 0,
``dealer`` a seat (2, 3 players) or a pair of seats as above (4 players), ``deck`` a full deck
(4 players: two); a refused ``reset`` raises
``TypeError`` (wrong type; also a ``ValueError``) or ``ValueError`` naming the argument and leaves
the game, its random stream and the agents as they were. ``step`` takes a Python or numpy integer
(``None`` for a finished agent, as in PettingZoo); ``observe``, ``action_space``,
``observation_space`` and ``sample_worlds`` take a name in ``possible_agents``; ``bool`` is never
an integer. ``step`` and ``observe`` before the first ``reset`` raise ``RuntimeError``
(also a ``ValueError``).

## Observation

``{"observation": float32 (225,) or (537,), "action_mask": int8 (107,) or (569,)}`` for the
observing player (seat-relative: "observer" then "opponent"). The mask is all zeros for an agent
that is not to act. Named views: ``rummy_env.encodings.gin_rummy.split_observation``.

| piece               | offset | size | content                                                   |
|---------------------|--------|------|-----------------------------------------------------------|
| hand                | 0      | 52   | 1 for each card in the observer's hand                    |
| discard_top         | 52     | 52   | one-hot of the top discard                                |
| discard_pile        | 104    | 52   | pile cards: 1 - depth/52 (top 1.0), 0 if absent           |
| opponent_known      | 156    | 52   | cards the opponent is known to hold                       |
| stock_size          | 208    | 1    | stock cards / 31                                          |
| opponent_hand_size  | 209    | 1    | cards in the opponent's hand / 11                         |
| knock_limit         | 210    | 1    | knock limit of the hand / 10                              |
| spade_double        | 211    | 1    | 1 if the hand score is doubled (Oklahoma spade)           |
| is_dealer           | 212    | 1    | 1 if the observer dealt                                   |
| scores              | 213    | 2    | match points (observer, opponent) / target                |
| boxes               | 215    | 2    | boxes (observer, opponent) / 10                           |
| phase               | 217    | 8    | one-hot phase                                             |
| melds               | 225    | 312  | manual melds only: [observer/opponent][slot 0..2][card]   |

Card index = suit * 13 + rank, suits c d h s, ranks A..K. The knocker's face-down discard and the
stock are never observed.

With 3 and 4 players the observation starts with the pieces above, the observer's table seen as a
2-player hand (``scores`` and ``boxes``: the match's, observer and table opponent; 4 players: the
teams'), so a 2-player agent reads its first 225 (537) entries. The player sitting out (3 players)
sees there only the table's public pieces (``discard_top``, ``discard_pile``, ``stock_size``,
``knock_limit``, ``spade_double``, ``phase``) and ``is_dealer`` = 1, never a hand. The match pieces
follow, seat-relative (observer, then the next seats in seat order; 4 players: observer, left
opponent, partner, right opponent). Nothing of the other table's cards is ever observed with 4
players. Shapes: 3 players (393,), (1173,) with ``auto_meld=False``; 4 players (240,), (552,).

| piece (3 players)   | offset | size | content                                                   |
|---------------------|--------|------|-----------------------------------------------------------|
| sitting_out         | 225    | 3    | one-hot of the seat that dealt and sits out this hand     |
| match_scores        | 228    | 3    | each seat's match points / target                         |
| match_boxes         | 231    | 3    | each seat's boxes / 10                                    |
| seat_known          | 234    | 156  | [seat][card]: cards each seat is publicly known to hold   |
| seat_hand_size      | 390    | 3    | cards in each seat's hand / 11 (0 for the seat out)       |
| seat_melds          | 393    | 468  | manual melds only: [seat][slot 0..2][card] (offset +312)  |

| piece (4 players)   | offset | size | content                                                   |
|---------------------|--------|------|-----------------------------------------------------------|
| table_opponent      | 225    | 4    | one-hot of the observer's opponent this round             |
| team_scores         | 229    | 2    | match points (observer's team, other team) / target       |
| team_boxes          | 231    | 2    | boxes (observer's team, other team) / 10                  |
| partner_outcome     | 233    | 5    | one-hot outcome of the partner's hand once it is over     |
| partner_points      | 238    | 2    | its points (partner, partner's opponent) / largest score  |

Offsets are those of ``auto_meld=True``; with manual melds add 312 (the ``melds`` piece).

## Actions

| action         | ids      | meaning                                                        |
|----------------|----------|----------------------------------------------------------------|
| DRAW_STOCK     | 0        | draw the top stock card                                        |
| TAKE_DISCARD   | 1        | take the top discard / accept the upcard / take the 50th card  |
| PASS           | 2        | decline the upcard offer or the 50th card                      |
| DISCARD[c]     | 3..54    | discard card c                                                 |
| KNOCK[c]       | 55..106  | knock, discarding card c face down                             |
| MELD[t]        | 107..411 | manual melds: lay meld template t (65 groups, then 240 runs)   |
| LAYOFF[c, m]   | 412..567 | manual melds: defender lays c off on knocker's slot m (412+3c+m) |
| END_MELDING    | 568      | manual melds: finish the declaration                           |

Masks are exact: KNOCK[c] only when the deadwood after discarding c is within the limit; the card
just taken from the pile cannot be discarded (unless allowed); MELD[t] for the knocker only while
the rest can still reach the limit; END_MELDING only within the limit. After KNOCK with
``auto_meld=True`` the hand is laid out and scored at once: the knocker's melds minimise deadwood
(ties: fewest cards outside the knocker's hand could be laid off, chains included), the defender's
melds and lay-offs minimise its deadwood.

## Rewards

Zero-sum. ``episode="hand"``: the hand's winner gets +points, the loser -points (knock: the
deadwood difference; gin: ``gin_bonus`` + defender's deadwood; undercut: difference +
``undercut_bonus``; doubled on an Oklahoma spade upcard); a dead hand pays 0.
``episode="match"``: each hand pays as above when it ends, and the last hand also pays the bonuses
(boxes, game bonus, shutout), so an agent's rewards sum to its final match result (winner's total
minus loser's total). ``reward="normalized"``: hand episodes divide by
``(max(gin_bonus, undercut_bonus) + 100) * (2 if oklahoma)``; match episodes pay only +1/-1 at the
end. Raw points are in ``infos`` (``hand_points``, ``totals``, ``outcome``, ``deadwood``).

3 players: each hand pays its two players as above (the seat sitting out gets 0). At the match end
every player adds a box bonus per box, the winner the game bonus, judged against each loser
separately (a loser who scored nothing pays the shutout: 200 for ``bonus_200``, the winner's
total doubled for ``double_total``); each loser pays the winner the difference of their totals
(losers settle nothing between them), and the last step pays what the settlement adds to the
hand payments, so each player's rewards sum to its settlement. ``reward="normalized"``: hand
episodes divide by the scale above; match episodes pay +1 to the winner and -1/2 to each loser.

4 players: a round pays when both tables' hands are over. A dead table is won by nobody. If one
team won both tables it scores the sum of both hand scores; if each team won one, the team with
the higher hand score scores the difference (equal: nobody); if only one table was won, that team
scores that hand. Each member of the scoring team gets +half the round score, each member of
the other team -half. At the match end (a team's points reach ``target``, 125 by default) a team
adds a box bonus per box (a round it scored, plus the Oklahoma extra boxes its players earned),
the winning team the game bonus (shutout if the other team scored nothing); the settlement is
the difference of the team totals, and each player's rewards sum to half of its team's.
``reward="normalized"``: hand episodes divide by the scale above (half a round score is at most
one scale); match episodes pay +1 to each winner and -1 to each loser.

## Episode end

``episode="hand"``: after a knock is scored or a dead hand. ``episode="match"``: when a player's
points reach ``target`` (dead hands are replayed by the same dealer). ``max_steps`` truncates.
3 players: as with 2 (one hand, or a player's points reach ``target``). 4 players: ``"hand"`` is
one round (both tables' hands); ``"match"`` ends after the round in which a team's points reach
``target``.

## Infos

Keys that mean the same in every game are spelled alike (``outcome``, ``hands_played``, and
``score``, ``winner`` where a game has them); each agent's infos after every step:

| key               | when       | meaning                                                     |
|-------------------|------------|-------------------------------------------------------------|
| ``outcome``       | every step | how the last finished hand ended (``"none"`` before)      |
| ``hands_played``  | every step | hands finished in this episode                              |
| ``hand_points``   | every step | points this seat scored in the last finished hand           |
| ``deadwood``      | every step | this seat's deadwood in the last scored hand                |
| ``score``         | episode end | cumulative match points, hand scores only                  |
| ``totals``        | match end  | final match total with all bonuses                          |
| ``settlement``    | episode end | 3, 4 players: what the seat (4: its team) wins or pays     |
| ``round_points``  | every step | 4 players: the seat's team's score in the last round        |

With 3 and 4 players ``outcome``, ``hand_points`` and ``deadwood`` are those of the last hand at
the seat's table (the seat sitting out: the table's outcome, 0 points), ``score`` and ``totals``
are the team's with 4 players. ``totals`` mean the same with 2, 3 and 4 players: boxes, the
game bonus and the shutout; with 3 players, where the shutout is judged against each loser,
the winner's ``totals`` count it when both losers scored nothing (one shut-out loser shows in
the ``settlement``s only).

Vector env (``make_vec``): ``reset`` and ``step`` infos hold ``current_player`` (N,); ``step``
adds, for the games where ``_final_observation`` is True (an episode just ended; other rows
are undefined), ``final_observation`` (N, players, obs), ``outcome`` (index into
``OUTCOME_NAMES`` of the encoding), ``episode_length`` (decisions), ``final_points`` (N, 2:
``totals`` for matches, else ``hand_points``; 3, 4 players: (N, players), the ``settlement``)
and ``final_deadwood`` (N, players).

## Departures from the printed rules

- Dealing, the first dealer and shuffling come from the seeded stream (no cutting).
- The upcard offer and the forced stock draw after two passes are decisions (the forced draw has
  one legal action); in the eleven-card deal the non-dealer's first discard may be a knock (the seed
  allows knocking on any turn, the first included).
- The 50th-card offer is made only when a knock is possible with that card; otherwise the hand is
  dead at once.
- Match ``shutout="double_total"`` doubles the winner's total after boxes and game bonus.
- After ``max_pile_draws`` (50) draws from the discard pile in a hand, players must draw from
  the stock: without it two players taking discards forever would never end the hand (OpenSpiel
  has the same limit).
- 3 players: the seed does not say who plays first in the 2-player hand; the seat after the
  dealer (dealt first) takes the non-dealer's part. With 3 and 4 players ``next_dealer`` must
  stay ``"loser"`` (RULES.md §1.10 fixes the dealers).
- 4 players: a round in which no team scored is dealt again with the same pairs and dealers (the
  round index, which sets the pairs, advances only after a scored round): RULES.md has "the seats
  that dealt deal again", which rotating the pairs could seat at one table. Oklahoma extra boxes
  go to the team of the player who earned them.
- 4 players: ``sample_worlds`` cannot know anything of the other table, so each world deals that
  table's hand anew from its dealer (a hand already over keeps its public result).

## Version history

- v0: initial release. 3 and 4 players (``num_players=3 | 4``, RULES.md §1.10) were added
  later without a version bump: the 2-player game (its observation, actions, rewards and
  dynamics) is unchanged, so ``gin_rummy_v0`` and the published 2-player agents stay valid.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv

from rummy_env.encodings import gin_rummy as E
from rummy_env.envs.base import RummyAECEnv, wrap
from rummy_env.render.table import TableView, gin_multi_view, gin_view
from rummy_env.render.text import render_gin, render_gin_multi
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.rules.gin_rummy.multi_game import make_gin_game


def env(render_mode: str | None = None, **options: Any) -> AECEnv:
    """Gin Rummy with PettingZoo's standard wrappers (an illegal move ends the game, -1)."""
    return wrap(raw_env(render_mode=render_mode, **options))


class raw_env(RummyAECEnv):  # noqa: N801 - PettingZoo naming convention
    """Gin Rummy as a PettingZoo AEC environment (see the module docstring for the spec)."""

    metadata = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "name": "gin_rummy_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    config_cls = GinRummyConfig
    game_cls = staticmethod(make_gin_game)

    def _hand_info(self, rec: np.void, i: int, done: bool) -> dict[str, Any]:
        if self.config.num_players != 2:
            return self._multi_info(rec, i, done)
        info = {
            "outcome": E.OUTCOME_NAMES[int(rec["outcome"])],
            "hand_points": int(rec["hand_points"][i]),
            "deadwood": int(rec["deadwood"][i]),
            "hands_played": int(rec["hands_played"]),
        }
        if done:
            info["score"] = int(rec["scores"][i])
            if self.config.episode == "match":
                info["totals"] = int(rec["totals"][i])
        return info

    def _multi_info(self, rec: np.void, i: int, done: bool) -> dict[str, Any]:
        info: dict[str, Any] = {
            "outcome": E.OUTCOME_NAMES[int(rec["hand_outcome"][i])],
            "hand_points": int(rec["hand_points"][i]),
            "deadwood": int(rec["deadwood"][i]),
            "hands_played": int(rec["hands_played"]),
        }
        if self.config.num_players == 4:
            info["round_points"] = int(rec["round_points"][i])
        if done:
            info["score"] = int(rec["scores"][i])
            info["settlement"] = int(rec["settle"][i])
            if self.config.episode == "match":
                info["totals"] = int(rec["totals"][i])
        return info

    def _action_name(self, a: int) -> str:
        return E.action_name(a)

    def _has_tables(self) -> bool:
        return self.config.num_players == 4

    def _table_of(self, agent: str) -> int | None:
        if self.config.num_players != 4:
            return None
        return int(self.game.states[0]["board_of"][self._agent_index[agent]])

    def _public_action_name(self, a: int) -> str:
        # the knock's discard is face down
        return "KNOCK" if E.KNOCK_BASE <= a < E.MELD_BASE else E.action_name(a)

    def render_text(self) -> str:
        """The table(s) (all hands shown: the referee's view)."""
        if self.config.num_players == 2:
            return render_gin(self.game.states[0], self.possible_agents)
        return render_gin_multi(self.game.states[0], self.possible_agents)

    def _table_view(self, rec: np.void, viewer: int | None, names: dict[str, str]) -> TableView:
        if self.config.num_players == 2:
            return gin_view(rec, self.possible_agents, viewer, names)
        return gin_multi_view(rec, self.possible_agents, viewer, names)
