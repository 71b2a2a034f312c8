"""The single-agent vector env's bookkeeping, compiled: a move in one game of
:class:`rummy_env.wrappers.RummySingleAgentVectorEnv` and what the env records about it.

:func:`advance_game` applies a legal move (the learner's or an opponent's) and does the env's
part: it adds the learner's reward of its own episode, records the end of that episode (the
learner's ``terminated``/``truncated``, its final observation, the engine's finished-episode
integers and the episode's learner seat), deals the game anew in the same call
(``AutoresetMode.SAME_STEP``) with its new learner seat drawn from the env's per-game stream
(``core.rng.randint_at``: ``randint_rows``'s draw) or fixed, then writes the mask and the
observation of the player to act (an opponent's only when asked: a compiled opponent that
reads the game record needs none). :func:`advance_rows` does it for a list of games (the env's
rounds with Python opponents); ``rummy_agents.opponent_loop`` calls :func:`advance_game` from
the loop that plays the compiled rule opponents.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from rummy_env.core.batch import (
    apply_action,
    final_points,
    legal_mask,
    new_work,
    reset_episode,
    settle,
    write_final_extra,
    write_obs,
)
from rummy_env.core.jit import kernel
from rummy_env.core.rng import randint_at


@kernel(counted=False)
def advance_game(states, i, a, cfg, tables, masks, obs, work, seat, acted, streams, fixed_seat,
                 rewards, term, trunc, final_obs, final_info, final_seat, started,
                 opp_obs):  # fmt: skip
    """Apply legal action ``a`` in game ``i`` and do the env's bookkeeping (module docstring).

    The arrays: the game's batch (``states``, ``cfg``, ``tables``, ``masks``, ``work``); ``obs``
    (N, O) float32, whose row ``i`` receives the observation of the player to act; the
    learner's ``seat`` and whether it ``acted`` in its episode yet; the env's per-game
    ``streams`` (uint64) and ``fixed_seat`` (a seat, or -1: drawn); this env step's learner
    ``rewards`` (float64, added to); the ended learner episodes' ``term``, ``trunc``,
    ``final_obs``, ``final_info`` (finished-episode integers) and ``final_seat``; ``started``
    (bool), set where a new episode was dealt; ``opp_obs``: write the observation when an
    opponent is to act too (else row ``i`` is written only for the learner).
    """
    rec = states[i]
    if apply_action(rec, cfg, tables, a, masks[i], work):
        settle(rec, cfg, tables, work)
    s = seat[i]
    live = acted[i]
    if live:
        rewards[i] += np.float64(rec.rewards[s])
    if rec.done:
        p_n = rec.rewards.shape[0]
        if live:
            term[i] = rec.truncated == 0
            trunc[i] = rec.truncated != 0
            write_obs(rec, cfg, s, final_obs[i])
            row = final_info[i]
            for q in range(p_n):
                row[q] = final_points(rec, cfg, q)
            row[p_n] = rec.outcome
            row[p_n + 1] = rec.steps
            write_final_extra(rec, cfg, row[p_n + 2 :])
            final_seat[i] = s
        reset_episode(rec, cfg, tables, -1, True)
        seat[i] = fixed_seat if fixed_seat >= 0 else randint_at(streams, i, p_n)
        acted[i] = False
        started[i] = True
    legal_mask(rec, cfg, tables, masks[i], work)
    if opp_obs or rec.cur == seat[i]:
        write_obs(rec, cfg, rec.cur, obs[i])


@kernel
def advance_rows(states, cfg, tables, masks, obs, rows, actions, seat, acted, streams,
                 fixed_seat, rewards, term, trunc, final_obs, final_info, final_seat,
                 started):  # fmt: skip
    """:func:`advance_game` for games ``rows`` (distinct) with ``actions``, in order."""
    work = new_work(states, cfg)
    for j in range(rows.shape[0]):
        advance_game(states, rows[j], actions[j], cfg, tables, masks, obs, work, seat, acted,
                     streams, fixed_seat, rewards, term, trunc, final_obs, final_info,
                     final_seat, started, True)  # fmt: skip


@kernel(counted=False)
def mark_illegal(masks, actions, na, illegal):
    """Set ``illegal[i]`` where ``actions[i]`` is not a legal action of game ``i`` (outside
    ``0..na-1`` or its mask entry not 1), clear it elsewhere; returns the first such game, -1
    if none.
    """
    first = -1
    for i in range(actions.shape[0]):
        a = actions[i]
        bad = a < 0 or a >= na or masks[i, a] != 1
        illegal[i] = bad
        if bad and first < 0:
            first = i
    return first


@kernel(parallel=True)
def copy_masks(masks, na, out1, out2):
    """``masks[:, :na]`` into ``out1`` and ``out2`` on the numba threads, each copying the rows
    it takes: the (N, na) bool masks a vector env step hands out (``info["action_mask"]`` and
    the next ``action_masks()``), passed with ``masks`` as uint8 views. One pass on two
    threads took 31 us at 256 x 3,188 (Rummy 51), numpy's two copies 115 us.
    """
    for i in prange(masks.shape[0]):
        out1[i, :] = masks[i, :na]
        out2[i, :] = masks[i, :na]


__all__ = [
    "advance_game",
    "advance_rows",
    "copy_masks",
    "mark_illegal",
]
