"""OpenSpiel's algorithms on the rummy games: ISMCTS, the suite's rule agents as bots, DQN.

Importing ``rummy_agents.integrations.openspiel`` registers the games with OpenSpiel
(``rummy_env_gin_rummy``, ``rummy_env_five_hundred_rum``, ``rummy_env_rummy51``). For each game
of ``--games`` this script plays, through OpenSpiel's ``evaluate_bots``:

* OpenSpiel's ``ISMCTSBot`` (``ismcts_bot``: information-set MCTS over worlds drawn by the
  game's ``resample_from_infostate``, random rollouts) against uniformly random play, and
  against the suite's rule agent of the game as a ``pyspiel.Bot`` (``as_bot``: ``greedy`` in
  500 Rum and Rummy 51, ``simple`` in Gin Rummy);
* then it trains OpenSpiel's PyTorch ``DQN`` by self-play (one learner per seat) on
  ``rl_environment.Environment`` for ``--dqn-steps`` decisions and plays the learners against
  uniformly random agents.

Seats rotate from game to game. Each line counts the first-named player's wins, losses and
draws: a win is a return above every other seat's, a draw a tie for the highest.

::

    pip install -c constraints.txt -e ".[openspiel,train]"    # OpenSpiel and torch
    python examples/openspiel_algorithms.py                   # small defaults: a minute or two
    python examples/openspiel_algorithms.py --games rummy51 --matches 40 --sims 50
    python examples/openspiel_algorithms.py --smoke           # seconds, for the tests
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from _common import at_least  # examples/_common.py: the standard library only

GAMES = ("five_hundred_rum", "rummy51", "gin_rummy")
RULE_AGENT = {"gin_rummy": "simple", "five_hundred_rum": "greedy", "rummy51": "greedy"}
"""The suite's rule agent each game's ISMCTS plays against (``as_bot``)."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (nothing heavy is imported before it is parsed: ``--help`` is fast)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", nargs="+", choices=GAMES, default=list(GAMES), metavar="GAME",
                   help=f"games to play, of {', '.join(GAMES)} (default: all)")  # fmt: skip
    p.add_argument("--num-players", type=at_least(2), default=2, help="seats per game (default 2)")
    p.add_argument("--matches", type=at_least(0), default=2,
                   help="games per ISMCTS pairing; 0 skips ISMCTS (default 2)")  # fmt: skip
    p.add_argument("--sims", type=at_least(1), default=8,
                   help="ISMCTS simulations per decision (default 8)")  # fmt: skip
    p.add_argument("--rollouts", type=at_least(0), default=1,
                   help="random rollouts per ISMCTS leaf; 0: leaves are 0 (default 1)")  # fmt: skip
    p.add_argument("--dqn-steps", type=at_least(0), default=2000,
                   help="DQN self-play decisions per game; 0 skips DQN (default 2000)")  # fmt: skip
    p.add_argument("--eval-episodes", type=at_least(1), default=10,
                   help="DQN-against-random evaluation games (default 10)")  # fmt: skip
    p.add_argument("--hidden", type=at_least(1), nargs="+", default=[64],
                   help="DQN hidden layer sizes (default 64)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--smoke", action="store_true",
                   help="1 game per pairing, 2 simulations, 300 DQN steps (the tests)")  # fmt: skip
    args = p.parse_args(argv)
    if args.smoke:
        args.matches, args.sims, args.dqn_steps, args.eval_episodes = 1, 2, 300, 2
        args.hidden = [16]
    return args


def outcome(returns: Sequence[float], seat: int) -> str:
    """``"win"`` (the highest return alone), ``"draw"`` (tied for it) or ``"loss"``."""
    best = max(returns)
    if returns[seat] < best:
        return "loss"
    return "draw" if sum(r == best for r in returns) > 1 else "win"


def report(game: str, label: str, counts: Counter, n: int, seconds: float, extra: str = "") -> str:
    """One result line: ``GAME  LABEL: N games, W wins, L losses, D draws (S s)``."""
    line = (
        f"{game:<16} {label:<32}: {n} games, {counts['win']} wins, {counts['loss']} losses, "
        f"{counts['draw']} draws ({seconds:.1f} s{extra})"
    )
    print(line, flush=True)
    return line


def play_pairing(
    game: Any,
    make_hero: Callable[[int], Any],
    make_other: Callable[[int], Any],
    matches: int,
    seed: int,
) -> Counter:
    """``matches`` games of the hero bot (seat ``i % n`` in game ``i``) against copies of
    the other bot in every other seat, through ``evaluate_bots``; the hero's outcomes.
    """
    import numpy as np
    from open_spiel.python.algorithms import evaluate_bots

    n = game.num_players()
    counts: Counter = Counter()
    for i in range(matches):
        hero = i % n
        bots = [make_hero(s) if s == hero else make_other(s) for s in range(n)]
        rng = np.random.RandomState(seed + i)  # the deal's chance nodes
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
        counts[outcome(returns, hero)] += 1
    return counts


