"""Pictures of the table: one layout, drawn as SVG (pages, the browser) or as pixels
(``render_mode="rgb_array"``).

``plan(view)`` decides where a ``TableView``'s panels, cards and labels go on a 1280 x 720
canvas (rectangles: the tests measure them), ``layout(view)`` turns the plan into a list of
shapes (rounded rectangles, polygons, circles, text); ``to_svg`` and ``to_array`` draw those
shapes and nothing else, so both agree by construction. Suit symbols are drawn as polygons, not
font glyphs: the picture looks the same with any font. Pixels come from Pillow, a wheel on every
platform with its own FreeType and a bundled font (no system libraries, no font files to ship);
an SVG rasteriser would have needed cairo or a Rust wheel and the system's fonts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

import numpy as np

from rummy_env.render.table import (
    HIDDEN,
    JOKER,
    BoardView,
    Card,
    SeatView,
    TableView,
    card_text,
)

WIDTH, HEIGHT = 1280, 720

# colours
FELT = "#1d5c3a"
FELT_DARK = "#164a2e"
PANEL = "#24704a"
PANEL_ACT = "#2f8a5b"
GOLD = "#f2c14e"
WHITE = "#ffffff"
INK = "#1a1a1a"
RED = "#c8102e"
BLUE_BACK = "#27408b"
BLUE_LINE = "#8aa2e0"
JOKER_INK = "#6a1b9a"
TEXT = "#f4f4f0"
MUTED = "#cfe3d6"


@dataclass(frozen=True)
class Shape:
    """One drawing instruction: ``kind`` is ``rect`` (x, y, w, h, radius), ``poly`` (points),
    ``circle`` (cx, cy, r), ``suit`` (suit, cx, cy, size: ``suit_parts`` scaled) or ``text``
    (x, y, size, anchor ``start|middle|end``, bold).
    """

    kind: str
    geom: tuple
    fill: str = ""
    stroke: str = ""
    width: float = 1.0
    text: str = ""


class Canvas:
    """Collects shapes (the layout's output)."""

    def __init__(self) -> None:
        self.shapes: list[Shape] = []

    def rect(self, x, y, w, h, fill="", stroke="", radius=0.0, width=1.0) -> None:
        """A rectangle (rounded by ``radius``), filled and/or outlined."""
        self.shapes.append(Shape("rect", (x, y, w, h, radius), fill, stroke, width))

    def poly(self, points, fill) -> None:
        """A filled polygon."""
        self.shapes.append(Shape("poly", tuple(points), fill))

    def circle(self, cx, cy, r, fill) -> None:
        """A filled circle."""
        self.shapes.append(Shape("circle", (cx, cy, r), fill))

    def text(self, x, y, text, size, fill=TEXT, anchor="start", bold=False) -> None:
        """Text on the baseline at ``y``, anchored at ``x`` by its start, middle or end."""
        self.shapes.append(Shape("text", (x, y, size, anchor, bold), fill, text=text))


# --- suits and cards ----------------------------------------------------------------------------


@cache
def _heart_unit(flip: bool) -> tuple[tuple[float, float], ...]:
    """A heart in a unit box centred at 0 (``flip``: point up, for the spade)."""
    pts = []
    for i in range(48):
        t = 2 * math.pi * i / 48
        x = 16 * math.sin(t) ** 3
        y = -(13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t) - math.cos(4 * t))
        pts.append((x / 34, (-y if flip else y) / 34 + (0.08 if flip else -0.04)))
    return tuple(pts)


@cache
def suit_parts(suit: int) -> tuple[tuple, ...]:
    """Suit ``suit`` (0 clubs, 1 diamonds, 2 hearts, 3 spades) as shapes of a unit-size symbol
    centred at 0: ``("poly", points)`` and ``("circle", cx, cy, r)``.
    """
    if suit == 1:
        return (("poly", ((0, -0.5), (0.38, 0), (0, 0.5), (-0.38, 0))),)
    if suit == 2:
        return (("poly", _heart_unit(False)),)
    if suit == 3:
        heart = tuple((x, y - 0.08) for x, y in _heart_unit(True))
        return (("poly", heart), ("poly", ((0, 0.1), (0.2, 0.5), (-0.2, 0.5))))
    return (
        ("circle", 0, -0.22, 0.22),
        ("circle", -0.23, 0.08, 0.22),
        ("circle", 0.23, 0.08, 0.22),
        ("poly", ((0, 0), (0.17, 0.5), (-0.17, 0.5))),
    )


def suit_colour(suit: int) -> str:
    """Red for diamonds and hearts, black for clubs and spades."""
    return RED if suit in (1, 2) else INK


def suit_shape(c: Canvas, suit: int, cx: float, cy: float, size: float) -> None:
    """Draw suit ``suit`` centred at (cx, cy), ``size`` pixels tall."""
    c.shapes.append(Shape("suit", (suit, cx, cy, size), suit_colour(suit)))


