"""Masked PPO with batched self-play over ``rummy_env.make_vec`` (CleanRL style, one file).

Thousands of games step together. Every game has a role, fixed by its index:

- self-play games: every seat is the current network, and every decision is training data;
- pool games: one seat is the learner, the others a past checkpoint drawn from the pool
  (a snapshot is added every ``pool_every`` updates);
- baseline games: one seat is the learner, the others the game's baseline agent (``simple``
  for Gin Rummy, else ``random`` unless a ``greedy`` agent is registered).

Rewards are zero-sum and arrive at the end of a hand, so each seat's decisions form their own
trajectory inside a game: a decision's reward is what the seat received until its next decision,
and GAE runs over each (game, seat) sequence separately (``compute_gae``). Opponents' decisions
are never trained on. Illegal actions get a logit of -1e8, so no policy ever picks one.

With ``--teacher AGENT`` (e.g. ``simple``, ``greedy``) a cross-entropy term pulls the policy
towards that agent's moves on ``teacher_samples`` of the learner's decisions per update, with a
weight ``teacher_coef`` annealed to 0 at ``teacher_until`` of the run: a warm start from
rule-based play that PPO then improves on (the agreement rate goes to ``progress.csv``).
With ``--imitate-samples N`` the run starts by behaviour cloning: the teacher plays every seat
of ``num_envs`` games until ``N`` of its decisions with a choice are recorded, and the network
learns its moves (cross-entropy) and the outcome of each decision's hand (the value head, so
that PPO's first advantages are not noise) for ``imitate_epochs`` passes (``imitation.csv``:
loss and agreement on held-out decisions per pass; the cloned agent is saved as ``imitated.pt``).
PPO then starts from a rule-based player instead of a random one; the evaluation at update 0
shows where it starts. ``--dagger-rounds R`` continues cloning for R rounds of DAgger: the
student plays one seat against the teacher, the teacher labels every decision of those games
(``--dagger-samples`` each round), and the network trains on the growing record.
``--init-agent FILE`` starts from a saved agent's network (same game, features and sizes):
with ``--imitate-samples`` its cloning goes on, the student playing from the first round.

Every ``eval_every`` updates the greedy policy plays ``eval_games`` games against the baseline
(seats alternating): win rate with a 95% Wilson interval goes to ``progress.csv`` (and to
TensorBoard when installed), and the learning curve to ``learning_curve.png``. ``checkpoint.pt``
(network, optimiser, pool, counters, random states) makes runs resumable; ``agent.pt`` is the
playable agent (``rummy_agents.ppo_agent.PPOAgent``); ``config.json`` is the run's configuration.

    python experiments/ppo_selfplay.py --game gin_rummy --total-steps 20000000
    python experiments/ppo_selfplay.py --resume runs/ppo_gin_rummy
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import inspect
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numba
import numpy as np
import torch
from tqdm import tqdm

import rummy_env
from rummy_agents.arena.registry import AGENTS, GAME_AGENTS, make_agent, parse_value
from rummy_agents.arena.stats import wilson_interval
from rummy_agents.features import (
    add_features,
    card_layout,
    default_features,
    feature_size,
    meld_planes,
)
from rummy_agents.ppo_agent import (
    CHECKPOINT_FORMAT,
    MaskedActorCritic,
    build_checkpoint,
    load_network,
)

# rewards scaled to about [-1, 1] where the game offers it
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {
    "gin_rummy": {"reward": "normalized"},
    "five_hundred_rum": {"reward": "normalized"},
    "rummy51": {"reward": "normalized"},
}


@dataclass
class Config:
    """Everything that defines a run (saved as ``config.json`` beside the results)."""

    game: str = "gin_rummy"
    options: dict[str, Any] = field(default_factory=dict)  # rule options (--option k=v)
    features: str = ""  # observation features; "" = the game's default
    seed: int = 0
    total_steps: int = 20_000_000  # environment steps (decisions of every seat)
    num_envs: int = 2048
    num_steps: int = 32  # rollout length per game
    self_play_frac: float = 0.5
    pool_frac: float = 0.25  # the rest of the games play the baseline
    pool_size: int = 8
    pool_every: int = 20  # updates between pool snapshots
    baseline: str = ""  # "" = the game's default baseline agent
    eval_baseline: str = ""  # agent evaluated against; "" = baseline
    teacher: str = ""  # agent imitated (e.g. simple, greedy): auxiliary loss, imitate_*
    teacher_coef: float = 1.0  # weight of the imitation loss at the start, annealed to 0 ...
    teacher_until: float = 0.5  # ... at this fraction of the updates
    teacher_samples: int = 4096  # learner decisions labelled by the teacher per update
    imitate_samples: int = 0  # behaviour cloning before PPO: teacher decisions to learn from
    # (held in memory with their masks: Gin ~1 KB each, 500 Rum ~5 KB, Rummy 51 ~10 KB)
    imitate_epochs: int = 8  # passes over them
    imitate_lr: float = 1e-3
    dagger_rounds: int = 0  # after cloning: rounds of the student's own games labelled by ...
    dagger_samples: int = 100_000  # ... the teacher, this many decisions each
    init_agent: str = ""  # agent .pt whose network the run starts from (then DAgger from round 0)
    hidden: int = 128
    layers: int = 2
    card_head: int = 16  # width of the shared per-card policy head (0: none; Gin Rummy only)
    lr: float = 3e-4
    anneal_lr: bool = True
    gamma: float = 1.0
    gae_lambda: float = 0.95
    update_epochs: int = 2
    num_minibatches: int = 8
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    zero_sum: bool = True  # train on each seat's reward minus the mean of all seats'
    win_reward: bool = False  # train on who won each episode (+1 / -1), not on its points
    shaping: float = 1.0  # deadwood shaping weight at the start (Gin), annealed to 0 by the end
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    eval_every: int = 20  # updates; 0 = only at the end
    eval_games: int = 512
    checkpoint_every: int = 20
    keep_agents: bool = False  # also keep each checkpoint's player as agent_<step>.pt
    torch_threads: int = 1
    device: str = "cpu"  # torch device of the network: "cpu", "cuda", "cuda:1", or "auto"
    numba_threads: int = 1
    out: str = ""  # "" = runs/ppo_<game>
    progress: bool = True
    tensorboard: bool = True


# ---------------------------------------------------------------------------------------------
# Opponents


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
    net: MaskedActorCritic, x: np.ndarray, mask: np.ndarray, greedy: bool = False
) -> np.ndarray:
    """Actions of a network for feature rows ``x`` and bool masks (no gradient), on the
    network's device."""
    dev = next(net.parameters()).device
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(x).to(dev), torch.from_numpy(mask).to(dev))
        if greedy:
            return logits.argmax(1).cpu().numpy()
        return torch.distributions.Categorical(logits=logits).sample().cpu().numpy()


