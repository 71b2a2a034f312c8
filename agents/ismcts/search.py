"""Information-set Monte Carlo tree search (single-observer ISMCTS) with batched rollouts.

The search follows Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search"
(IEEE TCIAIG 2012), single-observer variant (SO-ISMCTS). Nothing here depends on the game:
what does is a :class:`~rummy_agents.ismcts.hooks.GameHooks` entry, looked up by the seat
view's game name (:func:`~rummy_agents.ismcts.games.hooks_for`).

- Every iteration plays in one **determinization**: a full game state consistent with what the
  searching seat knows, drawn from ``view.sample_worlds`` (the env's sampler deals the hidden
  cards anew, uniformly). Worlds are sampled ``batch_size`` at a time. With ``belief="evidence"``
  (default) the game's ``belief`` hook draws them from a model of the opponents instead; with
  ``belief="uniform"`` they are used as drawn.
- The tree is the searching seat's tree of **information sets**: a node is reached by the
  sequence of actions from the root, as the searching seat sees them. Chance events the seat
  observes (the ``observed_outcome`` hook: the card of its own stock draw) split the node after
  its action by the outcome; the opponents' stock draws are hidden from it and not split (the
  determinization supplies the card). The opponents' decisions are nodes of the same tree,
  chosen by UCB from their own point of view among the actions legal in the current
  determinization.
- Selection is UCB1 over the actions **available** in the current determinization, with
  availability counts in place of the parent's visit count (``Q + c sqrt(ln(avail) / n)``).
- **Progressive widening** with a heuristic order: at a node visited ``n`` times only the
  ``max(1, floor(widening * n ** widening_exponent))`` best actions by the game's ``prior`` are
  candidates. Early visits thus follow sensible lines instead of trying every discard once, and
  with more visits every legal action is tried.
- A leaf is evaluated by a **rollout to the end of the hand in the batched compiled core**: all
  the batch's leaf states are stepped together with ``game.step(actions, autoreset=False,
  write_obs=False, check=False)``; actions come from the game's ``rollout_actions`` hook (its
  compiled heuristic policy, or uniformly random legal actions with ``rollout="random"``).
- The reward is the seat's hand result (the env's rewards summed to the end of the hand; with
  the ``zero_sum`` hook each player's margin over the others' mean), divided by the game's
  ``reward_scale`` and clipped to [-1, 1]; ``objective="win"`` uses the sign instead (+1 win,
  0 drawn hand, -1 loss), ``"mixed"`` a weighted sum of both.
- The leaves of one batch are chosen before any of their results are known; each descent adds
  its visit at once (a "virtual loss" of value 0), so the descents of a batch spread out.

The move played:

- ``root="ucb"``: the root action with the most visits (ties: the higher mean value);
- ``root="halving"``: sequential halving over the root actions, every action played in the
  same determinizations (paired comparisons);
- ``root="paired"``: the first ``root_k`` root actions (the anchor's move first, then the
  prior's order) played on common determinizations; the first is kept unless another beats it
  by ``paired_z`` standard errors of the paired differences.

Shortcuts under ``knock="always"`` (default): a move that ends the hand at once (the
``knock_now`` hook) is played without a search, and so are the ``forced`` hook's moves, at the
root and inside the tree. With ``anchor=True`` (default) the game's rule-based agent (the
``anchor`` hook) supplies the root's first candidate.

With an iteration budget and a seed the search is deterministic (same seed, same game: same
moves); a time budget stops after the first batch that ends past the limit, so it is not.

The algorithm needs only the seat view's ``sample_worlds``, ``seat``, ``config`` and ``game``,
and the batched game's ``masks``, ``step``, ``step_single`` (or the game's
``step_one``) and state records (``states["hands_played"]``, ``states["rewards"]``).
``docs/ismcts.md`` has the measurements behind the defaults.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rummy_agents.base import legal_actions
from rummy_agents.ismcts.games import hooks_for
from rummy_agents.ismcts.hooks import GameHooks

OBJECTIVES = ("points", "win", "mixed")
BELIEFS = ("evidence", "uniform")
ROLLOUTS = ("heuristic", "random")
ROOTS = ("halving", "paired", "ucb")
KNOCKS = ("search", "always")

# ---------------------------------------------------------------------------------------------
# Values and single steps


def objective_values(
    acc: np.ndarray, objective: str, scale: float, win_weight: float = 0.5
) -> np.ndarray:
    """Rollout results (points per player) as search values in [-1, 1].

    ``"points"``: the points divided by ``scale`` (a full win's margin), clipped; ``"win"``:
    their sign; ``"mixed"``: ``win_weight`` times the sign plus the rest times the points.
    """
    points = np.clip(acc / scale, -1.0, 1.0)
    if objective == "win":
        return np.sign(acc)
    if objective == "mixed":
        return win_weight * np.sign(acc) + (1.0 - win_weight) * points
    return points


def zero_sum(acc: np.ndarray) -> np.ndarray:
    """(N, players) rewards as margins: each player's reward minus the mean of the others'."""
    p = acc.shape[1]
    if p < 2:
        return acc
    return acc - (acc.sum(1, keepdims=True) - acc) / (p - 1)


def _step_one(game: Any, i: int, a: int, acc: np.ndarray) -> tuple[bool, int, int]:
    """Apply legal action ``a`` in world ``i`` only, adding its rewards to ``acc`` (players,).

    Returns:
        (episode over, player to act, hands played).
    """
    step_one = getattr(game, "step_one", None)
    if step_one is not None:  # a two-player game's own single step (Gin), rewards included
        done, _trunc, cur, hands, r0, r1 = step_one(i, a)
        acc[0] += r0
        acc[1] += r1
        return bool(done), int(cur), int(hands)
    done, _trunc, cur, hands = game.step_single(i, a)
    acc += game.states["rewards"][i]
    return bool(done), int(cur), int(hands)


# ---------------------------------------------------------------------------------------------
# The tree


class _Edge:
    """An action out of a node: statistics from the point of view of the node's player."""

    __slots__ = ("n", "w", "avail", "children")

    def __init__(self) -> None:
        self.n = 0  # visits (counted when the descent passes, before the value is known)
        self.w = 0.0  # sum of values for the player who chose the action
        self.avail = 0  # visits of the parent in which the action was a candidate
        self.children: dict[Any, _Node] = {}  # observed chance outcome (or None) -> node


class _Node:
    """An information set of the searching seat (or a decision of the opponent in it)."""

    __slots__ = ("player", "n", "edges", "ranked")

    def __init__(self, player: int) -> None:
        self.player = player
        self.n = 0
        self.edges: dict[int, _Edge] = {}
        self.ranked: dict[bytes, np.ndarray] = {}  # cached candidate orders (searcher's nodes)


@dataclass
class SearchStats:
    """What the last search did (for reports and tests)."""

    iterations: int = 0
    seconds: float = 0.0
    root_visits: dict[int, int] = field(default_factory=dict)
    root_values: dict[int, float] = field(default_factory=dict)
    max_depth: int = 0
    first: int | None = None  # the root action tried first (the anchor's move), if any


class ISMCTSAgent:
    """Single-observer information-set MCTS with batched determinizations and rollouts.

    Args:
        iterations: iterations (determinized descents + rollouts) per decision; ``None`` for a
            time budget only; ``"auto"`` (default): the game's (``GameHooks.defaults``: Gin
            1000, 500 Rum and Rummy 51 256).
        time_limit: seconds per decision (checked after each batch); ``None`` for none. At least
            one of ``iterations`` and ``time_limit`` must be set.
        batch_size: worlds sampled, descended and rolled out together.
        exploration: UCB constant ``c`` on values in [-1, 1].
        widening: progressive widening coefficient (candidates ``= widening * n ** exponent``);
            ``None`` disables widening (all legal actions, expanded in prior order).
        widening_exponent: progressive widening exponent.
        max_depth: deepest tree level expanded (plies below the root); ``None``: unlimited.
        rollout: ``"heuristic"`` (compiled game heuristic) or ``"random"``.
        rollout_eps: fraction of heuristic rollout decisions played at random.
        objective: ``"points"`` (hand points / largest hand score), ``"win"`` (sign) or
            ``"mixed"`` (``win_weight * sign + (1 - win_weight) * points``: a result that
            follows wins while the points part still separates moves whose rollouts end on
            the same side).
        win_weight: the sign's weight in ``objective="mixed"``, in [0, 1].
        belief: ``"evidence"`` (default: the game's ``belief`` hook, Gin:
            :func:`~rummy_agents.ismcts.gin.gin_belief_worlds`) or ``"uniform"``
            (``view.sample_worlds`` as is).
        root: ``"ucb"`` (plain SO-ISMCTS, most visited root action), ``"halving"`` (sequential
            halving over the root actions on common determinizations), ``"paired"`` (the first
            ``root_k`` root actions on common determinizations, the first one kept unless
            another beats it by ``paired_z`` standard errors) or ``"auto"`` (default): the
            game's (Gin ``"ucb"``, 500 Rum and Rummy 51 ``"paired"``).
        root_k: root actions compared by ``root="paired"``; ``None`` (default): the game's
            (Gin 4, 500 Rum and Rummy 51 2).
        paired_z: standard errors by which ``root="paired"`` needs an action to beat the first.
        knock: ``"always"`` (default: whenever the game's ``knock_now`` hook offers a move that
            ends the hand, play it at once) or ``"search"`` (knocking is one of the searched
            moves).
        anchor: start the root's candidate order with the move of the game's rule-based agent
            (``True``: the ``anchor`` hook; 500 Rum and Rummy 51: ``greedy``), so the search
            refines it; or the arena registry's name of the agent to use instead (a spec such
            as ``"greedy_plus"``, built for the game searched); ``False``: none.
        seed: seed of the agent's generator (worlds and everything random in the search).
        name: the agent's name in reports.

    Attributes:
        last: :class:`SearchStats` of the last search.
        move_seconds: wall time of every searched decision (single legal actions are played
            without a search and not recorded).
    """

    def __init__(
        self,
        iterations: int | str | None = "auto",
        time_limit: float | None = None,
        batch_size: int = 64,
        exploration: float = 0.25,
        widening: float | None = 1.0,
        widening_exponent: float = 0.5,
        max_depth: int | None = None,
        rollout: str = "heuristic",
        rollout_eps: float = 0.0,
        objective: str = "points",
        win_weight: float = 0.5,
        belief: str = "evidence",
        root: str = "auto",
        knock: str = "always",
        anchor: bool | str = True,
        root_k: int | None = None,
        paired_z: float = 1.0,
        seed: int | None = None,
        name: str | None = None,
    ) -> None:
        if iterations is None and time_limit is None:
            raise ValueError("set iterations, time_limit or both")
        if iterations == "auto":
            pass
        elif isinstance(iterations, str) or (iterations is not None and iterations < 1):
            raise ValueError(f"iterations must be 'auto', None or at least 1, got {iterations!r}")
        if time_limit is not None and time_limit <= 0:
            raise ValueError(f"time_limit must be positive, got {time_limit}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {ROLLOUTS}, got {rollout!r}")
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
        if not 0.0 <= win_weight <= 1.0:
            raise ValueError(f"win_weight must be in [0, 1], got {win_weight}")
        if knock not in KNOCKS:
            raise ValueError(f"knock must be one of {KNOCKS}, got {knock!r}")
        if root not in ROOTS and root != "auto":
            raise ValueError(f"root must be 'auto' or one of {ROOTS}, got {root!r}")
        if belief not in BELIEFS:
            raise ValueError(f"belief must be one of {BELIEFS}, got {belief!r}")
        if not 0.0 <= rollout_eps <= 1.0:
            raise ValueError(f"rollout_eps must be in [0, 1], got {rollout_eps}")
        self._options = {"iterations": iterations, "root": root, "root_k": root_k}
        self.iterations: int | None = None  # the effective settings of the game searched
        self.root = "ucb"
        self.root_k = 4
        self.time_limit = time_limit
        self.batch_size = int(batch_size)
        self.exploration = float(exploration)
        self.widening = widening
        self.widening_exponent = float(widening_exponent)
        self.max_depth = max_depth
        self.rollout = rollout
        self.rollout_eps = float(rollout_eps)
        self.objective = objective
        self.win_weight = float(win_weight)
        self.belief = belief
        self.knock = knock
        if isinstance(anchor, str):
            from rummy_agents.arena.registry import check_spec

            check_spec(anchor)
        self.anchor: bool | str = anchor if isinstance(anchor, str) else bool(anchor)
        if root_k is not None and root_k < 1:
            raise ValueError(f"root_k must be at least 1, got {root_k}")
        self.paired_z = float(paired_z)
        self._anchors: dict[str, Any] = {}
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        budget = "auto" if iterations == "auto" else f"{iterations}it"
        budget = f"{time_limit}s" if iterations is None else budget
        self.name = name or f"ismcts-{budget}"
        self.last = SearchStats()
        self.move_seconds: list[float] = []
        self.max_rollout_steps = 1000

    # -- protocol ---------------------------------------------------------------------------
    def act(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """Choose a legal action by searching from the seat's information set.

        Args:
            observation: the PettingZoo observation dict (only ``"action_mask"`` is read).
            view: the seat's :class:`rummy_agents.base.SeatView` (``sample_worlds``, ``seat``,
                ``config``, ``game``).

        Returns:
            The id of a legal action.

        Raises:
            ValueError: if the mask has no legal action or no view is given for a search.
        """
        mask = np.asarray(observation["action_mask"])
        legal = legal_actions(mask)
        if legal.size == 1:
            return int(legal[0])
        if view is None:
            raise ValueError("ISMCTSAgent needs the seat's view (sample_worlds) to search")
        hooks = self.game_hooks(getattr(view, "game", ""))
        if self.knock == "always":
            a = hooks.knock_now(observation) if hooks.knock_now is not None else None
            if a is not None:
                return int(a)
        t0 = time.perf_counter()
        first = None
        if self.knock == "always" and hooks.forced is not None:
            world = view.sample_worlds(1, self.rng)
            if hooks.unsearched is not None:
                first = self._anchor_move(observation, view)
            if first is None:
                a = hooks.forced(world, 0)
                if a >= 0:
                    return int(a)
            elif hooks.unsearched is not None and hooks.unsearched(world, 0, first):
                return first  # the rule-based agent's own melds and lay-offs, not the policy's
        if first is None:
            first = self._anchor_move(observation, view)
        action = self.search(view, legal, first)
        self.move_seconds.append(time.perf_counter() - t0)
        return action

    def game_hooks(self, game: str) -> GameHooks:
        """The hooks the search uses for ``game`` (:func:`~rummy_agents.ismcts.games.hooks_for`;
        a subclass may substitute its own, e.g. a network's rollouts and prior).
        """
        return hooks_for(game)

    def configure(self, hooks: GameHooks) -> None:
        """Set the effective ``iterations``, ``root`` and ``root_k``: the values given, or for
        ``"auto"``/``None`` the game's defaults (``hooks.defaults``).
        """
        for key, value in self._options.items():
            auto = value == "auto" or (key == "root_k" and value is None)
            setattr(self, key, hooks.defaults[key] if auto else value)

    def _anchor_move(self, observation: Mapping[str, Any], view: Any) -> int | None:
        """The move of the game's rule-based agent (``anchor=True`` and an ``anchor`` hook);
        ``None`` otherwise.
        """
        if not self.anchor:
            return None
        game = getattr(view, "game", "")
        hooks = self.game_hooks(game)
        if game not in self._anchors:
            seed = int(self.rng.integers(2**31))
            if isinstance(self.anchor, str):
                from rummy_agents.arena.registry import make_agent

                self._anchors[game] = make_agent(self.anchor, seed, game=game)
            elif hooks.anchor is not None:
                self._anchors[game] = hooks.anchor(seed)
            else:
                self._anchors[game] = None
        agent = self._anchors[game]
        return None if agent is None else int(agent.act(observation, view))

    # -- search -----------------------------------------------------------------------------
    def search(self, view: Any, legal: np.ndarray, first: int | None = None) -> int:
        """Run the search from the seat's current information set; returns the chosen action
        (``first``: a legal action to try first, ahead of the prior's order).
        """
        hooks = self.game_hooks(getattr(view, "game", ""))
        self.configure(hooks)
        seat = int(view.seat)
        scale = float(hooks.reward_scale(view.config))
        root = _Node(seat)
        if first is not None:
            world = self._worlds(view, 1, hooks)
            order = self._rank(hooks.prior(world, 0), legal) if hooks.prior is not None else legal
            if (
                self.knock == "always"
                and hooks.unsearched is not None
                and not hooks.unsearched(world, 0, first)
            ):
                # the anchor declined to meld or lay off now: the root weighs draws and
                # discards only, so the meld timing stays the anchor's
                order = order[[not hooks.unsearched(world, 0, int(a)) for a in order]]
            root.ranked[legal.tobytes()] = np.concatenate([[first], order[order != first]]).astype(
                legal.dtype
            )
        stats = SearchStats()
        t0 = time.perf_counter()
        if self.root == "paired":
            best = self._search_paired(view, legal, root, seat, hooks, scale, stats, t0)
        elif self.root == "halving":
            best = self._search_halving(view, legal, root, seat, hooks, scale, stats, t0)
        else:
            best = self._search_ucb(view, legal, root, seat, hooks, scale, stats, t0)
        stats.seconds = time.perf_counter() - t0
        stats.first = first
        for a, e in root.edges.items():
            stats.root_visits[a] = e.n
            stats.root_values[a] = e.w / e.n if e.n else -math.inf
        self.last = stats
        if best not in set(legal.tolist()):  # pragma: no cover - worlds share the seat's mask
            raise RuntimeError(f"search chose action {best}, not legal at the root")
        return best

    def _worlds(self, view: Any, n: int, hooks: GameHooks) -> Any:
        if self.belief == "evidence" and hooks.belief is not None:
            return hooks.belief(view, n, self.rng)
        return view.sample_worlds(n, self.rng)

    def _search_ucb(self, view: Any, legal: np.ndarray, root: _Node, seat: int,
                    hooks: GameHooks, scale: float, stats: SearchStats,
                    t0: float) -> int:  # fmt: skip
        """Plain SO-ISMCTS: UCB at the root too; the most visited root action wins."""
        done_it = 0
        while True:
            n = self.batch_size
            if self.iterations is not None:
                n = min(n, self.iterations - done_it)
            if n <= 0:
                break
            self._batch(self._worlds(view, n, hooks), root, seat, hooks, scale, stats)
            done_it += n
            if self.time_limit is not None and time.perf_counter() - t0 >= self.time_limit:
                break
        stats.iterations = done_it
        best, best_key = int(legal[0]), (-1, -math.inf)
        for a, e in root.edges.items():
            key = (e.n, e.w / e.n if e.n else -math.inf)
            if key > best_key:
                best, best_key = a, key
        return best

    def _search_paired(self, view: Any, legal: np.ndarray, root: _Node, seat: int,
                       hooks: GameHooks, scale: float, stats: SearchStats,
                       t0: float) -> int:  # fmt: skip
        """Paired comparison of the first ``root_k`` root actions against the first one.

        The first action (the anchor's move, else the prior's best) and the next ``root_k - 1``
        in prior order are each played in the same sampled worlds (copies, random streams
        included; the rollouts below are then paired samples). The move played is the action
        whose mean value over the worlds beats the first action's by the most, if that gain is
        more than ``paired_z`` standard errors of the paired differences; otherwise the first.
        """
        if legal.tobytes() in root.ranked:
            order = root.ranked[legal.tobytes()]
        elif hooks.prior is not None:
            order = self._rank(hooks.prior(self._worlds(view, 1, hooks), 0), legal)
        else:
            order = legal
        cands = [int(a) for a in order[: self.root_k]]
        k = len(cands)
        rows: list[np.ndarray] = []
        done_it = 0
        while True:
            m = max(1, self.batch_size // k)
            if self.iterations is not None:
                m = min(m, (self.iterations - done_it) // k)
            if m <= 0 or (rows and self.iterations is None and self.time_limit is not None
                          and time.perf_counter() - t0 >= self.time_limit):  # fmt: skip
                break
            worlds = self._worlds(view, m, hooks)
            rep = type(worlds)(worlds.config, m * k)
            rep.states[:] = np.repeat(worlds.states, k)
            rep.masks[:] = np.repeat(worlds.masks, k, axis=0)
            forced = np.tile(np.array(cands, dtype=np.int64), m)
            v = self._batch(rep, root, seat, hooks, scale, stats, forced)
            rows.append(v.reshape(m, k))
            done_it += m * k
            if self.time_limit is not None and time.perf_counter() - t0 >= self.time_limit:
                break
        stats.iterations = done_it
        if not rows:
            return cands[0]
        vals = np.concatenate(rows)
        diff = vals[:, 1:] - vals[:, :1]
        n = diff.shape[0]
        if n < 2 or k < 2:
            return cands[0]
        gain = diff.mean(0)
        se = diff.std(0, ddof=1) / math.sqrt(n)
        j = int(np.argmax(gain - self.paired_z * se))
        if gain[j] - self.paired_z * se[j] > 0.0:
            return cands[j + 1]
        return cands[0]

    def _search_halving(self, view: Any, legal: np.ndarray, root: _Node, seat: int,
                        hooks: GameHooks, scale: float, stats: SearchStats,
                        t0: float) -> int:  # fmt: skip
        """Sequential halving over the root actions on common determinizations.

        Every root action still in the race is played in the same sampled worlds (each world
        is copied once per action, random streams included), so the actions are compared on
        the same hidden cards and stock order - paired samples, far less noisy than independent
        ones. Each round gets an equal share of the budget; after it the worse half (by mean
        value over all the worlds so far, which all survivors share) is dropped. Below the
        root the search is the usual ISMCTS over a tree shared by all worlds.
        """
        alive = [int(a) for a in legal]
        if legal.tobytes() in root.ranked:
            alive = [int(a) for a in root.ranked[legal.tobytes()]]
        elif hooks.prior is not None:
            probe = self._worlds(view, 1, hooks)
            scores = hooks.prior(probe, 0)
            alive = [int(a) for a in self._rank(scores, legal)]
        rounds = max(1, math.ceil(math.log2(len(alive))))
        done_it = 0
        for r in range(rounds):
            k = len(alive)
            if self.iterations is not None:
                share = (self.iterations - done_it) // (rounds - r)
                per_action = max(1, share // k)
            else:
                per_action = None
            round_end = None if self.time_limit is None else t0 + self.time_limit * (r + 1) / rounds
            given = 0
            while True:
                m = max(1, self.batch_size // k)
                if per_action is not None:
                    m = min(m, per_action - given)
                if m <= 0:
                    break
                worlds = self._worlds(view, m, hooks)
                rep = type(worlds)(worlds.config, m * k)
                rep.states[:] = np.repeat(worlds.states, k)
                rep.masks[:] = np.repeat(worlds.masks, k, axis=0)
                forced = np.tile(np.array(alive, dtype=np.int64), m)
                self._batch(rep, root, seat, hooks, scale, stats, forced)
                given += m
                done_it += m * k
                if round_end is not None and time.perf_counter() >= round_end:
                    break
            if r < rounds - 1:
                means = {a: root.edges[a].w / max(root.edges[a].n, 1) for a in alive}
                order = sorted(alive, key=lambda a: -means[a])  # stable: prior order on ties
                alive = order[: math.ceil(k / 2)]
        stats.iterations = done_it
        return max(alive, key=lambda a: root.edges[a].w / max(root.edges[a].n, 1))

    def _candidates(self, node: _Node, game: Any, i: int, legal: np.ndarray, hooks: GameHooks,
                    seat: int) -> np.ndarray:  # fmt: skip
        """Legal actions of world ``i`` in prior order, cut by progressive widening."""
        ranked: np.ndarray | None
        if hooks.prior is None or legal.size == 1:
            ranked = legal
        elif node.player == seat:
            # the searching seat's own decisions: the same information in every world
            key = legal.tobytes()
            ranked = node.ranked.get(key)
            if ranked is None:
                ranked = self._rank(hooks.prior(game, i), legal)
                node.ranked[key] = ranked
        else:
            ranked = self._rank(hooks.prior(game, i), legal)
        if self.widening is None:
            return ranked
        k = max(1, int(self.widening * (node.n + 1) ** self.widening_exponent))
        return ranked[:k]

    @staticmethod
    def _rank(scores: np.ndarray, legal: np.ndarray) -> np.ndarray:
        s = scores[legal]
        return legal[np.argsort(-s, kind="stable")]

    def _batch(self, worlds: Any, root: _Node, seat: int, hooks: GameHooks, scale: float,
               stats: SearchStats, forced: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
        """Descend once in every world of the batch, roll the leaves out together, back up;
        returns each world's value for the searching seat.
        """
        n = worlds.num_games
        na = worlds.num_actions
        acc = np.zeros((n, worlds.num_players), dtype=np.float64)
        ended = np.zeros(n, dtype=bool)
        hands0 = worlds.states["hands_played"].copy()
        paths: list[list[tuple[_Node, _Edge]]] = []
        c = self.exploration
        auto = hooks.forced if self.knock == "always" else None
        for i in range(n):
            node = root
            path: list[tuple[_Node, _Edge]] = []
            depth = 0
            while True:
                legal = np.flatnonzero(worlds.masks[i, :na])
                if legal.size == 0:
                    ended[i] = True
                    break
                if auto is not None and (forced is None or depth > 0):
                    fa = auto(worlds, i)
                    if fa >= 0:
                        done, _cur, hands = _step_one(worlds, i, fa, acc[i])
                        if done or hands != hands0[i]:
                            ended[i] = True
                            break
                        continue
                node.n += 1
                fresh = False
                a = -1
                if forced is not None and depth == 0:
                    a = int(forced[i])
                    edge = node.edges.get(a)
                    if edge is None:
                        edge = node.edges[a] = _Edge()
                    cands = legal[:1]  # never stop below a forced root action
                else:
                    cands = self._candidates(node, worlds, i, legal, hooks, seat)
                    for b in cands:
                        if int(b) not in node.edges:
                            a = int(b)
                            break
                if forced is not None and depth == 0:
                    pass
                elif a >= 0:
                    edge = _Edge()
                    node.edges[a] = edge
                    fresh = True
                    for b in cands:
                        e = node.edges.get(int(b))
                        if e is not None:
                            e.avail += 1
                else:
                    best_u = -math.inf
                    edge = None
                    for b in cands:
                        e = node.edges[int(b)]
                        e.avail += 1
                        if e.n == 0:
                            u = math.inf
                        else:
                            u = e.w / e.n + c * math.sqrt(math.log(e.avail) / e.n)
                        if u > best_u:
                            best_u, a, edge = u, int(b), e
                assert edge is not None  # cands is never empty: a live world has a legal move
                edge.n += 1
                path.append((node, edge))
                mover = node.player
                done, cur, hands = _step_one(worlds, i, a, acc[i])
                depth += 1
                if done or hands != hands0[i]:
                    ended[i] = True
                    break
                if fresh and cands.size > 1:
                    break
                if self.max_depth is not None and depth >= self.max_depth:
                    break
                key = None
                if mover == seat and hooks.observed_outcome is not None:
                    key = hooks.observed_outcome(worlds, i, a)
                child = edge.children.get(key)
                if child is None:
                    child = _Node(int(cur))
                    edge.children[key] = child
                    if key is not None:  # a new observed outcome: evaluate it first
                        break
                node = child
            stats.max_depth = max(stats.max_depth, depth)
            paths.append(path)
        if not ended.all():
            acc += self._rollout(worlds, ~ended, hands0, hooks, seat)
        if hooks.zero_sum:
            acc = zero_sum(acc)
        values = self._values(acc, worlds, scale)
        for i, path in enumerate(paths):
            v = values[i]
            for node, edge in path:
                edge.w += float(v[node.player])
        return values[:, seat]

    def _values(self, acc: np.ndarray, worlds: Any, scale: float) -> np.ndarray:
        """(N, players) values in [-1, 1] of the worlds' results ``acc`` (their points this
        hand; ``worlds`` stand at the end of the hand or the episode): the ``objective``'s.
        """
        return objective_values(acc, self.objective, scale, self.win_weight)

    def _rollout(self, worlds: Any, active: np.ndarray, hands0: np.ndarray,
                 hooks: GameHooks, seat: int) -> np.ndarray:  # fmt: skip
        """Play the active worlds to the end of the hand together (``seat``: the searching
        seat; the game's rollout policy moves every seat alike); returns (N, players) rewards.
        """
        acc = np.zeros((worlds.num_games, worlds.num_players), dtype=np.float64)
        alive = active.copy()
        for _ in range(self.max_rollout_steps):
            if not alive.any():
                break
            actions = hooks.rollout_actions(worlds, self.rollout, self.rollout_eps)
            _, rewards, term, trunc, _ = worlds.step(
                actions, autoreset=False, write_obs=False, check=False
            )
            acc[alive] += rewards[alive]
            over = term | trunc | (worlds.states["hands_played"] != hands0)
            alive &= ~over
        return acc


__all__ = [
    "BELIEFS",
    "KNOCKS",
    "OBJECTIVES",
    "ROLLOUTS",
    "ROOTS",
    "ISMCTSAgent",
    "SearchStats",
    "objective_values",
    "zero_sum",
]
