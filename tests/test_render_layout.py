"""The picture's geometry (``rummy_env.render.picture.plan``), measured rather than looked at.

Over positions of played-out random games of every game and player count (500 Rum 2-8, Rummy
51 2-6, Gin 2-4), in the referee's and a seat's view, at 1280 x 720 (the default size):

- every table-meld card is at least ``MIN_MELD_HEIGHT`` = 60 px tall (rank and suit readable;
  the old layout drew them 56 px tall at most), every hand's card at least 44.8 px;
- no card is drawn outside the picture or outside its panel, and cards of different fans (a
  hand's line, a meld, a pile row, the stock) never overlap; within a fan each card shows at
  least half its width, the corner that carries its rank and suit (even a "10");
- the panels do not overlap, and no text label leaves the picture, overlaps another label or
  covers a card (each label's box from ``text_width``, an upper bound checked against the
  fonts here).

Made-up tables far beyond play (hypothesis: up to 40 melds, 30-card hands, 100-card piles)
still keep everything inside the picture and apart; only the card sizes give way.
"""

from __future__ import annotations

import itertools
import string
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy_env import five_hundred_rum_v1, gin_rummy_v0, rummy51_v1
from rummy_env.render.picture import (
    CARD_RATIO,
    HEIGHT,
    PILE_SHOW,
    SHOW,
    WIDTH,
    Box,
    Plan,
    fit_text,
    layout,
    plan,
    text_width,
)
from rummy_env.render.table import (
    HIDDEN,
    JOKER,
    BoardView,
    Card,
    MeldView,
    SeatView,
    TableView,
    describe,
)

MIN_MELD_HEIGHT = 60.0  # px at 1280 x 720, for every position met in play (cards 43 px wide)
MIN_HAND_HEIGHT = 44.8  # px: hands give way first, but stay readable (cards 32 px wide)
MODULES = {
    "gin_rummy": gin_rummy_v0,
    "five_hundred_rum": five_hundred_rum_v1,
    "rummy51": rummy51_v1,
}
PLAYERS = {"gin_rummy": (2, 3, 4), "five_hundred_rum": tuple(range(2, 9)), "rummy51": range(2, 7)}
CASES = [(g, n) for g, ns in PLAYERS.items() for n in ns]
EPS = 1e-6


def positions(game: str, n: int, seed: int, every: int):
    """Table views (the referee's and a rotating seat's) every ``every`` random legal actions
    of a hand played out from ``seed``, the last position included.
    """
    env = MODULES[game].raw_env(num_players=n)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for step in itertools.count():
        over = all(env.terminations.values()) or all(env.truncations.values())
        if step % every == 0 or over:
            yield env.table_view()
            yield env.table_view(env.possible_agents[step % n])
        if over or step > 2000:
            return
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))


def check_geometry(p: Plan, view: TableView) -> None:
    """Everything inside the picture and apart (see the module's docstring)."""
    picture = Box(0, 0, p.width, p.height)
    areas = [pn.box for pn in p.panels if pn.kind != "bar"]
    bars = [pn.box for pn in p.panels if pn.kind == "bar"]
    for pn in p.panels:
        assert pn.box.inside(picture), pn
    for a, b in itertools.combinations(areas + bars, 2):
        assert a.overlap(b) < EPS, (a, b)
    cards = []
    for kind, fan in zip(p.fan_kinds, p.fans, strict=True):
        for k, spot in enumerate(fan):
            b = spot.box
            assert b.inside(picture), (kind, b)
            assert any(b.inside(a) for a in areas), (kind, b, "outside every panel")
            assert abs(b.h - b.w * CARD_RATIO) < 1e-6
            if k < len(fan) - 1:
                nxt = fan[k + 1].box
                assert abs(nxt.y - b.y) < EPS and abs(nxt.w - b.w) < EPS
                step = nxt.x - b.x  # a card's uncovered part is what the next leaves
                assert abs(min(step, b.w) - spot.shown) < 1e-6, (step, spot)
                assert spot.shown >= (PILE_SHOW if kind == "pile" else SHOW) * b.w - 1e-6
            else:
                assert spot.shown == b.w
        cards.append(
            Box(fan[0].box.x, fan[0].box.y, fan[-1].box.right - fan[0].box.x, fan[0].box.h)
        )
    for a, b in itertools.combinations(cards, 2):
        assert a.overlap(b) < EPS, ("fans overlap", a, b)
    boxes = [lb.box for lb in p.labels]
    for lb, box in zip(p.labels, boxes, strict=True):
        assert box.inside(picture), lb
        assert lb.text, lb
        for c in cards:
            assert box.overlap(c) < EPS, ("label on cards", lb, c)
    for (la, a), (lb, b) in itertools.combinations(zip(p.labels, boxes, strict=True), 2):
        assert a.overlap(b) < EPS, ("labels collide", la, lb)
    drawn = [spot.card for fan in p.fans for spot in fan]
    shown = [c for s in view.seats for g in s.groups for c in g] + [
        c for m in view.melds for c in m.cards
    ]
    shown += [c for b in view.boards if b.visible for c in b.pile]
    shown += [Card(HIDDEN) for b in view.boards if b.visible]  # the stock
    assert sorted(drawn, key=repr) == sorted(shown, key=repr)  # every card, once