# ---------------------------------------------------------------------------------------------
# Advantages


def compute_gae(
    values: np.ndarray,
    rewards: np.ndarray,
    dones: np.ndarray,
    cur: np.ndarray,
    train: np.ndarray,
    next_values: np.ndarray,
    gamma: float,
    lam: float,
    phi: np.ndarray | None = None,
    next_phi: np.ndarray | None = None,
) -> np.ndarray:
    """GAE over each (game, seat) trajectory of a turn-based rollout.

    Args:
        values: (T, N) value of the decision at step t (from the acting seat's view).
        rewards: (T, N, P) every seat's reward from the step's transition.
        dones: (T, N) the episode ended with step t (the game reset in the same step).
        cur: (T, N) the seat that acted at step t.
        train: (T, N) bool, the decision is training data (only those get an advantage).
        next_values: (N, P) value of each seat's next decision after the rollout (its own view).
        gamma: discount per decision of the seat.
        lam: GAE lambda.
        phi: (T, N) optional shaping score of each decision's state (acting seat's view): a
            decision is also rewarded ``phi(next decision of the seat) - phi(this one)``, and
            nothing after the seat's last decision of an episode (so an episode's shaping sums
            to its last minus its first score).
        next_phi: (N, P) shaping score of each seat's next decision after the rollout.

    Returns:
        (T, N) advantages (0 where ``train`` is False).
    """
    t_len, n = values.shape
    rows = np.arange(n)
    nv = next_values.astype(np.float64).copy()  # value of each seat's next decision
    nadv = np.zeros_like(nv)  # advantage of each seat's next decision
    acc = np.zeros_like(nv)  # rewards since each seat's next decision, walking backwards
    shaped = phi is not None
    nphi = next_phi.astype(np.float64).copy() if shaped else None
    has_next = np.ones_like(nv, dtype=bool)  # the seat decides again in this episode
    adv = np.zeros((t_len, n))
    for t in range(t_len - 1, -1, -1):
        d = dones[t]
        nv[d] = 0.0  # the seat's last decision of an episode bootstraps from 0
        nadv[d] = 0.0
        acc[d] = 0.0
        has_next[d] = False
        acc += rewards[t]
        p = cur[t]
        r = acc[rows, p]
        if shaped:
            r = r + np.where(has_next[rows, p], nphi[rows, p] - phi[t], 0.0)
            nphi[rows, p] = phi[t]
        delta = r + gamma * nv[rows, p] - values[t]
        a = delta + gamma * lam * nadv[rows, p]
        k = train[t]
        adv[t, k] = a[k]
        # every decision (trained or not) starts its seat's next segment
        nv[rows, p] = values[t]
        nadv[rows, p] = np.where(k, a, 0.0)
        acc[rows, p] = 0.0
        has_next[rows, p] = True
    return adv


def win_outcome(total: np.ndarray) -> np.ndarray:
    """Zero-sum outcome of finished episodes from each seat's total return (rows: games): the
    seats with the best total share +1, the others share -1; all 0 when every seat ties. With
    2 players: +1 for the winner, -1 for the loser, 0 for a draw."""
    best = total == total.max(1, keepdims=True)
    n_best = best.sum(1, keepdims=True)
    n_rest = total.shape[1] - n_best
    out = np.where(best, 1.0 / n_best, -1.0 / np.maximum(n_rest, 1))
    return np.where(n_rest > 0, out, 0.0)


class TrainRewards:
    """The rewards training sees, step by step: the game's own, minus the mean of all seats'
    (``zero_sum``: 500 Rum and Rummy 51 pay each player its own score), or with ``win_reward``
    nothing until the episode ends and then who won it (:func:`win_outcome` of the seats'
    totals): the arena's measure, where points are what the game pays.
    """

    def __init__(self, cfg: Config, n: int, players: int) -> None:
        self.zero_sum, self.win = cfg.zero_sum, cfg.win_reward
        self.total = np.zeros((n, players))

    def __call__(self, rewards: np.ndarray, done: np.ndarray) -> np.ndarray:
        """Training rewards of one step of all ``n`` games (``done``: the episode ended)."""
        if self.zero_sum:
            rewards = rewards - rewards.mean(1, keepdims=True)
        if not self.win:
            return rewards
        self.total += rewards
        out = np.where(done[:, None], win_outcome(self.total), 0.0)
        self.total[done] = 0.0
        return out


