"""How well Gin's opponent model knows the opponent's hand: belief variants scored on real hands.

``ppo_search`` plays each candidate move in determinizations drawn from a model of the opponent
(:func:`~rummy_agents.ismcts.gin.gin_belief_worlds`). Given the opponent's true hand, the search
wins far more (docs/experiments.md, 2026-11-28), so the model's accuracy is worth measuring on
its own. This script plays hands of the network (``ppo``, deterministic) against ``--opponent``
(seats alternating) and, at every decision of the network's seat, draws ``--worlds`` worlds from
each belief variant and scores them against the opponent's true hand:

- ``logloss``: the summed log loss (nats) of the true hand's cards under the worlds' card
  frequencies (``(k + 0.5) / (n + 1)``), over the cards the seat cannot place (those that are
  in some but not all of ``--worlds`` uniform worlds' opponent hands); lower is better;
- ``hits``: the mean number of the opponent's unplaceable cards a world deals it correctly.

A variant is ``name:field=value,field=value`` over :class:`~rummy_agents.ismcts.gin.GinBelief`'s
fields (``uniform`` is the uniform deal; ``default`` the present model), or
``filter:n=N,eps=E``: a :class:`RuleFilter` that follows the whole hand, weighing ``N``
particles of the opponent's hand by every public move it made under the rule policy (an exact
likelihood of ``simple``'s play, but for its errors ``E``): what the hand's history would
add, which ``ppo_search`` does not keep. Every variant sees the same decisions and its own
random stream.

Example (docs/experiments.md, 2026-11-28)::

    python experiments/belief_fit.py --hands 300 --variants default uniform \
        ov16:oversample=16 filter:n=16384,eps=0.02 filter:n=16384,eps=0.1
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from rummy_agents.arena.registry import make_agent
from rummy_agents.ismcts.gin import GIN_BELIEF, GinBelief, gin_belief_worlds, gin_rollout_actions
from rummy_agents.ppo_agent import PPOAgent
from rummy_env import gin_rummy_v0
from rummy_env.encodings import gin_rummy as E
from rummy_env.envs.view import SeatView
from rummy_env.rules.gin_rummy import kernels as K

BITS = np.uint64(1) << np.arange(52, dtype=np.uint64)


def _seen(rec: np.void, seat: int) -> int:
    """The cards ``seat`` can place in record ``rec``: its hand and the discard pile (bits)."""
    return int(rec["hands"][seat]) | sum(1 << int(c) for c in rec["pile"][: rec["pile_n"]])


def parse_variant(spec: str) -> tuple[str, GinBelief | RuleFilter | None]:
    """``name:field=value,...`` as (name, belief); ``uniform``: (name, None); ``filter:n=N,eps=E``:
    a :class:`RuleFilter`."""
    name, _, rest = spec.partition(":")
    if name == "uniform" and not rest:
        return name, None
    if name == "filter":
        kw = dict(item.partition("=")[::2] for item in filter(None, rest.split(",")))
        return spec, RuleFilter(int(kw.get("n", 4096)), float(kw.get("eps", 0.02)), None)
    fields = {f.name: f for f in dataclasses.fields(GinBelief)}
    kw = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if key not in fields or key == "target":
            allowed = sorted(k for k in fields if k != "target")
            raise ValueError(f"variant {spec!r}: field must be one of {allowed}, got {key!r}")
        kw[key] = int(value) if key == "oversample" else float(value)
    return name, dataclasses.replace(GIN_BELIEF, **kw)


class RuleFilter:
    """A particle filter over the opponent's hand, for a seat that watches the whole hand.

    The opponent is modelled as Gin's rule policy (``simple``'s rules, the search's rollout
    opponent) that errs with chance ``eps``: every public action of the opponent (taking or
    passing a discard, drawing from the stock, the card it discards or knocks with) weighs each
    particle by ``1 - eps`` when the rule in the particle's hand plays it, else ``eps``. The card
    an opponent draws from the stock is proposed uniformly from the cards the seat cannot place
    (or is the card it then discards, when that is not in the particle's hand: weight ``1 /
    pool``); a card the seat later draws from the stock cannot be in the opponent's hand.
    Systematic resampling when the effective sample size falls below half.
    """

    def __init__(self, n: int, eps: float, rng: np.random.Generator) -> None:
        self.n, self.eps, self.rng = n, eps, rng
        self.lost = False
        self._game: Any = None  # the batch the rule is evaluated in, one per filter

    def reset(self, rec: np.void, seat: int) -> None:
        """A new hand: the opponent's 10 cards dealt uniformly from those the seat cannot see."""
        self.seat, self.opp = seat, 1 - seat
        seen = _seen(rec, seat)
        pool = np.array([c for c in range(52) if not seen >> c & 1])
        idx = np.argsort(self.rng.random((self.n, pool.size)), axis=1)[:, :10]
        self.hands = np.bitwise_or.reduce(BITS[pool[idx]], axis=1)
        self.logw = np.zeros(self.n)
        self.pending = False  # the opponent drew from the stock: the card comes with its discard
        self.lost = False

    def _rule(self, game_type, config, rec: np.void, hands: np.ndarray) -> np.ndarray:
        if self._game is None:
            self._game = game_type(config, self.n)
        g = self._game
        g.states[:] = rec
        g.states["hands"][:, self.opp] = hands
        g.refresh_masks()
        out = np.zeros(self.n, dtype=np.int64)
        gin_rollout_actions(g.states, g.masks, K.TABLES, g.num_actions, 0.0, out)
        return out

    def opponent_acts(self, game_type, config, rec: np.void, a: int) -> None:
        """The opponent plays ``a`` in the (referee's) record ``rec``, read for public facts only
        (phase, pile, knock limit, the seat's own hand)."""
        if self.lost:
            return
        ph = int(rec["phase"])
        if ph in (E.PH_UPCARD, E.PH_DRAW):
            rule = self._rule(game_type, config, rec, self.hands)
            self._weigh(rule == a)
            if a == E.TAKE_DISCARD:
                top = int(rec["pile"][int(rec["pile_n"]) - 1])
                self.hands |= BITS[top]
            elif a == E.DRAW_STOCK:
                self.pending = True
        elif ph == E.PH_DISCARD and (E.DISCARD_BASE <= a < E.MELD_BASE):
            d = (a - E.DISCARD_BASE) % 52
            hands = self.hands.copy()
            has_d = (hands & BITS[d]) != 0
            if self.pending:
                seen = _seen(rec, self.seat)
                for i in range(self.n):
                    h = int(hands[i])
                    pool = [c for c in range(52) if not (seen | h) >> c & 1]
                    if has_d[i]:
                        hands[i] = np.uint64(h | 1 << int(pool[self.rng.integers(len(pool))]))
                    else:
                        hands[i] = np.uint64(h | 1 << d)
                        self.logw[i] -= np.log(len(pool))
            else:
                self.logw[~has_d] = -np.inf
            rule = self._rule(game_type, config, rec, hands)
            self._weigh(rule == a)
            self.hands = hands & ~BITS[d]
            self.pending = False
        else:
            self.lost = True  # the fiftieth card or manual melds: not modelled
        self._resample()

    def seat_draws(self, card: int) -> None:
        """The seat drew ``card`` from the stock: the opponent does not hold it."""
        if not self.lost:
            self.logw[(self.hands & BITS[card]) != 0] = -np.inf
            self._resample()

    def _weigh(self, agree: np.ndarray) -> None:
        self.logw += np.where(agree, np.log1p(-self.eps), np.log(self.eps))

    def _resample(self) -> None:
        if not np.isfinite(self.logw).any():
            self.lost = True
            return
        w = np.exp(self.logw - self.logw.max())
        w /= w.sum()
        if 1.0 / (w * w).sum() < self.n / 2:
            pos = (self.rng.random() + np.arange(self.n)) / self.n
            idx = np.minimum(np.searchsorted(np.cumsum(w), pos), self.n - 1)
            self.hands = self.hands[idx]
            self.logw = np.zeros(self.n)

    def sample(self, k: int) -> np.ndarray:
        """``k`` opponent hands drawn by weight."""
        w = np.exp(self.logw - self.logw.max())
        return self.hands[self.rng.choice(self.n, size=k, p=w / w.sum())]


