"""The browser app in a real browser: headless Chromium driven by Selenium against uvicorn on a
free port (a thread of this process). A Gin hand and a 500 Rum hand are played through the page
against ``random`` (the first legal move until the hand ends), and a record is stepped through
forwards and backwards with the buttons and the keys.

Uses the system ``chromium`` and ``chromedriver`` (Debian: ``apt-get install chromium
chromium-driver``); Selenium Manager is kept offline (``SE_OFFLINE``), so nothing is downloaded.
Without selenium, uvicorn or the browser, the tests skip.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web app needs starlette: pip install '.[web]'")
uvicorn = pytest.importorskip("uvicorn", reason="the web app needs uvicorn: pip install '.[web]'")
pytest.importorskip("selenium", reason="the browser tests need selenium: pip install '.[test]'")

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from rummy_agents.arena.play import make_env, play_game  # noqa: E402
from rummy_agents.arena.registry import make_agent  # noqa: E402
from rummy_agents.web.app import create_app  # noqa: E402
from rummy_env.game_records import read_record, replay  # noqa: E402

BROWSER = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)
DRIVER = shutil.which("chromedriver") or (
    "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None
)
pytestmark = pytest.mark.skipif(
    BROWSER is None or DRIVER is None,
    reason="no chromium + chromedriver on this machine (Debian: apt-get install chromium "
    "chromium-driver)",
)

REL = "gin_rummy/novice_vs_random/deal0_leg0.jsonl"
WAIT = 30  # seconds for one page update, at most


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("records")
    env = make_env("gin_rummy", {})
    agents = [make_agent("novice", 1, "gin_rummy"), make_agent("random", 2, "gin_rummy")]
    play_game(env, agents, 3, 10_000, record=root / REL, labels=["novice", "random"])
    return root


@pytest.fixture(scope="module")
def server(records):
    """uvicorn serving the app on a free port of 127.0.0.1, in a thread; yields the URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(records, allowed_hosts=["127.0.0.1", "localhost"])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("uvicorn did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    old = os.environ.get("SE_OFFLINE")
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager: use the given driver, fetch nothing
    options = webdriver.ChromeOptions()
    options.binary_location = BROWSER
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):  # fmt: skip
        options.add_argument(arg)
    try:
        driver = webdriver.Chrome(service=webdriver.ChromeService(DRIVER), options=options)
    except WebDriverException as e:
        pytest.skip(f"chromium does not start here: {str(e).splitlines()[0]}")
    driver.set_script_timeout(WAIT)
    yield driver
    driver.quit()
    if old is None:
        os.environ.pop("SE_OFFLINE", None)
    else:
        os.environ["SE_OFFLINE"] = old


def idle(driver) -> None:
    """Wait until the page has no request or animation in progress."""
    WebDriverWait(driver, WAIT, poll_frequency=0.02).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-busy") == "0"
    )


def no_error(driver) -> None:
    banner = driver.find_element(By.ID, "error")
    assert not banner.is_displayed(), banner.text


STATUS = """
const error = document.getElementById("error");
return {
  busy: document.body.dataset.busy,
  over: document.getElementById("result").dataset.over || "0",
  error: error.hidden ? "" : error.textContent,
};
"""
"""The page's state in one round trip: busy, the game over, the error shown."""


def fetch_text(driver, url: str) -> str:
    """GET ``url`` from the page (with its session cookie)."""
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0]).then((r) => r.text()).then(done, (e) => done('ERROR ' + e));",
        url,
    )


def open_more(driver) -> None:
    """Unfold the start page's options (players, seat, seed, opponents, rules)."""
    more = driver.find_element(By.ID, "more")
    if more.get_attribute("open") is None:
        more.find_element(By.TAG_NAME, "summary").click()


def set_up(driver, url: str, game: str, players: int, seat: int, seed: int, options: str = ""):
    """Fill the start page: the game and opponent up front, the rest under "More options"."""
    driver.get(url)
    idle(driver)
    Select(driver.find_element(By.ID, "game")).select_by_value(game)
    Select(driver.find_element(By.ID, "opponent")).select_by_value("random")
    open_more(driver)
    driver.find_element(By.ID, "seed").send_keys(str(seed))
    Select(driver.find_element(By.ID, "players")).select_by_value(str(players))
    Select(driver.find_element(By.ID, "seat")).select_by_value(str(seat))
    Select(driver.find_element(By.ID, "delay")).select_by_value("0")
    inputs = driver.find_elements(By.CSS_SELECTOR, "#opponent-inputs input")
    assert len(inputs) == players - 1
    assert all(box.get_attribute("value") == "random" for box in inputs)
    if options:
        driver.find_element(By.ID, "options").send_keys(options)
    driver.find_element(By.ID, "start").click()