def shaping_score(cfg: Config, x: np.ndarray) -> np.ndarray | None:
    """Per-row shaping score of featured observations: minus the hand's deadwood / 100 for Gin
    Rummy with deadwood features (10 cards: now; 11 cards: after the best discard), else None.
    """
    if cfg.features != "gin_deadwood":
        return None
    n_cards = x[:, :52].sum(1)
    dw = x[:, x.shape[1] - feature_size(cfg.features) + 52]
    return np.where((n_cards == 10) | (n_cards == 11), -dw, 0.0)


# ---------------------------------------------------------------------------------------------
# Evaluation


def evaluate(
    net: MaskedActorCritic,
    cfg: Config,
    opponent: str,
    games: int,
    seed: int,
) -> dict[str, float]:
    """Greedy policy against ``opponent`` for ``games`` games (learner in seat ``i % P``), one
    episode each; wins, draws and mean learner return."""
    # the game's own reward decides wins: a normalized reward may be clipped (500 Rum)
    options = {k: v for k, v in cfg.options.items() if k != "reward"}
    venv = rummy_env.make_vec(cfg.game, games, seed=seed, **options)
    obs, info = venv.reset()
    opp = batched(make_agent(opponent, seed=seed, game=cfg.game))
    seat = np.arange(games) % venv.num_players
    ret = np.zeros((games, venv.num_players))
    finished = np.zeros(games, dtype=bool)
    while not finished.all():
        cur = info["current_player"]
        mask = obs["action_mask"] == 1
        x = add_features(cfg.features, obs["observation"])
        actions = policy_actions(net, x, mask, greedy=True)
        opp_rows = np.flatnonzero((cur != seat) & ~finished)
        if opp_rows.size:
            o, m = obs["observation"][opp_rows], obs["action_mask"][opp_rows]
            actions[opp_rows] = opp(o, m, venv.game, opp_rows)
        obs, rewards, term, trunc, info = venv.step(actions.astype(np.int64))
        ret += np.where(finished[:, None], 0.0, rewards)
        finished |= term | trunc
    # a win: the learner's return beats every other seat's (500 Rum pays each player its own
    # points, so a positive return is not a win); a draw: a tie for the best return
    mine = ret[np.arange(games), seat]
    others = np.where(np.arange(venv.num_players)[None] == seat[:, None], -np.inf, ret).max(1)
    wins, draws = int((mine > others).sum()), int((mine == others).sum())
    lo, hi = wilson_interval(wins, games)
    decisive = games - draws
    return {
        "eval_games": games,
        "eval_win_rate": wins / games,
        "eval_win_lo": lo,
        "eval_win_hi": hi,
        "eval_draw_rate": draws / games,
        "eval_decisive_win_rate": wins / decisive if decisive else math.nan,
        "eval_mean_return": float(mine.mean()),
        "eval_mean_margin": float((mine - others).mean()),
    }


# ---------------------------------------------------------------------------------------------
# Behaviour cloning


