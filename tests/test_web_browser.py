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


def play_hand(driver, url: str, game: str, players: int, seat: int, seed: int) -> dict:
    driver.get(url)
    idle(driver)
    driver.find_element(By.ID, "seed").send_keys(str(seed))
    Select(driver.find_element(By.ID, "game")).select_by_value(game)
    Select(driver.find_element(By.ID, "players")).select_by_value(str(players))
    Select(driver.find_element(By.ID, "seat")).select_by_value(str(seat))
    Select(driver.find_element(By.ID, "delay")).select_by_value("0")
    inputs = driver.find_elements(By.CSS_SELECTOR, "#opponent-inputs input")
    assert len(inputs) == players - 1
    for box in inputs:
        box.clear()
        box.send_keys("random")
    driver.find_element(By.ID, "start").click()
    clicks = 0
    for _ in range(2000):
        status = WebDriverWait(driver, WAIT, poll_frequency=0.02).until(
            lambda d: (s := d.execute_script(STATUS))["busy"] == "0" and s
        )
        assert not status["error"], status["error"]
        if status["over"] == "1":
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
    result = driver.find_element(By.ID, "result").text
    link = driver.find_element(By.ID, "download")
    assert link.is_displayed() and clicks > 0
    record = read_record(fetch_text(driver, link.get_attribute("href")).splitlines())
    assert record.labels[f"player_{seat}"] == "human"
    assert replay(record).matches
    moves = driver.find_elements(By.CSS_SELECTOR, "#log li")
    assert len(moves) == len(record.steps)
    print(f"{game}: {clicks} moves through the page, {len(record.steps)} in all")
    return {"result": result, "clicks": clicks, "record": record}


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
