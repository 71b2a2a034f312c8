"""Duplicate deals played as one batch: the arena's games of a work item stepped together over
a ``BatchedGame``, with the same results as :func:`rummy_agents.arena.play.play_deal` game by
game.

The games of a chunk of deals (both legs of each) live in one batched game, dealt as the AEC
env deals them (game ``2k + leg`` reset with the deal's seed). Then, round after round, every
game still playing makes one move, and the moves of each agent are decided together:

- a **compiled** agent (one that offers ``compiled_policy(game)``: Gin Rummy's ``novice``,
  ``simple``, ``planner``, the joker games' ``greedy`` and their variants; and ``random``)
  decides all its games in one compiled call (:func:`decide_rows`), each seat drawing its ties
  from its own generator, seeded as the agent built for that seat would seed it
  (``default_rng(seed)``, held as a state array: :mod:`rummy_agents.pcg64`);
- a **learned** agent (``ppo`` with its numpy network, deterministic) scores all its games in
  one forward pass. A matrix product over many rows may round differently from the one-row
  product :meth:`PPOAgent.act` computes, so a row whose two best legal logits lie within
  :data:`TIE_TOLERANCE` of each other is decided again by ``act`` alone: every move is the
  one the game-by-game arena makes (float32 rounding is about 1e-6 of a logit);
- then every move is applied in one compiled call (:func:`apply_rows`), which also adds each
  seat's rewards, counts decisions and writes the next player's observation.

Anything else (search agents, SB3 models, stochastic ``ppo``, 3- and 4-player Gin Rummy's
tables, game records) is played game by game, as is any game that reaches the decision cap or
whose compiled decision is left to the agent's Python reference (which the env's observations
never cause): such a game is replayed from its deal by ``play_game``, so its record is exactly
the game-by-game one, errors included.

``tests/test_arena_batch.py`` compares both ways over thousands of deals of every game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rummy_agents.arena.play import (
    check_same_deal,
    finished_game,
    leg_record,
    play_game,
    record_fingerprint,
    seat_pattern,
    seat_slot,
)
from rummy_agents.gin_rules_kernels import FALLBACK
from rummy_agents.opponent_loop import policy_decide, policy_scratch
from rummy_agents.pcg64 import STATE_SIZE, seed_state
from rummy_agents.ppo_agent import MASKED_LOGIT, PPOAgent
from rummy_agents.random_agent import RandomAgent
from rummy_env.core.batch import apply_action, legal_mask, new_work, settle, write_obs
from rummy_env.core.jit import kernel

ENDED = -1
"""``turn`` of a game whose episode is over."""
CAPPED = -2
"""``turn`` of a game that reached the decision cap (replayed game by game)."""
REDO = -3
"""``turn`` of a game a compiled decision could not play (replayed game by game)."""
NOT_LEGAL = -2
""":func:`decide_rows`' action for a decision its mask forbids."""

TIE_TOLERANCE = 1e-3
"""A batched ``ppo`` row whose best two legal logits differ by at most this much (times the
larger of 1 and the best logit's size) is decided again one row at a time."""


@kernel
def decide_rows(policy, obs, masks, na, rows, seats, gens, acts):
    """The moves of games ``rows`` under a compiled ``policy``
    (``rummy_agents.opponent_loop.policy_decide``), seat ``seats[j]`` of game ``rows[j]``
    drawing its ties from ``gens[rows[j], seats[j]]``; into ``acts``: the action,
    ``FALLBACK`` for the Python reference, or ``NOT_LEGAL``.
    """
    scratch = policy_scratch(policy, na)
    for j in range(rows.shape[0]):
        i = rows[j]
        a = policy_decide(policy, obs, masks, i, na, gens[i, seats[j]], scratch)
        if a != FALLBACK and (a < 0 or a >= na or masks[i, a] != 1):
            a = NOT_LEGAL
        acts[j] = a


@kernel
def apply_rows(states, cfg, tables, masks, obs, rows, acts, who, max_decisions, returns,
               decisions, turn, seat):  # fmt: skip
    """Apply legal move ``acts[j]`` in game ``rows[j]`` (none where ``acts[j] < 0``: the
    game's first look) as the AEC env steps (``step_single``, then ``settle_single`` for a
    transition left to ``settle``), add every seat's reward to ``returns`` (float64, as the
    arena sums the env's float32 rewards), count the decision, then write the game's next
    ``turn``: ``ENDED``, ``CAPPED``, or the agent to act (``who[i, seat]``, 0 or 1), whose
    ``seat`` and observation (row ``i`` of ``obs``) are written.
    """
    work = new_work(states, cfg)
    p_n = returns.shape[1]
    for j in range(rows.shape[0]):
        i = rows[j]
        rec = states[i]
        a = acts[j]
        if a >= 0:
            if apply_action(rec, cfg, tables, a, masks[i], work):
                settle(rec, cfg, tables, work)
            legal_mask(rec, cfg, tables, masks[i], work)
            decisions[i] += 1
            for q in range(p_n):
                returns[i, q] += np.float64(rec.rewards[q])
        if rec.done:
            turn[i] = ENDED
        elif decisions[i] >= max_decisions:
            turn[i] = CAPPED
        else:
            q = rec.cur
            seat[i] = q
            write_obs(rec, cfg, q, obs[i])
            turn[i] = who[i, q]


