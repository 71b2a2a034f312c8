"""Masked PPO with batched self-play over ``rummy_env.make_vec`` (CleanRL style).

Thousands of games step together. Every game has a role, fixed by its index:

- self-play games: every seat is the current network, and every decision is training data;
- pool games: one seat is the learner, the others a past checkpoint drawn from the pool
  (a snapshot is added every ``pool_every`` updates);
- baseline games: one seat is the learner, the others the game's baseline agent (``simple``
  for Gin Rummy, else ``random`` unless a ``greedy`` agent is registered).

Rewards are zero-sum and arrive at the end of a hand, so each seat's decisions form their own
trajectory inside a game: a decision's reward is what the seat received until its next decision,
and GAE runs over each (game, seat) sequence separately. Opponents' decisions are never trained
on. Illegal actions get a logit of -1e8, so no policy ever picks one.

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

The pieces live beside this script in ``selfplay/``: ``config`` (the flags), ``opponents``
(game roles, pool, baseline), ``rollout`` (the games and each rollout), ``advantages``
(training rewards, GAE), ``cloning`` (behaviour cloning, DAgger, the teacher), ``network``
(layout, start, agent files) and ``progress`` (evaluation, logs, learning curve).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np
import torch
from tqdm import tqdm

import rummy_env
from rummy_agents.arena.registry import make_agent
from rummy_agents.ppo_net import MaskedActorCritic, legal_actions, sparse_rows
from selfplay.cloning import imitate, make_teacher
from selfplay.config import Config, finalize, parse_command_line, resolve_device, resume_config
from selfplay.network import card_head_only, init_weights, network_meta, new_network, save_agent
from selfplay.opponents import BASELINE, POOL, SELF_PLAY, Opponents, batched
from selfplay.progress import ProgressLog, evaluate, plot_curve
from selfplay.rollout import Batch, Rollout, use_sparse


def main(args: list[str] | None = None) -> None:
    """Train (or, with ``--resume``, go on training) from the command line ``args``
    (``sys.argv`` when None)."""
    cfg, state = resume_config(*parse_command_line(args, description=__doc__))
    cfg = finalize(cfg)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=2))

    dev = resolve_device(cfg.device)
    torch.set_num_threads(cfg.torch_threads)
    numba.set_num_threads(min(cfg.numba_threads, numba.config.NUMBA_NUM_THREADS))
    np_rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)

    # the games, the network and who plays against it
    n = cfg.num_envs
    venv = rummy_env.make_vec(cfg.game, n, seed=cfg.seed, **cfg.options)
    obs_size = venv.single_observation_space["observation"].shape[0]
    meta = network_meta(cfg, obs_size, venv.single_action_space.n)
    net = new_network(meta).to(dev).train()
    if cfg.init_agent:
        net.load_state_dict(init_weights(cfg.init_agent, meta))
    if cfg.card_head_only:
        card_head_only(net)
    pool_net = new_network(meta).to(dev)
    optim = torch.optim.Adam(net.parameters(), lr=cfg.lr, eps=1e-5)
    baseline = batched(make_agent(cfg.baseline, seed=cfg.seed, game=cfg.game))
    opponents = Opponents(
        n, venv.num_players, cfg.self_play_frac, cfg.pool_frac, pool_net, baseline,
        cfg.legal_logits, cfg.sparse_inputs,
    )  # fmt: skip
    teacher = make_teacher(cfg)

    update, global_step, elapsed0 = 0, 0, 0.0
    if state is not None:
        net.load_state_dict(state["net"])
        optim.load_state_dict(state["optim"])
        update, global_step, elapsed0 = state["update"], state["global_step"], state["elapsed"]
        opponents.pool = state["pool"]
        np_rng.bit_generator.state = state["np_rng"]
        torch.set_rng_state(state["torch_rng"])
    batch_steps = n * cfg.num_steps
    num_updates = math.ceil(cfg.total_steps / batch_steps)
    log = ProgressLog(
        out, resume_after=update if state is not None else None, tensorboard=cfg.tensorboard
    )
    rollout = Rollout(cfg, venv, opponents, meta["obs_size"], dev)

    def save() -> None:
        """The player (``agent.pt``, and ``agent_<step>.pt`` with ``--keep-agents``), the
        resumable ``checkpoint.pt`` and the learning curve."""
        save_agent(net, meta, global_step, out / "agent.pt")
        if cfg.keep_agents:  # to pick among them with the arena afterwards
            save_agent(net, meta, global_step, out / f"agent_{global_step}.pt")
        torch.save(
            {
                "config": dataclasses.asdict(cfg),
                "net": net.state_dict(),
                "optim": optim.state_dict(),
                "update": update,
                "global_step": global_step,
                "elapsed": elapsed0 + time.time() - t_start,
                "pool": opponents.pool,
                "np_rng": np_rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
            },
            out / "checkpoint.pt",
        )
        plot_curve(log.path, out / "learning_curve.png", f"{cfg.game}: PPO vs {cfg.eval_baseline}")

    t_start = time.time()
    if state is None and cfg.imitate_samples:
        imitate(net, cfg, teacher, dev, out, lambda path: save_agent(net, meta, 0, path))
        save_agent(net, meta, 0, out / "imitated.pt")  # the cloned player, before PPO changes it
        net.eval()
        row0 = {"update": 0, "global_step": 0, "elapsed_s": round(time.time() - t_start, 2)}
        row0.update(evaluate(net, cfg, cfg.eval_baseline, cfg.eval_games, 10**6))
        net.train()
        log.write(row0, 0)
    # a resumed run continues on fresh games (seeded by the update count)
    rollout.reset(seed=cfg.seed + update * n)
    bar = tqdm(total=num_updates * batch_steps, initial=global_step, unit="step",
               disable=not cfg.progress, smoothing=0.1)  # fmt: skip
    # the bar shows the latest evaluation's win rate ("-" before the first one), never nan
    last_win = "-"
    while update < num_updates:
        t0 = time.time()
        if cfg.anneal_lr:
            optim.param_groups[0]["lr"] = cfg.lr * (1.0 - update / num_updates)
        opponents.draw(net, np_rng)
        finished = rollout.collect(net)
        global_step += batch_steps
        adv, ret = rollout.advantages(net, cfg.shaping * (1.0 - update / num_updates))
        batch = rollout.learner_batch(adv, ret)
        # imitation: the teacher's moves on a sample of the learner's decisions, a cross-entropy
        # term annealed to 0 (a warm start towards the rule-based play, then PPO alone)
        t_coef = cfg.teacher_coef * max(
            0.0, 1.0 - update / max(1.0, cfg.teacher_until * num_updates)
        )
        stats = ppo_update(net, optim, batch, cfg, teacher, t_coef, obs_size, np_rng, dev)
        update += 1
        if cfg.pool_every and update % cfg.pool_every == 0:
            opponents.add(net, cfg.pool_size)

        row: dict[str, Any] = {
            "update": update,
            "global_step": global_step,
            "elapsed_s": round(elapsed0 + time.time() - t_start, 2),
            "sps": round(batch_steps / (time.time() - t0)),
            "lr": optim.param_groups[0]["lr"],
            "train_samples": batch.action.size,
            "episodes": sum(len(v) for v in finished.values()),
            "selfplay_return": np.mean(finished[SELF_PLAY]) if finished[SELF_PLAY] else "",
            "pool_return": np.mean(finished[POOL]) if finished[POOL] else "",
            "baseline_return": np.mean(finished[BASELINE]) if finished[BASELINE] else "",
            "pool_size": len(opponents.pool),
            **stats,
        }
        if (cfg.eval_every and update % cfg.eval_every == 0) or update == num_updates:
            net.eval()
            row.update(evaluate(net, cfg, cfg.eval_baseline, cfg.eval_games, 10**6 + update))
            net.train()
        log.write(row, global_step)
        bar.update(batch_steps)
        if "eval_win_rate" in row:
            last_win = f"{row['eval_win_rate']:.3f}"
        bar.set_postfix(sps=row["sps"], win=last_win)
        if update % cfg.checkpoint_every == 0 or update == num_updates:
            save()
    bar.close()
    log.close()
    total_s = elapsed0 + time.time() - t_start
    print(f"{global_step:,} env steps in {total_s:.1f} s: {global_step / total_s:,.0f} steps/s")


def ppo_update(
    net: MaskedActorCritic,
    optim: torch.optim.Optimizer,
    batch: Batch,
    cfg: Config,
    teacher: Any,
    t_coef: float,
    obs_size: int,
    rng: np.random.Generator,
    dev: torch.device,
) -> dict[str, Any]:
    """``update_epochs`` passes of clipped PPO over the learner's decisions ``batch``
    (advantages normalised over the whole batch), in ``num_minibatches`` minibatches; with a
    ``teacher`` and ``t_coef > 0``, plus ``t_coef`` times the cross-entropy with the teacher's
    moves on ``teacher_samples`` of the decisions (read from their first ``obs_size`` values,
    the observation). Returns the update's statistics (``progress.csv`` columns)."""
    # the learner's rows are read out of the rollout's arrays one minibatch at a time
    x_all, mask_all = torch.from_numpy(batch.x), torch.from_numpy(batch.mask)
    rows_all = torch.from_numpy(batch.rows)
    b_act = torch.from_numpy(batch.action).to(dev)
    b_logp = torch.from_numpy(batch.logp).to(dev)
    b_adv = torch.from_numpy(batch.adv).to(dev)
    b_ret = torch.from_numpy(batch.ret).to(dev)
    b_val = torch.from_numpy(batch.value).to(dev)
    b_adv = (b_adv - b_adv.mean()) / (b_adv.std() + 1e-8)  # over the batch: no tiny minibatch
    m = batch.rows.size
    mb = max(1, math.ceil(m / cfg.num_minibatches))
    t_idx = None
    if teacher is not None and t_coef > 0.0:
        rows = rng.choice(m, size=min(m, cfg.teacher_samples), replace=False)
        picked = batch.rows[rows]
        t_x, t_mask = batch.x[picked], batch.mask[picked]
        t_act = teacher(t_x[:, :obs_size], t_mask.astype(np.int8))
        t_x, t_mask = torch.from_numpy(t_x).to(dev), torch.from_numpy(t_mask).to(dev)
        t_target = torch.from_numpy(np.asarray(t_act, dtype=np.int64)).to(dev)
        # one slice of the sample per minibatch
        t_idx = np.array_split(np.arange(rows.size), max(1, math.ceil(m / mb)))
    s_idx = s_val = legal_all = valid_all = pick_all = None
    if use_sparse(cfg, dev):  # as the rollout packed them, else packed here
        s_idx, s_val = batch.sparse or sparse_rows(batch.x, batch.rows)
    if cfg.legal_logits:  # each decision's legal ids, and where its action is among them
        legal_all, valid_all = (t.to(dev) for t in legal_actions(batch.mask, batch.rows))
        pick_all = ((legal_all == b_act[:, None]) & valid_all).int().argmax(1)
    clipfracs, t_losses, t_agree = [], [], []
    for _ in range(cfg.update_epochs):
        perm = torch.from_numpy(rng.permutation(m)).to(dev)
        for k, s in enumerate(range(0, m, mb)):
            idx = perm[s : s + mb]
            at = rows_all[idx.cpu()]
            if legal_all is not None:
                legal, valid = legal_all[idx], valid_all[idx]
                if s_idx is not None:  # the rows' packing, and the heads read x's columns
                    sparse = (s_idx[idx], s_val[idx])
                    logits, newv = net.forward_legal(x_all, legal, valid, sparse, at)
                else:
                    logits, newv = net.forward_legal(x_all[at].to(dev), legal, valid)
                dist = torch.distributions.Categorical(logits=logits)
                newlogp = dist.log_prob(pick_all[idx])
            else:
                logits, newv = net(x_all[at].to(dev), mask_all[at].to(dev))
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
    return {
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


if __name__ == "__main__":
    main()