def membership(hands: np.ndarray) -> np.ndarray:
    """(n,) uint64 hands as (n, 52) booleans."""
    return (hands[:, None] & BITS[None, :]) != 0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hands", type=int, default=200)
    p.add_argument("--worlds", type=int, default=128)
    p.add_argument("--opponent", default="simple")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--variants", nargs="+", default=["default", "uniform"])
    p.add_argument("--out", type=Path, default=None, help="write the scores here (json)")
    args = p.parse_args()
    variants = [parse_variant(v) for v in args.variants]
    net = PPOAgent(seed=args.seed, game="gin_rummy")
    net.deterministic = True
    opp = make_agent(args.opponent, seed=args.seed, game="gin_rummy")
    env = gin_rummy_v0.raw_env()
    rngs = [np.random.default_rng([args.seed, i]) for i in range(len(variants))]
    ref_rng = np.random.default_rng([args.seed, 99])
    loss = np.zeros(len(variants))
    hits = np.zeros(len(variants))
    n_dec = to_place = 0
    t0 = time.time()
    filters = [b for _n, b in variants if isinstance(b, RuleFilter)]
    for j, (_n, b) in enumerate(variants):
        if isinstance(b, RuleFilter):
            b.rng = rngs[j]
    lost = 0
    for h in range(args.hands):
        env.reset(seed=args.seed * 1_000_003 + h)
        me = env.possible_agents[h % 2]
        mine = env.possible_agents.index(me)
        for f in filters:
            f.reset(env.unwrapped.state_record, mine)
        probe = SeatView(env, me).sample_worlds(1, ref_rng)
        game_type, config = type(probe), probe.config
        for name in env.agent_iter():
            obs, _r, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            view = SeatView(env, name)
            if name != me:
                a = opp.act(obs, view)
                rec = env.unwrapped.state_record.copy()
                for f in filters:
                    f.opponent_acts(game_type, config, rec, a)
                env.step(a)
                continue
            if int(obs["action_mask"].sum()) > 1:
                other = 1 - view.seat
                truth = membership(np.array([env.unwrapped.state_record["hands"][other]]))[0]
                uni = membership(view.sample_worlds(args.worlds, ref_rng).states["hands"][:, other])
                k = uni.sum(0)
                free = (k > 0) & (k < args.worlds)
                if free.any():
                    n_dec += 1
                    to_place += int((truth & free).sum())
                    for j, (_vname, belief) in enumerate(variants):
                        if belief is None:
                            w = view.sample_worlds(args.worlds, rngs[j]).states["hands"][:, other]
                        elif isinstance(belief, RuleFilter):
                            if belief.lost:
                                lost += 1
                                belief = GIN_BELIEF
                                w = gin_belief_worlds(view, args.worlds, rngs[j], belief)
                                w = w.states["hands"][:, other]
                            else:
                                w = belief.sample(args.worlds)
                        else:
                            w = gin_belief_worlds(view, args.worlds, rngs[j], belief)
                            w = w.states["hands"][:, other]
                        m = membership(w)
                        q = (m.sum(0) + 0.5) / (args.worlds + 1)
                        t = truth[free]
                        loss[j] -= np.where(t, np.log(q[free]), np.log1p(-q[free])).sum()
                        hits[j] += (m[:, free] & t).sum(1).mean()
            a = net.act(obs, view)
            before = int(env.unwrapped.state_record["hands"][mine])
            env.step(a)
            if a == E.DRAW_STOCK:
                new = int(env.unwrapped.state_record["hands"][mine]) & ~before
                for f in filters:
                    f.seat_draws(new.bit_length() - 1)
    per = max(n_dec, 1)
    rows = {
        vname: {"logloss": loss[j] / per, "hits": hits[j] / per}
        for j, (vname, _b) in enumerate(variants)
    }
    print(
        f"{n_dec} decisions of {args.hands} hands against {args.opponent}, "
        f"{time.time() - t0:.0f} s; filters lost at {lost} decisions; "
        f"{to_place / per:.2f} of the opponent's cards to place a decision"
    )
    print("| variant | log loss a decision (nats) | true cards placed |")
    print("|---|---:|---:|")
    for vname, r in rows.items():
        print(f"| {vname} | {r['logloss']:.3f} | {r['hits']:.3f} |")
    if args.out is not None:
        report = {"decisions": n_dec, "to_place": to_place / per, "lost": lost, "variants": rows}
        args.out.write_text(json.dumps(report | {"args": vars(args) | {"out": str(args.out)}}))


if __name__ == "__main__":
    main()
