"""Expert iteration for Gin Rummy: the moves of ``ppo_search`` distilled into its network.

``ppo_search`` (:class:`~rummy_agents.ismcts.policy.PolicySearchAgent`) plays the network's move
unless paired rollouts show another one is better. This script records what it plays and teaches
the network those moves, so that the network alone plays nearer the search, and the search on
top of the new network starts from a better move and rolls out with a better policy (expert
iteration: Anthony et al., 2017; Silver et al., 2017).

``collect``: ``ppo_search`` plays single hands (seat ``h % 2`` of hand ``h``) against the agents
of ``--opponents`` in turn, in ``--procs`` processes (one numba and one BLAS thread each), until
``--hands`` hands or ``--seconds`` have passed. Every decision of the searching seat with more
than one legal move is recorded: the raw observation, the mask, the move played, the network's
own move (where they differ the search departed from it), and the candidates the search
compared with their mean rollout values.

``train``: the network (``--init``: a ``.pt``/``.npz`` agent; default the published Gin agent)
learns the recorded moves: cross-entropy on every move (departures weighted by
``--departure-weight``), or with ``--kl-coef`` cross-entropy on the departures only and the KL
divergence to the old network's move probabilities everywhere. 5% of the hands are held out,
on which it reports the agreement with the search, with the search where it departed from the
old network, and with the old network. It writes ``agent.pt``. On 98,116 recorded decisions
neither loss made the network stronger (docs/experiments.md, 2026-11-28).

Example (the run of docs/experiments.md; ``collect`` there on a 16-core machine)::

    python experiments/search_distill.py collect --procs 16 --seconds 420 --seed 200 \
        --out runs/ei/data1.npz
    python experiments/search_distill.py train runs/ei/data1.npz --kl-coef 1 --out runs/ei/kl_w1
    rummy-env arena --game gin_rummy --agents ppo,ppo@checkpoint=runs/ei/kl_w1/agent.pt,simple
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

K = 3  # candidate slots recorded (ppo_search's root_k default)


def _collect_worker(job: dict[str, Any]) -> dict[str, np.ndarray]:
    """Play hands ``job["first"], job["first"] + job["step"], ...`` until the deadline."""
    from rummy_agents.arena.registry import make_agent
    from rummy_agents.ismcts.policy import PolicySearchAgent
    from rummy_env import gin_rummy_v0
    from rummy_env.envs.view import SeatView

    env = gin_rummy_v0.raw_env()
    search = PolicySearchAgent(
        seed=job["seed"] + job["first"], checkpoint=job["init"], worlds=job["worlds"]
    )
    opponents = [
        make_agent(s, seed=job["seed"] + i, game="gin_rummy")
        for i, s in enumerate(job["opponents"])
    ]
    names = list(env.possible_agents)
    out: dict[str, list[Any]] = {
        k: []
        for k in ("obs", "mask", "action", "net", "cands", "values", "hand", "opponent", "ret")
    }
    h = job["first"]
    while h < job["hands"] and time.time() < job["deadline"]:
        seat = h % 2
        opp_i = (h // 2) % len(opponents)
        env.reset(seed=job["seed"] * 1_000_003 + h)
        views = {a: SeatView(env, a) for a in names}
        start = len(out["action"])
        ret = 0.0
        while not all(env.terminations[a] or env.truncations[a] for a in names):
            agent = env.agent_selection
            obs = env.observe(agent)
            if names.index(agent) == seat:
                search.last = None
                a = int(search.act(obs, views[agent]))
                if int(obs["action_mask"].sum()) > 1:
                    stats = search.last
                    cands = np.full(K, -1, np.int16)
                    values = np.full(K, np.nan, np.float32)
                    net = a
                    if stats is not None and stats.first is not None:
                        net = int(stats.first)
                        ranked = sorted(stats.root_values.items(), key=lambda kv: -kv[1])
                        for j, (c, v) in enumerate(ranked[:K]):
                            cands[j], values[j] = c, v
                    out["obs"].append(np.asarray(obs["observation"], np.float16))
                    out["mask"].append(np.asarray(obs["action_mask"]) == 1)
                    out["action"].append(a)
                    out["net"].append(net)
                    out["cands"].append(cands)
                    out["values"].append(values)
                    out["hand"].append(h)
                    out["opponent"].append(opp_i)
            else:
                a = int(opponents[opp_i].act(obs, views[agent]))
            env.step(a)
            ret += float(env.rewards.get(names[seat], 0.0))
        out["ret"] += [ret] * (len(out["action"]) - start)
        h += job["step"]
    dtypes = {
        "obs": np.float16,
        "mask": bool,
        "action": np.int16,
        "net": np.int16,
        "cands": np.int16,
        "values": np.float32,
        "hand": np.int32,
        "opponent": np.int8,
        "ret": np.float32,
    }
    return {k: np.asarray(v, dtype=dtypes[k]) for k, v in out.items()}


def collect(args: argparse.Namespace) -> None:
    """Play and record ``ppo_search``'s decisions (see the module's docstring)."""
    import multiprocessing as mp

    from rummy_agents.arena.runner import one_thread_each

    deadline = time.time() + args.seconds
    jobs = [
        {
            "first": i,
            "step": args.procs,
            "hands": args.hands,
            "deadline": deadline,
            "seed": args.seed,
            "init": args.init,
            "worlds": args.worlds,
            "opponents": args.opponents.split(","),
        }
        for i in range(args.procs)
    ]
    t0 = time.time()
    if args.procs == 1:
        parts = [_collect_worker(jobs[0])]
    else:  # as the arena's workers: one numba and one BLAS thread each
        with one_thread_each(), mp.get_context("spawn").Pool(args.procs) as pool:
            parts = pool.map(_collect_worker, jobs)
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    hands = np.unique(data["hand"]).size
    dep = data["action"] != data["net"]
    meta = {
        "opponents": args.opponents,
        "seed": args.seed,
        "worlds": args.worlds,
        "init": args.init,
        "seconds": round(time.time() - t0, 1),
        "procs": args.procs,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, meta=np.array(json.dumps(meta)), **data)
    print(
        f"{hands} hands, {data['action'].size} decisions, {dep.mean():.1%} departures from the "
        f"network, {meta['seconds']} s -> {args.out}"
    )


def _load_data(paths: list[str]) -> dict[str, np.ndarray]:
    parts = []
    for i, p in enumerate(paths):
        with np.load(p) as z:
            d = {k: z[k] for k in z.files if k != "meta"}
        d["hand"] = d["hand"].astype(np.int64) + (i << 32)  # hands of different files differ
        parts.append(d)
    return {k: np.concatenate([d[k] for d in parts]) for k in parts[0]}


def train(args: argparse.Namespace) -> None:
    """Fine-tune the network on recorded moves (see the module's docstring)."""
    import torch

    from rummy_agents.features import FeatureSet
    from rummy_agents.ppo_agent import load_checkpoint
    from rummy_agents.ppo_net import build_checkpoint, load_network
    from rummy_agents.published import published_path

    torch.manual_seed(args.seed)
    init = args.init or str(published_path("gin_rummy"))
    meta, weights = load_checkpoint(init)
    meta = {k: v for k, v in meta.items() if k not in ("format", "precision")}
    net = load_network({**meta, "state_dict": {k: torch.from_numpy(v) for k, v in weights.items()}})
    data = _load_data(args.data)
    feats = FeatureSet(meta["game"], meta["features"], meta.get("options") or {})
    x = torch.from_numpy(np.asarray(feats(data["obs"].astype(np.float32)), dtype=np.float32))
    m = torch.from_numpy(data["mask"])
    a = torch.from_numpy(data["action"].astype(np.int64))
    old = torch.from_numpy(data["net"].astype(np.int64))
    dep = a != old
    rng = np.random.default_rng(args.seed)
    hands = np.unique(data["hand"])
    held = set(rng.choice(hands, max(1, hands.size // 20), replace=False).tolist())
    test = np.flatnonzero([h in held for h in data["hand"]])
    train_rows = np.setdiff1d(np.arange(a.numel()), test)
    weight = torch.where(dep, args.departure_weight, 1.0)
    if args.kl_coef > 0:  # the old network's move probabilities, kept where the search agreed
        with torch.no_grad():
            old_logp = torch.cat(
                [
                    torch.log_softmax(net(x[s : s + 8192], m[s : s + 8192])[0], 1)
                    for s in range(0, a.numel(), 8192)
                ]
            )
        weight = torch.where(dep, args.departure_weight, 0.0)

    def agreement(rows: np.ndarray) -> dict[str, float]:
        with torch.no_grad():
            pick = net(x[rows], m[rows])[0].argmax(1)
        r, d = torch.from_numpy(rows), dep[rows]
        return {
            "search": float((pick == a[r]).float().mean()),
            "departures": float((pick == a[r])[d].float().mean()) if d.any() else math.nan,
            "old_net": float((pick == old[r]).float().mean()),
        }

    print(f"{a.numel()} decisions ({dep.float().mean():.1%} departures), {test.size} held out")
    print("before:", agreement(test))
    optim = torch.optim.Adam(net.parameters(), lr=args.lr, eps=1e-5)
    net.train()
    for epoch in range(args.epochs):
        perm = rng.permutation(train_rows)
        losses = []
        for s in range(0, perm.size, args.batch):
            j = torch.from_numpy(perm[s : s + args.batch])
            logits, _ = net(x[j], m[j])
            ce = torch.nn.functional.cross_entropy(logits, a[j], reduction="none")
            if args.kl_coef > 0:  # every row counts the same
                loss = (ce * weight[j]).mean()
                logp = torch.log_softmax(logits, 1)
                p_old = old_logp[j].exp()
                kl = (p_old * (old_logp[j] - logp)).masked_fill(~m[j], 0.0).sum(1)
                loss = loss + args.kl_coef * kl.mean()
            else:
                loss = (ce * weight[j]).sum() / weight[j].sum()
            optim.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            optim.step()
            losses.append(loss.item())
        net.eval()
        print(f"epoch {epoch + 1}: loss {np.mean(losses):.4f}, held out {agreement(test)}")
        net.train()
    net.eval()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta["distilled_from"] = [str(p) for p in args.data]
    torch.save(build_checkpoint(net, meta), out / "agent.pt")
    print(f"-> {out / 'agent.pt'}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="record ppo_search's decisions")
    c.add_argument("--opponents", default="simple,planner,ppo")
    c.add_argument("--hands", type=int, default=1_000_000)
    c.add_argument("--seconds", type=float, default=600.0)
    c.add_argument("--procs", type=int, default=2)
    c.add_argument("--worlds", type=int, default=128)
    c.add_argument("--init", default=None, help="the network (.pt/.npz); default: published")
    c.add_argument("--seed", type=int, default=100)
    c.add_argument("--out", required=True)
    t = sub.add_parser("train", help="fine-tune the network on recorded moves")
    t.add_argument("data", nargs="+")
    t.add_argument("--init", default=None)
    t.add_argument("--epochs", type=int, default=4)
    t.add_argument("--lr", type=float, default=1e-4)
    t.add_argument("--batch", type=int, default=512)
    t.add_argument("--departure-weight", type=float, default=1.0)
    t.add_argument(
        "--kl-coef",
        type=float,
        default=0.0,
        help="> 0: learn the departures only, and the old network's probabilities "
        "elsewhere (KL divergence, this weight)",
    )
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", required=True)
    args = p.parse_args()
    collect(args) if args.cmd == "collect" else train(args)


if __name__ == "__main__":
    main()