@pytest.mark.parametrize(("game", "n"), CASES)
def test_positions_met_in_play(game, n):
    """Seeded random hands of each game and player count, positions all through the hand."""
    seen = 0
    for seed in range(3):
        for view in positions(game, n, seed, every=9 if game == "gin_rummy" else 5):
            p = plan(view)
            check_geometry(p, view)
            if view.melds:
                assert p.meld_card * CARD_RATIO >= MIN_MELD_HEIGHT, (len(view.melds), p.meld_card)
                assert all(
                    s.box.h >= MIN_MELD_HEIGHT
                    for kind, fan in zip(p.fan_kinds, p.fans, strict=True)
                    if kind == "meld"
                    for s in fan
                )
            else:
                assert p.meld_card == 0
            for kind, fan in zip(p.fan_kinds, p.fans, strict=True):
                if kind == "hand":
                    assert fan[0].box.h >= MIN_HAND_HEIGHT, describe(view)
            seen += 1
    assert seen > 20


def test_the_melds_fill_the_table():
    """Few melds out, big cards; more melds, smaller, never below the minimum; the melds'
    cards are as wide as the hands' or wider whenever the hands have room to shrink.
    """
    widths = {}
    for view in positions("five_hundred_rum", 4, 1, every=1):
        if view.melds:
            widths.setdefault(len(view.melds), []).append(plan(view).meld_card)
    assert widths, "no melds in a random hand"
    few = min(widths)
    assert min(widths[few]) >= 60  # 84 px tall: the old layout drew 40 x 56 at most
    sizes = [min(v) for _, v in sorted(widths.items())]
    assert sizes == sorted(sizes, reverse=True) or max(sizes) - min(sizes) < 20


