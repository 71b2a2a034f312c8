"""3- and 4-player Gin Rummy (RULES.md §1.10) as compiled kernels over match records.

Every hand is a 2-player hand played by the 2-player kernels (``kernels``) on a table record
inside the match record, with the hand options (``GinRummyConfig.hand_config``: one hand, raw
points); this module only seats the players, passes the turn between tables, and scores the match.

- 3 players: the dealer sits out; seat ``dealer + 1`` takes the non-dealer's part of the
  2-player hand (dealt first, first upcard offer) and seat ``dealer + 2`` the dealer's part. The
  loser of a hand deals the next; a dead hand is dealt again by the same dealer.
- 4 players: teams {0, 2} and {1, 3}; in round r, player_0 plays player_(1 if r even else 3) at
  table 0 and player_2 the other at table 1; the tables take turns one decision at a time (table 0
  first) until both hands are over, then the round is scored for the teams. A round in which no
  team scored is dealt again with the same pairs and dealers (the round index advances only after
  a scored round, so "the seats that dealt deal again" is always possible).
"""

from __future__ import annotations

import numpy as np

from rummy_env.core import batch
from rummy_env.core import rng as _rng
from rummy_env.core.jit import kernel
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy import kernels as K
from rummy_env.rules.gin_rummy.config import CFG, MP
from rummy_env.rules.gin_rummy.multi_state import multi_state_dtype

TABLES = K.TABLES

M_MATCH = MP.MATCH
M_NORMALIZED = MP.NORMALIZED
M_MAX_STEPS = MP.MAX_STEPS
K_TARGET = CFG.TARGET
K_BOX_BONUS = CFG.BOX_BONUS
K_GAME_BONUS = CFG.GAME_BONUS
K_SHUTOUT_DOUBLE = CFG.SHUTOUT_DOUBLE_TOTAL
K_SCALE = CFG.SCORE_SCALE
K_AUTO = CFG.AUTO_MELD

OUT_KNOCK = E.OUT_KNOCK
OUT_GIN = E.OUT_GIN
OUT_UNDERCUT = E.OUT_UNDERCUT
OUT_DEAD = E.OUT_DEAD
NSLOT = E.MAX_MELD_SLOTS

# observation offsets: the 2-player observation of the observer's table, then the match pieces
_P2 = E.piece_offsets(False)
O_TOP = _P2["discard_top"]
O_PILE = _P2["discard_pile"]
O_STOCK = _P2["stock_size"]
O_LIMIT = _P2["knock_limit"]
O_SPADE = _P2["spade_double"]
O_DEALER = _P2["is_dealer"]
O_SCORES = _P2["scores"]
O_BOXES = _P2["boxes"]
O_PHASE = _P2["phase"]
PREFIX_AUTO = E.observation_size(True)
PREFIX_MANUAL = E.observation_size(False)
_O3 = E.piece_offsets(True, 3)
O3_OUT = _O3["sitting_out"] - PREFIX_AUTO
O3_SCORES = _O3["match_scores"] - PREFIX_AUTO
O3_BOXES = _O3["match_boxes"] - PREFIX_AUTO
O3_KNOWN = _O3["seat_known"] - PREFIX_AUTO
O3_SIZE = _O3["seat_hand_size"] - PREFIX_AUTO
O3_MELDS = E.piece_offsets(False, 3)["seat_melds"] - PREFIX_MANUAL
_O4 = E.piece_offsets(True, 4)
O4_OPP = _O4["table_opponent"] - PREFIX_AUTO
O4_SCORES = _O4["team_scores"] - PREFIX_AUTO
O4_BOXES = _O4["team_boxes"] - PREFIX_AUTO
O4_POUT = _O4["partner_outcome"] - PREFIX_AUTO
O4_PPTS = _O4["partner_points"] - PREFIX_AUTO
_STOCK_START = 31


@kernel
def board_winner(b) -> int:
    """Table-local winner of a finished hand, -1 for a dead hand."""
    o = b.outcome
    if o == OUT_KNOCK or o == OUT_GIN:
        return b.knocker
    if o == OUT_UNDERCUT:
        return 1 - b.knocker
    return -1


@kernel
def _sit(rec, t, a, b, dealer_seat):
    """Seat ``a`` (table-local 0) and ``b`` (local 1) at table ``t``; ``dealer_seat`` deals."""
    rec.seat[t, 0] = a
    rec.seat[t, 1] = b
    rec.board_of[a] = t
    rec.board_of[b] = t
    rec.local[a] = 0
    rec.local[b] = 1
    rec.table_dealer[t] = dealer_seat


