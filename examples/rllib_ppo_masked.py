"""Multi-agent PPO with action masking on a rummy game, with Ray RLlib (new API stack).

Every seat of the game is an RLlib agent of ``RummyMultiAgentEnv``
(:mod:`rummy_agents.integrations.rllib`, registered as ``"rummy_env"``); by default all seats
share one policy (self-play), with ``--policies per-seat`` each seat trains its own. The policy
is RLlib's ``ActionMaskingTorchRLModule``, which reads the ``"observations"`` and
``"action_mask"`` entries of the env's observations, so illegal actions are never sampled. At
the end the policy plays ``--eval-episodes`` episodes against uniformly random legal play and
the win rate is printed.

One machine (the default; a local Ray instance with ``--num-env-runners + 1`` CPUs)::

    pip install -c constraints.txt "rummy_env[rllib]"
    python examples/rllib_ppo_masked.py --game gin_rummy --iterations 50
    python examples/rllib_ppo_masked.py --smoke          # a few hundred steps, for the tests

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

Rule options go in ``--option KEY=VALUE`` (repeatable), e.g. ``--option oklahoma=true``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import rummy_agents.integrations.rllib as rl
from rummy_agents.integrations import evaluate


def parse_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with a JSON value (``true``, ``3``, ``"match"``) or a plain string."""
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"--option needs KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def build_config(args: argparse.Namespace, env_config: dict[str, Any]) -> Any:
    """The PPO config: masked modules, one shared policy or one per seat."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

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


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train, evaluate against random play, print the result (and return it)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--game", default="gin_rummy")
    p.add_argument(
        "--option",
        type=parse_option,
        action="append",
        default=[],
        help="a rule option, KEY=VALUE (repeatable)",
    )
    p.add_argument("--policies", choices=["shared", "per-seat"], default="shared")
    p.add_argument("--iterations", type=int, default=20, help="PPO training iterations")
    p.add_argument("--batch-size", type=int, default=4000, help="env steps per iteration")
    p.add_argument("--minibatch-size", type=int, default=256)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    p.add_argument(
        "--address",
        default=None,
        help="Ray cluster to join ('auto' or HOST:PORT; default: RAY_ADDRESS, "
        "else a local Ray instance)",
    )
    p.add_argument(
        "--num-env-runners",
        type=int,
        default=0,
        help="remote env runners (0: sample in the driver)",
    )
    p.add_argument("--envs-per-runner", type=int, default=1)
    p.add_argument("--num-learners", type=int, default=0)
    p.add_argument("--num-gpus-per-learner", type=float, default=0)
    p.add_argument("--eval-episodes", type=int, default=20)
    p.add_argument("--checkpoint", default=None, help="save the trained algorithm here")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--smoke",
        action="store_true",
        help="a few hundred steps and 4 evaluation games (the tests)",
    )
    args = p.parse_args(argv)
    if args.smoke:
        args.iterations, args.batch_size, args.minibatch_size, args.epochs = 1, 256, 64, 1
        args.hidden, args.eval_episodes = [32, 32], 4
    env_config = {"game": args.game, **dict(args.option)}
    rl.RummyMultiAgentEnv(env_config)  # a bad game or option fails here, before Ray starts

    import ray

    address = args.address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address)
    else:  # one machine: only the CPUs this run uses
        ray.init(num_cpus=args.num_env_runners + 1, include_dashboard=False)
    try:
        algo = build_config(args, env_config).build_algo()
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
        results = {}
        modules = ["shared"] if args.policies == "shared" else algo.config.policies
        for seat, module_id in enumerate(sorted(modules)):
            policy = rl.RLModulePolicy(algo.get_module(module_id))
            seat_arg = {} if module_id == "shared" else {"learner_seat": seat}
            results[module_id] = evaluate(
                policy,
                args.game,
                None,
                args.eval_episodes,
                args.seed + 10_000,
                **seat_arg,
                **dict(args.option),
            )
            r = results[module_id]
            print(
                f"evaluation ({module_id} vs random, {args.game}, {args.eval_episodes} "
                f"episodes): win rate {r['win_rate']:.2f}, mean return {r['mean_return']:.2f}"
            )
        algo.stop()
    finally:
        ray.shutdown()
    return results


if __name__ == "__main__":
    main()
