"""Multi-agent PPO with action masking on a rummy game, with Ray RLlib (new API stack).

Every seat of the game is an RLlib agent of ``RummyMultiAgentEnv``
(:mod:`rummy_agents.integrations.rllib`, registered as ``"rummy_env"``); by default all seats
share one policy (self-play), with ``--policies per-seat`` each seat trains its own. The policy
is RLlib's ``ActionMaskingTorchRLModule``, which reads the ``"observations"`` and
``"action_mask"`` entries of the env's observations, so illegal actions are never sampled.

Before and after training each policy (greedy) plays ``--eval-episodes`` episodes against
uniformly random legal play, and each evaluation prints one line with the counts: an episode
is won when the policy's result is above every other seat's (Gin Rummy and 500 Rum: points;
Rummy 51: fewer penalty points), drawn on a tie for the best (a Gin dead hand), lost otherwise;
an episode cut by ``max_steps`` is counted as truncated (``rummy_agents.integrations.evaluate``
counts them).

The defaults are the smallest setting that shows learning on a 2-core machine: Gin Rummy with
``knock_limit=30`` (knocks are legal with up to 30 deadwood points, so hands end in a knock and
every episode pays; with the standard limit of 10, untrained and random policies almost never
knock and nearly every hand is a dead hand, a draw). Rule options go in ``--option KEY=VALUE``
(repeatable), e.g. ``--option knock_limit=10 --option oklahoma=true``.

One machine (the default; a local Ray instance with ``--num-env-runners + 1`` CPUs)::

    pip install -c constraints.txt "rummy_env[rllib]"
    python examples/rllib_ppo_masked.py                  # the defaults: a few minutes
    python examples/rllib_ppo_masked.py --option knock_limit=10 --iterations 200
    python examples/rllib_ppo_masked.py --smoke          # one small iteration, for the tests

A Ray cluster: the same script, by configuration only. Install the same versions of
``rummy_env[rllib]`` (and of Python) on every node, then::

    ray start --head --port=6379                         # on the head node
    ray start --address=HEAD_IP:6379                     # on each worker node
    python examples/rllib_ppo_masked.py --address auto --num-env-runners 16 --iterations 200

(on the head node; or set ``RAY_ADDRESS=HEAD_IP:6379`` instead of ``--address``, or submit it
with ``ray job submit --address http://HEAD_IP:8265 --working-dir . -- python
examples/rllib_ppo_masked.py --address auto ...``). The env runners, which play the games, are
spread over the cluster's CPUs; the learner stays on the driver (``--num-learners N`` puts N
learner workers on the cluster, one GPU each with ``--num-gpus-per-learner 1``). Recent Ray
releases turn on token authentication: share the cluster's token with the nodes and the driver
(see Ray's token-auth docs), or set ``RAY_AUTH_MODE=disabled`` everywhere on a trusted network.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from typing import Any

from _common import add_game_arguments, at_least, describe_setting, game_options

# Only the standard library (and _common, which uses nothing else) is imported above:
# ``--help`` answers at once. Ray, torch and the games are imported after the arguments are
# parsed.


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; ``args.options`` is the game's rule options (defaults and ``--option``)."""
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_game_arguments(p)
    p.add_argument("--policies", choices=["shared", "per-seat"], default="shared")
    p.add_argument("--iterations", type=at_least(1), default=10, help="PPO training iterations")
    p.add_argument("--batch-size", type=at_least(1), default=4000, help="env steps per iteration")
    p.add_argument("--minibatch-size", type=at_least(1), default=256)
    p.add_argument("--epochs", type=at_least(1), default=5)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--hidden", type=at_least(1), nargs="+", default=[64, 64])
    p.add_argument(
        "--address",
        default=None,
        help="Ray cluster to join ('auto' or HOST:PORT; default: RAY_ADDRESS, "
        "else a local Ray instance)",
    )
    p.add_argument(
        "--num-env-runners",
        type=at_least(0),
        default=0,
        help="remote env runners (0: sample in the driver)",
    )
    p.add_argument("--envs-per-runner", type=at_least(1), default=1)
    p.add_argument("--num-learners", type=at_least(0), default=0)
    p.add_argument("--num-gpus-per-learner", type=float, default=0)
    p.add_argument("--eval-episodes", type=at_least(1), default=200)
    p.add_argument("--checkpoint", default=None, help="save the trained algorithm here")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--smoke",
        action="store_true",
        help="one iteration of 256 steps, a small net and 20 evaluation episodes (the tests)",
    )
    args = p.parse_args(argv)
    if args.smoke:
        args.iterations, args.batch_size, args.minibatch_size, args.epochs = 1, 256, 64, 1
        args.hidden, args.eval_episodes = [32, 32], 20
    args.options = game_options(args)
    return args


