"""A trained network improved by search at play time: :class:`PolicySearchAgent` (``ppo_search``).

The network proposes, rollouts decide. At each decision with a choice the network's own move
and its next ``root_k - 1`` moves by logit are each played in the same ``worlds`` sampled
determinizations (Gin's evidence belief, :func:`~rummy_agents.ismcts.gin.gin_belief_worlds`),
and every world is played to the end of the hand: the searching seat by the network itself,
the other seat by Gin's compiled rule policy (``opponent="rules"``, the default: a model of
rule-based opponents such as ``simple`` and ``planner``) or by the network too
(``opponent="network"``): policy rollouts, Tesauro and Galperin's "on-line policy improvement
using Monte-Carlo search". The network's move is kept unless another one's mean hand result
beats it by ``paired_z`` standard errors of the paired differences (``root="paired"`` of
:class:`~rummy_agents.ismcts.search.ISMCTSAgent`), so the search departs from the network only
where its rollouts say so with some confidence. A legal knock is played at once, the one
leaving the least deadwood (the published network also knocks whenever it can, though in about
6% of those decisions with another card); with ``knock="search"`` those decisions are searched
too, the network's knock against its best move that plays on.

Gin Rummy only (2-player hands; at a 3- or 4-player table the arena seats it through
:class:`~rummy_agents.table_seat.TableSeatAgent`, so it searches the 2-player hand it plays).
A Gin hand is short (about 12 decisions a seat), so a rollout costs about 20 batched network
calls; in the joker games a hand runs to hundreds of decisions, and this agent is not offered
there.

Example:
    >>> from rummy_env import gin_rummy_v0
    >>> from rummy_env.envs.view import SeatView
    >>> env = gin_rummy_v0.raw_env()
    >>> env.reset(seed=0)
    >>> agent = PolicySearchAgent(seed=0, worlds=8)
    >>> a = agent.act(env.observe(env.agent_selection), SeatView(env, env.agent_selection))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rummy_agents.ismcts.gin import GIN_BELIEF, GIN_HOOKS, gin_belief_worlds, gin_match_values
from rummy_agents.ismcts.hooks import GameHooks
from rummy_agents.ismcts.search import KNOCKS, ISMCTSAgent
from rummy_env.core import batch
from rummy_env.core.validate import ArgumentTypeError, check_choice, check_int
from rummy_env.encodings.gin_rummy import DISCARD_BASE, KNOCK_BASE

GAME = "gin_rummy"
OPPONENTS = ("network", "rules")
VALUES = ("hand", "match")


class PolicySearchAgent(ISMCTSAgent):
    """A trained network whose moves are checked by paired rollouts of the network.

    Args:
        seed: seed of the search (worlds sampled); the network plays deterministically.
        checkpoint: the network: a ``.pt`` checkpoint or ``.npz`` agent file of Gin Rummy;
            ``None``: the published Gin agent.
        game: the game (the arena passes it); only ``"gin_rummy"``.
        worlds: determinizations each candidate move is played in, per decision (at least 2).
        root_k: candidate moves compared: the network's move and its next ``root_k - 1`` by
            logit (at least 2).
        paired_z: standard errors of the paired differences by which a candidate must beat
            the network's move to be played instead (at least 0).
        opponent: who plays the other seat in the rollouts: ``"rules"`` (default: Gin's
            compiled rollout policy, the rules of ``simple``: take a discard that melds,
            discard the card leaving least deadwood, knock at once) or ``"network"`` (the
            network, as for its own seat).
        knock: ``"always"``: a legal knock is played at once, unsearched; ``"search"``: a
            decision where a knock is legal is searched like the others (the network's
            knock kept unless another candidate, such as playing on, beats it by
            ``paired_z`` standard errors).
        oversample: uniform worlds drawn per world kept by the opponent model
            (:class:`~rummy_agents.ismcts.gin.GinBelief`, at least 1): more gives the
            ``worlds`` more distinct opponent hands, each drawn nearer the model's weights.
        value: what a rollout is worth: ``"hand"`` (default), the hand's points (divided by
            the largest hand score); ``"match"``, in a 2-player match (``episode="match"``),
            the chance of winning the match from the scores the hand ends at, by an even
            match equity table (:func:`~rummy_agents.ismcts.gin.gin_match_equity`), as
            ``2 W - 1``: near the target a few sure points can be worth more than many
            likely ones. Outside a match ``"match"`` is the same as ``"hand"``.
        name: the agent's name in reports.

    Raises:
        ValueError: for another game, a checkpoint of another game, or a bad setting.
        TypeError: for a setting of the wrong type.
    """

    games = (GAME,)
    name = "ppo_search"

    def __init__(
        self,
        seed: int | None = None,
        checkpoint: str | Path | None = None,
        game: str = GAME,
        worlds: int = 128,
        root_k: int = 3,
        paired_z: float = 2.0,
        opponent: str = "rules",
        knock: str = "always",
        oversample: int = GIN_BELIEF.oversample,
        value: str = "hand",
        name: str | None = None,
    ) -> None:
        from rummy_agents.ppo_agent import PPOAgent

        if game != GAME:
            raise ValueError(f"game must be {GAME!r} (ppo_search plays Gin only), got {game!r}")
        worlds = check_int("worlds", worlds, 2)
        root_k = check_int("root_k", root_k, 2)
        if isinstance(paired_z, bool | np.bool_) or not isinstance(
            paired_z, int | float | np.integer | np.floating
        ):
            raise ArgumentTypeError(f"paired_z must be a number >= 0, got {paired_z!r}")
        if not 0.0 <= float(paired_z) < float("inf"):
            raise ValueError(f"paired_z must be a finite number >= 0, got {paired_z!r}")
        opponent = check_choice("opponent", opponent, OPPONENTS)
        knock = check_choice("knock", knock, KNOCKS)
        oversample = check_int("oversample", oversample, 1)
        value = check_choice("value", value, VALUES)
        super().__init__(
            iterations=worlds * root_k,
            batch_size=worlds * root_k,
            root="paired",
            root_k=root_k,
            paired_z=paired_z,
            max_depth=1,
            knock=knock,
            anchor=False,
            seed=seed,
            name=name or "ppo_search",
        )
        self.worlds = worlds
        self.opponent = opponent
        self.net = PPOAgent(seed=seed, checkpoint=checkpoint, game=game)
        """The network (:class:`~rummy_agents.ppo_agent.PPOAgent`), played deterministically."""
        self.net.deterministic = True
        if self.net.feature_set is None or self.net.sb3:
            raise ValueError(
                f"checkpoint {self.net.checkpoint!r}: ppo_search needs a network trained by "
                "experiments/ppo_selfplay.py (a .pt or .npz agent with its game recorded)"
            )
        self.oversample = oversample
        self.value = value
        self._end_scores: np.ndarray | None = None
        hooks: dict[str, Any] = {"prior": self._prior, "anchor": None}
        if oversample != GIN_BELIEF.oversample:
            belief = dataclasses.replace(GIN_BELIEF, oversample=oversample)
            hooks["belief"] = lambda view, n, rng: gin_belief_worlds(view, n, rng, belief)
        self._hooks = dataclasses.replace(GIN_HOOKS, **hooks)
        self.configure(self._hooks)  # iterations, root and root_k as given, before a search

    # -- the search's hooks ------------------------------------------------------------------
    def game_hooks(self, game: str) -> GameHooks:
        """Gin's hooks with the network's logits as the prior (candidate order); the rollouts
        are the network's (:meth:`_rollout`).
        """
        if game != GAME:
            raise ValueError(f"ppo_search plays {GAME} only, not {game!r}")
        return self._hooks

    def _anchor_move(self, observation: Mapping[str, Any], view: Any) -> int:
        """The network's move: the first candidate, kept unless the rollouts reject it."""
        return int(self.net.act(observation, view))

    def _prior(self, game: Any, i: int) -> np.ndarray:
        """The network's logits in world ``i`` (the candidates' order after its own move)."""
        obs = np.empty((1, game.obs_size), dtype=np.float32)
        batch.write_obs_at(game.states, game.cfg, i, int(game.states["cur"][i]), obs[0])
        logits = self.net.logits(obs, game.masks[i : i + 1, : game.num_actions])[0]
        logits = logits.astype(np.float64)
        if self.knock == "search":
            _play_on_second(logits, game.masks[i, : game.num_actions] == 1)
        return logits

    def _rollout(
        self, worlds: Any, active: np.ndarray, hands0: np.ndarray, hooks: GameHooks, seat: int
    ) -> np.ndarray:
        """Play the active worlds to the end of the hand together, the searching ``seat``
        moved by the network (its most probable legal action), the other by the network or
        the rules (``opponent``); returns (N, players) rewards.
        """
        n = worlds.num_games
        acc = np.zeros((n, worlds.num_players), dtype=np.float64)
        alive = active.copy()
        # value="match": the scores each world's hand ends at, kept as hands end (finished
        # worlds go on being stepped with the batch, into the next hand of the match)
        end = worlds.states["scores"].copy() if self.value == "match" else None
        self._end_scores = end
        obs = np.zeros((n, worlds.obs_size), dtype=np.float32)
        cur = worlds.states["cur"]
        for i in np.flatnonzero(alive):
            batch.write_obs_at(worlds.states, worlds.cfg, int(i), int(cur[i]), obs[i])
        for _ in range(self.max_rollout_steps):
            if not alive.any():
                break
            masks = worlds.masks[:, : worlds.num_actions]
            rows = np.flatnonzero(alive & masks.any(1))
            if self.opponent == "rules":  # Gin's compiled rule policy ("heuristic")
                actions = hooks.rollout_actions(worlds, "heuristic", 0.0)
                rows = rows[worlds.states["cur"][rows] == seat]
            else:
                actions = np.zeros(n, dtype=np.int64)  # finished worlds: any action
            if rows.size:
                actions[rows] = self.net.logits(obs[rows], masks[rows]).argmax(1)
            obs, rewards, term, trunc, _ = worlds.step(
                actions, autoreset=False, write_obs=True, check=False
            )
            acc[alive] += rewards[alive]
            over = alive & (term | trunc | (worlds.states["hands_played"] != hands0))
            if end is not None:
                end[over] = worlds.states["scores"][over]
            alive &= ~over
        return acc

    def _values(self, acc: np.ndarray, worlds: Any, scale: float) -> np.ndarray:
        """The hand's points (``value="hand"``) or, in a 2-player match, the match equity of
        the scores each world's hand ended at (``value="match"``).
        """
        end, self._end_scores = self._end_scores, None
        cfg = worlds.config
        if self.value != "match" or cfg.episode != "match" or worlds.num_players != 2:
            return super()._values(acc, worlds, scale)
        if end is None:  # every world's hand ended before a rollout: they stand at its end
            end = worlds.states["scores"]
        return gin_match_values(end, int(cfg.target))


def _play_on_second(logits: np.ndarray, legal: np.ndarray) -> None:
    """Where the best move by ``logits`` is a knock, raise the best legal move that plays on
    (a plain discard) to second place, so that a searched knock is weighed against not
    knocking rather than only against knocking with another card.
    """
    top = int(logits.argmax())
    if not KNOCK_BASE <= top < KNOCK_BASE + 52:
        return
    on = np.flatnonzero(legal[DISCARD_BASE : DISCARD_BASE + 52]) + DISCARD_BASE
    if on.size:
        best = int(on[logits[on].argmax()])
        second = np.partition(logits, -2)[-2]
        # just above the runner-up, never above the knock (nextafter stops at it)
        logits[best] = max(float(logits[best]), float(np.nextafter(second, logits[top])))


__all__ = ["PolicySearchAgent"]