def test_default_size_and_other_sizes():
    views = list(positions("five_hundred_rum", 8, 3, every=30))
    for view in views[:: max(1, len(views) // 4)]:
        base = plan(view)
        assert base == plan(view, WIDTH, HEIGHT)
        for w, h in ((640, 360), (1920, 1080), (1000, 1000)):
            p = plan(view, w, h)
            assert (p.width, p.height) == (w, h)
            check_geometry(p, view)
            doc_shapes = layout(view, w, h).shapes
            assert doc_shapes[0].geom[:4] == (0, 0, w, h)


def test_bad_arguments():
    view = next(positions("rummy51", 2, 0, every=1))
    with pytest.raises(TypeError, match="view must be a TableView, got str"):
        plan("table")  # type: ignore[arg-type]
    for bad in (0, -5, 12.5, True, "720"):
        with pytest.raises(ValueError, match="width must be a positive whole number.*got"):
            plan(view, bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="height must be a positive whole number"):
            plan(view, 1280, bad)  # type: ignore[arg-type]


# -- made-up tables beyond play -----------------------------------------------------------------

cards_st = st.lists(st.integers(-1, JOKER + 1).map(Card), max_size=30)
name_st = st.text(alphabet="abcdefgxyz_0123456789 ()·", min_size=1, max_size=22)


@st.composite
def joker_tables(draw) -> TableView:
    n = draw(st.integers(2, 8))
    seats = [
        SeatView(
            draw(name_st),
            [c] if (c := draw(cards_st)) else [],
            draw(st.text(alphabet="abc ,0123456789-", max_size=40)),
            to_act=draw(st.booleans()),
            dealer=draw(st.booleans()),
        )
        for _ in range(n)
    ]
    melds = [
        MeldView(draw(name_st), [Card(c) for c in draw(st.lists(st.integers(0, 53), min_size=3,
                                                                   max_size=14))])
        for _ in range(draw(st.integers(0, 40)))
    ]  # fmt: skip
    pile = [Card(c) for c in draw(st.lists(st.integers(0, 53), max_size=100))]
    return TableView(
        draw(st.sampled_from(["500 Rum", "Rummy 51"])),
        draw(st.lists(st.text(alphabet="abc 0123456789", max_size=30), max_size=6)),
        seats,
        [BoardView("", draw(st.integers(0, 108)), pile)],
        melds,
        last_action=draw(st.text(alphabet="abcdefgxyz_:[] 0123456789", max_size=120)),
        result=draw(st.text(alphabet="abcdefgxyz_:()+-, 0123456789", max_size=200)),
        viewer=draw(st.sampled_from(["", "player_3", "a_very_long_player_name_indeed"])),
        table_melds=True,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(view=joker_tables())
def test_made_up_joker_tables_stay_inside_and_apart(view):
    p = plan(view)
    check_geometry(p, view)
    if view.melds and len(view.melds) <= 20 and sum(len(m.cards) for m in view.melds) <= 80:
        if max(len(s.groups[0]) if s.groups else 0 for s in view.seats) <= 20:
            assert p.meld_card * CARD_RATIO >= 40  # still readable, if smaller


# -- text ---------------------------------------------------------------------------------------


FONTS = [Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")]
TEXT_CHARS = string.ascii_letters + string.digits + " _.,:;|()+-/·'"


def test_text_width_bounds_every_character_at_every_size():
    """Every character alone, every size the pictures use, plain and bold, both scales (the
    property test below found ``"_"`` at size 16 drawn at twice the size: 8.5 px against 8).
    """
    from PIL import ImageFont

    fonts = {s: ImageFont.load_default(size=s) for s in range(11, 61)}
    for bold, ch, size, k in itertools.product((False, True), TEXT_CHARS, range(11, 31), (1, 2)):
        pil = fonts[size * k].getlength(ch) / k + (0.8 if bold else 0.0)
        assert text_width(ch, size, bold) >= pil - 1e-6, (ch, size, k, bold)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=TEXT_CHARS, max_size=40),
    size=st.integers(11, 30),
    bold=st.booleans(),
)  # fmt: skip
def test_text_width_is_an_upper_bound(text, size, bold):
    """The estimate is at least the width in Pillow's bundled font (overstruck when bold, as
    ``to_array`` draws it) and, where installed, in DejaVu Sans (the SVG's first font).
    """
    from PIL import ImageFont

    est = text_width(text, size, bold)
    for k in (1, 2):  # to_array draws at twice the size and scales down
        pil = ImageFont.load_default(size=size * k).getlength(text) / k + (0.8 if bold else 0.0)
        assert est >= pil - 1e-6
    for path in FONTS:
        if path.exists():
            face = path.with_name("DejaVuSans-Bold.ttf") if bold else path
            if face.exists():
                assert est >= ImageFont.truetype(str(face), size).getlength(text) - 0.5


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=80), size=st.integers(8, 30), room=st.floats(0, 900))
def test_fit_text_fits_or_says_nothing(text, size, room):
    out, got = fit_text(text, size, room)
    assert 11 <= got <= size or got == size
    assert out == "" or text_width(out, got) <= room + 1e-6
    if text_width(text, size) <= room:
        assert (out, got) == (text, size)
    elif out:
        assert out == text or out.endswith("…") and text.startswith(out[:-1])
