"""Playing duplicate deals: one deal, two games, seats exchanged.

A deal is a seed. Both games of a deal reset the env with that seed, so they see the same
shuffled deck and the same first dealer *seat* (for Gin Rummy: ``state_record["deck"]`` and
``["dealer"]`` are compared after each reset and recorded as ``deal_id``; a mismatch raises).
In game 0 agent A sits in seat 0; in game 1 the agents exchange seats, so each agent holds, in
one game or the other, exactly the cards the other agent held.

What is duplicated exactly:

- ``episode="hand"``: the whole deck order (both hands, the upcard, the stock order) and the
  dealer. The two games differ only by the agents' decisions.
- ``episode="match"``: the first hand as above. Later hands are shuffled from the game's own
  random stream, which no decision consumes, so hand ``h`` of both games is dealt from the same
  deck order whatever was played; the dealer of each later hand follows the rules (loser of the
  previous hand deals), so a seat gets the same cards in hand ``h`` of both games only if the
  dealer seat of hand ``h`` is the same in both games.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.base import SeatView

OUTCOME_UNKNOWN = "unknown"
OUTCOME_TRUNCATED = "truncated"


def make_env(game: str, options: dict[str, Any]) -> Any:
    """The raw AEC env of a game (``rummy_env.<game>_v0.raw_env(**options)``)."""
    try:
        mod = importlib.import_module(f"rummy_env.{game}_v0")
    except ImportError:
        raise ValueError(f"unknown game {game!r} (no module rummy_env.{game}_v0)") from None
    return mod.raw_env(**options)


def deal_fingerprint(env: Any) -> tuple[str, int]:
    """(hash of the dealt deck order, first dealer seat) of a freshly reset env; ("", -1) when
    the env exposes no ``state_record`` with a ``deck``.
    """
    rec = getattr(env.unwrapped, "state_record", None)
    try:
        deck = np.asarray(rec["deck"]).astype(np.int16).tobytes()
        dealer = int(rec["dealer"])
    except (TypeError, KeyError, ValueError, IndexError):
        return "", -1
    return hashlib.blake2b(deck + bytes([dealer & 0xFF]), digest_size=8).hexdigest(), dealer


def play_game(env: Any, agents: Sequence[Any], seed: int, max_decisions: int) -> dict[str, Any]:
    """Play one episode from ``env.reset(seed=seed)`` with ``agents[s]`` in seat ``s``.

    Args:
        env: a raw AEC env.
        agents: one agent per seat (``possible_agents`` order).
        seed: reset seed.
        max_decisions: stop (``truncated``) after this many decisions.

    Returns:
        dict: ``returns`` (per seat, summed rewards), ``infos`` (per seat, the last infos),
        ``outcome`` (of the last hand), ``hands``, ``decisions``, ``truncated``, ``deal_id``,
        ``dealer``.

    Raises:
        RuntimeError: if an agent chooses an action its mask forbids.
    """
    env.reset(seed=seed)
    deal_id, dealer = deal_fingerprint(env)
    names = list(env.possible_agents)
    views = {a: SeatView(env, a) for a in names}
    seat_agent = dict(zip(names, agents, strict=True))
    returns = dict.fromkeys(names, 0.0)
    decisions = 0
    truncated = False
    while True:
        agent = env.agent_selection
        if all(env.terminations[a] or env.truncations[a] for a in names):
            truncated = any(env.truncations[a] for a in names)
            break
        if decisions >= max_decisions:
            truncated = True
            break
        obs = env.observe(agent)
        a = int(seat_agent[agent].act(obs, views[agent]))
        if not (0 <= a < obs["action_mask"].shape[0]) or obs["action_mask"][a] != 1:
            raise RuntimeError(
                f"agent {getattr(seat_agent[agent], 'name', '?')} chose masked action {a}"
            )
        env.step(a)
        decisions += 1
        for n in names:
            returns[n] += float(env.rewards.get(n, 0.0))
    info = env.infos.get(names[0], {})
    outcome = OUTCOME_TRUNCATED if truncated else str(info.get("outcome", OUTCOME_UNKNOWN))
    return {
        "returns": [returns[n] for n in names],
        "infos": [dict(env.infos.get(n, {})) for n in names],
        "outcome": outcome,
        "hands": int(info.get("hands_played", 1)),
        "decisions": decisions,
        "truncated": truncated,
        "deal_id": deal_id,
        "dealer": dealer,
    }


def penalty_result(g: dict[str, Any], a_seat: int) -> tuple[float, int] | None:
    """A's ``(margin, result)`` in a game scored in penalties, where lower is better (the
    infos carry ``penalty_total``: Rummy 51); ``None`` for other games.

    The margin is B's penalty minus A's (the negated penalty difference, whatever the reward
    option); the result is +1 when A won (went out of the hand, or won the match), -1 when B
    did, 0 for a drawn hand (no winner) or a truncated game.
    """
    infos = g["infos"]
    if not all("penalty_total" in i for i in infos):
        return None
    b_seat = 1 - a_seat
    margin = float(infos[b_seat]["penalty_total"] - infos[a_seat]["penalty_total"])
    winner = infos[0].get("winner", infos[0].get("hand_winner", -1))
    result = 0 if g["truncated"] else (1 if winner == a_seat else (-1 if winner == b_seat else 0))
    return margin, result


def play_deal(
    env: Any,
    make: Any,
    names: tuple[str, str],
    deal_seed: int,
    agent_seeds: Sequence[Sequence[int]],
    max_decisions: int,
) -> list[dict[str, Any]]:
    """Play both games of a duplicate deal between agents ``names = (A, B)``.

    Args:
        env: a raw AEC env (reused).
        make: ``make(name, seed) -> agent``.
        names: the two agent names; A sits in seat 0 in leg 0 and in seat 1 in leg 1.
        deal_seed: the deal's reset seed (same for both legs).
        agent_seeds: ``agent_seeds[leg][k]`` seeds agent ``names[k]`` in that leg.
        max_decisions: decision cap per game.

    Returns:
        Two records (legs 0 and 1) with A's point of view: ``a_seat``, ``return_a``,
        ``return_b``, ``margin`` = (return_a - return_b) / 2, ``result`` (+1 A won, -1 B won,
        0 draw), and the fields of :func:`play_game`. Games scored in penalties take their
        margin and result from :func:`penalty_result`.

    Raises:
        RuntimeError: if the two legs were not dealt the same cards.
    """
    out = []
    for leg in (0, 1):
        a = make(names[0], int(agent_seeds[leg][0]))
        b = make(names[1], int(agent_seeds[leg][1]))
        seats = [a, b] if leg == 0 else [b, a]
        g = play_game(env, seats, deal_seed, max_decisions)
        a_seat = 0 if leg == 0 else 1
        ra, rb = g["returns"][a_seat], g["returns"][1 - a_seat]
        margin = (ra - rb) / 2.0
        result = 0 if g["truncated"] else (1 if margin > 0 else (-1 if margin < 0 else 0))
        pen = penalty_result(g, a_seat)
        if pen is not None:
            margin, result = pen
        rec = {
            "leg": leg,
            "a_seat": a_seat,
            "return_a": ra,
            "return_b": rb,
            "margin": margin,
            "result": result,
        }
        rec.update({k: g[k] for k in ("outcome", "hands", "decisions", "truncated")})
        rec.update({"deal_id": g["deal_id"], "dealer": g["dealer"]})
        out.append(rec)
    if (out[0]["deal_id"], out[0]["dealer"]) != (out[1]["deal_id"], out[1]["dealer"]):
        raise RuntimeError(f"duplicate deal {deal_seed}: the two legs were dealt different cards")
    return out


__all__ = ["deal_fingerprint", "make_env", "penalty_result", "play_deal", "play_game"]
