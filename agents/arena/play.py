"""Playing duplicate deals: one deal, two games, seats exchanged.

With more than two players the two agents alternate around the table (A, B, A, ... then B, A,
B, ...: :func:`seat_pattern`), so each dealt hand is again played once by each agent.

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import rummy_env
from rummy_agents.base import SeatView
from rummy_agents.table_seat import seat_at_tables
from rummy_env.game_records import GameRecorder

OUTCOME_UNKNOWN = "unknown"
OUTCOME_TRUNCATED = "truncated"


def make_env(game: str, options: dict[str, Any]) -> Any:
    """The raw AEC env of a game (``rummy_env.ENV_MODULES[game].raw_env(**options)``)."""
    if game not in rummy_env.ENV_MODULES:
        raise ValueError(f"unknown game {game!r}; known: {sorted(rummy_env.ENV_MODULES)}")
    return rummy_env.ENV_MODULES[game].raw_env(**options)


def probe_agent(game: str, options: dict[str, Any], spec: str) -> None:
    """One decision of agent ``spec`` on a fresh deal of ``game`` with these rule options, so
    that an agent that cannot play them (a net trained for another number of players) is
    refused before a game starts (``rummy-env play``, the browser app).

    Raises:
        Exception: whatever the agent raised; callers turn it into their own one-line error.
    """
    from rummy_agents.arena.registry import make_agent

    env = make_env(game, options)
    env.reset(seed=0)
    name = env.agent_selection
    view = SeatView(env, name)
    agent = make_agent(spec, 0, game)
    if view.plays_tables:
        agent = seat_at_tables(agent)
    agent.act(env.observe(name), view)


def deal_fingerprint(env: Any) -> tuple[str, int]:
    """(hash of the dealt deck order, first dealer seat) of a freshly reset env; ("", -1) when
    the env exposes no ``state_record`` with a ``deck``.
    """
    rec = getattr(env.unwrapped, "state_record", None)
    if rec is None:
        return "", -1
    return record_fingerprint(rec)


def record_fingerprint(rec: Any) -> tuple[str, int]:
    """:func:`deal_fingerprint` of a game's state record (``np.void``); ("", -1) for a record
    without a ``deck``.
    """
    try:
        if "boards" in rec.dtype.names:  # 3-, 4-player Gin Rummy: a deck per table
            deck = np.asarray(rec["boards"]["deck"]).astype(np.int16).tobytes()
            deck += np.asarray(rec["table_dealer"]).astype(np.int16).tobytes()
        else:
            deck = np.asarray(rec["deck"]).astype(np.int16).tobytes()
        dealer = int(rec["dealer"])
    except (TypeError, KeyError, ValueError, IndexError):
        return "", -1
    return hashlib.blake2b(deck + bytes([dealer & 0xFF]), digest_size=8).hexdigest(), dealer


def play_game(
    env: Any,
    agents: Sequence[Any],
    seed: int,
    max_decisions: int,
    record: Path | None = None,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Play one episode from ``env.reset(seed=seed)`` with ``agents[s]`` in seat ``s``.

    Args:
        env: a raw AEC env.
        agents: one agent per seat (``possible_agents`` order).
        seed: reset seed.
        max_decisions: stop (``truncated``) after this many decisions.
        record: write the game's record (``rummy_env.game_records``) to this file.
        labels: who plays each seat, for the record (default: the agents' ``name``).

    Returns:
        dict: ``returns`` (per seat, summed rewards), ``infos`` (per seat, the last infos),
        ``outcome`` (of the last hand), ``hands``, ``decisions``, ``truncated``, ``deal_id``,
        ``dealer``.

    Raises:
        RuntimeError: if an agent chooses an action its mask forbids.
    """
    names = list(env.possible_agents)
    recorder = None
    if record is not None:
        if labels is None:
            labels = [str(getattr(a, "name", type(a).__name__)) for a in agents]
        recorder = GameRecorder(env, dict(zip(names, labels, strict=True)))
        recorder.start(seed)
    env.reset(seed=seed)
    if recorder is not None:
        recorder.dealt()
    deal_id, dealer = deal_fingerprint(env)
    views = {a: SeatView(env, a) for a in names}
    if views[names[0]].plays_tables:
        # 3-, 4-player Gin Rummy: each agent plays the 2-player hand its seat sits in
        agents = [seat_at_tables(a) for a in agents]
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
        if recorder is not None:
            recorder.add(agent, a)
        env.step(a)
        decisions += 1
        for n in names:
            returns[n] += float(env.rewards.get(n, 0.0))
        if recorder is not None:
            recorder.rewards(env.rewards)
    if recorder is not None and record is not None:  # a recorder only with a record file
        capped = truncated and not any(env.truncations[a] for a in names)
        recorder.finish(stopped=capped).write(record)
    infos = [dict(env.infos.get(n, {})) for n in names]
    return finished_game([returns[n] for n in names], infos, decisions, truncated, deal_id, dealer)