def wait_ready(driver) -> dict:
    status = WebDriverWait(driver, WAIT, poll_frequency=0.02).until(
        lambda d: (s := d.execute_script(STATUS))["busy"] == "0" and s
    )
    assert not status["error"], status["error"]
    return status


def finish(driver, seat: int, clicks: int) -> dict:
    """The game is over: its record replays, the log lists every move."""
    result = driver.find_element(By.ID, "result").text
    link = driver.find_element(By.ID, "download")
    assert link.is_displayed() and clicks > 0
    record = read_record(fetch_text(driver, link.get_attribute("href")).splitlines())
    assert record.labels[f"player_{seat}"] == "human"
    assert replay(record).matches
    moves = driver.find_elements(By.CSS_SELECTOR, "#log li")
    assert len(moves) == len(record.steps)
    return {"result": result, "clicks": clicks, "record": record}


def play_hand(driver, url: str, game: str, players: int, seat: int, seed: int) -> dict:
    """Play a hand with the move buttons (the first legal move each time)."""
    set_up(driver, url, game, players, seat, seed)
    clicks = 0
    for _ in range(2000):
        if wait_ready(driver)["over"] == "1":
            break
        legal = driver.find_elements(By.CSS_SELECTOR, "#moves button.legal:not([disabled])")
        assert legal, "no legal move on the page, and the game is not over"
        if not clicks:  # the table is drawn as a picture (an SVG)
            picture = driver.find_element(By.ID, "table").get_attribute("src")
            assert picture.startswith("data:image/svg+xml")
        legal[0].click()
        clicks += 1
    else:
        raise AssertionError("the hand did not end")
    out = finish(driver, seat, clicks)
    print(f"{game}: {clicks} moves through the page, {len(out['record'].steps)} in all")
    return out


def test_gin_hand_in_the_browser(browser, server):
    out = play_hand(browser, server, "gin_rummy", 2, seat=0, seed=3)
    assert any(w in out["result"] for w in ("You win", "You lose", "A draw"))
    assert out["record"].game == "gin_rummy"


def test_500_rum_hand_in_the_browser(browser, server):
    out = play_hand(browser, server, "five_hundred_rum", 3, seat=2, seed=8)
    assert out["record"].game == "five_hundred_rum" and len(out["record"].agents) == 3


def test_replay_in_the_browser(browser, server, records):
    record = read_record(records / REL)
    n = len(record.steps)
    d = browser
    d.get(server)
    idle(d)
    d.find_element(By.ID, "tab-replay").click()
    Select(d.find_element(By.ID, "records")).select_by_value(REL)
    d.find_element(By.ID, "open-listed").click()
    idle(d)
    no_error(d)
    label = d.find_element(By.ID, "step-label")
    body = d.find_element(By.TAG_NAME, "body")

    def at(step: int) -> None:
        WebDriverWait(d, WAIT, poll_frequency=0.02).until(
            lambda _: label.get_attribute("data-step") == str(step)
        )
        idle(d)
        assert label.text == f"step {step} / {n}"
        action = d.find_element(By.ID, "step-action").text
        if step < n:
            agent, _, name = record.steps[step]
            assert action.endswith(f"plays {name}") and agent in action
        else:
            assert "end" in action and d.find_element(By.ID, "replay-result").is_displayed()

    at(0)
    pictures = set()
    for step in range(1, 6):  # forwards with the button
        d.find_element(By.ID, "next").click()
        at(step)
        pictures.add(d.find_element(By.ID, "replay-table").get_attribute("src"))
    assert len(pictures) == 5  # the table changes with every step
    for step in (4, 3):  # backwards with the button
        d.find_element(By.ID, "prev").click()
        at(step)
    body.send_keys(Keys.ARROW_RIGHT)
    at(4)
    body.send_keys(Keys.ARROW_LEFT)
    body.send_keys(Keys.ARROW_LEFT)
    at(2)
    body.send_keys(Keys.END)
    at(n)
    assert not d.find_element(By.ID, "next").is_enabled()
    body.send_keys(Keys.ARROW_LEFT)
    at(n - 1)
    # player_1's view: player_0's knock discards face down
    Select(d.find_element(By.ID, "view")).select_by_value("player_1")
    idle(d)
    assert d.find_element(By.ID, "step-action").text.endswith("plays KNOCK")
    d.find_element(By.ID, "first").click()
    at(0)
    assert not d.find_element(By.ID, "prev").is_enabled()
    no_error(d)