@kernel
def seed_gens(seeds, gens):
    """``gens[i, q]`` = the state of ``default_rng(seeds[i, q])`` (a seed < 0: left as is)."""
    for i in range(seeds.shape[0]):
        for q in range(seeds.shape[1]):
            if seeds[i, q] >= 0:
                seed_state(seeds[i, q], gens[i, q])


class _Compiled:
    """An agent whose moves :func:`decide_rows` makes."""

    def __init__(self, params: tuple[Any, ...]) -> None:
        self.params = params

    def decide(self, b: _Batch, rows: np.ndarray) -> np.ndarray:
        acts = np.empty(rows.shape[0], np.int64)
        decide_rows(self.params, b.obs, b.game.masks, b.na, rows, b.seat[rows], b.gens, acts)
        return acts


class _Learned:
    """A deterministic numpy ``ppo``: one forward pass for all its games."""

    def __init__(self, agent: PPOAgent) -> None:
        self.agent = agent

    def decide(self, b: _Batch, rows: np.ndarray) -> np.ndarray:
        obs, masks = b.obs[rows], b.game.masks[rows, : b.na]
        logits = self.agent.logits(obs, masks)
        acts = logits.argmax(1).astype(np.int64)
        r = np.arange(rows.shape[0])
        top = logits[r, acts].astype(np.float64)
        logits[r, acts] = -np.inf
        second = logits.max(1).astype(np.float64)
        close = (second > MASKED_LOGIT) & (top - second <= TIE_TOLERANCE * np.maximum(1, abs(top)))
        for j in np.flatnonzero(close):  # as the game-by-game arena decides it
            acts[j] = self.agent.act({"observation": obs[j].copy(), "action_mask": masks[j].copy()})
        return acts


def batch_agent(agent: Any, game: Any) -> _Compiled | _Learned | None:
    """How the batch plays ``agent`` (built by the arena for one seat) in ``game`` (a
    ``BatchedGame``): compiled, learned, or None (game by game).

    Compiled agents must seed nothing but ``default_rng(seed)`` (``rng_from_seed``, or
    ``RandomAgent``), so that a state array seeded from each seat's seed replaces the agent.
    """
    if type(agent) is RandomAgent:
        return _Compiled(())
    if type(agent) is PPOAgent:
        return _Learned(agent) if agent.deterministic and not agent.sb3 else None
    offer = getattr(agent, "compiled_policy", None)
    if offer is None or not getattr(agent, "rng_from_seed", False):
        return None
    policy = offer(game)
    return None if policy is None else _Compiled(tuple(policy.params))


class _Batch:
    """The arrays of one batch of games."""

    def __init__(self, env: Any, n: int) -> None:
        self.game = type(env.game)(env.game.config, n)
        self.na = int(self.game.num_actions)
        p = self.game.num_players
        self.obs = np.zeros((n, self.game.obs_size), np.float32)
        self.gens = np.zeros((n, p, STATE_SIZE), np.uint64)
        self.returns = np.zeros((n, p), np.float64)
        self.decisions = np.zeros(n, np.int64)
        self.turn = np.zeros(n, np.int64)
        self.seat = np.zeros(n, np.int64)
        self.who = np.zeros((n, p), np.int64)


def _seed_of(agent_seeds: Sequence[Sequence[int]], n: int, leg: int, s: int) -> int:
    seed = int(agent_seeds[leg][seat_slot(n, leg, s)])
    if not 0 <= seed < 2**32:
        raise ValueError(f"agent seed {seed} outside [0, 2**32)")
    return seed