def finished_game(
    returns: list[float],
    infos: list[dict[str, Any]],
    decisions: int,
    truncated: bool,
    deal_id: str,
    dealer: int,
) -> dict[str, Any]:
    """:func:`play_game`'s result dict of a finished game (the batched arena builds the same
    from its arrays): the outcome read from seat 0's last info, or ``truncated``.
    """
    info = infos[0] if infos else {}
    outcome = OUTCOME_TRUNCATED if truncated else str(info.get("outcome", OUTCOME_UNKNOWN))
    return {
        "returns": returns,
        "infos": infos,
        "outcome": outcome,
        "hands": int(info.get("hands_played", 1)),
        "decisions": decisions,
        "truncated": truncated,
        "deal_id": deal_id,
        "dealer": dealer,
    }


def seat_pattern(num_players: int, leg: int) -> list[int]:
    """Which agent sits in each seat in leg ``leg`` of a duplicate deal: 0 for A, 1 for B.

    The seats alternate A, B, A, ... in leg 0 and B, A, B, ... in leg 1, so over the two legs
    every seat, and so every dealt hand, is played once by A and once by B. With two players
    that is A in seat 0 and then in seat 1; with an odd number A holds one seat more than B in
    leg 0 and one fewer in leg 1.
    """
    return [(s + leg) % 2 for s in range(num_players)]