def teacher_games(
    cfg: Config,
    teacher: Any,
    samples: int,
    seed: int,
    student: MaskedActorCritic | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The teacher plays every seat of ``cfg.num_envs`` games until ``samples`` of its
    decisions with more than one legal action are recorded (games still running then are
    dropped: their outcome is unknown).

    With a ``student`` network (DAgger), the student plays seat ``i % players`` of game ``i``
    (its most probable legal move, as the published agent plays) and the teacher the other
    seats; every decision is still labelled with the teacher's move, so the record holds the
    positions the student's own play leads to, which pure cloning never shows it.

    Returns:
        (float16 features, bool masks, teacher actions, returns): a decision's return is what
        its seat received from then to the end of the hand, in the training rewards
        (:class:`TrainRewards`: zero-sum points, or who won with ``win_reward``).
    """
    venv = rummy_env.make_vec(cfg.game, cfg.num_envs, seed=seed, **cfg.options)
    obs, info = venv.reset()
    seat = np.arange(cfg.num_envs) % venv.num_players
    reward_of = TrainRewards(cfg, cfg.num_envs, venv.num_players)
    xs, ms, acts, where, rews, dones, curs = [], [], [], [], [], [], []
    kept = 0
    desc = "teacher games" if student is None else "DAgger games"
    bar = tqdm(total=samples, desc=desc, unit="decision", disable=not cfg.progress)
    while kept < samples:
        cur = info["current_player"]
        a = np.asarray(teacher(obs["observation"], obs["action_mask"], venv.game), dtype=np.int64)
        rows = np.flatnonzero(obs["action_mask"].sum(1) > 1)
        # float16 halves the memory; observations are 0/1 flags and small fractions
        x = add_features(cfg.features, obs["observation"][rows])
        xs.append(x.astype(np.float16))
        ms.append(obs["action_mask"][rows] == 1)
        acts.append(a[rows])
        where.append(rows)
        kept += rows.size
        bar.update(rows.size)
        curs.append(cur)
        played = a
        if student is not None:
            mine = cur[rows] == seat[rows]
            played = a.copy()
            if mine.any():
                played[rows[mine]] = policy_actions(student, x[mine], ms[-1][mine], greedy=True)
        obs, rewards, term, trunc, info = venv.step(played)
        rews.append(reward_of(rewards, term | trunc))
        dones.append(term | trunc)
    bar.close()
    ret, keep = returns_to_go(rews, dones, curs, where)
    # filtered chunk by chunk: one copy of the (large) observations, not two
    keeps = np.split(keep, np.cumsum([a.size for a in acts])[:-1])
    return (
        np.concatenate([x[k] for x, k in zip(xs, keeps, strict=True)]),
        np.concatenate([m[k] for m, k in zip(ms, keeps, strict=True)]),
        np.concatenate(acts)[keep],
        ret[keep].astype(np.float32),
    )


def returns_to_go(
    rews: list[np.ndarray], dones: list[np.ndarray], curs: list[np.ndarray], where: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Each recorded decision's return: what its seat receives from then to the end of the
    episode (undiscounted), and whether that episode ended within the record.

    Args:
        rews: per step, (N, players) rewards of the step.
        dones: per step, (N,) episode ended with the step.
        curs: per step, (N,) player who acted.
        where: per step, the games whose decision is recorded.

    Returns:
        (returns, finished), in record order (step by step, the games of ``where``).
    """
    g, over = np.zeros(rews[0].shape), np.zeros(rews[0].shape[0], dtype=bool)
    ret, ok = [], []
    for t in range(len(rews) - 1, -1, -1):
        g = rews[t] + np.where(dones[t][:, None], 0.0, g)
        over = dones[t] | over
        rows = where[t]
        ret.append(g[rows, curs[t][rows]])
        ok.append(over[rows])
    return np.concatenate(ret[::-1]), np.concatenate(ok[::-1])


def imitate(
    net: MaskedActorCritic,
    cfg: Config,
    teacher: Any,
    dev: torch.device,
    out: Path,
    save_agent: Any = None,
) -> None:
    """Behaviour cloning warm start (``--imitate-samples``): the policy learns the teacher's
    moves, the value head the outcomes of the teacher's hands; 5% of the decisions are held
    out to measure the agreement, written per pass to ``imitation.csv``.

    With ``--dagger-rounds R`` cloning goes on for R more rounds (DAgger): each round the
    current student plays one seat against the teacher for ``--dagger-samples`` decisions, the
    teacher labels them, they join the record and the network trains ``imitate_epochs`` more
    passes over all of it. A clone only ever sees the teacher's positions, so its first
    mistakes lead it where it has no examples; these rounds add exactly those positions. A
    round's ``new_agreement`` is the student's agreement with the teacher on the round's new
    positions (both seats) before it trains on them. With DAgger rounds, ``save_agent(path)``
    (when given) keeps each round's player as ``imitated_round<R>.pt``.
    """
    rng = np.random.default_rng(cfg.seed)
    optim = torch.optim.Adam(net.parameters(), lr=cfg.imitate_lr, eps=1e-5)
    rows: list[dict[str, float]] = []
    data: list[np.ndarray] = []  # features, masks, teacher moves, returns of every round
    train_idx: list[np.ndarray] = []
    test_idx: list[np.ndarray] = []
    for rnd in range(cfg.dagger_rounds + 1):
        student = net.eval() if rnd or cfg.init_agent else None
        n_samples = cfg.dagger_samples if rnd else cfg.imitate_samples
        part = teacher_games(cfg, teacher, n_samples, cfg.seed + 7919 * (rnd + 1), student)
        start = len(data[2]) if data else 0
        perm = rng.permutation(part[2].size) + start
        n_test = max(1, part[2].size // 20)
        test_idx.append(perm[:n_test])
        train_idx.append(perm[n_test:])
        if data:  # one copy of the record: the previous rounds' arrays are released
            data = [np.concatenate([d, p]) for d, p in zip(data, part, strict=True)]
        else:
            data = list(part)
        tensors = [torch.from_numpy(a) for a in data]
        train, test = np.concatenate(train_idx), np.concatenate(test_idx)
        new_agree = math.nan
        if student is not None:  # the first new positions, before training on them
            head = np.arange(start, start + min(20000, part[2].size))
            new_agree = heldout_agreement(net, tensors, head, dev)
        net.train()
        bar = tqdm(range(cfg.imitate_epochs), desc=f"imitation {rnd}", disable=not cfg.progress)
        for epoch in bar:
            losses = []
            train = rng.permutation(train)
            for s in range(0, train.size, 1024):
                j = torch.from_numpy(train[s : s + 1024])
                bx, bm, ba, br = (t[j].to(dev) for t in tensors)
                logits, value = net(bx.float(), bm)
                loss = torch.nn.functional.cross_entropy(logits, ba)
                v_loss = 0.5 * ((value - br) ** 2).mean()
                optim.zero_grad()
                (loss + cfg.vf_coef * v_loss).backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
                optim.step()
                losses.append((loss.item(), v_loss.item()))
            agree = heldout_agreement(net, tensors, test, dev)
            rows.append(
                {
                    "round": rnd,
                    "epoch": epoch + 1,
                    "samples": int(train.size),
                    "loss": float(np.mean([a for a, _ in losses])),
                    "value_loss": float(np.mean([b for _, b in losses])),
                    "heldout_agreement": agree,
                    "new_agreement": new_agree,
                }
            )
            bar.set_postfix(agree=f"{agree:.3f}")
        if cfg.dagger_rounds and save_agent is not None:
            save_agent(out / f"imitated_round{rnd}.pt")
    with (out / "imitation.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def heldout_agreement(
    net: MaskedActorCritic, tensors: list[torch.Tensor], rows: np.ndarray, dev: torch.device
) -> float:
    """Share of the recorded decisions ``rows`` (the held-out ones, or a DAgger round's new
    ones) where the network's most probable move is the teacher's; in chunks, since a
    DAgger record's held-out part can be large."""
    hits = 0
    with torch.no_grad():
        for s in range(0, rows.size, 8192):
            j = torch.from_numpy(rows[s : s + 8192])
            logits, _ = net(tensors[0][j].to(dev).float(), tensors[1][j].to(dev))
            hits += int((logits.argmax(1).cpu() == tensors[2][j]).sum())
    return hits / max(1, rows.size)


def plot_curve(csv_path: Path, png_path: Path, title: str) -> None:
    """Eval win rate (95% Wilson band) against environment steps; skipped without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    rows = [r for r in csv.DictReader(csv_path.open()) if r.get("eval_win_rate")]
    if not rows:
        return
    x = np.array([float(r["global_step"]) for r in rows])
    y, lo, hi = (
        np.array([float(r[k]) for r in rows])
        for k in ("eval_win_rate", "eval_win_lo", "eval_win_hi")
    )
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    ax.fill_between(x, lo, hi, alpha=0.3, label="95% Wilson interval")
    ax.plot(x, y, marker="o", ms=3, label="win rate")
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("games won")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# Command line


def parse_config() -> tuple[Config, str | None]:
    """The run's config from the command line; with ``--resume`` the saved config of that run,
    with only the flags given on the command line changed (e.g. ``--total-steps``)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    for f in dataclasses.fields(Config):
        if f.name == "options":
            p.add_argument("--option", action="append", help="rule option key=value")
            continue
        flag = "--" + f.name.replace("_", "-")
        default = f"(default: {f.default})"
        if f.type in ("bool", bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, help=default)
        else:
            kind = {"int": int, "float": float, "str": str}[str(f.type)]
            p.add_argument(flag, type=kind, help=default)
    p.add_argument("--resume", default=None, help="run directory (or checkpoint.pt) to continue")
    given = {k: v for k, v in vars(p.parse_args()).items() if v is not None}
    resume = given.pop("resume", None)
    options = {}
    for kv in given.pop("option", []):
        k, _, v = kv.partition("=")
        options[k] = parse_value(v)
    if options:
        given["options"] = options
    return Config(**given), resume


def resolve_device(name: str) -> torch.device:
    """The torch device of ``--device``: ``"auto"`` is CUDA when available, else the CPU.

    Raises:
        ValueError: for a device name torch does not know, or a CUDA device this machine does
            not have.
    """
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(name)
    except RuntimeError as e:
        raise ValueError(f"--device {name!r}: {e}") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"--device {name!r}: this torch build or machine has no CUDA device")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"--device {name!r}: only {torch.cuda.device_count()} CUDA devices")
    elif dev.type != "cpu":
        raise ValueError(f"--device {name!r}: use cpu, cuda, cuda:N or auto")
    return dev


