"""Adapters to reinforcement-learning frameworks, and a framework-free evaluation of a policy.

- :mod:`rummy_agents.integrations.rllib`: the games as an RLlib ``MultiAgentEnv`` (new API
  stack) whose observations carry the action mask the way RLlib's action-masking RL module
  reads it (``{"observations": ..., "action_mask": ...}``); needs the ``rllib`` extra.
- :mod:`rummy_agents.integrations.tianshou`: :class:`~rummy_env.wrappers.RummySingleAgentEnv`
  with the mask in the observation (``{"obs": ..., "mask": ...}``), the form Tianshou's
  discrete policies read; the wrapper itself needs only Gymnasium.
- :mod:`rummy_agents.integrations.openspiel`: the games as OpenSpiel Python games
  (``rummy_env_gin_rummy``, ``rummy_env_five_hundred_rum``, ``rummy_env_rummy51``, registered
  with ``pyspiel`` on import), ``as_bot`` and ``ismcts_bot``; needs the ``openspiel`` extra.
- Stable-Baselines3 needs no adapter: sb3-contrib's ``MaskablePPO`` reads
  ``RummySingleAgentEnv.action_masks()`` as it is.
- :func:`evaluate` plays any ``policy(observation, action_mask) -> action`` against fixed
  opponents and counts wins, losses, draws and truncated episodes (:func:`episode_outcome`
  decides each from the env's final infos); :func:`evaluation_line` prints the counts as
  the training examples in ``examples/`` do.

Nothing here is imported by ``rummy_env`` or by ``import rummy_agents``: a framework is loaded
only when its module is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

MaskedPolicy = Callable[[np.ndarray, np.ndarray], int]
"""``policy(observation_vector, action_mask) -> action``: what :func:`evaluate` plays."""

OUTCOMES = ("win", "loss", "draw", "truncated")
"""The learner's outcomes of an episode, as :func:`episode_outcome` names them."""

COUNT_KEYS = {"win": "wins", "loss": "losses", "draw": "draws", "truncated": "truncated"}
"""The key of :func:`evaluate`'s result that counts each outcome."""

GAMES = ("gin_rummy", "five_hundred_rum", "rummy51")


def _final(infos: Mapping[str, Mapping[str, Any]], seat: str, key: str) -> int:
    """``infos[seat][key]``, or a ``ValueError`` saying the episode is not over."""
    try:
        return int(infos[seat][key])
    except KeyError:
        raise ValueError(
            f"infos[{seat!r}] has no {key!r}: the episode is not over (keys: {sorted(infos[seat])})"
        ) from None


