"""DQN with action masking on a rummy game, with Tianshou 2.x, against a fixed opponent.

The learner plays one seat of ``RummySingleAgentEnv`` (the seat drawn at every reset) against
``--opponent`` (``random``: uniformly random legal play; or an agent name of the game, such as
``simple`` for Gin Rummy). :class:`rummy_agents.integrations.tianshou.TianshouMaskedEnv` puts the
learner's legal actions in the observation, ``{"obs": ..., "mask": ...}``, which Tianshou's
``DiscreteQLearningPolicy`` reads: masked actions get the lowest Q-value (greedy choice, the
bootstrap target) and epsilon-greedy exploration draws only legal ones. At the end the policy
plays ``--eval-episodes`` episodes against random legal play and the win rate is printed.

::

    pip install -c constraints.txt "rummy_env[tianshou]"
    python examples/tianshou_dqn_masked.py --game gin_rummy --opponent simple --timesteps 200000
    python examples/tianshou_dqn_masked.py --smoke          # a few hundred steps, for the tests

Written for Tianshou 2.x (``tianshou.algorithm.DQN``, ``OffPolicyTrainerParams``); Tianshou 1.x
spells the same pieces differently (``tianshou.policy.DQNPolicy``, ``OffpolicyTrainer``).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import torch
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import rummy_agents
from rummy_agents.integrations import evaluate
from rummy_agents.integrations.tianshou import make_env


def greedy(policy: DiscreteQLearningPolicy) -> Any:
    """``policy(observation, mask) -> action``: the masked greedy action of the Q-network."""

    def act(observation: np.ndarray, mask: np.ndarray) -> int:
        obs = Batch(obs=Batch(obs=observation[None], mask=np.asarray(mask, np.int8)[None]), info={})
        with torch.no_grad():
            return int(policy(obs).act[0])

    return act


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Train, evaluate against random play, print the result (and return it)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--game", default="gin_rummy")
    p.add_argument(
        "--opponent",
        default="random",
        help="'random' or an agent name of the game (rummy_agents.agent_spec)",
    )
    p.add_argument("--timesteps", type=int, default=100_000, help="learner decisions")
    p.add_argument("--envs", type=int, default=4, help="games played side by side")
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--eps", type=float, default=0.1, help="exploration while training")
    p.add_argument("--buffer", type=int, default=50_000)
    p.add_argument("--eval-episodes", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--smoke",
        action="store_true",
        help="a few hundred steps and 4 evaluation games (the tests)",
    )
    args = p.parse_args(argv)
    if args.smoke:
        args.timesteps, args.envs, args.hidden, args.eval_episodes = 300, 2, [32, 32], 4

    torch.manual_seed(args.seed)
    opponent = (
        None
        if args.opponent == "random"
        else rummy_agents.agent_spec(args.opponent, game=args.game)
    )
    kwargs = {"reward": "normalized"} if args.game == "gin_rummy" else {}

    def env_fn() -> Any:
        return make_env(args.game, opponents=opponent, **kwargs)

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
    print(f"trained {args.timesteps} steps in {time.perf_counter() - t0:.0f}s")
    policy.eval()
    result = evaluate(
        greedy(policy), args.game, None, args.eval_episodes, args.seed + 10_000, **kwargs
    )
    print(
        f"evaluation (DQN vs random, {args.game}, {args.eval_episodes} episodes): "
        f"win rate {result['win_rate']:.2f}, loss rate {result['loss_rate']:.2f}, "
        f"mean return {result['mean_return']:.2f}"
    )
    return result


if __name__ == "__main__":
    main()