@kernel
def _deal_tables(rec, cfg, tables, shuffle):
    """Seat the players for the next hand (from ``dealer`` / ``round`` and ``table_dealer``)
    and deal every table.
    """
    n_p = rec.rewards.shape[0]
    for q in range(n_p):
        rec.board_of[q] = -1
        rec.local[q] = -1
    if n_p == 3:
        d = rec.dealer
        a = (d + 1) % 3
        b = (d + 2) % 3
        _sit(rec, 0, a, b, b)
    else:
        opp0 = 1 if rec.round % 2 == 0 else 3
        d0 = rec.table_dealer[0]
        d1 = rec.table_dealer[1]
        _sit(rec, 0, 0, opp0, d0)
        _sit(rec, 1, 2, 4 - opp0, d1)
        rec.dealer = d0
    for t in range(rec.boards.shape[0]):
        bd = rec.boards[t]
        local_dealer = 0 if rec.table_dealer[t] == rec.seat[t, 0] else 1
        K.reset_episode(bd, cfg, tables, local_dealer, shuffle)
    rec.turn = 0
    _sync(rec)


@kernel
def _sync(rec):
    """The seat to act and the phase, from the acting table."""
    bd = rec.boards[rec.turn]
    rec.cur = rec.seat[rec.turn, bd.cur]
    rec.phase = bd.phase


@kernel
def reset_episode(rec, cfg, tables, dealer, shuffle):
    """Start a match. ``dealer`` -1 draws the dealers; 3 players: the seat sitting out;
    4 players: bit t set when table t's dealer in round 0 is its second seat (1 or 3).
    """
    n_p = rec.rewards.shape[0]
    for q in range(n_p):
        rec.scores[q] = 0
        rec.boxes[q] = 0
        rec.totals[q] = 0
        rec.settle[q] = 0
        rec.hand_points[q] = 0
        rec.deadwood[q] = 0
        rec.hand_outcome[q] = 0
        rec.round_points[q] = 0
        rec.paid[q] = 0.0
    rec.round = 0
    if n_p == 3:
        batch.begin_episode(rec, dealer)
    else:
        batch.begin_episode(rec, 0)
        code = np.int64(dealer) if dealer >= 0 else np.int64(_rng.randint(rec, 4))
        rec.table_dealer[0] = 1 if code & 1 else 0
        rec.table_dealer[1] = 3 if code & 2 else 2
    for t in range(rec.boards.shape[0]):
        rec.boards[t].rng = _rng.next_u64(rec)
    _deal_tables(rec, cfg, tables, shuffle)


@kernel
def _pay(rec, seat, amount):
    """Pay ``amount`` to ``seat`` in this step's rewards (and count it as paid)."""
    rec.rewards[seat] += amount
    rec.paid[seat] += amount


@kernel
def _record_hand(rec, t):
    """Copy a finished table's hand result to its seats."""
    bd = rec.boards[t]
    for j in range(2):
        s = rec.seat[t, j]
        rec.hand_points[s] = bd.hand_points[j]
        rec.deadwood[s] = bd.deadwood[j]
        rec.hand_outcome[s] = bd.outcome
    rec.outcome = bd.outcome
    rec.hands_played += 1


@kernel
def _end_match(rec, cfg, winner):
    """Bonuses and settlement when ``winner`` (a seat; 4 players: a member of the winning
    team) reached the target. Pays what the settlement adds to the rewards paid so far.
    """
    n_p = rec.rewards.shape[0]
    bb = cfg[K_BOX_BONUS]
    gb = cfg[K_GAME_BONUS]
    double_total = cfg[K_SHUTOUT_DOUBLE] != 0
    for q in range(n_p):
        rec.totals[q] = rec.scores[q] + rec.boxes[q] * bb
        rec.settle[q] = 0
    base = rec.totals[winner]
    team = n_p == 4
    every_shutout = True  # the winner's ``totals`` count the shutout when every loser had it
    for q in range(n_p):
        if q == winner or (team and q % 2 == winner % 2):
            continue
        shutout = rec.scores[q] == 0
        every_shutout = every_shutout and shutout
        w_total = base + (2 * gb if shutout and not double_total else gb)
        if shutout and double_total:
            w_total *= 2
        diff = w_total - rec.totals[q]
        if team:
            # the team totals are each member's; settle the team once, per member
            rec.settle[q] = -diff
        else:
            rec.settle[q] = -diff
            rec.settle[winner] += diff
    w_total = base + (2 * gb if every_shutout and not double_total else gb)
    if every_shutout and double_total:
        w_total *= 2
    if team:
        for q in range(n_p):
            if q % 2 == winner % 2:
                rec.settle[q] = -rec.settle[(q + 1) % 4]
        rec.totals[winner] = w_total
        rec.totals[(winner + 2) % 4] = w_total
    else:
        rec.totals[winner] = w_total
    for q in range(n_p):
        if cfg[M_NORMALIZED]:
            if team:
                r = 1.0 if q % 2 == winner % 2 else -1.0
            else:
                r = 1.0 if q == winner else -0.5
        else:
            r = rec.settle[q] / 2.0 if team else float(rec.settle[q])
        rec.rewards[q] += r - rec.paid[q]
        rec.paid[q] = r
    rec.done = 1