def play_deals(
    env: Any,
    make: Callable[[str, int], Any],
    names: tuple[str, str],
    deal_seeds: Sequence[int],
    agent_seeds: Sequence[Sequence[Sequence[int]]],
    max_decisions: int,
) -> list[list[dict[str, Any]]] | None:
    """:func:`rummy_agents.arena.play.play_deal` for several deals at once, as a batch (module
    docstring); None where the batch cannot play these agents or options (the caller plays
    game by game).

    Args:
        env: the arena's raw AEC env (its game's options; its state is not touched).
        make: ``make(name, seed) -> agent``.
        names: agents A and B.
        deal_seeds: one reset seed per deal.
        agent_seeds: ``agent_seeds[d][leg][slot]``, as ``play_deal`` takes them per deal.
        max_decisions: decision cap per game.

    Returns:
        For each deal, the two records ``play_deal`` returns.

    Raises:
        RuntimeError: if the two legs of a deal were not dealt the same cards, or an agent
            chose an action its mask forbids (raised by the game replayed game by game).
    """
    n = len(env.possible_agents)
    if n != 2 and str(env.metadata.get("name", "")).startswith("gin_rummy"):
        return None  # 3- and 4-player Gin Rummy: each seat plays a 2-player hand at a table
    d = len(deal_seeds)
    if d == 0:
        return []
    first = [make(names[k], 0) for k in (0, 1)]
    a_player, b_player = (batch_agent(a, env.game) for a in first)
    if a_player is None or b_player is None:
        return None
    players = (a_player, b_player)
    b = _Batch(env, 2 * d)
    seeds = np.full((2 * d, n), -1, np.int64)
    for k in range(d):
        for leg in (0, 1):
            pattern = seat_pattern(n, leg)
            i = 2 * k + leg
            b.who[i] = pattern
            for s in range(n):
                seeds[i, s] = _seed_of(agent_seeds[k], n, leg, s)
    seed_gens(seeds, b.gens)
    b.game.reset(seed=[int(s) for s in deal_seeds for _ in (0, 1)], write_obs=False)
    prints = [record_fingerprint(b.game.states[i]) for i in range(2 * d)]
    every = np.arange(2 * d, dtype=np.int64)
    cfg, tables = b.game.cfg, b.game.tables
    apply_rows(b.game.states, cfg, tables, b.game.masks, b.obs, every,
               np.full(2 * d, -1, np.int64), b.who, max_decisions, b.returns, b.decisions,
               b.turn, b.seat)  # fmt: skip
    while True:
        moving, moves = [], []
        for k in (0, 1):
            rows = np.flatnonzero(b.turn == k)
            if rows.size:
                acts = players[k].decide(b, rows)
                bad = acts < 0
                if bad.any():
                    b.turn[rows[bad]] = REDO
                    rows, acts = rows[~bad], acts[~bad]
                moving.append(rows)
                moves.append(acts)
        if not moving:
            break
        rows = np.concatenate(moving)
        if rows.size == 0:
            continue
        apply_rows(b.game.states, cfg, tables, b.game.masks, b.obs, rows, np.concatenate(moves),
                   b.who, max_decisions, b.returns, b.decisions, b.turn, b.seat)  # fmt: skip
    out = []
    for k in range(d):
        recs = []
        for leg in (0, 1):
            i = 2 * k + leg
            if b.turn[i] == ENDED:
                g = _ended_game(env, b, i, prints[i])
            else:  # replayed as the game-by-game arena plays it
                pattern = seat_pattern(n, leg)
                seats = [make(names[pattern[s]], int(seeds[i, s])) for s in range(n)]
                g = play_game(env, seats, int(deal_seeds[k]), max_decisions)
            recs.append(leg_record(g, leg))
        check_same_deal(recs, int(deal_seeds[k]))
        out.append(recs)
    return out


def compile_part(env: Any, make: Callable[[str, int], Any], part: str) -> None:
    """Compile (or load from numba's cache) one part of what :func:`play_deals` runs on
    ``env``'s game: ``"game"`` (the deal and :func:`apply_rows`) or ``"agent:<spec>"``
    (the agent's :func:`decide_rows`; nothing for an agent the batch does not compile).

    The arena's workers start with the same empty cache on a first run; each compiling a
    different part at the same time, then loading the others' from the cache, takes about
    the longest part instead of their sum (``rummy_agents.arena.runner.run_arena``).
    """
    b = _Batch(env, 1)
    if part == "game":
        b.game.reset(seed=[0], write_obs=False)
        apply_rows(b.game.states, b.game.cfg, b.game.tables, b.game.masks, b.obs,
                   np.zeros(1, np.int64), np.full(1, -1, np.int64), b.who, 1, b.returns,
                   b.decisions, b.turn, b.seat)  # fmt: skip
        return
    player = batch_agent(make(part.removeprefix("agent:"), 0), env.game)
    if isinstance(player, _Compiled):  # no rows: compiled for the types, nothing decided
        player.decide(b, np.zeros(0, np.int64))


def _ended_game(env: Any, b: _Batch, i: int, fingerprint: tuple[str, int]) -> dict[str, Any]:
    """:func:`play_game`'s result for batch game ``i``, whose episode is over."""
    rec = b.game.states[i]
    n = b.returns.shape[1]
    infos = [env._hand_info(rec, q, True) for q in range(n)]
    returns = [float(x) for x in b.returns[i]]
    return finished_game(returns, infos, int(b.decisions[i]), bool(rec["truncated"]), *fingerprint)


__all__ = ["apply_rows", "batch_agent", "compile_part", "decide_rows", "play_deals", "seed_gens"]
