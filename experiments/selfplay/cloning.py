"""Learning from a teacher agent: behaviour cloning and DAgger before PPO, and the teacher
that labels a sample of the learner's decisions at each update.

With ``--imitate-samples N`` the run starts by behaviour cloning: the teacher plays every seat
of ``num_envs`` games until ``N`` of its decisions with a choice are recorded, and the network
learns its moves (cross-entropy) and the outcome of each decision's hand (the value head, so
that PPO's first advantages are not noise) for ``imitate_epochs`` passes. ``--dagger-rounds R``
continues for R rounds of DAgger: the student plays one seat against the teacher, the teacher
labels every decision of those games, and the network trains on the growing record.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

import rummy_env
from rummy_agents.arena.registry import make_agent
from rummy_agents.features import add_features
from rummy_agents.ppo_net import MaskedActorCritic
from selfplay.advantages import TrainRewards, returns_to_go
from selfplay.config import Config
from selfplay.opponents import batched, policy_actions


def make_teacher(cfg: Config) -> Any:
    """The teacher (``--teacher``) as :func:`~selfplay.opponents.batched` plays it, or None.

    Raises:
        ValueError: for a teacher that plays on game states (the compiled ``heuristic``) with
            a per-update imitation loss: it cannot label stored decisions.
    """
    if not cfg.teacher:
        return None
    teacher_agent = make_agent(cfg.teacher, seed=cfg.seed, game=cfg.game)
    if hasattr(teacher_agent, "act_game") and cfg.teacher_coef > 0:
        raise ValueError(
            f"--teacher {cfg.teacher} plays on game states, so it can label only its own "
            "games (--imitate-samples), not stored decisions: add --teacher-coef 0"
        )
    return batched(teacher_agent)


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
        x = add_features(cfg.features, obs["observation"][rows], cfg.game, cfg.options)
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
                played[rows[mine]] = policy_actions(
                    student,
                    x[mine],
                    ms[-1][mine],
                    greedy=True,
                    legal=cfg.legal_logits,
                    sparse=cfg.sparse_inputs,
                )
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