@kernel
def _finish_three(rec, cfg, tables):
    """The hand at the one table is over: score it, then deal the next or end the match."""
    bd = rec.boards[0]
    for q in range(3):  # the seat sitting out scored nothing; it saw the table's outcome
        rec.hand_points[q] = 0
        rec.deadwood[q] = 0
        rec.hand_outcome[q] = bd.outcome
    _record_hand(rec, 0)
    w = board_winner(bd)
    match = cfg[M_MATCH] != 0
    if w >= 0:
        ws = rec.seat[0, w]
        ls = rec.seat[0, 1 - w]
        pts = bd.hand_points[w]
        rec.scores[ws] += pts
        rec.boxes[ws] += bd.boxes[w]  # 1 + Oklahoma extra boxes
        r = float(pts)
        if cfg[M_NORMALIZED]:
            r = r / cfg[K_SCALE] if not match else 0.0
        _pay(rec, ws, r)
        _pay(rec, ls, -r)
        if not match:
            rec.settle[ws] = pts
            rec.settle[ls] = -pts
    if not match:
        rec.done = 1
        return
    if w >= 0 and rec.scores[rec.seat[0, w]] >= cfg[K_TARGET]:
        _end_match(rec, cfg, rec.seat[0, w])
        return
    if w >= 0:
        rec.dealer = rec.seat[0, 1 - w]  # the loser deals and sits out
    _deal_tables(rec, cfg, tables, True)


@kernel
def _finish_round(rec, cfg, tables):
    """Both tables' hands are over: score the round for the teams (RULES.md §1.10)."""
    match = cfg[M_MATCH] != 0
    team = -1
    pts = 0
    won = np.zeros(2, np.int64)  # points of the hand at each table (0 for a dead table)
    n_won = 0
    win_team = np.full(2, -1, np.int64)  # team (0: A, 1: B) that won each table, -1 none
    for t in range(2):
        bd = rec.boards[t]
        w = board_winner(bd)
        if w >= 0:
            s = rec.seat[t, w]
            win_team[t] = s % 2
            won[t] = bd.hand_points[w]
            n_won += 1
            # Oklahoma extra boxes go to the team of the hand's winner
            extra = bd.boxes[w] - 1
            if extra > 0:
                for q in range(4):
                    if q % 2 == s % 2:
                        rec.boxes[q] += extra
    if n_won == 2 and win_team[0] == win_team[1]:
        team = win_team[0]
        pts = won[0] + won[1]
    elif n_won == 2:
        if won[0] != won[1]:
            hi = 0 if won[0] > won[1] else 1
            team = win_team[hi]
            pts = abs(won[0] - won[1])
    elif n_won == 1:
        t = 0 if win_team[0] >= 0 else 1
        team = win_team[t]
        pts = won[t]
    for q in range(4):
        rec.round_points[q] = pts if team >= 0 and q % 2 == team else 0
    if team >= 0:
        for q in range(4):
            if q % 2 == team:
                rec.scores[q] += pts
                rec.boxes[q] += 1
        r = pts / 2.0
        if cfg[M_NORMALIZED]:
            r = r / cfg[K_SCALE] if not match else 0.0
        for q in range(4):
            _pay(rec, q, r if q % 2 == team else -r)
        if not match:
            for q in range(4):
                rec.settle[q] = pts if q % 2 == team else -pts
    if not match:
        rec.done = 1
        return
    if team >= 0 and rec.scores[team] >= cfg[K_TARGET]:
        _end_match(rec, cfg, team)
        return
    if team >= 0:
        # next round: new pairs; at each table the member of the team that did not score deals
        rec.round += 1
        opp0 = 1 if rec.round % 2 == 0 else 3
        loser = 1 - team
        rec.table_dealer[0] = 0 if loser == 0 else opp0
        rec.table_dealer[1] = 2 if loser == 0 else 4 - opp0
    _deal_tables(rec, cfg, tables, True)


@kernel
def apply_action(rec, cfg, tables, a, mask=None, work=0):
    """Apply a legal action of the seat to act (at the acting table); the whole transition
    (the table's pending ``settle`` included), so it returns False.
    """
    n_p = rec.rewards.shape[0]
    for q in range(n_p):
        rec.rewards[q] = 0.0
    rec.steps += 1
    t = rec.turn
    bd = rec.boards[t]
    if K.apply_action(bd, cfg, tables, a):
        K.settle(bd, cfg, tables)
    n_t = rec.boards.shape[0]
    if bd.done:
        if n_t == 1:
            _finish_three(rec, cfg, tables)
        else:
            _record_hand(rec, t)
            if rec.boards[1 - t].done:
                _finish_round(rec, cfg, tables)
            else:
                rec.turn = 1 - t
    elif n_t == 2 and not rec.boards[1 - t].done:
        rec.turn = 1 - t
    if not rec.done:
        _sync(rec)
    batch.truncate(rec, cfg[M_MAX_STEPS])
    return False


