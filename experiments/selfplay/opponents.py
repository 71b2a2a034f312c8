"""Who plays the seats the learner does not: the game roles, the opponent pool, the baseline.

Every game has a role, fixed by its index: in self-play games every seat is the current
network (every decision is training data); in pool games one seat is the learner and the others
a past snapshot of the network drawn from the pool; in baseline games one seat is the learner
and the others the baseline agent. The learner's seat of game ``i`` is ``i % players``.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import torch

from rummy_agents.arena.registry import AGENTS, GAME_AGENTS
from rummy_agents.ppo_net import MaskedActorCritic, SparseRows, legal_actions, sparse_rows

SELF_PLAY, POOL, BASELINE = 0, 1, 2  # game roles


def baseline_name(game: str) -> str:
    """The rule-based agent a game is evaluated against (``random`` where there is none)."""
    rule_based = {"gin_rummy": "simple"}.get(game, "greedy")
    return rule_based if rule_based in {**AGENTS, **GAME_AGENTS.get(game, {})} else "random"


def batched(agent: Any) -> Any:
    """``f(obs, masks, game=None, rows=None) -> actions`` for any agent: the rows of
    ``obs``/``masks`` are games ``rows`` of the batched ``game``. An agent that plays on the
    game's states (``act_game``: the compiled ``heuristic``) needs ``game``; the others read
    the observations (their ``act_batch`` when they have one).
    """
    on_game = getattr(agent, "act_game", None)
    if on_game is not None:

        def play(o: np.ndarray, m: np.ndarray, game: Any = None, rows: Any = None) -> np.ndarray:
            if game is None:
                raise ValueError(f"{agent.name} plays on game states, not on stored decisions")
            return on_game(game, rows)

        return play
    fn = getattr(agent, "act_batch", None)
    if fn is not None:
        params = list(inspect.signature(fn).parameters)
        if params and params[0] in ("observations", "obs"):
            return lambda o, m, game=None, rows=None: fn(o, m)
        return lambda o, m, game=None, rows=None: fn(m)
    return lambda o, m, game=None, rows=None: np.array(
        [agent.act({"observation": x, "action_mask": y}) for x, y in zip(o, m, strict=True)]
    )


def policy_actions(
    net: MaskedActorCritic,
    x: np.ndarray,
    mask: np.ndarray,
    greedy: bool = False,
    legal: bool = True,
    sparse: bool = True,
    packed: SparseRows | None = None,
) -> np.ndarray:
    """Actions of a network for feature rows ``x`` and bool masks (no gradient), on the
    network's device: the most likely (``greedy``) or sampled. ``legal``: score the legal
    actions only (``forward_legal``): the same moves as the full softmax (``legal=False``) when
    ``greedy`` (but for float rounding in near ties), other random numbers when sampling.
    ``sparse``: with ``legal``, on a CPU, the first layer reads the nonzero inputs only (the
    run's ``sparse_inputs``); ``packed``: ``sparse_rows(x)`` when the caller has it."""
    dev = next(net.parameters()).device
    with torch.no_grad():
        xt = torch.from_numpy(x).to(dev)
        if legal:
            ids, valid = (t.to(dev) for t in legal_actions(mask))
            sparse_x = None
            if sparse and dev.type == "cpu":
                sparse_x = sparse_rows(x) if packed is None else packed
            logits, _ = net.forward_legal(xt, ids, valid, sparse_x)
        else:
            logits, _ = net(xt, torch.from_numpy(mask).to(dev))
        if greedy:
            pick = logits.argmax(1)
        else:
            pick = torch.distributions.Categorical(logits=logits).sample()
        if legal:
            pick = ids.gather(1, pick[:, None]).squeeze(1)
        return pick.cpu().numpy()


class Opponents:
    """The roles of ``n`` games and the players of their non-learner seats.

    Args:
        n: games.
        num_players: seats per game.
        self_play_frac: share of self-play games (the first ones).
        pool_frac: share of pool games (the next ones); the rest play the baseline.
        pool_net: the network that plays the pool games' opponents (a snapshot is loaded into
            it at each update by :meth:`draw`).
        baseline: the baseline agent, as :func:`batched` makes it.
        legal_logits: the pool snapshot samples over its legal actions only
            (:func:`policy_actions`).
        sparse_inputs: on a CPU its first layer reads the nonzero inputs only.
    """

    def __init__(
        self,
        n: int,
        num_players: int,
        self_play_frac: float,
        pool_frac: float,
        pool_net: MaskedActorCritic,
        baseline: Any,
        legal_logits: bool = True,
        sparse_inputs: bool = True,
    ) -> None:
        n_self = int(round(n * self_play_frac))
        self.n_pool = int(round(n * pool_frac))
        self.role = np.full(n, BASELINE)
        self.role[:n_self] = SELF_PLAY
        self.role[n_self : n_self + self.n_pool] = POOL
        self.learner_seat = np.arange(n) % num_players
        self.pool_net = pool_net
        self.baseline = baseline
        self.legal_logits = legal_logits
        self.sparse_inputs = sparse_inputs
        self.pool: list[dict[str, torch.Tensor]] = []  # snapshots (state dicts), oldest first

    def draw(self, net: MaskedActorCritic, rng: np.random.Generator) -> None:
        """Load the pool games' opponent for the next rollout: a snapshot drawn from the pool,
        or the current network while the pool is empty."""
        if self.pool and self.n_pool:
            self.pool_net.load_state_dict(self.pool[int(rng.integers(len(self.pool)))])
        else:
            self.pool_net.load_state_dict(net.state_dict())

    def add(self, net: MaskedActorCritic, size: int) -> None:
        """Add a snapshot of ``net`` to the pool, keeping the newest ``size``."""
        self.pool.append({k: v.clone() for k, v in net.state_dict().items()})
        self.pool = self.pool[-size:]

    def learner_decides(self, cur: np.ndarray) -> np.ndarray:
        """Per game, whether the seat to act (``cur``) is the learner's: every seat of a
        self-play game, the learner's seat of the others."""
        return (self.role == SELF_PLAY) | (cur == self.learner_seat)

    def act(
        self,
        actions: np.ndarray,
        learner: np.ndarray,
        x: np.ndarray,
        mask: np.ndarray,
        obs: dict[str, np.ndarray],
        game: Any,
        sparse: SparseRows | None = None,
    ) -> None:
        """Replace ``actions`` where the learner does not decide by the opponents' moves: the
        pool snapshot's (sampled, from features ``x`` and bool ``mask``; ``sparse``:
        ``sparse_rows(x)`` when the caller has it) and the baseline's (from the observations
        ``obs`` of the batched ``game``)."""
        rows = np.flatnonzero(~learner & (self.role == POOL))
        if rows.size:
            packed = None if sparse is None else (sparse[0][rows], sparse[1][rows])
            actions[rows] = policy_actions(
                self.pool_net,
                x[rows],
                mask[rows],
                legal=self.legal_logits,
                sparse=self.sparse_inputs,
                packed=packed,
            )
        rows = np.flatnonzero(~learner & (self.role == BASELINE))
        if rows.size:
            o, m = obs["observation"][rows], obs["action_mask"][rows]
            actions[rows] = self.baseline(o, m, game, rows)

    def learner_return(self, i: int, ep_ret: np.ndarray) -> float:
        """The learner's return of game ``i`` (seat 0 of a self-play game)."""
        return ep_ret[i, 0 if self.role[i] == SELF_PLAY else self.learner_seat[i]]