def seat_slot(num_players: int, leg: int, seat: int) -> int:
    """Index of the seed of the agent in ``seat``: ``k + 2 j`` for the ``j``-th seat of agent
    ``k`` (0: A, 1: B) in that leg, so two players use slots 0 and 1 (A's and B's).
    """
    return seat_pattern(num_players, leg)[seat] + 2 * (seat // 2)


def game_result(g: dict[str, Any], a_seats: Sequence[int]) -> tuple[float, float, float, int]:
    """A's ``(return_a, return_b, margin, result)`` in one game, with A in ``a_seats``.

    ``return_a``/``return_b`` are the mean return of A's and of B's seats. Games scored in
    penalties, where lower is better (the infos carry ``penalty_total``: Rummy 51), take the
    margin from the penalties: B's mean penalty minus A's (whatever the reward option), and the
    result from the hand's or match's winner (+1 if A's seat, -1 if B's, 0 for no winner).
    Other games: the margin is ``(return_a - return_b) / 2`` (for a zero-sum two-player game,
    A's return) and the seat with the highest return wins (0 on a tie between an A and a B
    seat). A truncated game has result 0.
    """
    a_seats = list(a_seats)
    b_seats = [s for s in range(len(g["returns"])) if s not in a_seats]
    rets = np.asarray(g["returns"], dtype=np.float64)
    ra, rb = float(rets[a_seats].mean()), float(rets[b_seats].mean())
    infos = g["infos"]
    if all("penalty_total" in i for i in infos):
        pen = np.array([i["penalty_total"] for i in infos], dtype=np.float64)
        margin = float(pen[b_seats].mean() - pen[a_seats].mean())
        winner = infos[0].get("winner", infos[0].get("hand_winner", -1))
    else:
        margin = (ra - rb) / 2.0
        top = np.flatnonzero(rets == rets.max())
        in_a = {int(s) in a_seats for s in top}
        winner = int(top[0]) if len(in_a) == 1 else -1
    if g["truncated"] or winner < 0:
        result = 0
    else:
        result = 1 if winner in a_seats else -1
    return ra, rb, margin, result


def play_deal(
    env: Any,
    make: Any,
    names: tuple[str, str],
    deal_seed: int,
    agent_seeds: Sequence[Sequence[int]],
    max_decisions: int,
    record: Path | None = None,
) -> list[dict[str, Any]]:
    """Play both games of a duplicate deal between agents ``names = (A, B)``.

    Args:
        env: a raw AEC env (reused), of any number of players.
        make: ``make(name, seed) -> agent``.
        names: the two agent names, seated by :func:`seat_pattern` (two players: A in seat 0
            in leg 0 and in seat 1 in leg 1). Every seat gets its own agent instance.
        deal_seed: the deal's reset seed (same for both legs).
        agent_seeds: ``agent_seeds[leg][slot]`` seeds the agent of the seat with that
            :func:`seat_slot` (two players: slot 0 is A, slot 1 is B).
        max_decisions: decision cap per game.
        record: write each game's record to ``<record>_leg<l>.jsonl`` (``None``: no records).

    Returns:
        Two records (legs 0 and 1) with A's point of view: ``players``, ``a_seat`` (A's first
        seat), ``a_seats`` (all of A's seats, space-separated), ``return_a``, ``return_b``,
        ``margin``, ``result`` (+1 A won, -1 B won, 0 draw; see :func:`game_result`), and the
        fields of :func:`play_game`.

    Raises:
        RuntimeError: if the two legs were not dealt the same cards.
    """
    n = len(env.possible_agents)
    out = []
    for leg in (0, 1):
        pattern = seat_pattern(n, leg)
        seats = [
            make(names[pattern[s]], int(agent_seeds[leg][seat_slot(n, leg, s)])) for s in range(n)
        ]
        path = None if record is None else Path(f"{record}_leg{leg}.jsonl")
        labels = [names[pattern[s]] for s in range(n)]
        g = play_game(env, seats, deal_seed, max_decisions, path, labels)
        out.append(leg_record(g, leg))
    check_same_deal(out, deal_seed)
    return out


def leg_record(g: dict[str, Any], leg: int) -> dict[str, Any]:
    """The record of leg ``leg`` of a duplicate deal from A's point of view, for a game ``g``
    as :func:`play_game` returns it (the fields :func:`play_deal` documents).
    """
    n = len(g["returns"])
    a_seats = [s for s, k in enumerate(seat_pattern(n, leg)) if k == 0]
    ra, rb, margin, result = game_result(g, a_seats)
    rec = {
        "leg": leg,
        "players": n,
        "a_seat": a_seats[0],
        "a_seats": " ".join(str(x) for x in a_seats),
        "return_a": ra,
        "return_b": rb,
        "margin": margin,
        "result": result,
    }
    rec.update({k: g[k] for k in ("outcome", "hands", "decisions", "truncated")})
    rec.update({"deal_id": g["deal_id"], "dealer": g["dealer"]})
    return rec


def check_same_deal(recs: Sequence[dict[str, Any]], deal_seed: int) -> None:
    """Raise ``RuntimeError`` unless both legs' records were dealt the same cards."""
    if (recs[0]["deal_id"], recs[0]["dealer"]) != (recs[1]["deal_id"], recs[1]["dealer"]):
        raise RuntimeError(f"duplicate deal {deal_seed}: the two legs were dealt different cards")


__all__ = [
    "check_same_deal",
    "deal_fingerprint",
    "finished_game",
    "game_result",
    "leg_record",
    "make_env",
    "play_deal",
    "play_game",
    "record_fingerprint",
    "seat_pattern",
    "seat_slot",
]