def _star(c: Canvas, cx: float, cy: float, r: float, colour: str) -> None:
    pts = []
    for i in range(10):
        a = -math.pi / 2 + i * math.pi / 5
        rr = r if i % 2 == 0 else r * 0.45
        pts.append((cx + rr * math.cos(a), cy + rr * math.sin(a)))
    c.poly(pts, colour)


def draw_card(c: Canvas, x: float, y: float, w: float, card: Card, lift: bool = False) -> None:
    """Draw a card of width ``w`` (height 1.4 w) with its top-left corner at (x, y)."""
    h = w * 1.4
    rad = w * 0.1
    if card.face == HIDDEN:
        c.rect(x, y, w, h, BLUE_BACK, WHITE, rad, max(1.0, w / 30))
        c.rect(x + w * 0.12, y + w * 0.12, w * 0.76, h - w * 0.24, "", BLUE_LINE, rad / 2)
        return
    c.rect(x, y, w, h, WHITE, GOLD if lift else "#9a9a9a", rad, 3.0 if lift else 1.0)
    size = w * 0.36
    if card.face >= JOKER:
        # the stand-in goes under "JK" in the corner, which overlapping cards leave visible
        c.text(x + w * 0.07, y + size * 0.95, "JK", size * 0.85, JOKER_INK, bold=True)
        _star(c, x + w * 0.62, y + h * 0.62, w * 0.26, JOKER_INK)
        if card.stand_in:
            stand_rank = card.stand_in[0].replace("T", "10")
            c.text(x + w * 0.07, y + size * 2.0, stand_rank, size * 0.8, JOKER_INK, bold=True)
            if len(card.stand_in) > 1:
                stand_suit = "cdhs".index(card.stand_in[1])
                suit_shape(c, stand_suit, x + w * 0.1 + size * 0.3, y + size * 2.55, size * 0.55)
        return
    suit, rank = divmod(card.face, 13)
    colour = RED if suit in (1, 2) else INK
    label = "10" if rank == 9 else "A23456789TJQK"[rank]
    c.text(x + w * 0.07, y + size * 0.95, label, size, colour, bold=True)
    suit_shape(c, suit, x + w * 0.07 + size * 0.35, y + size * 1.55, size * 0.7)
    if h >= 56:
        suit_shape(c, suit, x + w * 0.58, y + h * 0.64, w * 0.5)