def seat_results(game: str, infos: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """Each seat's final result in a finished episode, read from the game's final infos;
    higher is better.

    - A ``winner`` (500 Rum ``episode="game"``, Rummy 51 ``episode="match"``): 1 for that seat,
      0 for the others (in Rummy 51 an earlier eliminated player can have fewer penalty points
      than the winner; with ``must_go_out_to_win`` the 500 Rum winner need not lead).
    - Gin Rummy: the ``settlement`` with 3 and 4 players (the zero-sum payoff), the match
      ``totals`` with 2 players and ``episode="match"``, else the hand's ``score``.
    - 500 Rum: the points (``score``, negative allowed).
    - Rummy 51: minus the penalty points (``penalty_total``: fewer is better).

    Args:
        game: the game's name (``"gin_rummy"``, ``"five_hundred_rum"`` or ``"rummy51"``).
        infos: the AEC env's ``infos`` at the end of the episode (every seat's, in seat order).

    Raises:
        ValueError: for an unknown game, no seats, or infos of an episode that is not over.
    """
    if game not in GAMES:
        raise ValueError(f"game must be one of {GAMES}, got {game!r}")
    seats = list(infos)
    if not seats:
        raise ValueError("infos must hold every seat's info, got none")
    winner = infos[seats[0]].get("winner", -1)
    if winner is not None and int(winner) >= 0:
        return {seat: int(k == int(winner)) for k, seat in enumerate(seats)}
    if game == "rummy51":
        return {seat: -_final(infos, seat, "penalty_total") for seat in seats}
    if game == "gin_rummy" and "settlement" in infos[seats[0]]:
        key = "settlement"
    elif game == "gin_rummy" and "totals" in infos[seats[0]]:
        key = "totals"
    else:
        key = "score"
    return {seat: _final(infos, seat, key) for seat in seats}


def outcome_from_infos(game: str, infos: Mapping[str, Mapping[str, Any]], learner: str) -> str:
    """``"win"``, ``"loss"`` or ``"draw"`` for seat ``learner`` of a finished episode.

    A win is a result (:func:`seat_results`) above every rival seat's, a draw a tie for the
    best (a Gin Rummy dead hand: nobody scored), a loss anything else. The rivals are the other
    seats, except in 4-player Gin Rummy, a partnership game, where they are the other team
    (``player_0`` and ``player_2`` play ``player_1`` and ``player_3``; partners share a result).

    Raises:
        ValueError: for an unknown game or learner, or infos of an episode that is not over.
    """
    results = seat_results(game, infos)
    seats = list(results)
    if learner not in results:
        raise ValueError(f"learner must be one of the seats {seats}, got {learner!r}")
    me = seats.index(learner)
    teams = game == "gin_rummy" and len(seats) == 4
    rivals = [s for k, s in enumerate(seats) if (k % 2 != me % 2 if teams else k != me)]
    mine, best = results[learner], max(results[s] for s in rivals)
    return "win" if mine > best else "loss" if mine < best else "draw"


def episode_outcome(env: Any) -> str:
    """The learner's outcome of ``env``'s finished episode: one of :data:`OUTCOMES`.

    ``"truncated"`` when the ``max_steps`` option cut the episode (nobody won it), else
    :func:`outcome_from_infos` of the game's final infos.

    Args:
        env: a :class:`~rummy_env.wrappers.RummySingleAgentEnv` whose episode is over.

    Raises:
        TypeError: if ``env`` is not a ``RummySingleAgentEnv``.
        ValueError: if its episode is not over.
    """
    from rummy_env.wrappers import RummySingleAgentEnv

    if not isinstance(env, RummySingleAgentEnv):
        raise TypeError(f"env must be a RummySingleAgentEnv, got {type(env).__name__}")
    aec, learner = env.aec, env.learner
    if aec.truncations.get(learner, False):
        return "truncated"
    if not aec.terminations.get(learner, False):
        raise ValueError("env's episode is not over: step it until terminated or truncated")
    return outcome_from_infos(env.game, aec.infos, learner)


def evaluate(
    policy: MaskedPolicy,
    game: str = "gin_rummy",
    opponents: Any = None,
    episodes: int = 10,
    seed: int = 0,
    **options: Any,
) -> dict[str, float]:
    """Play ``episodes`` episodes of ``policy`` against fixed opponents; a framework-free score.

    The policy plays one seat of :class:`~rummy_env.wrappers.RummySingleAgentEnv` (the seat is
    drawn at every reset, so it plays every seat, unless ``learner_seat`` is among ``options``),
    the other seats are ``opponents`` (``None``: uniformly random legal actions; or an agent
    factory such as ``rummy_agents.agent_spec("simple")``).

    Each episode counts once (:func:`episode_outcome`): a **win** when the policy's result is
    above every other seat's, read from the env's final infos (points in Gin Rummy and 500 Rum,
    the match totals or settlement where the game has them; fewer penalty points in Rummy 51; the
    ``winner`` of a 500 Rum game or a Rummy 51 match; in 4-player Gin the other team's seats),
    a **draw** on a tie for the best (a Gin dead hand), a **loss** otherwise, and
    **truncated** when the ``max_steps`` option cut it. (Earlier versions counted a positive
    return as a win, which reads right only for zero-sum rewards: random play against random
    play at 500 Rum read 98% "wins", and a Rummy 51 player who went out read as a draw.)

    Args:
        policy: ``policy(observation, action_mask) -> action``; it must return a legal action.
        game: the game's name.
        opponents: as ``RummySingleAgentEnv``'s ``opponents``.
        episodes: number of episodes (>= 0), reset with seeds ``seed``, ``seed + 1``, ...
        seed: the first episode's seed.
        **options: the game's rule options (and ``RummySingleAgentEnv``'s ``learner_seat``).

    Returns:
        ``{"episodes", "wins", "losses", "draws", "truncated", "win_rate", "loss_rate",
        "mean_return"}``: the counts (integers; the four outcomes add up to ``episodes``), the
        shares of wins and losses among all episodes and the mean of the policy's returns (0
        for no episodes).

    Raises:
        TypeError: if ``policy`` is not callable, ``episodes`` or ``seed`` not an integer.
        ValueError: for a negative ``episodes``, and as ``RummySingleAgentEnv`` for a bad game,
            opponent or option.
    """
    from rummy_env.core.validate import check_int
    from rummy_env.wrappers import RummySingleAgentEnv

    if not callable(policy):
        raise TypeError(
            f"policy must be callable as policy(observation, action_mask) -> action, got "
            f"{type(policy).__name__}"
        )
    episodes = check_int("episodes", episodes, 0)
    seed = check_int("seed", seed)
    env = RummySingleAgentEnv(game, opponents=opponents, illegal_action="raise", **options)
    counts = dict.fromkeys(COUNT_KEYS.values(), 0)
    total = 0.0
    for k in range(episodes):
        obs, _ = env.reset(seed=seed + k)
        done = False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(int(policy(obs, env.action_masks())))
            total += float(reward)
            done = terminated or truncated
        counts[COUNT_KEYS[episode_outcome(env)]] += 1
    n = max(episodes, 1)
    return {
        "episodes": episodes,
        **counts,
        "win_rate": counts["wins"] / n,
        "loss_rate": counts["losses"] / n,
        "mean_return": total / n,
    }


def evaluation_line(label: str, result: Mapping[str, Any], setting: str, opponent: str) -> str:
    """One printed line of :func:`evaluate`'s counts, as the training examples print them.

    ``evaluation <label>: <n> episodes of <setting> against <opponent>: <w> wins, <l> losses,
    <d> draws[, <t> truncated] (win rate <r>%, mean return <m>)``; the truncated count is shown
    only when there are some.

    Args:
        label: what was evaluated (``"before training"``).
        result: :func:`evaluate`'s result.
        setting: the game and its options, as words.
        opponent: the opponents' name (one word).
    """
    episodes = int(result["episodes"])
    truncated = f", {result['truncated']} truncated" if result["truncated"] else ""
    return (
        f"evaluation {label}: {episodes} episodes of {setting} against {opponent}: "
        f"{result['wins']} wins, {result['losses']} losses, {result['draws']} draws{truncated} "
        f"(win rate {100 * result['wins'] / max(episodes, 1):.1f}%, "
        f"mean return {result['mean_return']:.3f})"
    )


__all__ = [
    "OUTCOMES",
    "MaskedPolicy",
    "episode_outcome",
    "evaluate",
    "evaluation_line",
    "outcome_from_infos",
    "seat_results",
]