# ---------------------------------------------------------------------------------------------
# Playing with the cards: clicks on the hand, the stock, the pile and the table's melds

CHOOSE = """
const q = (s) => [...document.querySelectorAll(s)];
const on = (b) => !b.disabled;
if (on(document.getElementById("stock"))) return ["stock"];
const discard = q("#hand button.card[data-discard]").filter(on);
const layoff = q("#hand button.card[data-layoff]").filter(on);
const pile = q("#pile button.card").filter(on);
if (layoff.length && !arguments[0]) return ["layoff", Number(layoff[0].dataset.index)];
if (pile.length && !discard.length) return ["pile", pile.length - 1];
if (discard.length) return ["discard", Number(discard[discard.length - 1].dataset.index)];
return ["button"];
"""
"""What to click next: the stock, a card to lay off on a lit meld, the pile, a card to discard
(twice: select, then discard), else a move button (pass, knock, meld, take a deeper pile)."""


def play_by_clicks(driver, url: str, game: str, players: int, seat: int, seed: int,
                   options: str = "") -> dict:  # fmt: skip
    set_up(driver, url, game, players, seat, seed, options)
    kinds: dict[str, int] = {}
    tried_layoff = False
    clicks = 0
    for _ in range(3000):
        if wait_ready(driver)["over"] == "1":
            break
        what = driver.execute_script(CHOOSE, tried_layoff)
        kind = what[0]
        if kind == "stock":
            driver.find_element(By.ID, "stock").click()
        elif kind == "pile":
            driver.find_elements(By.CSS_SELECTOR, "#pile button.card:not([disabled])")[-1].click()
        elif kind == "discard":
            at = f"#hand button.card[data-index='{what[1]}']"
            driver.find_element(By.CSS_SELECTOR, at).click()
            card = driver.find_element(By.CSS_SELECTOR, at)  # the hand is drawn again
            assert "selected" in card.get_attribute("class")
            lit = driver.find_elements(By.CSS_SELECTOR, "#moves button.legal.hl")
            assert lit, "a selected card lights its moves"
            card.click()  # again: discard it
        elif kind == "layoff":
            driver.find_element(
                By.CSS_SELECTOR, f"#hand button.card[data-index='{what[1]}']"
            ).click()
            targets = driver.find_elements(By.CSS_SELECTOR, "#table-melds button.meld.target")
            assert targets, "a card that lays off lights the melds it goes on"
            targets[0].click()
            tried_layoff = True
            if "ways to play" in driver.find_element(By.ID, "selection").text:
                driver.find_elements(By.CSS_SELECTOR, "#moves button.legal.hl")[0].click()
            else:
                tried_layoff = False
        else:
            buttons = driver.find_elements(By.CSS_SELECTOR, "#moves button.legal:not([disabled])")
            assert buttons, "no legal move on the page, and the game is not over"
            words = buttons[0].text
            assert "[" not in words and "_" not in words, words  # words, not action names
            buttons[0].click()
        kinds[kind] = kinds.get(kind, 0) + 1
        clicks += 1
    else:
        raise AssertionError("the hand did not end")
    out = finish(driver, seat, clicks)
    out["kinds"] = kinds
    print(f"{game}: {kinds}")
    return out


@pytest.mark.parametrize(
    ("game", "players", "seat", "seed", "options"),
    [
        ("gin_rummy", 2, 0, 4, ""),
        ("gin_rummy", 4, 0, 2, ""),
        ("five_hundred_rum", 2, 1, 5, ""),
        ("rummy51", 2, 0, 6, "max_reshuffles=0"),
    ],
)
def test_a_hand_played_by_clicking_the_cards(browser, server, game, players, seat, seed, options):
    out = play_by_clicks(browser, server, game, players, seat, seed, options)
    assert out["kinds"].get("stock", 0) + out["kinds"].get("pile", 0) > 0
    assert out["kinds"].get("discard", 0) > 0
    # the moves in the log are words: the person's with suit symbols, none an action name
    mine = browser.find_elements(By.CSS_SELECTOR, "#log li.mine .move")
    assert mine and not any("[" in m.text for m in mine)
    assert any(s in m.text for m in mine for s in "♠♥♦♣")


