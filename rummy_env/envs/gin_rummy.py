"""Gin Rummy (RULES.md §1): two players, 52 cards, knock, gin, undercut, Oklahoma, matches.

| Import             | ``from rummy_env import gin_rummy_v0``                   |
|--------------------|----------------------------------------------------------|
| Registered id      | ``rummy/gin_rummy-v0`` (``pettingzoo.make("aec", ...)``) |
| Actions            | Discrete(107); Discrete(569) with ``auto_meld=False``    |
| Parallel API       | No (turn-based)                                          |
| Agents             | ``player_0``, ``player_1``                               |
| Observation shape  | (225,); (537,) with ``auto_meld=False``                  |
| Observation values | [0, 1]; knock_limit [0, 10]; scores, boxes [0, inf)      |
| Vector env         | ``rummy_env.make_vec("gin_rummy", num_envs, **options)``  |

Each hand: 10 cards each, the 21st card is the upcard. The non-dealer may take the upcard or pass,
then the dealer; if both pass the non-dealer draws from the stock. A turn is a draw (stock or top
discard) then a discard; instead of discarding a player may knock, discarding face down, when the
remaining 10 cards can be melded to a deadwood of at most the knock limit (0 deadwood: gin). The
defender lays out melds and, unless the knocker went gin, lays off on the knocker's melds. The hand
is dead when the stock is down to 2 cards after a discard.

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
| target                        | 100       | a match ends at this total (Oklahoma usually 150)  |
| next_dealer                   | loser     | or winner, alternate                               |
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
| num_players                   | 2         | only 2 (3 and 4 players are planned)               |

``reset(seed=None, options={"deck": [...], "dealer": 0})``: ``deck`` is a stacked deck of all 52
cards, top card first (ids or text like ``"As"``, ``"Td"``), dealt one card at a time starting with
the non-dealer; ``dealer`` fixes the first dealer (otherwise drawn from the seeded stream). Without
a seed the game's stream continues, so repeated resets give new deals.

Every argument is checked before anything changes: ``seed`` is None or an integer >= 0,
``dealer`` a seat (0 or 1), ``deck`` a full deck of this game; a refused ``reset`` raises
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

## Episode end

``episode="hand"``: after a knock is scored or a dead hand. ``episode="match"``: when a player's
points reach ``target`` (dead hands are replayed by the same dealer). ``max_steps`` truncates.

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

Vector env (``make_vec``): ``reset`` and ``step`` infos hold ``current_player`` (N,); ``step``
adds, for the games where ``_final_observation`` is True (an episode just ended; other rows
are undefined), ``final_observation`` (N, players, obs), ``outcome`` (index into
``OUTCOME_NAMES`` of the encoding), ``episode_length`` (decisions), ``final_points`` (N, 2:
``totals`` for matches, else ``hand_points``) and ``final_deadwood`` (N, 2).

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
- 3 and 4 players (RULES.md §1.10) are not implemented yet (``num_players`` must be 2).

## Version history

- v0: initial release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv

from rummy_env.encodings import gin_rummy as E
from rummy_env.envs.base import RummyAECEnv, wrap
from rummy_env.render.text import render_gin
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.rules.gin_rummy.game import GinRummyGame


def env(render_mode: str | None = None, **options: Any) -> AECEnv:
    """Gin Rummy with PettingZoo's standard wrappers (an illegal move ends the game, -1)."""
    return wrap(raw_env(render_mode=render_mode, **options))


class raw_env(RummyAECEnv):  # noqa: N801 - PettingZoo naming convention
    """Gin Rummy as a PettingZoo AEC environment (see the module docstring for the spec)."""

    metadata = {
        "render_modes": ["ansi", "human"],
        "name": "gin_rummy_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    config_cls = GinRummyConfig
    game_cls = GinRummyGame

    def _hand_info(self, rec: np.void, i: int, done: bool) -> dict[str, Any]:
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

    def render_text(self) -> str:
        """The table (all hands shown: the referee's view)."""
        return render_gin(self.game.states[0], self.possible_agents)
