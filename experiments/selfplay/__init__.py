"""The pieces of ``experiments/ppo_selfplay.py`` (masked PPO with batched self-play).

- ``config``: the run's configuration (:class:`~selfplay.config.Config`) and its command line;
- ``opponents``: the game roles, the opponent pool and the baseline agent;
- ``rollout``: the games trained on, each update's rollout of them, and the learner's batch;
- ``advantages``: the rewards training sees, GAE per (game, seat), returns to go;
- ``cloning``: behaviour cloning and DAgger before PPO, and the teacher;
- ``network``: the network's layout, its start (fresh or from an agent file) and agent files;
- ``progress``: evaluation against a fixed agent, ``progress.csv`` and the learning curve.

Python puts the script's folder first on the import path when it runs, so these import as
``selfplay.<module>``.
"""
