"""Observation features for learned agents, computed from what the seat observes.

A learned policy reads ``concat(observation, features(observation))``. Features are pure
functions of the seat's own observation vector (never of hidden state), so an agent trained
with them computes them again at play time from the PettingZoo observation.

A feature set is an ordered tuple of named *pieces* for one game, read through the offsets of
that game's observation layout (``rummy_env.encodings``), which :class:`FeatureSet` builds from
the rule config::

    from rummy_agents.features import FeatureSet

    fs = FeatureSet("five_hundred_rum", ("top_discard", "going_out"), {"num_players": 3})
    x = fs(obs)  # (B, O) -> (B, O + fs.size) float32

Checkpoints name their feature set by a legacy name (:data:`LEGACY_NAMES`: ``"none"``,
``"gin_deadwood"``, ``"gin_deadwood_relative"``, ``"joker_cards"``, ``"joker_cards_out"``,
``"joker_cards_plan"``, ``"joker_cards_melds"``, ``"joker_cards_takes"``,
``"joker_cards_discards"``, ``"joker_cards_planner"``), each the pieces of the previous one
of its game and more; a legacy name gives exactly the entries, in the same order, the
checkpoint was trained on.
``docs/features.md`` tells how each piece came about and what it did for the cloned agents.

Pieces (52-wide planes have one entry per natural card, ``suit * 13 + rank``):

Gin Rummy

- ``gin_deadwood`` (106): the exact minimum deadwood after each possible discard / 100 (1.0
  for cards that cannot be discarded; 11 cards: the hand itself; 10 cards: the hand plus the
  top discard, i.e. what taking the discard allows), the deadwood of the 10-card hand now, the
  best deadwood reachable by taking the top discard, and a plane holding, at the top discard
  only, what taking it gains: (deadwood now - best deadwood after taking it) / 100 (10-card
  hands; 0 elsewhere). See :mod:`rummy_agents.features.gin`.
- ``gin_deadwood_relative`` (104): the same two planes in points relative to the best: per
  card, (deadwood after discarding it - the best discard's) / 10, capped at 1 (so the best
  discards read 0; 1 for cards that cannot be discarded), and at the top discard of a 10-card
  hand what taking it gains in points / 10, within [-1, 1]. A deadwood difference of one point
  is 0.1 here and 0.01 in ``gin_deadwood``.

500 Rum and Rummy 51, six card planes (the helpers of :mod:`rummy_agents.joker_rollouts`)

- ``melds_with_hand`` (52): 1 where the card is in the hand and makes a three-card meld with
  the rest of it (a joker may fill a place).
- ``hand_closeness`` (52): how close the card sits to the rest of the hand (same rank 4, same
  suit one rank away 3, two away 1; / 16).
- ``next_player_closeness`` (52): the same, to the cards the next player is known to hold.
- ``table_fit`` (52): 1 where the card lays off on a table meld (a group's missing suits while
  not full; the cards next to a run's ends) or, in Rummy 51, takes a joker's place in a run.
- ``top_discard`` (52): one-hot of the top discard.
- ``top_discard_melds`` (52): the top discard again where it makes a three-card meld with the
  hand.

500 Rum and Rummy 51, the turn (the searches of :mod:`rummy_agents.features.searches`)

- ``going_out`` (3): from :func:`fewest_left`, the fewest cards the hand can hold before its
  discard once the turn's new melds and lay-offs are down (Rummy 51: an opening must reach 51
  points first, the default threshold; 500 Rum: melding every card goes out too, as with the
  default ``going_out``). In the play phase: [whether the hand goes out this turn, that count
  / 14, the same count / 14]; in the draw phase: [whether taking the top discard lets it go
  out, the count with the top discard / 14, the count without drawing / 14]; zeros otherwise
  (500 Rum's "Rummy!" offers among them).
- ``held_points`` (52): each held card's points in hand / the highest (Rummy 51: its penalty /
  25, :data:`RUMMY51_VALUES`; 500 Rum: its value / 15, :data:`FIVE_HUNDRED_RUM_VALUES`, the
  default values);
  0 for cards not held. ``greedy`` orders its discards by these points.
- ``free_arrangement_copies`` (52): the copies of each card in the hand's free arrangement
  (:func:`free_arrangement_by`: the disjoint new melds leaving the fewest of those points) / 2.
- ``fewest_cards_melds`` (685, one per ``MELD[t]`` action): in the play phase, 1 for each new
  meld of the arrangement :func:`fewest_left` finds (the turn's new melds that leave the fewest
  cards, so the melds that go out when the hand can); zeros otherwise.

500 Rum only

- ``take_gains`` (108, one per discard pile depth, ``TAKE_DISCARD[d]``; entries past the deck's
  size stay 0): in the draw phase and on a "Rummy!" offer, what taking the pile down to depth
  ``d`` adds to the hand's free arrangement (:func:`take_gain`, ``greedy``'s draw rule without
  the table's lay-offs) / 100, clipped to [-1, 1]; -1 where the deepest card taken melds with
  nothing (no three-card meld with the hand and the cards above it, no table meld takes it).
- ``discard_scores`` (52, ``DISCARD[c]`` of naturals): in the play phase, for each natural in
  the hand, ``greedy``'s score of discarding it
  (:func:`~rummy_agents.joker_rollouts.greedy_discard_score`: its value less what it gives the
  table, the pile and the next player, and breaks in the hand) relative to the best,
  ``1 + clip((score - best) / 10, -1, 0)``: 1 for the card ``greedy`` throws (among ties), 0
  for cards 10 points worse or not held; zeros outside the play phase.
- ``free_discard_scores`` (52): the same over the cards the hand's free arrangement leaves
  (the best discard that keeps its melds whole, as ``greedy@hold_melds`` throws while it holds
  them); 0 for melded cards.
- ``greedy_plan_melds`` (685, one per ``MELD[t]``): in the play phase and after a "Rummy!"
  call, 1 at each new meld of ``greedy``'s plan for the turn
  (:class:`rummy_agents.five_hundred_rum_greedy.MeldPlanner`: the most points melded, lay-offs
  onto the table and onto the new melds counted, a taken card owed to a meld melded).
- ``fewest_opponent_cards`` (12): in every phase but the hand's end, a one-hot of the fewest
  cards an opponent holds (0 to 10, then 11 or more).

:meth:`FeatureSet.card_layout` and :meth:`FeatureSet.meld_planes` say where the card planes
and the action-aligned pieces sit in the featured observation, for a policy's card head and
gated meld head.
"""

from rummy_agents.features.feature_set import (
    FEATURES,
    FeatureSet,
    add_features,
    card_layout,
    default_features,
    feature_size,
    game_config,
    guess_feature_set,
    joker_layout,
    meld_planes,
    observation_layout,
)
from rummy_agents.features.pieces import LEGACY_NAMES, PIECES, Piece, parse_pieces
from rummy_agents.features.searches import (
    FIVE_HUNDRED_RUM_VALUES,
    RUMMY51_VALUES,
    best_melds,
    fewest_left,
    free_arrangement,
    free_arrangement_by,
    make_out_work,
    take_gain,
)

__all__ = [
    "FEATURES",
    "LEGACY_NAMES",
    "PIECES",
    "FeatureSet",
    "Piece",
    "FIVE_HUNDRED_RUM_VALUES",
    "RUMMY51_VALUES",
    "add_features",
    "best_melds",
    "card_layout",
    "default_features",
    "feature_size",
    "fewest_left",
    "free_arrangement",
    "free_arrangement_by",
    "game_config",
    "guess_feature_set",
    "joker_layout",
    "make_out_work",
    "meld_planes",
    "observation_layout",
    "parse_pieces",
    "take_gain",
]
