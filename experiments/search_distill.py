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
divergence to the old network's move probabilities everywhere, or with ``--values-tau`` the
cross-entropy to a target built from the candidates' values (:func:`value_targets`: the old
probabilities, with the mass of the candidates moved among them by ``exp(value / tau)``, as in
MPO's policy improvement step). 5% of the hands are held out,
on which it reports the agreement with the search, with the search where it departed from the
old network, and with the old network. It writes ``agent.pt``. On 98,116 recorded decisions
neither loss on the chosen moves made the network stronger; on 245,750, the value targets
(``--values-tau 0.003``) gained about +0.1 point a hand, within the noise (docs/experiments.md,
2026-11-28).

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


FIELDS = {  # what is recorded of each decision, and its dtype
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


class _Recorder:
    """``ppo_search`` seen through its moves: each decision with a choice is appended to
    ``out`` (the fields of :data:`FIELDS` but the hand's, which the caller adds)."""

    def __init__(self, search: Any, out: dict[str, list[Any]]) -> None:
        self.search, self.out = search, out
        self.name = search.name

    def act(self, observation: Any, view: Any) -> int:
        self.search.last = None
        a = int(self.search.act(observation, view))
        if int(observation["action_mask"].sum()) > 1:
            stats = self.search.last
            cands = np.full(K, -1, np.int16)
            values = np.full(K, np.nan, np.float32)
            net = a
            if stats is not None and stats.first is not None:
                net = int(stats.first)
                ranked = sorted(stats.root_values.items(), key=lambda kv: -kv[1])
                for j, (c, v) in enumerate(ranked[:K]):
                    cands[j], values[j] = c, v
            self.out["obs"].append(np.asarray(observation["observation"], np.float16))
            self.out["mask"].append(np.asarray(observation["action_mask"]) == 1)
            self.out["action"].append(a)
            self.out["net"].append(net)
            self.out["cands"].append(cands)
            self.out["values"].append(values)
        return a


def _collect_worker(job: dict[str, Any]) -> dict[str, np.ndarray]:
    """Play hands ``job["first"], job["first"] + job["step"], ...`` until the deadline."""
    from rummy_agents.arena.play import play_game
    from rummy_agents.arena.registry import make_agent
    from rummy_agents.arena.runner import DEFAULT_MAX_DECISIONS
    from rummy_agents.ismcts.policy import PolicySearchAgent
    from rummy_env import gin_rummy_v0

    env = gin_rummy_v0.raw_env()
    search = PolicySearchAgent(
        seed=job["seed"] + job["first"], checkpoint=job["init"], worlds=job["worlds"]
    )
    opponents = [
        make_agent(s, seed=job["seed"] + i, game="gin_rummy")
        for i, s in enumerate(job["opponents"])
    ]
    out: dict[str, list[Any]] = {k: [] for k in FIELDS}
    recorder = _Recorder(search, out)
    h = job["first"]
    while h < job["hands"] and time.time() < job["deadline"]:
        seat = h % 2
        opp_i = (h // 2) % len(opponents)
        seats = [recorder, opponents[opp_i]][:: 1 if seat == 0 else -1]
        start = len(out["action"])
        game = play_game(env, seats, job["seed"] * 1_000_003 + h, DEFAULT_MAX_DECISIONS)
        n = len(out["action"]) - start
        out["hand"] += [h] * n
        out["opponent"] += [opp_i] * n
        out["ret"] += [game["returns"][seat]] * n
        h += job["step"]
    return {k: np.asarray(v, dtype=FIELDS[k]) for k, v in out.items()}


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


def value_targets(
    old_logp: np.ndarray, mask: np.ndarray, cands: np.ndarray, values: np.ndarray, tau: float
) -> np.ndarray:
    """Policy-improvement targets from the candidates' rollout values.

    Each row's target is the old network's distribution, except that the probability it puts on
    the row's candidates is shared among them in proportion to ``p_old(a) * exp(value(a) / tau)``
    (the candidates' total is kept: the moves no rollout scored keep their old probabilities).
    ``tau`` is in the values' units: large keeps the old network, small gives all the
    candidates' mass to the best one. Rows without a search (no candidate) keep the old network.

    Args:
        old_logp: (N, A) log-probabilities of the old network (``-inf`` or any value off the mask).
        mask: (N, A) legal moves.
        cands: (N, K) candidate moves, ``-1`` for an empty slot.
        values: (N, K) their mean rollout values (ignored at empty slots).
        tau: the temperature, > 0.

    Returns:
        (N, A) float64 targets: each row sums to 1 and is zero off the mask.
    """
    values = np.asarray(values, np.float64)
    p = np.where(mask, np.exp(np.where(mask, old_logp, 0.0)), 0.0).astype(np.float64)
    p /= p.sum(1, keepdims=True)
    rows, slots = np.nonzero(cands >= 0)
    if rows.size == 0:
        return p
    acts = cands[rows, slots].astype(np.int64)
    n, k = cands.shape
    logw = np.full((n, k), -np.inf)
    logw[rows, slots] = np.log(np.maximum(p[rows, acts], 1e-30)) + values[rows, slots] / tau
    top = logw.max(1, keepdims=True)
    logw -= np.where(np.isfinite(top), top, 0.0)  # rows without candidates stay -inf, not nan
    w = np.where(cands >= 0, np.exp(logw), 0.0)
    mass = np.zeros(n)
    np.add.at(mass, rows, p[rows, acts])
    share = w / np.maximum(w.sum(1, keepdims=True), 1e-300)
    q = p.copy()
    q[rows, acts] = mass[rows] * share[rows, slots]
    return q


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
    held = rng.choice(hands, max(1, hands.size // 20), replace=False)
    test = np.flatnonzero(np.isin(data["hand"], held))
    train_rows = np.setdiff1d(np.arange(a.numel()), test)
    # with the KL term the moves the search kept are learned through it, not cross-entropy
    weight = torch.where(dep, args.departure_weight, 0.0 if args.kl_coef > 0 else 1.0)
    if args.kl_coef > 0 or args.values_tau > 0:  # the old network's move probabilities
        with torch.no_grad():
            old_logp = torch.cat(
                [
                    torch.log_softmax(net(x[s : s + 8192], m[s : s + 8192])[0], 1)
                    for s in range(0, a.numel(), 8192)
                ]
            )
    if args.values_tau > 0:
        target = torch.from_numpy(
            value_targets(
                old_logp.numpy(), data["mask"], data["cands"], data["values"], args.values_tau
            ).astype(np.float32)
        )

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
            if args.values_tau > 0:  # cross-entropy to the soft targets, legal moves only
                logp = torch.log_softmax(logits, 1).masked_fill(~m[j], 0.0)
                loss = -(target[j] * logp).sum(1).mean()
            else:
                ce = torch.nn.functional.cross_entropy(logits, a[j], reduction="none")
                if args.kl_coef > 0:  # every row counts the same
                    logp = torch.log_softmax(logits, 1)
                    p_old = old_logp[j].exp()
                    kl = (p_old * (old_logp[j] - logp)).masked_fill(~m[j], 0.0).sum(1)
                    loss = (ce * weight[j]).mean() + args.kl_coef * kl.mean()
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
    t.add_argument(
        "--values-tau",
        type=float,
        default=0.0,
        help="> 0: learn value_targets (the candidates' values at this temperature) instead",
    )
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", required=True)
    args = p.parse_args()
    collect(args) if args.cmd == "collect" else train(args)


if __name__ == "__main__":
    main()