def finalize(cfg: Config) -> Config:
    """Fill the per-game defaults."""
    cfg.options = {**DEFAULT_OPTIONS.get(cfg.game, {}), **cfg.options}
    cfg.features = cfg.features or default_features(cfg.game)
    cfg.baseline = cfg.baseline or baseline_name(cfg.game)
    cfg.eval_baseline = cfg.eval_baseline or cfg.baseline
    cfg.out = cfg.out or f"runs/ppo_{cfg.game}"
    if cfg.imitate_samples < 0 or cfg.imitate_epochs < 1:
        raise ValueError("--imitate-samples must be >= 0 and --imitate-epochs >= 1")
    if cfg.imitate_samples and not cfg.teacher:
        raise ValueError("--imitate-samples needs --teacher AGENT (the player to imitate)")
    if cfg.dagger_rounds < 0 or cfg.dagger_samples < 1:
        raise ValueError("--dagger-rounds must be >= 0 and --dagger-samples >= 1")
    if cfg.dagger_rounds and not cfg.imitate_samples:
        raise ValueError("--dagger-rounds continues cloning: it needs --imitate-samples N")
    if cfg.init_agent and not Path(cfg.init_agent).is_file():
        raise ValueError(f"--init-agent {cfg.init_agent}: no such file")
    return cfg


# feature sets that append inputs to another's, and may start from a network trained on it
WIDENS = {
    "joker_cards_melds": "joker_cards_plan",
    "joker_cards_discards": "joker_cards_takes",
    "joker_cards_planner": "joker_cards_discards",
}


def _as_lists(x: Any) -> list[Any]:
    return [_as_lists(v) if isinstance(v, (list, tuple)) else v for v in x]


def init_weights(path: str, meta: dict[str, Any]) -> dict[str, torch.Tensor]:
    """The network weights of agent file ``path`` (``--init-agent``), checked against the
    run's game, options, features and layer sizes (``meta``).

    An agent trained on the features the run's extend (:data:`WIDENS`: ``joker_cards_plan``
    for ``joker_cards_melds``, ``joker_cards_takes`` for ``joker_cards_discards``) is widened:
    the new inputs get zero weights (in the first layer, and as new card-head planes), new
    gated planes a zero gate, and new heads their fresh initialisation, so the run starts
    from the agent's exact policy.

    Raises:
        ValueError: when the file is not an agent checkpoint or was made for another network.
    """
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    if ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"--init-agent {path}: not a {CHECKPOINT_FORMAT} checkpoint")
    differ = [k for k in meta if ckpt.get(k) != meta[k]]
    widen = WIDENS.get(meta["features"]) == ckpt.get("features")
    if widen:
        grown = ("features", "obs_size", "meld_planes", "card_inputs")  # new ones appended
        differ = [k for k in differ if k not in grown]
        for k in ("card_inputs", "meld_planes"):  # the agent's planes come first, unmoved
            had, has = _as_lists(ckpt.get(k) or []), _as_lists(meta.get(k) or [])
            if has[: len(had)] != had:
                differ.append(k)
    if differ:
        got = ", ".join(f"{k}={ckpt.get(k)!r} (run: {meta[k]!r})" for k in differ)
        raise ValueError(f"--init-agent {path}: made for another network: {got}")
    weights = dict(ckpt["state_dict"])
    if widen:
        fresh = load_network({**meta, "state_dict": None}).state_dict()
        for k, v in fresh.items():
            if k not in weights:
                weights[k] = v
            elif weights[k].shape != v.shape:  # inputs or gates appended: zeros after the old
                padded = v.new_zeros(v.shape)
                padded[tuple(slice(0, n) for n in weights[k].shape)] = weights[k]
                weights[k] = padded
    return weights