@kernel
def legal_mask(rec, cfg, tables, out, work=0):
    """The legal-action mask of the seat to act (that of its table's hand)."""
    if rec.done:
        out[:] = 0
        return
    K.legal_mask(rec.boards[rec.turn], cfg, tables, out)


@kernel
def _write_sit_out(bd, out):
    """What the seat sitting out sees of the table in the 2-player pieces: the table's public
    pieces; no hand, and ``is_dealer`` (it dealt).
    """
    n = bd.pile_n
    if n > 0:
        out[O_TOP + bd.pile[n - 1]] = 1.0
        for j in range(n):
            out[O_PILE + bd.pile[j]] = 1.0 - (n - 1 - j) / 52.0
    out[O_STOCK] = (52 - bd.deck_pos) / _STOCK_START
    out[O_LIMIT] = bd.knock_limit / 10.0
    out[O_SPADE] = bd.spade_double
    out[O_DEALER] = 1.0
    out[O_PHASE + bd.phase] = 1.0


@kernel
def write_obs(rec, cfg, p, out):
    """Player ``p``'s observation: its table's 2-player observation (match scores in place of
    the hand's), then the match pieces (``encodings.gin_rummy.observation_pieces``).
    """
    out[:] = 0.0
    n_p = rec.rewards.shape[0]
    prefix = PREFIX_AUTO if cfg[K_AUTO] else PREFIX_MANUAL
    t = rec.board_of[p]
    o = -1
    if t >= 0:
        j = rec.local[p]
        K.write_obs(rec.boards[t], cfg, j, out[:prefix])
        o = rec.seat[t, 1 - j]
    else:
        _write_sit_out(rec.boards[0], out)
    tg = float(cfg[K_TARGET])
    out[O_SCORES] = rec.scores[p] / tg
    out[O_BOXES] = rec.boxes[p] / 10.0
    out[O_SCORES + 1] = rec.scores[o] / tg if o >= 0 else 0.0
    out[O_BOXES + 1] = rec.boxes[o] / 10.0 if o >= 0 else 0.0
    x = out[prefix:]
    if n_p == 3:
        bd = rec.boards[0]
        for k in range(3):
            s = (p + k) % 3
            x[O3_SCORES + k] = rec.scores[s] / tg
            x[O3_BOXES + k] = rec.boxes[s] / 10.0
            j = rec.local[s]
            if j < 0:
                x[O3_OUT + k] = 1.0
                continue
            known = bd.known[j]
            for c in range(52):
                if K.has(known, c):
                    x[O3_KNOWN + 52 * k + c] = 1.0
            x[O3_SIZE + k] = K.popcount(bd.hands[j]) / 11.0
            if cfg[K_AUTO] == 0:
                for sl in range(bd.n_melds[j]):
                    m = bd.melds[j, sl]
                    base = O3_MELDS + (k * NSLOT + sl) * 52
                    for c in range(52):
                        if K.has(m, c):
                            x[base + c] = 1.0
    else:
        x[O4_OPP + (o - p) % 4] = 1.0
        x[O4_SCORES] = rec.scores[p] / tg
        x[O4_SCORES + 1] = rec.scores[o] / tg
        x[O4_BOXES] = rec.boxes[p] / 10.0
        x[O4_BOXES + 1] = rec.boxes[o] / 10.0
        pt = 1 - t
        pb = rec.boards[pt]
        if pb.done:
            x[O4_POUT + pb.outcome] = 1.0
            pj = rec.local[(p + 2) % 4]
            scale = float(cfg[K_SCALE])
            x[O4_PPTS] = pb.hand_points[pj] / scale
            x[O4_PPTS + 1] = pb.hand_points[1 - pj] / scale


@kernel
def new_work(states, cfg):
    """No scratch: the Gin kernels need none."""
    return 0


@kernel
def num_actions(rec, cfg):
    """Size of the action space (that of the 2-player hands)."""
    return K.num_actions(rec.boards[0], cfg)


@kernel
def final_points(rec, cfg, q):
    """Seat ``q``'s settlement (4 players: its team's; its rewards sum to half of it)."""
    return rec.settle[q]


@kernel
def write_final_extra(rec, cfg, out):
    """Each seat's final deadwood in its last hand."""
    for q in range(rec.deadwood.shape[0]):
        out[q] = rec.deadwood[q]


batch.register(multi_state_dtype(3).names, globals())