def pile_grid(n: int, avail_w: float, avail_h: float, w: float) -> tuple[float, int, float]:
    """Card width, cards per row and stride for a pile of ``n`` cards in rows filling
    ``avail_w`` x ``avail_h`` (the largest cards, up to ``w``, that show a corner of each).
    """
    if n <= 1:
        return w, 1, w * 1.08
    for pw in (w, 48.0, 42.0, 36.0, 31.0, 27.0, 23.0, 20.0, 17.0):
        if pw > w:
            continue
        per_row = max(1, int((avail_w - pw) // (pw * PILE_SHOW)) + 1)
        rows = math.ceil(n / per_row)
        if rows * pw * 1.4 + (rows - 1) * 5 <= avail_h or pw == 17.0:
            per_row = math.ceil(n / rows)  # even rows
            stride = min(pw * 1.08, (avail_w - pw) / max(1, per_row - 1))
            return pw, per_row, stride
    raise AssertionError("unreachable")


# --- the plan: where everything goes (pure geometry) ----------------------------------------------


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle: top-left corner (x, y), width w, height h."""

    x: float
    y: float
    w: float
    h: float

    @property
    def right(self) -> float:
        """The x of the right edge."""
        return self.x + self.w

    @property
    def bottom(self) -> float:
        """The y of the bottom edge."""
        return self.y + self.h

    def overlap(self, other: Box) -> float:
        """The area this box shares with ``other`` (0 if they only touch)."""
        dx = min(self.right, other.right) - max(self.x, other.x)
        dy = min(self.bottom, other.bottom) - max(self.y, other.y)
        return dx * dy if dx > 0 and dy > 0 else 0.0

    def inside(self, other: Box, tol: float = 1e-6) -> bool:
        """Whether this box lies within ``other``."""
        return (
            self.x >= other.x - tol
            and self.y >= other.y - tol
            and self.right <= other.right + tol
            and self.bottom <= other.bottom + tol
        )

    def scaled(self, sx: float, sy: float) -> Box:
        """The box stretched by (sx, sy) about the origin."""
        return Box(self.x * sx, self.y * sy, self.w * sx, self.h * sy)


@dataclass(frozen=True)
class CardSpot:
    """A card drawn at ``box`` (width w, height 1.4 w). ``shown``: how much of its width the
    next card of its fan leaves uncovered (its corner with rank and suit), ``w`` if none covers it.
    ``lift`` outlines it (a pile's top card).
    """

    box: Box
    card: Card
    shown: float
    lift: bool = False


@dataclass(frozen=True)
class Label:
    """A line of text: baseline at ``y``, anchored at ``x`` by its start, middle or end."""

    x: float
    y: float
    text: str
    size: float
    fill: str = TEXT
    anchor: str = "start"
    bold: bool = False
    width: float = -1.0  # its width if known (a stretched plan's), else ``text_width``'s

    @property
    def box(self) -> Box:
        """The space the text may take: font size tall (ascent 0.8, descent 0.2), as wide as
        ``text_width`` estimates (at 1280 x 720; stretched with the plan).
        """
        w = self.width if self.width >= 0 else text_width(self.text, self.size, self.bold)
        x = self.x - (w / 2 if self.anchor == "middle" else w if self.anchor == "end" else 0)
        return Box(x, self.y - 0.8 * self.size, w, self.size)


@dataclass(frozen=True)
class Panel:
    """A background area: a seat (``kind`` "seat"), a stock and pile ("board"), the table's
    melds ("melds"), the header or the footer ("bar").
    """

    kind: str
    box: Box
    fill: str
    stroke: str = ""
    radius: float = 8.0


@dataclass
class Plan:
    """Where every part of a picture goes: ``panels`` (drawn first), ``fans`` (each a list of
    cards drawn left to right, later ones covering earlier ones: a hand, a meld, a pile row,
    the stock), ``labels``; ``meld_card`` is the width of the table melds' cards (0 without
    any). The tests read this geometry, not pixels.
    """

    width: float
    height: float
    panels: list[Panel] = field(default_factory=list)
    fans: list[list[CardSpot]] = field(default_factory=list)
    fan_kinds: list[str] = field(default_factory=list)  # "hand", "meld", "pile", "stock"
    labels: list[Label] = field(default_factory=list)
    meld_card: float = 0.0

    def add_fan(self, kind: str, cards: list[CardSpot]) -> None:
        """Add a fan of ``kind`` (empty fans are dropped)."""
        if cards:
            self.fans.append(cards)
            self.fan_kinds.append(kind)


CARD_RATIO = 1.4  # a card is 1.4 times as tall as it is wide
SHOW = 0.5  # a fanned card shows at least half its width: the rank (even "10") and the suit
PILE_SHOW = SHOW  # pile rows fan as hands do: a "10" shows whole


# Character widths in twentieths of the font size: the larger of DejaVu Sans (the SVG's first
# font, wider than Helvetica and Arial) and Pillow's bundled font, rounded up.
_WIDTHS = {
    False: {6: "ijlI'", 7: " .,:;|/·", 8: "ft()-[]", 9: "r!", 10: '"', 11: "cszJ?_",
            12: "kvxyFL*", 13: "abdeghnopquEPSTY0123456789$", 14: "ABCKRVXZ", 15: "NU",
            16: "DGHOQ&", 17: "w+#=<>", 18: "M"},
    True: {7: "ijl '", 8: "I.,:;|/·", 9: "f-", 10: "rt!()[]", 11: 'J"_', 12: "csz?*", 13: "xL",
           14: "aekovyEFT0123456789$", 15: "bdghnpquCPSYZ", 16: "ABKRVX", 17: "DGHNU+#=<>",
           18: "OQ&", 19: "w", 20: "M", 21: "m%"},
}  # fmt: skip
_CHAR_W = {
    bold: {ch: k / 20 for k, chars in t.items() for ch in chars} for bold, t in _WIDTHS.items()
}


@lru_cache(maxsize=4096)
def text_width(text: str, size: float, bold: bool = False) -> float:
    """An upper bound of ``text``'s width at font size ``size``: in the bundled Pillow font
    (bold is overstruck a pixel wider) and in DejaVu Sans (the widest of the SVG's fonts).
    """
    table = _CHAR_W[bool(bold)]
    # each advance rounded up to a whole pixel: hinting rounds small glyphs' advances
    return sum(math.ceil(table.get(ch, 1.15) * size) for ch in text) + (1.0 if bold else 0.0)


def fit_text(
    text: str, size: float, max_w: float, bold: bool = False, min_size: float = 11.0
) -> tuple[str, float]:
    """``text`` and a font size at which it fits in ``max_w`` pixels: smaller (down to
    ``min_size``), then cut short with an ellipsis ("" if not even that fits).
    """
    while size > min_size and text_width(text, size, bold) > max_w:
        size = max(min_size, size - 1)
    if text_width(text, size, bold) <= max_w:
        return text, size
    while text and text_width(text + "…", size, bold) > max_w:
        text = text[:-1]
    return (text + "…" if text else ""), size


def _fan(
    x: float, y: float, w: float, cards: list[Card], stride: float, lift_last: bool = False
) -> list[CardSpot]:
    """Cards left to right from (x, y), ``stride`` apart."""
    h = w * CARD_RATIO
    return [
        CardSpot(Box(x + k * stride, y, w, h), card, w if k == len(cards) - 1 else min(w, stride),
                 lift_last and k == len(cards) - 1)
        for k, card in enumerate(cards)
    ]  # fmt: skip


def _per_line(w: float, avail: float, show: float = SHOW) -> int:
    """How many cards of width ``w`` fit on a line of ``avail`` pixels, each showing ``show``."""
    return max(1, int((avail - w) // (show * w)) + 1)


def plan(view: TableView, width: int = WIDTH, height: int = HEIGHT) -> Plan:
    """Where each panel, card and label of ``view`` goes on a ``width`` x ``height`` picture
    (laid out at 1280 x 720 and stretched).

    Raises:
        TypeError: ``view`` is not a ``TableView``.
        ValueError: ``width`` or ``height`` is not a positive whole number.
    """
    if not isinstance(view, TableView):
        raise TypeError(f"view must be a TableView, got {type(view).__name__}")
    for name, v in (("width", width), ("height", height)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
            raise ValueError(f"{name} must be a positive whole number of pixels, got {v!r}")
    p = Plan(WIDTH, HEIGHT)
    _frame(p, view)
    if view.table_melds or view.melds:
        _joker_table(p, view)
    else:
        _gin_seats(p, view)
        _boards(p, view)
    if (width, height) != (WIDTH, HEIGHT):
        p = _scaled_plan(p, width / WIDTH, height / HEIGHT)
    return p


def _scaled_plan(p: Plan, sx: float, sy: float) -> Plan:
    """The plan stretched by (sx, sy); card widths and text sizes scale by the smaller."""
    s = min(sx, sy)
    out = Plan(p.width * sx, p.height * sy, meld_card=p.meld_card * s)
    for pn in p.panels:
        out.panels.append(Panel(pn.kind, pn.box.scaled(sx, sy), pn.fill, pn.stroke, pn.radius * s))
    for kind, fan in zip(p.fan_kinds, p.fans, strict=True):
        out.add_fan(kind, [
            CardSpot(Box(c.box.x * sx, c.box.y * sy, c.box.w * s, c.box.h * s), c.card,
                     c.shown * s, c.lift)
            for c in fan
        ])  # fmt: skip
    for lb in p.labels:
        width = lb.box.w * s
        out.labels.append(Label(lb.x * sx, lb.y * sy, lb.text, lb.size * s, lb.fill, lb.anchor,
                                lb.bold, width))  # fmt: skip
    return out


def _frame(p: Plan, view: TableView) -> None:
    """Header (title, facts, whose view) and footer (last action, result)."""
    p.panels.append(Panel("bar", Box(0, 0, WIDTH, 44), FELT_DARK, radius=0))
    title = Label(16, 30, view.title, 24, GOLD, bold=True)
    p.labels.append(title)
    who = f"{view.viewer}'s view" if view.viewer else "referee's view (all cards face up)"
    who_text, who_size = fit_text(who, 15, 360)
    p.labels.append(Label(WIDTH - 16, 29, who_text, who_size, MUTED, anchor="end"))
    x = max(34 + 16.5 * len(view.title), title.box.right + 18)
    room = WIDTH - 16 - text_width(who_text, who_size) - 18 - x
    info, size = fit_text("  |  ".join(view.info), 16, room)
    if info:
        p.labels.append(Label(x, 29, info, size, TEXT))
    p.panels.append(Panel("bar", Box(0, HEIGHT - 34, WIDTH, 34), FELT_DARK, radius=0))
    last = "last: " + view.last_action if view.last_action else ""
    room_last = room_res = WIDTH - 32.0
    if last and view.result:
        # side by side, 24 px apart: a short one keeps its width, two long ones share
        room = WIDTH - 32.0 - 24
        lw, rw = text_width(last, 16), text_width(view.result, 15)
        room_last, room_res = (
            (lw, rw) if lw + rw <= room
            else (lw, room - lw) if lw <= room / 2
            else (room - rw, rw) if rw <= room / 2
            else (room / 2, room / 2)
        )  # fmt: skip
    if last:
        text, size = fit_text(last, 16, room_last)
        if text:
            p.labels.append(Label(16, HEIGHT - 11, text, size, GOLD))
    if view.result:
        text, size = fit_text(view.result, 15, room_res)
        if text:
            p.labels.append(Label(WIDTH - 16, HEIGHT - 11, text, size, TEXT, anchor="end"))


LEFT_X, LEFT_W = 14, 800
RIGHT_X = LEFT_X + LEFT_W + 14
RIGHT_W = WIDTH - RIGHT_X - 14
TOP, BOTTOM = 54, HEIGHT - 44
GAP = 8


def _seat_head(seat: SeatView, view: TableView) -> str:
    """A seat's name and its tags (dealer, its Gin table)."""
    tags = []
    if seat.dealer:
        tags.append("dealer")
    if seat.board > 0 or (seat.board == 0 and len(view.boards) > 1):
        tags.append(f"table {seat.board}")
    return " · ".join([seat.name, *tags])


def _seat_labels(p: Plan, seat: SeatView, view: TableView, box: Box, two_lines: bool) -> None:
    """A seat's name (with tags), "TO ACT", and its status: after the name, or on a second
    line when ``two_lines``.
    """
    colour = GOLD if seat.to_act else WHITE
    right = box.right - 12
    if seat.to_act:
        act = Label(right, box.y + 22, "TO ACT", 15, GOLD, anchor="end", bold=True)
        p.labels.append(act)
        right = act.box.x - 10
    name, size = fit_text(_seat_head(seat, view), 17, right - box.x - 12, bold=True)
    head = Label(box.x + 12, box.y + 22, name, size, colour, bold=True)
    p.labels.append(head)
    if not seat.status:
        return
    if two_lines:
        text, size = fit_text(seat.status, 14, box.w - 24)
        p.labels.append(Label(box.x + 12, box.y + 40, text, size, MUTED))
        return
    x = max(box.x + 12 + 11 * len(name) + 16, head.box.right + 14)
    text, size = fit_text(seat.status, 14, right - x)
    if text:
        p.labels.append(Label(x, box.y + 21, text, size, MUTED))


def _needs_two_lines(seat: SeatView, view: TableView, w: float) -> bool:
    """Whether a seat's name, status and "TO ACT" overflow one line of a panel ``w`` wide."""
    head = text_width(_seat_head(seat, view), 17, True)
    used = 12 + max(11 * len(_seat_head(seat, view)) + 16, head + 14)
    used += text_width(seat.status, 14) + 12 + (text_width("TO ACT", 15, True) + 10) * 1.0
    return used > w


def _hand(p: Plan, seat: SeatView, x: float, y: float, avail: float, w: float) -> None:
    """A seat's cards from (x, y) in ``avail`` pixels, its groups (a Gin lay-out's melds) a
    gap apart, overlapping as needed; onto more lines if a card would show less than ``SHOW``.
    """
    cards = [c for g in seat.groups for c in g]
    if not cards:
        return
    gap = w * 0.35
    gaps = gap * (len(seat.groups) - 1)
    stride = w * 1.08 if len(cards) == 1 else min(w * 1.08, (avail - w - gaps) / (len(cards) - 1))
    if stride >= SHOW * w:
        for g in seat.groups:
            p.add_fan("hand", _fan(x, y, w, g, stride))
            x += stride * len(g) + gap
        return
    per = _per_line(w, avail)
    lines = math.ceil(len(cards) / per)
    per = math.ceil(len(cards) / lines)  # even lines
    stride = min(w * 1.08, (avail - w) / max(1, per - 1))
    for k in range(lines):
        part = cards[k * per : (k + 1) * per]
        p.add_fan("hand", _fan(x, y + k * (w * CARD_RATIO + 4), w, part, stride))


def _gin_seats(p: Plan, view: TableView) -> None:
    """Gin: the seats in a column (two columns of more than four) left, the boards right."""
    n = len(view.seats)
    cols = 1 if n <= 4 else 2
    rows = math.ceil(n / cols)
    pw = (LEFT_W - GAP * (cols - 1)) / cols
    ph = min(200.0, (BOTTOM - TOP - GAP * (rows - 1)) / rows)
    w = min(80.0, (ph - 40) / CARD_RATIO)
    for i, seat in enumerate(view.seats):
        col, row = divmod(i, rows)
        box = Box(LEFT_X + col * (pw + GAP), TOP + row * (ph + GAP), pw, ph)
        p.panels.append(Panel("seat", box, PANEL_ACT if seat.to_act else PANEL,
                              GOLD if seat.to_act else ""))  # fmt: skip
        two = cols > 1 or _needs_two_lines(seat, view, pw)
        _seat_labels(p, seat, view, box, two)
        cw = w if not two else min(w, (ph - 58) / CARD_RATIO)
        _hand(p, seat, box.x + 12, box.y + (50 if two else 32), pw - 24, cw)


def _boards(p: Plan, view: TableView) -> None:
    """Gin's boards in the right column, one above the other."""
    n = len(view.boards)
    bh = 170.0 if n == 1 else (BOTTOM - TOP - GAP) / n
    for i, b in enumerate(view.boards):
        _board(p, b, Box(RIGHT_X, TOP + i * (bh + GAP), RIGHT_W, bh), 56.0)


def _board(p: Plan, b: BoardView, box: Box, max_w: float) -> None:
    """A stock and its discard pile in ``box``: the stock left, the pile in rows (bottom
    first, each card's corner showing, the top card outlined) right of it.
    """
    p.panels.append(Panel("board", box, FELT_DARK))
    title = b.title or "stock and discard pile"
    note_w = text_width(b.note, 13) + 20 if b.note and b.visible else 0.0
    text, size = fit_text(title, 15, box.w - 20 - note_w, bold=True)
    p.labels.append(Label(box.x + 10, box.y + 20, text, size, WHITE, bold=True))
    if not b.visible:
        note, nsize = fit_text(b.note, 14, box.w - 20)
        p.labels.append(Label(box.x + 10, box.y + 48, note, nsize, MUTED))
        return
    if b.note:
        note, nsize = fit_text(b.note, 13, box.w - 20)
        p.labels.append(Label(box.right - 10, box.y + 20, note, nsize, GOLD, anchor="end"))
    w = min(max_w, (box.h - 62) / CARD_RATIO)
    cy = box.y + 30
    p.add_fan("stock", [CardSpot(Box(box.x + 10, cy, w, w * CARD_RATIO), Card(HIDDEN), w)])
    stock, ssize = fit_text(f"stock {b.stock}", 13, max(w + 16, 40))
    p.labels.append(Label(box.x + 10 + w / 2, cy + w * CARD_RATIO + 16, stock, ssize, MUTED,
                          anchor="middle"))  # fmt: skip
    px = box.x + 20 + max(w, p.labels[-1].box.w - 8) + 10
    avail = box.right - 10 - px
    pile = b.pile
    label = f"discard pile, {len(pile)} (bottom to top)" if pile else "discard pile empty"
    text, size = fit_text(label, 13, box.right - 10 - px)
    p.labels.append(Label(px, box.bottom - 10, text, size, MUTED))
    pw, per_row, stride = pile_grid(len(pile), avail, box.h - 56, w)
    for r in range(math.ceil(len(pile) / per_row)):
        row = pile[r * per_row : (r + 1) * per_row]
        last = (r + 1) * per_row >= len(pile)
        p.add_fan("pile", _fan(px, cy + r * (pw * CARD_RATIO + 5), pw, row, stride, last))


HAND_WIDTHS = (64.0, 58.0, 52.0, 48.0, 44.0, 40.0, 36.0, 32.0, 28.0, 24.0)
MELD_MAX = 78.0  # few melds out: cards this wide, no larger
MELD_GOOD = 60.0  # hands shrink (down to HAND_FAIR) until the melds' cards are this wide
HAND_FAIR, MELD_FAIR = 40.0, 44.0  # below these, the melds keep their size and the hands shrink


def _joker_table(p: Plan, view: TableView) -> None:
    """500 Rum and Rummy 51: the seats around the table, half along the top (left to right)
    and half along the bottom (right to left, clockwise), the stock and pile and the melds in
    between. Hands shrink only as far as the melds need room.
    """
    n = len(view.seats)
    top = [*range(math.ceil(n / 2))]
    bottom = [*range(n - 1, len(top) - 1, -1)]
    rows = [r for r in (top, bottom) if r]
    inner = WIDTH - 2 * LEFT_X

    @cache
    def seat_rows(w: float) -> list[tuple[float, float, bool, int]]:
        """Per row of seats: panel width, panel height, two label lines, lines of cards."""
        out = []
        for r in rows:
            pw = (inner - GAP * (len(r) - 1)) / len(r)
            two = any(_needs_two_lines(view.seats[q], view, pw) for q in r)
            lines = max(1, *(math.ceil(sum(map(len, view.seats[q].groups)) / _per_line(w, pw - 24))
                             for q in r))  # fmt: skip
            ph = (48 if two else 30) + lines * w * CARD_RATIO + (lines - 1) * 4 + 10
            out.append((pw, ph, two, lines))
        return out

    def middle(w: float) -> float:
        return BOTTOM - TOP - sum(row[1] for row in seat_rows(w)) - GAP * len(rows)

    pile_w = min(460.0, 290.0 + 8 * max(0, len(view.boards[0].pile) - 8))

    def meld_box(w: float) -> Box:
        mid = middle(w)
        y = TOP + seat_rows(w)[0][1] + GAP
        return Box(LEFT_X + pile_w + GAP, y, inner - pile_w - GAP, mid)

    fits = [w for w in HAND_WIDTHS if middle(w) >= 150] or [HAND_WIDTHS[-1]]
    best = {w: _meld_width(view, meld_box(w)) for w in fits}
    good = [w for w in fits if w >= HAND_FAIR and best[w] >= MELD_GOOD]
    fair = [w for w in fits if w >= HAND_FAIR and best[w] >= MELD_FAIR]
    if good:  # the melds are big: the hands as big as they can be on the fewest lines
        hw = max(good, key=lambda w: (-sum(row[3] for row in seat_rows(w)), w))
    elif fair:  # readable hands, the melds as big as those allow
        hw = max(fair, key=lambda w: (best[w], w))
    else:  # crowded: the melds first
        hw = max(fits, key=lambda w: (best[w], w))
    y: float = TOP
    for r, (pw, ph, two, _) in zip(rows, seat_rows(hw), strict=True):
        for k, q in enumerate(r):
            seat = view.seats[q]
            box = Box(LEFT_X + k * (pw + GAP), y, pw, ph)
            p.panels.append(Panel("seat", box, PANEL_ACT if seat.to_act else PANEL,
                                  GOLD if seat.to_act else ""))  # fmt: skip
            _seat_labels(p, seat, view, box, two)
            _hand(p, seat, box.x + 12, box.y + (48 if two else 30), pw - 24, hw)
        y += ph + GAP + (middle(hw) + GAP if r is top else 0)
    mb = meld_box(hw)
    _board(p, view.boards[0], Box(LEFT_X, mb.y, pile_w, mb.h), 56.0)
    _melds(p, view, mb, best[hw])


def _meld_flow(
    view: TableView, w: float, avail_w: float, avail_h: float
) -> list[tuple[float, float, float]] | None:
    """Each meld's (x, y, stride) in rows of ``avail_w`` at card width ``w``, or None if they
    do not fit in ``avail_h``. A meld's slot is as wide as its fan or its owner's name.
    """
    stride = w * 0.55
    row_h = 15 + w * CARD_RATIO + 8
    x = y = 0.0
    out = []
    for m in view.melds:
        s = stride
        fan = w + s * (len(m.cards) - 1)
        if fan > avail_w:
            s = (avail_w - w) / max(1, len(m.cards) - 1)
            if s < SHOW * w:
                return None
            fan = avail_w
        slot = max(fan, text_width(m.owner, 12) + 4)
        if x > 0 and x + slot > avail_w:
            x, y = 0.0, y + row_h
        if y + row_h - 8 > avail_h:
            return None
        out.append((x, y, s))
        x += slot + max(12.0, w * 0.3)
    return out


def _meld_width(view: TableView, box: Box) -> float:
    """The widest whole-pixel card (12 to ``MELD_MAX``) at which the melds fit in ``box``
    (a bisection: fewer pixels never need more room).
    """
    lo, hi = 12, int(MELD_MAX)
    if _meld_flow(view, hi, box.w - 20, box.h - 34) is not None:
        return float(hi)
    while hi - lo > 1:  # lo fits (or is the floor), hi does not
        mid = (lo + hi) // 2
        if _meld_flow(view, mid, box.w - 20, box.h - 34) is None:
            hi = mid
        else:
            lo = mid
    return float(lo)


def _melds(p: Plan, view: TableView, box: Box, w: float) -> None:
    """The table's melds in ``box``, cards ``w`` wide, each under its owner's name."""
    p.panels.append(Panel("melds", box, FELT_DARK))
    p.labels.append(Label(box.x + 10, box.y + 20, f"melds on the table ({len(view.melds)})", 15,
                          WHITE, bold=True))  # fmt: skip
    placed = _meld_flow(view, w, box.w - 20, box.h - 34)
    if placed is None:  # more melds than ever met in play: the smallest cards, clipped
        placed = _meld_flow(view, w, box.w - 20, math.inf) or []
    p.meld_card = w if view.melds else 0.0
    for (x, y, stride), m in zip(placed, view.melds, strict=True):
        x0, y0 = box.x + 10 + x, box.y + 30 + y
        p.labels.append(Label(x0, y0 + 11, m.owner, 12, MUTED))
        p.add_fan("meld", _fan(x0, y0 + 15, w, m.cards, stride))


# --- the table ----------------------------------------------------------------------------------


def layout(view: TableView, width: int = WIDTH, height: int = HEIGHT) -> Canvas:
    """Draw ``plan(view, width, height)`` as shapes on a ``width`` x ``height`` canvas."""
    pl = plan(view, width, height)
    c = Canvas()
    c.rect(0, 0, pl.width, pl.height, FELT)
    for pn in pl.panels:
        b = pn.box
        c.rect(b.x, b.y, b.w, b.h, pn.fill, pn.stroke, pn.radius, 3 if pn.stroke else 1.0)
    for lb in pl.labels:
        c.text(lb.x, lb.y, lb.text, lb.size, lb.fill, lb.anchor, lb.bold)
    for fan in pl.fans:
        for spot in fan:
            draw_card(c, spot.box.x, spot.box.y, spot.box.w, spot.card, spot.lift)
    return c


def _scaled(inner: Canvas, sx: float, sy: float) -> Canvas:
    """The canvas stretched by (sx, sy); sizes (radii, text, lines) scale by the smaller."""
    c = Canvas()
    s = min(sx, sy)
    for sh in inner.shapes:
        g = sh.geom
        geom: tuple[Any, ...]
        if sh.kind == "rect":
            geom = (g[0] * sx, g[1] * sy, g[2] * sx, g[3] * sy, g[4] * s)
        elif sh.kind == "poly":
            geom = tuple((x * sx, y * sy) for x, y in g)
        elif sh.kind == "circle":
            geom = (g[0] * sx, g[1] * sy, g[2] * s)
        elif sh.kind == "suit":
            geom = (g[0], g[1] * sx, g[2] * sy, g[3] * s)
        else:
            geom = (g[0] * sx, g[1] * sy, g[2] * s, g[3], g[4])
        c.shapes.append(Shape(sh.kind, geom, sh.fill, sh.stroke, sh.width * s, sh.text))
    return c


# --- drawing ------------------------------------------------------------------------------------


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_svg(canvas: Canvas, width: int = WIDTH, height: int = HEIGHT) -> str:
    """The canvas as a standalone SVG document."""
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">'
    ]
    # each suit once, used by reference: a table has a hundred suit symbols
    out.append("<defs>")
    for suit in range(4):
        parts = []
        for part in suit_parts(suit):
            if part[0] == "poly":
                pts = " ".join(f"{x:.3f},{y:.3f}" for x, y in part[1])
                parts.append(f'<polygon points="{pts}"/>')
            else:
                parts.append(f'<circle cx="{part[1]}" cy="{part[2]}" r="{part[3]}"/>')
        out.append(f'<g id="suit{suit}" fill="{suit_colour(suit)}">{"".join(parts)}</g>')
    out.append("</defs>")
    for sh in canvas.shapes:
        paint = f'fill="{sh.fill or "none"}"'
        if sh.stroke:
            paint += f' stroke="{sh.stroke}" stroke-width="{sh.width:.3g}"'
        g = sh.geom
        if sh.kind == "rect":
            x, y, w, h, r = g
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{r:.1f}" '
                f"{paint}/>"
            )
        elif sh.kind == "poly":
            pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in g)
            out.append(f'<polygon points="{pts}" {paint}/>')
        elif sh.kind == "circle":
            out.append(f'<circle cx="{g[0]:.1f}" cy="{g[1]:.1f}" r="{g[2]:.1f}" {paint}/>')
        elif sh.kind == "suit":
            suit, cx, cy, size = g
            out.append(
                f'<use href="#suit{suit}" transform="translate({cx:.1f} {cy:.1f}) '
                f'scale({size:.2f})"/>'
            )
        else:
            x, y, size, anchor, bold = g
            weight = ' font-weight="bold"' if bold else ""
            out.append(
                f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:.1f}" text-anchor="{anchor}"'
                f"{weight} {paint}>{_esc(sh.text)}</text>"
            )
    out.append("</svg>")
    return "\n".join(out)