def train_dqn(game: Any, steps: int, hidden: list[int], seed: int) -> tuple[list[Any], float]:
    """Self-play DQN (one learner per seat) for ``steps`` decisions on ``rl_environment``;
    the learners and the training speed (decisions per second).
    """
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import dqn

    env = rl_environment.Environment(game, enable_legality_check=True)
    env.seed(seed)  # the chance sampler (Environment's seed= is ignored for a game object)
    size = env.observation_spec()["info_state"][0]
    num_actions = env.action_spec()["num_actions"]
    agents = [
        dqn.DQN(
            player_id=p, state_representation_size=size, num_actions=num_actions,
            hidden_layers_sizes=hidden, batch_size=32, replay_buffer_capacity=10_000,
            min_buffer_size_to_learn=100, learn_every=4, update_target_network_every=200,
            learning_rate=1e-3, optimizer_str="adam", loss_str="huber",
            epsilon_decay_duration=max(steps, 1), seed=seed + p,
        )
        for p in range(game.num_players())
    ]  # fmt: skip
    done, start = 0, time.perf_counter()
    while done < steps:
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            time_step = env.step([agents[player].step(time_step).action])
            done += 1
        for agent in agents:  # every learner sees the episode's end (its final reward)
            agent.step(time_step)
    return agents, done / max(time.perf_counter() - start, 1e-9)


def evaluate_dqn(game: Any, agents: list[Any], episodes: int, seed: int) -> Counter:
    """The DQN learners (greedy) against uniformly random agents: learner ``i % n`` plays
    episode ``i`` against random play in every other seat; the learners' outcomes.
    """
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import random_agent

    env = rl_environment.Environment(game, enable_legality_check=True)
    env.seed(seed)  # the chance sampler (Environment's seed= is ignored for a game object)
    n, num_actions = game.num_players(), game.num_distinct_actions()
    randoms = [random_agent.RandomAgent(p, num_actions) for p in range(n)]
    counts: Counter = Counter()
    for i in range(episodes):
        hero = i % n
        players = [agents[p] if p == hero else randoms[p] for p in range(n)]
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            out = players[player].step(time_step, is_evaluation=True)
            time_step = env.step([out.action])
        counts[outcome(env.get_state.returns(), hero)] += 1
    return counts


def run_ismcts(name: str, game: Any, args: argparse.Namespace) -> dict[str, Counter]:
    """ISMCTS against random play and against the game's rule agent (``RULE_AGENT``)."""
    import pyspiel

    from rummy_agents.integrations import openspiel as osg

    # seeded: its rollouts and sampled worlds come from one seeded stream (reproducible games)
    ismcts = osg.ismcts_bot(game, max_simulations=args.sims, seed=args.seed, rollouts=args.rollouts)
    rule = RULE_AGENT[name]
    pairings = [
        ("random", lambda s: pyspiel.make_uniform_random_bot(s, args.seed + s)),
        (rule, lambda s: osg.as_bot(rule, game, s, seed=args.seed + s)),
    ]
    results = {}
    for other, make_other in pairings:
        label = f"ismcts(sims={args.sims}) vs {other}"
        start = time.perf_counter()
        counts = play_pairing(game, lambda s: ismcts, make_other, args.matches, args.seed)
        report(name, label, counts, args.matches, time.perf_counter() - start)
        results[f"{name} {label}"] = counts
    return results


def main(argv: Sequence[str] | None = None) -> dict[str, Counter]:
    """Run the pairings and the DQN run of every game, print the counts (and return them,
    keyed ``"GAME LABEL"``).
    """
    args = parse_args(argv)
    import numpy as np
    import torch

    from rummy_agents.integrations import openspiel as osg

    torch.set_num_threads(1)  # small networks: threads cost more than they give
    np.random.seed(args.seed)  # DQN's exploration and OpenSpiel's random agents use numpy's
    torch.manual_seed(args.seed)
    results: dict[str, Counter] = {}
    for name in args.games:
        try:
            game = osg.load_game(name, num_players=args.num_players)
        except ValueError as exc:  # the env's message names the option and what is allowed
            raise SystemExit(f"error: --num-players {args.num_players} for {name}: {exc}") from None
        if args.matches:
            results.update(run_ismcts(name, game, args))
        if args.dqn_steps:
            start = time.perf_counter()
            agents, speed = train_dqn(game, args.dqn_steps, args.hidden, args.seed)
            counts = evaluate_dqn(game, agents, args.eval_episodes, args.seed + 1)
            label = f"dqn({args.dqn_steps} steps) vs random"
            extra = f"; training {speed:.0f} steps/s"
            report(name, label, counts, args.eval_episodes, time.perf_counter() - start, extra)
            results[f"{name} {label}"] = counts
    return results


if __name__ == "__main__":
    main()
