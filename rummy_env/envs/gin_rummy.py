"""Gin Rummy (RULES.md §1): two players, 52 cards, knock, gin, undercut, Oklahoma, matches.

| Import             | ``from rummy_env import gin_rummy_v0``                   |
|--------------------|----------------------------------------------------------|
| Registered id      | ``rummy/gin_rummy-v0`` (``pettingzoo.make("aec", ...)``) |
| Actions            | Discrete(107); Discrete(569) with ``auto_meld=False``    |
| Parallel API       | No (turn-based)                                          |
| Agents             | ``player_0``, ``player_1``                               |
| Observation shape  | (225,); (537,) with ``auto_meld=False``                  |
| Observation values | [0, 1] (``scores``, ``boxes``: [0, inf))                 |
| Vector env         | ``rummy_env.make_vec("gin_rummy", num_envs, **options)``  |

Each hand: 10 cards each, the 21st card is the upcard. The non-dealer may take the upcard or pass,
then the dealer; if both pass the non-dealer draws from the stock. A turn is a draw (stock or top
discard) then a discard; instead of discarding a player may knock, discarding face down, when the
remaining 10 cards can be melded to a deadwood of at most the knock limit (0 deadwood: gin). The
defender lays out melds and, unless the knocker went gin, lays off on the knocker's melds. The hand
is dead when the stock is down to 2 cards after a discard.

## Arguments

``gin_rummy_v0.env(render_mode=None, **options)``; every option is a field of
``GinRummyConfig`` (bad values or combinations raise ``ValueError`` naming the option):

| option                        | default   | meaning                                         |
|-------------------------------|-----------|-------------------------------------------------|
| knock_limit                   | 10        | highest deadwood allowed for a knock            |
| gin_bonus                     | 20        | bonus for gin                                   |
| undercut_bonus                | 10        | bonus for undercutting the knocker              |
| box_bonus                     | 20        | points per box at the end of a match            |
| game_bonus                    | 100       | bonus to the match winner                       |
| shutout                       | bonus_200 | or double_total (winner's total doubled)        |
| target                        | 100       | a match ends when a player's points reach it    |
| next_dealer                   | loser     | or winner, alternate                            |
| eleven_card_deal              | False     | non-dealer 11 cards, no upcard, first a discard |
| allow_discard_of_drawn_upcard | False     | a card taken from the pile may be discarded     |
| fiftieth_card_action          | False     | last chance to take the 50th card to knock      |
| oklahoma                      | False     | upcard sets the knock limit, spade doubles      |
| oklahoma_ace_gin_only         | False     | Oklahoma: an ace upcard allows only gin         |
| oklahoma_extra_boxes          | False     | Oklahoma: extra boxes, undercut 1/2, gin 2/4    |
| episode                       | hand      | or match (hands until target)                   |
| reward                        | raw       | or normalized                                   |
| auto_meld                     | True      | environment arranges melds and lay-offs         |
| max_steps                     | None      | truncate after this many decisions              |
| max_pile_draws                | 50        | then every draw is from the stock (hands end)   |
| num_players                   | 2         | only 2 (3 and 4 players are planned)            |

``reset(seed=None, options={"deck": [...], "dealer": 0})``: ``deck`` is a stacked deck of all 52
cards, top card first (ids or text like ``"As"``, ``"Td"``), dealt one card at a time starting with
the non-dealer; ``dealer`` fixes the first dealer (otherwise drawn from the seeded stream). Without
a seed the game's stream continues, so repeated resets give new deals.

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

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from rummy_env.encodings import gin_rummy as E
from rummy_env.render.text import render_gin
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.rules.gin_rummy.game import GinRummyGame


def env(render_mode: str | None = None, **options: Any) -> AECEnv:
    """Gin Rummy with PettingZoo's standard wrappers (an illegal move ends the game, -1)."""
    e: AECEnv = raw_env(render_mode=render_mode, **options)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv):  # noqa: N801 - PettingZoo naming convention
    """Gin Rummy as a PettingZoo AEC environment (see the module docstring for the spec)."""

    metadata = {
        "render_modes": ["ansi", "human"],
        "name": "gin_rummy_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, render_mode: str | None = None, **options: Any) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.config = GinRummyConfig.from_kwargs(**options)
        self.game = GinRummyGame(self.config, 1)
        self.possible_agents = ["player_0", "player_1"]
        self.agents = self.possible_agents[:]
        self._agent_index = {a: i for i, a in enumerate(self.possible_agents)}
        n_obs = self.game.obs_size
        high = np.ones(n_obs, dtype=np.float32)
        for p in E.observation_pieces(self.config.auto_meld):
            high[p.offset : p.offset + p.size] = p.high
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, high, shape=(n_obs,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(self.game.num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {
            a: spaces.Discrete(self.game.num_actions) for a in self.possible_agents
        }
        self._reset_bookkeeping()

    def observation_space(self, agent: str) -> spaces.Space:
        """Observation space of an agent."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """Action space of an agent."""
        return self.action_spaces[agent]

    @property
    def state_record(self) -> np.void:
        """The full game record (referee's view, hidden cards included) - for tests and tools."""
        return self.game.states[0]

    def _reset_bookkeeping(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new episode; ``options`` may hold ``deck`` (stacked, top first) and ``dealer``."""
        options = dict(options or {})
        deck = options.pop("deck", None)
        dealer = options.pop("dealer", None)
        if options:
            # PettingZoo's api_test passes arbitrary options, so unknown ones only warn
            warnings.warn(
                f"ignoring unknown reset option(s) {sorted(options)}; valid: deck, dealer",
                stacklevel=2,
            )
        self.game.reset(seed=seed, dealers=[dealer], decks=[deck], write_obs=False)
        self._reset_bookkeeping()
        self._hands_played = 0
        self.agent_selection = self.possible_agents[int(self.game.states["cur"][0])]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Observation and action mask of ``agent`` (fresh arrays)."""
        p = self._agent_index[agent]
        if agent == self.agent_selection:
            mask = self.game.action_mask(0)  # all zeros once the episode is over
        else:
            mask = np.zeros(self.game.num_actions, dtype=np.int8)
        return {"observation": self.game.observe(0, p), "action_mask": mask}

    def step(self, action: int) -> None:
        """Play ``action`` for the agent to act; illegal actions raise ``ValueError``."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        try:
            a = int(action)
        except (TypeError, ValueError):
            raise ValueError(f"action must be an integer id, got {action!r}") from None
        if not self.game.is_legal(0, a):
            raise ValueError(self.game.explain_illegal(0, a))
        done, trunc, cur, hands, r0, r1 = self.game.step_one(0, a)
        self._cumulative_rewards[agent] = 0.0
        p0, p1 = self.possible_agents
        self.rewards[p0] = float(r0)
        self.rewards[p1] = float(r1)
        if done or hands > self._hands_played:
            rec = self.game.states[0]
            for i, ag in enumerate(self.agents):
                self.infos[ag] = self._final_info(rec, i) if done else self._hand_info(rec, i)
            if done:
                for ag in self.agents:
                    self.terminations[ag] = not trunc
                    self.truncations[ag] = bool(trunc)
        self._hands_played = hands
        self.agent_selection = self.possible_agents[cur]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    @staticmethod
    def _hand_info(rec: np.void, i: int) -> dict[str, Any]:
        return {
            "outcome": E.OUTCOME_NAMES[int(rec["outcome"])],
            "hand_points": int(rec["hand_points"][i]),
            "deadwood": int(rec["deadwood"][i]),
            "hands_played": int(rec["hands_played"]),
        }

    def _final_info(self, rec: np.void, i: int) -> dict[str, Any]:
        info = self._hand_info(rec, i)
        info["score"] = int(rec["scores"][i])
        if self.config.episode == "match":
            info["totals"] = int(rec["totals"][i])
        return info

    def sample_worlds(
        self, agent: str, n: int, seed: int | np.random.Generator | None = None
    ) -> GinRummyGame:
        """``n`` complete game states consistent with everything ``agent`` can see now (hidden
        cards dealt anew), as a batched ``GinRummyGame`` to continue playing from (search,
        rollouts). Never reveals the real hidden cards.
        """
        return self.game.sample_worlds(0, self._agent_index[agent], n, seed)

    def render(self) -> str | None:
        """Text of the table (``ansi`` returns it, ``human`` prints it)."""
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode")
            return None
        text = render_gin(self.game.states[0], self.possible_agents)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""