@lru_cache(maxsize=64)
def _font(size: int, bold: bool) -> Any:
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


_ANCHORS = {"start": "ls", "middle": "ms", "end": "rs"}


def to_array(
    canvas: Canvas, width: int = WIDTH, height: int = HEIGHT, supersample: int = 2
) -> np.ndarray:
    """The canvas as an (height, width, 3) ``uint8`` picture (Pillow), drawn ``supersample``
    times larger and scaled down: Pillow's shapes have no anti-aliasing of their own.
    """
    try:
        from PIL import Image, ImageDraw
    except ImportError as e:  # pragma: no cover - Pillow is a dependency
        raise ImportError("render_mode='rgb_array' needs Pillow: pip install pillow") from e
    k = supersample
    if k != 1:
        canvas = _scaled(canvas, k, k)
    img = Image.new("RGB", (width * k, height * k), FELT)
    d = ImageDraw.Draw(img)
    for sh in canvas.shapes:
        g = sh.geom
        fill = sh.fill or None
        if sh.kind == "rect":
            x, y, w, h, r = g
            box = (x, y, x + w, y + h)
            outline = sh.stroke or None
            lw = max(1, round(sh.width)) if outline else 0
            if r > 0.5:
                d.rounded_rectangle(box, radius=r, fill=fill, outline=outline, width=lw)
            else:
                d.rectangle(box, fill=fill, outline=outline, width=lw)
        elif sh.kind == "poly":
            d.polygon(list(g), fill=fill)
        elif sh.kind == "circle":
            cx, cy, r = g
            d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
        elif sh.kind == "suit":
            suit, cx, cy, size = g
            for part in suit_parts(suit):
                if part[0] == "poly":
                    d.polygon([(cx + x * size, cy + y * size) for x, y in part[1]], fill=fill)
                else:
                    x, y, r = cx + part[1] * size, cy + part[2] * size, part[3] * size
                    d.ellipse((x - r, y - r, x + r, y + r), fill=fill)
        else:
            x, y, size, anchor, bold = g
            font = _font(max(6, round(size)), bool(bold))
            d.text((x, y), sh.text, fill=fill, font=font, anchor=_ANCHORS[anchor])
            if bold:  # the bundled font has no bold face: overstrike by a pixel
                d.text((x + 0.8 * k, y), sh.text, fill=fill, font=font, anchor=_ANCHORS[anchor])
    if k != 1:
        img = img.resize((width, height), Image.Resampling.BOX)
    return np.asarray(img, dtype=np.uint8).copy()


def picture(view: TableView, width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """A table view as an (height, width, 3) ``uint8`` picture."""
    return to_array(layout(view, width, height), width, height)


def svg(view: TableView, width: int = WIDTH, height: int = HEIGHT) -> str:
    """A table view as an SVG document."""
    return to_svg(layout(view, width, height), width, height)


__all__ = [
    "Box",
    "Canvas",
    "CardSpot",
    "Label",
    "Panel",
    "Plan",
    "card_text",
    "draw_card",
    "fit_text",
    "layout",
    "picture",
    "plan",
    "svg",
    "text_width",
    "to_array",
    "to_svg",
]
