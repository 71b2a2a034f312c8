"""The games a run trains on, one rollout of ``num_steps`` decisions per game and update, and
the advantages of the learner's decisions in it.

All ``num_envs`` games step together (``rummy_env.make_vec``). At each step the network
samples an action for every game; where the learner does not decide (the opponents' seats of
pool and baseline games, :class:`~selfplay.opponents.Opponents`) the opponents' moves replace
it, and those decisions are never trained on. Illegal actions get a logit of -1e8, so no policy
ever picks one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rummy_agents.features import add_features
from rummy_agents.ppo_net import MaskedActorCritic, SparseRows, legal_actions, sparse_rows
from selfplay.advantages import TrainRewards, compute_gae, shaping_score
from selfplay.config import Config
from selfplay.opponents import BASELINE, POOL, SELF_PLAY, Opponents


@dataclass
class Batch:
    """The learner's decisions of a rollout: ``rows`` picks them out of ``x`` and ``mask``, the
    features and bool masks of every decision of the rollout, flattened (views, not copies: a
    copy of the learner's rows cost a tenth of a 500 Rum update); the rest are the learner's
    own: actions, their log-probabilities and values when played, advantages and returns, and
    (with the sparse first layer) their inputs' nonzero entries, as the rollout packed them."""

    x: np.ndarray
    mask: np.ndarray
    rows: np.ndarray
    action: np.ndarray
    logp: np.ndarray
    value: np.ndarray
    adv: np.ndarray
    ret: np.ndarray
    sparse: SparseRows | None = None


def use_sparse(cfg: Config, dev: torch.device) -> bool:
    """Whether the network's first layer reads the sparse inputs (``sparse_inputs``, on CPU)."""
    return cfg.sparse_inputs and cfg.legal_logits and dev.type == "cpu"


class Rollout:
    """The running games of a vector env ``venv`` and the storage of one rollout of them:
    (T, N, ...) arrays of the features, masks, actions, log-probabilities, values, training
    rewards (every seat's), episode ends, acting seats, learner flags and shaping scores."""

    def __init__(
        self,
        cfg: Config,
        venv: Any,
        opponents: Opponents,
        in_size: int,
        dev: torch.device,
    ) -> None:
        self.cfg, self.venv, self.opponents, self.dev = cfg, venv, opponents, dev
        t, n = cfg.num_steps, cfg.num_envs
        num_actions, num_players = venv.single_action_space.n, venv.num_players
        self.xs = np.zeros((t, n, in_size), dtype=np.float32)
        self.masks = np.zeros((t, n, num_actions), dtype=bool)
        self.acts = np.zeros((t, n), dtype=np.int64)
        self.logps = np.zeros((t, n), dtype=np.float32)
        self.vals = np.zeros((t, n), dtype=np.float32)
        self.rews = np.zeros((t, n, num_players), dtype=np.float32)
        self.dones = np.zeros((t, n), dtype=bool)
        self.curs = np.zeros((t, n), dtype=np.int64)
        self.trains = np.zeros((t, n), dtype=bool)
        self.phis = np.zeros((t, n), dtype=np.float64)
        self.sparse: list[SparseRows] = []  # each step's sparse_rows(x), with the sparse layer
        self.ep_ret = np.zeros((n, num_players))  # every seat's return in the running episode
        self.reward_of = TrainRewards(cfg, n, num_players)
        self.obs: dict[str, np.ndarray] = {}
        self.info: dict[str, Any] = {}

    def reset(self, seed: int) -> None:
        """Start fresh games."""
        self.obs, self.info = self.venv.reset(seed=seed)

    def collect(self, net: MaskedActorCritic) -> dict[int, list[float]]:
        """Play ``num_steps`` steps of every game, the network sampling the learner's moves;
        returns the learner's return of each episode that ended, by game role."""
        cfg, venv, opp, dev = self.cfg, self.venv, self.opponents, self.dev
        obs, info = self.obs, self.info
        finished: dict[int, list[float]] = {SELF_PLAY: [], POOL: [], BASELINE: []}
        self.sparse = []
        for t in range(cfg.num_steps):
            cur = info["current_player"]
            # the features and masks are written straight into the rollout's storage
            mask = np.equal(obs["action_mask"], 1, out=self.masks[t])
            x = add_features(cfg.features, obs["observation"], cfg.game, cfg.options, self.xs[t])
            sparse = None
            with torch.no_grad():
                xt = torch.from_numpy(x).to(dev)
                if cfg.legal_logits:
                    legal, valid = (v.to(dev) for v in legal_actions(mask))
                    sparse = sparse_rows(x) if use_sparse(cfg, dev) else None
                    if sparse is not None:
                        self.sparse.append(sparse)
                    logits, value = net.forward_legal(xt, legal, valid, sparse)
                    dist = torch.distributions.Categorical(logits=logits)
                    pick = dist.sample()
                    logp = dist.log_prob(pick)
                    action = legal.gather(1, pick[:, None]).squeeze(1)
                else:
                    logits, value = net(xt, torch.from_numpy(mask).to(dev))
                    dist = torch.distributions.Categorical(logits=logits)
                    action = dist.sample()
                    logp = dist.log_prob(action)
            a = action.cpu().numpy().copy()
            train = opp.learner_decides(cur)
            opp.act(a, train, x, mask, obs, venv.game, sparse)
            self.acts[t], self.curs[t], self.trains[t] = a, cur, train
            score = shaping_score(cfg, x)
            if score is not None:
                self.phis[t] = score
            self.logps[t], self.vals[t] = logp.cpu().numpy(), value.cpu().numpy()
            obs, rewards, term, trunc, info = venv.step(a)
            rewards = self.reward_of(rewards, term | trunc)
            self.rews[t], self.dones[t] = rewards, term | trunc
            self.ep_ret += rewards
            for i in np.flatnonzero(self.dones[t]):
                finished[opp.role[i]].append(opp.learner_return(i, self.ep_ret))
            self.ep_ret[self.dones[t]] = 0.0
        self.obs, self.info = obs, info
        return finished

    def advantages(self, net: MaskedActorCritic, shaping: float) -> tuple[np.ndarray, np.ndarray]:
        """(T, N) advantages and returns of the rollout's decisions (GAE per game and seat),
        bootstrapped from every seat's next decision after it, valued from the seat's own
        observation; with deadwood ``shaping`` weight (0: none) where the features offer it."""
        cfg, venv, dev = self.cfg, self.venv, self.dev
        n, num_players = cfg.num_envs, venv.num_players
        next_values = np.zeros((n, num_players))
        cur = self.info["current_player"]
        x_next = [add_features(cfg.features, self.obs["observation"], cfg.game, cfg.options)]
        who = [(np.arange(n), cur)]
        for p in range(num_players):
            rows = np.flatnonzero(cur != p)
            o = np.stack([venv.game.observe(int(i), p) for i in rows]) if rows.size else None
            if o is not None:
                x_next.append(add_features(cfg.features, o, cfg.game, cfg.options))
                who.append((rows, np.full(rows.size, p)))
        with torch.no_grad():
            h = net.trunk(torch.from_numpy(np.concatenate(x_next)).to(dev))
            v = net.value(h).squeeze(-1).cpu().numpy()
        k = 0
        for rows, seats in who:
            next_values[rows, seats] = v[k : k + rows.size]
            k += rows.size
        score = shaping_score(cfg, np.concatenate(x_next))
        phi = next_phi = None
        if shaping and score is not None:
            next_phi, k = np.zeros((n, num_players)), 0
            for rows, seats in who:
                next_phi[rows, seats] = shaping * score[k : k + rows.size]
                k += rows.size
            phi = shaping * self.phis
        adv = compute_gae(
            self.vals, self.rews, self.dones, self.curs, self.trains, next_values,
            cfg.gamma, cfg.gae_lambda, phi, next_phi,
        )  # fmt: skip
        return adv, adv + self.vals

    def learner_batch(self, adv: np.ndarray, ret: np.ndarray) -> Batch:
        """The decisions the learner made in the rollout (its training data)."""
        sel = self.trains.reshape(-1)
        rows = np.flatnonzero(sel)
        return Batch(
            x=self.xs.reshape(-1, self.xs.shape[2]),
            mask=self.masks.reshape(-1, self.masks.shape[2]),
            rows=rows,
            action=self.acts.reshape(-1)[sel],
            logp=self.logps.reshape(-1)[sel],
            value=self.vals.reshape(-1)[sel],
            adv=adv.reshape(-1)[sel].astype(np.float32),
            ret=ret.reshape(-1)[sel].astype(np.float32),
            sparse=self._sparse_of(rows) if self.sparse else None,
        )

    def _sparse_of(self, rows: np.ndarray) -> SparseRows:
        """``sparse_rows(x, rows)`` of the flattened rollout's features, from the steps' packed
        rows (padded to the widest step: the padding, column 0 with value 0, adds nothing)."""
        n, k = self.cfg.num_envs, max(idx.shape[1] for idx, _ in self.sparse)
        idx = np.zeros((rows.size, k), dtype=np.int64)
        val = np.zeros((rows.size, k), dtype=np.float32)
        # rows ascend, so each step's rows are one slice of them
        bounds = np.searchsorted(rows, np.arange(len(self.sparse) + 1) * n)
        for t, (s_idx, s_val) in enumerate(self.sparse):
            lo, hi = bounds[t], bounds[t + 1]
            at, width = rows[lo:hi] - t * n, s_idx.shape[1]
            idx[lo:hi, :width] = s_idx.numpy()[at]
            val[lo:hi, :width] = s_val.numpy()[at]
        return torch.from_numpy(idx), torch.from_numpy(val)