# ---------------------------------------------------------------------------------------------
# Training


def main() -> None:
    cfg, resume = parse_config()
    state = None
    if resume:
        path = Path(resume)
        path = path / "checkpoint.pt" if path.is_dir() else path
        state = torch.load(path, map_location="cpu", weights_only=False)
        given = {k: v for k, v in dataclasses.asdict(cfg).items() if v != getattr(Config(), k)}
        cfg = Config(**{**state["config"], **given})
    cfg = finalize(cfg)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))

    dev = resolve_device(cfg.device)
    torch.set_num_threads(cfg.torch_threads)
    numba.set_num_threads(min(cfg.numba_threads, numba.config.NUMBA_NUM_THREADS))
    np_rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)

    n = cfg.num_envs
    venv = rummy_env.make_vec(cfg.game, n, seed=cfg.seed, **cfg.options)
    num_players, num_actions = venv.num_players, venv.single_action_space.n
    obs_size = venv.single_observation_space["observation"].shape[0]
    in_size = obs_size + feature_size(cfg.features)
    meta = {
        "game": cfg.game,
        "options": cfg.options,
        "features": cfg.features,
        "obs_size": in_size,
        "num_actions": int(num_actions),
        "hidden": cfg.hidden,
        "layers": cfg.layers,
    }
    if cfg.card_head:
        planes, blocks, select = card_layout(cfg.game, cfg.features, obs_size)
        meta.update(card_inputs=planes, card_actions=blocks, card_select=select)
        meta["card_hidden"] = cfg.card_head
    meld = meld_planes(cfg.game, cfg.features, obs_size)
    if meld:
        meta["meld_planes"] = meld
    net = load_network({**meta, "state_dict": None}).to(dev).train()
    if cfg.init_agent:
        net.load_state_dict(init_weights(cfg.init_agent, meta))
    opp_net = load_network({**meta, "state_dict": None}).to(dev)
    optim = torch.optim.Adam(net.parameters(), lr=cfg.lr, eps=1e-5)

    # game roles by index: self-play, pool, baseline; learner seat of the non-self-play games
    n_self = int(round(n * cfg.self_play_frac))
    n_pool = int(round(n * cfg.pool_frac))
    role = np.full(n, 2)
    role[:n_self] = 0
    role[n_self : n_self + n_pool] = 1
    learner_seat = np.arange(n) % num_players
    baseline = batched(make_agent(cfg.baseline, seed=cfg.seed, game=cfg.game))
    teacher = None
    if cfg.teacher:
        teacher_agent = make_agent(cfg.teacher, seed=cfg.seed, game=cfg.game)
        if hasattr(teacher_agent, "act_game") and cfg.teacher_coef > 0:
            raise ValueError(
                f"--teacher {cfg.teacher} plays on game states, so it can label only its own "
                "games (--imitate-samples), not stored decisions: add --teacher-coef 0"
            )
        teacher = batched(teacher_agent)

    update, global_step, elapsed0 = 0, 0, 0.0
    pool: list[dict[str, torch.Tensor]] = []
    if state is not None:
        net.load_state_dict(state["net"])
        optim.load_state_dict(state["optim"])
        update, global_step, elapsed0 = state["update"], state["global_step"], state["elapsed"]
        pool = state["pool"]
        np_rng.bit_generator.state = state["np_rng"]
        torch.set_rng_state(state["torch_rng"])
    batch_steps = n * cfg.num_steps
    num_updates = math.ceil(cfg.total_steps / batch_steps)

    csv_path = out / "progress.csv"
    columns = [
        "update", "global_step", "elapsed_s", "sps", "lr", "policy_loss", "value_loss",
        "entropy", "approx_kl", "clipfrac", "explained_variance", "teacher_coef",
        "teacher_loss", "teacher_agreement", "train_samples",
        "episodes", "selfplay_return", "pool_return", "baseline_return", "pool_size",
        "eval_games", "eval_win_rate", "eval_win_lo", "eval_win_hi", "eval_draw_rate",
        "eval_decisive_win_rate", "eval_mean_return", "eval_mean_margin",
    ]  # fmt: skip
    new_csv = state is None or not csv_path.exists()
    csv_file = csv_path.open("w" if new_csv else "a", newline="")
    writer = csv.DictWriter(csv_file, columns)
    if new_csv:
        writer.writeheader()
    tb = None
    if cfg.tensorboard:
        try:
            from torch.utils.tensorboard import SummaryWriter

            tb = SummaryWriter(str(out / "tb"))
        except ImportError:  # tensorboard is optional
            pass

    def log_row(row: dict[str, Any], step: int) -> None:
        """One row to ``progress.csv`` and, when installed, to TensorBoard."""
        writer.writerow(row)
        csv_file.flush()
        if tb is not None:
            for k, v in row.items():
                if isinstance(v, (int, float, np.floating)) and k != "global_step":
                    tb.add_scalar(k, v, step)

    def save_agent(path: Path) -> None:
        cpu_net = load_network({**meta, "state_dict": None})
        cpu_net.load_state_dict(net.state_dict())  # an agent file loads on any machine
        torch.save(build_checkpoint(cpu_net, {**meta, "global_step": global_step}), path)

    def save(tag: str = "") -> None:
        save_agent(out / "agent.pt")
        if cfg.keep_agents:  # to pick among them with the arena afterwards
            save_agent(out / f"agent_{global_step}.pt")
        torch.save(
            {
                "config": dataclasses.asdict(cfg),
                "net": net.state_dict(),
                "optim": optim.state_dict(),
                "update": update,
                "global_step": global_step,
                "elapsed": elapsed0 + time.time() - t_start,
                "pool": pool,
                "np_rng": np_rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
            },
            out / "checkpoint.pt",
        )
        plot_curve(csv_path, out / "learning_curve.png", f"{cfg.game}: PPO vs {cfg.eval_baseline}")

    # rollout storage
    T = cfg.num_steps
    xs = np.zeros((T, n, in_size), dtype=np.float32)
    masks = np.zeros((T, n, num_actions), dtype=bool)
    acts = np.zeros((T, n), dtype=np.int64)
    logps = np.zeros((T, n), dtype=np.float32)
    vals = np.zeros((T, n), dtype=np.float32)
    rews = np.zeros((T, n, num_players), dtype=np.float32)
    dones = np.zeros((T, n), dtype=bool)
    curs = np.zeros((T, n), dtype=np.int64)
    trains = np.zeros((T, n), dtype=bool)
    phis = np.zeros((T, n), dtype=np.float64)
    ep_ret = np.zeros((n, num_players))
    reward_of = TrainRewards(cfg, n, num_players)

    t_start = time.time()
    if state is None and cfg.imitate_samples:
        imitate(net, cfg, teacher, dev, out, save_agent)
        save_agent(out / "imitated.pt")  # the cloned player, before PPO changes it
        net.eval()
        row0 = {"update": 0, "global_step": 0, "elapsed_s": round(time.time() - t_start, 2)}
        row0.update(evaluate(net, cfg, cfg.eval_baseline, cfg.eval_games, 10**6))
        net.train()
        log_row(row0, 0)
    # a resumed run continues on fresh games (seeded by the update count)
    obs, info = venv.reset(seed=cfg.seed + update * n)
    bar = tqdm(total=num_updates * batch_steps, initial=global_step, unit="step",
               disable=not cfg.progress, smoothing=0.1)  # fmt: skip
    while update < num_updates:
        t0 = time.time()
        if cfg.anneal_lr:
            optim.param_groups[0]["lr"] = cfg.lr * (1.0 - update / num_updates)
        if pool and n_pool:
            opp_net.load_state_dict(pool[int(np_rng.integers(len(pool)))])
        else:
            opp_net.load_state_dict(net.state_dict())
        finished: dict[int, list[float]] = {0: [], 1: [], 2: []}

        # -- rollout --------------------------------------------------------------------------
        for t in range(T):
            cur = info["current_player"]
            mask = obs["action_mask"] == 1
            x = add_features(cfg.features, obs["observation"])
            with torch.no_grad():
                logits, value = net(torch.from_numpy(x).to(dev), torch.from_numpy(mask).to(dev))
                dist = torch.distributions.Categorical(logits=logits)
                action = dist.sample()
                logp = dist.log_prob(action)
            a = action.cpu().numpy().copy()
            train = (role == 0) | (cur == learner_seat)
            rows = np.flatnonzero(~train & (role == 1))
            if rows.size:
                a[rows] = policy_actions(opp_net, x[rows], mask[rows])
            rows = np.flatnonzero(~train & (role == 2))
            if rows.size:
                o, m = obs["observation"][rows], obs["action_mask"][rows]
                a[rows] = baseline(o, m, venv.game, rows)
            xs[t], masks[t], acts[t], curs[t], trains[t] = x, mask, a, cur, train
            score = shaping_score(cfg, x)
            if score is not None:
                phis[t] = score
            logps[t], vals[t] = logp.cpu().numpy(), value.cpu().numpy()
            obs, rewards, term, trunc, info = venv.step(a)
            rewards = reward_of(rewards, term | trunc)
            rews[t], dones[t] = rewards, term | trunc
            ep_ret += rewards
            for i in np.flatnonzero(dones[t]):
                r = role[i]
                finished[r].append(ep_ret[i, 0 if r == 0 else learner_seat[i]])
            ep_ret[dones[t]] = 0.0
        global_step += batch_steps

        # -- bootstrap values: every seat's next decision, from its own observation -----------
        next_values = np.zeros((n, num_players))
        cur = info["current_player"]
        x_next = [add_features(cfg.features, obs["observation"])]
        who = [(np.arange(n), cur)]
        for p in range(num_players):
            rows = np.flatnonzero(cur != p)
            o = np.stack([venv.game.observe(int(i), p) for i in rows]) if rows.size else None
            if o is not None:
                x_next.append(add_features(cfg.features, o))
                who.append((rows, np.full(rows.size, p)))
        with torch.no_grad():
            h = net.trunk(torch.from_numpy(np.concatenate(x_next)).to(dev))
            v = net.value(h).squeeze(-1).cpu().numpy()
        k = 0
        for rows, seats in who:
            next_values[rows, seats] = v[k : k + rows.size]
            k += rows.size
        coef = cfg.shaping * (1.0 - update / num_updates)
        x_all = np.concatenate(x_next)
        score = shaping_score(cfg, x_all)
        phi = next_phi = None
        if coef and score is not None:
            next_phi, k = np.zeros((n, num_players)), 0
            for rows, seats in who:
                next_phi[rows, seats] = coef * score[k : k + rows.size]
                k += rows.size
            phi = coef * phis
        adv = compute_gae(
            vals, rews, dones, curs, trains, next_values, cfg.gamma, cfg.gae_lambda, phi, next_phi
        )
        ret = adv + vals

        # -- PPO update on the learner's decisions --------------------------------------------
        sel = trains.reshape(-1)
        x_sel, mask_sel = xs.reshape(-1, in_size)[sel], masks.reshape(-1, num_actions)[sel]
        b_x = torch.from_numpy(x_sel).to(dev)
        b_mask = torch.from_numpy(mask_sel).to(dev)
        b_act = torch.from_numpy(acts.reshape(-1)[sel]).to(dev)
        b_logp = torch.from_numpy(logps.reshape(-1)[sel]).to(dev)
        b_adv = torch.from_numpy(adv.reshape(-1)[sel].astype(np.float32)).to(dev)
        b_ret = torch.from_numpy(ret.reshape(-1)[sel].astype(np.float32)).to(dev)
        b_val = torch.from_numpy(vals.reshape(-1)[sel]).to(dev)
        b_adv = (b_adv - b_adv.mean()) / (b_adv.std() + 1e-8)  # over the batch: no tiny minibatch
        m = b_x.shape[0]
        mb = max(1, math.ceil(m / cfg.num_minibatches))
        # imitation: the teacher's moves on a sample of the learner's decisions, a cross-entropy
        # term annealed to 0 (a warm start towards the rule-based play, then PPO alone)
        t_coef = cfg.teacher_coef * max(
            0.0, 1.0 - update / max(1.0, cfg.teacher_until * num_updates)
        )
        t_idx = None
        if teacher is not None and t_coef > 0.0:
            rows = np_rng.choice(m, size=min(m, cfg.teacher_samples), replace=False)
            t_act = teacher(x_sel[rows, :obs_size], mask_sel[rows].astype(np.int8))
            t_rows = torch.from_numpy(rows).to(dev)
            t_x, t_mask = b_x[t_rows], b_mask[t_rows]
            t_target = torch.from_numpy(np.asarray(t_act, dtype=np.int64)).to(dev)
            t_idx = np.array_split(np.arange(rows.size), max(1, math.ceil(m / mb)))
        clipfracs, stats, t_losses, t_agree = [], {}, [], []
        for _ in range(cfg.update_epochs):
            perm = torch.from_numpy(np_rng.permutation(m)).to(dev)
            for k, s in enumerate(range(0, m, mb)):
                idx = perm[s : s + mb]
                logits, newv = net(b_x[idx], b_mask[idx])
                dist = torch.distributions.Categorical(logits=logits)
                newlogp = dist.log_prob(b_act[idx])
                entropy = dist.entropy().mean()
                logratio = newlogp - b_logp[idx]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > cfg.clip_coef).float().mean().item())
                mb_adv = b_adv[idx]
                pg_loss = torch.max(
                    -mb_adv * ratio, -mb_adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)
                ).mean()
                v_loss = 0.5 * ((newv - b_ret[idx]) ** 2).mean()
                loss = pg_loss - cfg.ent_coef * entropy + cfg.vf_coef * v_loss
                if t_idx is not None and k < len(t_idx) and t_idx[k].size:
                    j = torch.from_numpy(t_idx[k]).to(dev)
                    t_logits, _ = net(t_x[j], t_mask[j])
                    t_loss = torch.nn.functional.cross_entropy(t_logits, t_target[j])
                    loss = loss + t_coef * t_loss
                    t_losses.append(t_loss.item())
                    t_agree.append((t_logits.argmax(1) == t_target[j]).float().mean().item())
                optim.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
                optim.step()
        var_y = b_ret.var().item()
        stats = {
            "policy_loss": pg_loss.item(),
            "value_loss": v_loss.item(),
            "entropy": entropy.item(),
            "approx_kl": approx_kl.item(),
            "clipfrac": float(np.mean(clipfracs)),
            "explained_variance": 1 - (b_ret - b_val).var().item() / var_y if var_y > 0 else 0.0,
            "teacher_coef": t_coef if teacher is not None else "",
            "teacher_loss": float(np.mean(t_losses)) if t_losses else "",
            "teacher_agreement": float(np.mean(t_agree)) if t_agree else "",
        }
        update += 1
        if cfg.pool_every and update % cfg.pool_every == 0:
            pool.append({k: v.clone() for k, v in net.state_dict().items()})
            pool = pool[-cfg.pool_size :]

        elapsed = elapsed0 + time.time() - t_start
        row: dict[str, Any] = {
            "update": update,
            "global_step": global_step,
            "elapsed_s": round(elapsed, 2),
            "sps": round(batch_steps / (time.time() - t0)),
            "lr": optim.param_groups[0]["lr"],
            "train_samples": m,
            "episodes": sum(len(v) for v in finished.values()),
            "selfplay_return": np.mean(finished[0]) if finished[0] else "",
            "pool_return": np.mean(finished[1]) if finished[1] else "",
            "baseline_return": np.mean(finished[2]) if finished[2] else "",
            "pool_size": len(pool),
            **stats,
        }
        if (cfg.eval_every and update % cfg.eval_every == 0) or update == num_updates:
            net.eval()
            row.update(evaluate(net, cfg, cfg.eval_baseline, cfg.eval_games, 10**6 + update))
            net.train()
        log_row(row, global_step)
        bar.update(batch_steps)
        bar.set_postfix(sps=row["sps"], win=f"{row.get('eval_win_rate', float('nan')):.3f}")
        if update % cfg.checkpoint_every == 0 or update == num_updates:
            save()
    bar.close()
    csv_file.close()
    total_s = elapsed0 + time.time() - t_start
    print(f"{global_step:,} env steps in {total_s:.1f} s: {global_step / total_s:,.0f} steps/s")


if __name__ == "__main__":
    main()
