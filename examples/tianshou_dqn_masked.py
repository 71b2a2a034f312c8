"""DQN with action masking on a rummy game, with Tianshou 2.x, against a fixed opponent.

The learner plays one seat of ``RummySingleAgentEnv`` (the seat drawn at every reset) against
``--opponent`` (``random``: uniformly random legal play; or an agent name of the game, such as
``simple`` for Gin Rummy). :class:`rummy_agents.integrations.tianshou.TianshouMaskedEnv` puts the
learner's legal actions in the observation, ``{"obs": ..., "mask": ...}``, which Tianshou's
``DiscreteQLearningPolicy`` reads: masked actions get the lowest Q-value (greedy choice, the
bootstrap target) and epsilon-greedy exploration draws only legal ones. Rule options go in
``--option KEY=VALUE``.

The untrained network and then the trained one (greedy) play ``--eval-episodes`` episodes
against the same opponent, and each prints one line with the counts: an episode is won when the
learner's result is above every other seat's (Gin Rummy and 500 Rum: points; Rummy 51: fewer
penalty points), drawn on a tie for the best (a Gin dead hand), lost otherwise; an episode cut
by ``max_steps`` is counted as truncated (``rummy_agents.integrations.evaluate`` counts them).

The defaults are the smallest setting that shows learning on a 2-core machine: Gin Rummy with
``knock_limit=30`` (knocks are legal with up to 30 deadwood points, so hands end in a knock and
every episode pays; with the standard limit of 10, untrained and random policies almost never
knock and nearly every hand is a dead hand, a draw) against uniformly random legal play.

::

    pip install -c constraints.txt "rummy_env[tianshou]"
    python examples/tianshou_dqn_masked.py               # the defaults: about a minute
    python examples/tianshou_dqn_masked.py --option knock_limit=10 --timesteps 1000000
    python examples/tianshou_dqn_masked.py --smoke       # a few hundred steps, for the tests

Written for Tianshou 2.x (``tianshou.algorithm.DQN``, ``OffPolicyTrainerParams``); Tianshou 1.x
spells the same pieces differently (``tianshou.policy.DQNPolicy``, ``OffpolicyTrainer``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

from _common import add_game_arguments, at_least, describe_setting, game_options

# Only the standard library (and _common, which uses nothing else) is imported above:
# ``--help`` answers at once. numpy, torch, Tianshou and the games are imported in ``main``
# after the arguments are parsed.


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; ``args.options`` is the game's rule options (defaults and ``--option``)."""
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_game_arguments(p)
    p.add_argument(
        "--opponent",
        default="random",
        help="'random' (uniform legal play) or an agent name of the game (rummy_agents.agent_spec)",
    )
    p.add_argument("--timesteps", type=at_least(1), default=40_000, help="learner decisions")
    p.add_argument("--envs", type=at_least(1), default=4, help="games played side by side")
    p.add_argument("--hidden", type=at_least(1), nargs="+", default=[64, 64])
    p.add_argument("--lr", type=float, default=1e-3, help="learning rate")
    p.add_argument("--eps", type=float, default=0.1, help="exploration while training")
    p.add_argument("--buffer", type=at_least(1), default=50_000, help="replay buffer size")
    p.add_argument("--eval-episodes", type=at_least(1), default=200)
    p.add_argument(
        "--threads", type=at_least(1), default=1, help="torch threads (1 suits these small nets)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--smoke",
        action="store_true",
        help="300 steps, a small net and 20 evaluation episodes (the tests)",
    )
    args = p.parse_args(argv)
    if args.smoke:
        args.timesteps, args.envs, args.hidden, args.eval_episodes = 300, 2, [32, 32], 20
    args.options = game_options(args)
    return args


def greedy(policy: Any) -> Callable[[Any, Any], int]:
    """``policy(observation, mask) -> action``: the masked greedy action of the Q-network."""
    import numpy as np
    import torch
    from tianshou.data import Batch

    def act(observation: np.ndarray, mask: np.ndarray) -> int:
        obs = Batch(obs=Batch(obs=observation[None], mask=np.asarray(mask, np.int8)[None]), info={})
        with torch.no_grad():
            return int(policy(obs).act[0])

    return act


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Evaluate the untrained network, train, evaluate again; print and return both counts."""
    args = parse_args(argv)
    import torch
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    import rummy_agents
    from rummy_agents.integrations import evaluate, evaluation_line
    from rummy_agents.integrations.tianshou import make_env

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    opponent = (
        None
        if args.opponent == "random"
        else rummy_agents.agent_spec(args.opponent, game=args.game)
    )

    def env_fn() -> Any:
        return make_env(args.game, opponents=opponent, **args.options)

    env = env_fn()
    train_envs = DummyVectorEnv([env_fn for _ in range(args.envs)])
    test_envs = DummyVectorEnv([env_fn for _ in range(2)])
    train_envs.seed(args.seed)
    test_envs.seed(args.seed + 1000)

    net = Net(
        state_shape=env.observation_space["obs"].shape,
        action_shape=int(env.action_space.n),
        hidden_sizes=args.hidden,
    )
    policy = DiscreteQLearningPolicy(
        model=net,
        action_space=env.action_space,
        observation_space=env.observation_space,
        eps_training=args.eps,
        eps_inference=0.0,
    )
    algorithm = DQN(
        policy=policy,
        optim=AdamOptimizerFactory(lr=args.lr),
        gamma=1.0,  # one reward, at the end of the hand
        n_step_return_horizon=3,
        target_update_freq=200,
    )
    train_collector = Collector[CollectStats](
        algorithm, train_envs, VectorReplayBuffer(args.buffer, args.envs), exploration_noise=True
    )
    test_collector = Collector[CollectStats](algorithm, test_envs)

    setting = describe_setting(args.game, args.options)
    results = {}

    def evaluation(label: str) -> None:
        policy.eval()
        r = evaluate(
            greedy(policy),
            args.game,
            opponents=opponent,
            episodes=args.eval_episodes,
            seed=args.seed + 10_000,
            **args.options,
        )
        print(evaluation_line(label, r, setting, args.opponent), flush=True)
        results[label] = r

    evaluation("before training")
    step_per_epoch = min(args.timesteps, 10_000)
    t0 = time.perf_counter()
    algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            test_collector=test_collector,
            max_epochs=max(1, args.timesteps // step_per_epoch),
            epoch_num_steps=step_per_epoch,
            collection_step_num_env_steps=10 * args.envs,
            test_step_num_episodes=2,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.1,
            show_progress=False,
            verbose=False,
        )
    )
    print(f"trained {args.timesteps} steps in {time.perf_counter() - t0:.0f}s", flush=True)
    evaluation("after training")
    return results


if __name__ == "__main__":
    main()