def build_config(args: argparse.Namespace, env_config: dict[str, Any]) -> Any:
    """The PPO config: masked modules, one shared policy or one per seat."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    import rummy_agents.integrations.rllib as rl

    agents = rl.RummyMultiAgentEnv(env_config).possible_agents
    if args.policies == "shared":
        module_ids = ["shared"]

        def mapping(agent_id: str, episode: Any, **kwargs: Any) -> str:
            return "shared"

    else:
        module_ids = list(agents)

        def mapping(agent_id: str, episode: Any, **kwargs: Any) -> str:
            return agent_id

    module_class = rl.action_masking_module_class()
    model_config = {"fcnet_hiddens": args.hidden, "vf_share_layers": False}
    specs = {
        m: RLModuleSpec(module_class=module_class, model_config=model_config) for m in module_ids
    }
    return (
        PPOConfig()
        .environment(rl.ENV_NAME, env_config=env_config)
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.envs_per_runner,
            num_cpus_per_env_runner=1,
        )
        .learners(num_learners=args.num_learners, num_gpus_per_learner=args.num_gpus_per_learner)
        .multi_agent(policies=set(module_ids), policy_mapping_fn=mapping)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            train_batch_size_per_learner=args.batch_size,
            minibatch_size=min(args.minibatch_size, args.batch_size),
            num_epochs=args.epochs,
            lr=args.lr,
            gamma=1.0,  # rewards come at the end of hands
            entropy_coeff=0.01,
        )
        .debugging(seed=args.seed)
    )


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Evaluate the untrained policies, train, evaluate again; print and return the counts
    (keyed ``"<module> before training"`` and ``"<module> after training"``).
    """
    args = parse_args(argv)
    import rummy_agents.integrations.rllib as rl
    from rummy_agents.integrations import evaluate, evaluation_line

    env_config = {"game": args.game, **args.options}
    rl.RummyMultiAgentEnv(env_config)  # a bad game or option fails here, before Ray starts

    import ray

    address = args.address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address)
    else:  # one machine: only the CPUs this run uses
        ray.init(num_cpus=args.num_env_runners + 1, include_dashboard=False)
    setting = describe_setting(args.game, args.options)
    results: dict[str, dict[str, Any]] = {}
    try:
        algo = build_config(args, env_config).build_algo()
        modules = ["shared"] if args.policies == "shared" else sorted(algo.config.policies)

        def evaluation(label: str) -> None:
            for seat, module_id in enumerate(modules):
                policy = rl.RLModulePolicy(algo.get_module(module_id))
                seat_arg = {} if module_id == "shared" else {"learner_seat": seat}
                r = evaluate(
                    policy,
                    args.game,
                    opponents=None,
                    episodes=args.eval_episodes,
                    seed=args.seed + 10_000,
                    **seat_arg,
                    **args.options,
                )
                print(evaluation_line(f"{module_id} {label}", r, setting, "random"), flush=True)
                results[f"{module_id} {label}"] = r

        evaluation("before training")
        t0 = time.perf_counter()
        for it in range(args.iterations):
            res = algo.train()
            runners = res.get("env_runners", {})
            print(
                f"iteration {it + 1}: env steps {runners.get('num_env_steps_sampled_lifetime')}, "
                f"episodes {runners.get('num_episodes_lifetime')}, "
                f"{time.perf_counter() - t0:.0f}s",
                flush=True,
            )
        if args.checkpoint:
            print("checkpoint:", algo.save(os.path.abspath(args.checkpoint)).checkpoint.path)
        evaluation("after training")
        algo.stop()
    finally:
        ray.shutdown()
    return results


if __name__ == "__main__":
    main()