def test_hints_and_words_on_the_page(browser, server):
    set_up(browser, server, "gin_rummy", 2, 0, 3)
    wait_ready(browser)
    hints = browser.find_element(By.ID, "hints").text
    assert "deadwood" in hints and "melds" in hints
    hand = browser.find_elements(By.CSS_SELECTOR, "#hand button.card")
    assert len(hand) in (10, 11) and all(h.text[-1] in "♠♥♦♣" for h in hand)
    words = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#moves button.legal")]
    assert words and all("_" not in w and "[" not in w for w in words)
    # keyboard play: key 1 plays the first move listed
    before = len(browser.find_elements(By.CSS_SELECTOR, "#log li"))
    browser.find_element(By.TAG_NAME, "body").send_keys("1")
    WebDriverWait(browser, WAIT).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#log li")) > before
    )
    wait_ready(browser)


# ---------------------------------------------------------------------------------------------
# A page that fits

OVERFLOW = """
const root = document.documentElement;
const width = root.clientWidth;
const cut = [];
for (const sel of arguments[0]) {
  for (const node of document.querySelectorAll(sel)) {
    const r = node.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;  // not shown
    if (r.left < -0.5 || r.right > width + 0.5 || node.scrollWidth > node.clientWidth + 1) {
      cut.push(sel + ": " + (node.textContent || "").slice(0, 40) + " " + r.left + ".." + r.right);
    }
  }
}
return {scroll: root.scrollWidth, client: width, cut: cut};
"""
WATCHED = (
    "#result", "#result table.infos th", "#result table.infos td", "#replay-title",
    "#step-action", ".controls button", "#moves button", "#hand button", ".pick select",
    "header", "#start",
)  # fmt: skip


def fits(driver, where: str) -> None:
    out = driver.execute_script(OVERFLOW, list(WATCHED))
    assert out["scroll"] <= out["client"], f"{where}: the page scrolls sideways ({out})"
    assert not out["cut"], f"{where}: cut off: {out['cut']}"


@pytest.mark.parametrize("width", [375, 1280, 1400, 1920])
def test_the_page_fits_the_screen(browser, server, records, tmp_path, width):
    d = browser
    d.set_window_size(width, 900)
    try:
        d.get(server)
        idle(d)
        fits(d, f"start page at {width} px")
        # a 500 Rum game of 8 players, stopped at once: the widest result table
        set_up(d, server, "five_hundred_rum", 8, 0, 1)
        wait_ready(d)
        fits(d, f"a game at {width} px")
        if width in (375, 1400):
            d.save_screenshot(str(tmp_path / f"game-{width}.png"))
        d.find_element(By.ID, "stop").click()
        WebDriverWait(d, WAIT).until(lambda _: d.execute_script(STATUS)["over"] == "1")
        fits(d, f"a result at {width} px")
        assert d.find_element(By.CSS_SELECTOR, "#result table.infos").is_displayed()
        d.find_element(By.ID, "tab-replay").click()
        Select(d.find_element(By.ID, "records")).select_by_value(REL)
        d.find_element(By.ID, "open-listed").click()
        idle(d)
        no_error(d)
        d.find_element(By.ID, "last").click()
        idle(d)
        fits(d, f"a replay at {width} px")
        if width in (375, 1400):
            d.save_screenshot(str(tmp_path / f"replay-{width}.png"))
            assert (tmp_path / f"replay-{width}.png").stat().st_size > 1000
    finally:
        d.set_window_size(1400, 1000)


def test_start_page_folds_the_options_with_each_games_own_placeholders(browser, server):
    d = browser
    d.get(server)
    idle(d)
    assert not d.find_element(By.ID, "players").is_displayed()  # folded away
    assert d.find_element(By.ID, "start").is_displayed()
    shown = {}
    for game in ("gin_rummy", "five_hundred_rum", "rummy51"):
        Select(d.find_element(By.ID, "game")).select_by_value(game)
        shown[game] = d.find_element(By.ID, "options").get_attribute("placeholder")
        opponents = [o.get_attribute("value") for o in
                     Select(d.find_element(By.ID, "opponent")).options]  # fmt: skip
        assert "random" in opponents
    assert "knock_limit=10" in shown["gin_rummy"]
    assert "knock_limit" not in shown["five_hundred_rum"] + shown["rummy51"]
    assert "opening_threshold=51" in shown["rummy51"]
    # the replay controls are drawn (SVG), not characters a font may lack
    for name in ("first", "prev", "next", "last"):
        button = d.find_element(By.ID, name)
        assert button.find_elements(By.TAG_NAME, "svg") and not button.text.strip()
