"""The browser app of ``rummy-env serve``: play against agents, step through game records.

A Starlette app of JSON endpoints and three static files (``static/``: plain HTML, CSS and
JavaScript, served by the app itself; no build step, nothing fetched from the internet).
Starlette and not FastAPI: the endpoints are a dozen small JSON handlers whose requests are
checked by hand, with the one-line messages of the command line (the rule options, the agent
specs and the records already validate themselves with clear ``ValueError``s); FastAPI would add
pydantic models and generated OpenAPI pages on top of the same Starlette, a second validation
layer and a heavier dependency for nothing the page uses.

Pictures of the table are always ``env.render_picture(view, fmt="svg")``, the drawing of the
envs' ``rgb_array`` pictures. What a player is sent is what that seat may see:

- a live game is drawn in the person's seat view (the other hands face down), the opponents'
  moves are named as the table sees them (``public_action_name``: a Gin knock's discard is face
  down; with four Gin players, no card of the other table), and the seed, which would deal every
  hidden card again, is sent with the record only once the game is over;
- every browser session (an HttpOnly cookie holding a random id, made by the server) keeps its
  games and replays in memory; a game or replay id of another session is unknown (404), so a
  session never reads or plays another's game;
- every request is checked: a mistake is a 4xx JSON ``{"error": "..."}`` naming it (400: a
  malformed request, a body nested too deeply; 403: a request of another site's page; 404: an
  unknown game, replay or record file; 409: a move after the end; 413: too large; 415: a
  request that changes something not sent as JSON; 422: an unknown game, agent or rule option,
  an agent parameter over the app's limits, an illegal move, a malformed record; 429: too many
  games or sessions, memory full; 503: the server stops), never a traceback;
- ``rummy-env serve`` listens on 127.0.0.1 by default and then answers only requests addressed
  to a loopback name (``allowed_hosts``); a request that changes something must come from the
  app's own page (``Origin``, ``Sec-Fetch-Site``) as ``application/json``;
- every request ends in bounded time: the agents' costly parameters are capped
  (:data:`COST_LIMITS`), each decision runs under a deadline (:class:`Limits`), a request plays
  agents' moves for :data:`REQUEST_SECONDS` at most (the game is then ``pending``), and the
  work of a client that left or of a server asked to stop is interrupted;
- memory is bounded: games, replays and request bodies hold their bytes in one account
  (:class:`Memory`, :data:`MEMORY_BYTES`), and a live session is never dropped for a new one.

Endpoints (JSON unless said otherwise)::

    GET    /                              the page (static/index.html)
    GET    /api/catalog                   games, player counts, rule options, agents
    GET    /api/play                      this session's games
    POST   /api/play                      start a game: {game, players, seat, opponents,
                                          options, seed} -> its state (201)
    GET    /api/play/{id}                 the game's state (and its log)
    POST   /api/play/{id}/move            {action}: the person's move, then the agents' up to
                                          the person's next turn -> the state and the moves
    POST   /api/play/{id}/advance         {}: the agents' moves left (the state was pending)
    POST   /api/play/{id}/stop            end the game now (its record is then available)
    GET    /api/play/{id}/record          the game record (JSON lines), once the game is over
    DELETE /api/play/{id}                 forget the game
    GET    /api/records                   the records under --records DIR
    POST   /api/replays                   {path} (under DIR) or {text, name}: check the record by
                                          replaying it -> its steps and result (201)
    GET    /api/replays/{id}              the same again
    GET    /api/replays/{id}/frame        ?step=i&view=referee|player_k: the table before
                                          decision i (i = steps: after the last)
    DELETE /api/replays/{id}              forget the replay

The app's modules, one job each: :mod:`~rummy_agents.web.app` (this one: the routes, each
request's wiring), :mod:`~rummy_agents.web.guard` (the request checks),
:mod:`~rummy_agents.web.sessions` (browser sessions), :mod:`~rummy_agents.web.memory` (the memory
account), :mod:`~rummy_agents.web.deadline` (agents' moves under a deadline),
:mod:`~rummy_agents.web.catalog` (what can be played, the opponent checks),
:mod:`~rummy_agents.web.games` (a game against agents), :mod:`~rummy_agents.web.replays` (game
records), :mod:`~rummy_agents.web.seat` (the seat's table as JSON),
:mod:`~rummy_agents.web.limits` (the limits) and :mod:`~rummy_agents.web.errors` (the error a
request is refused with). The names of the others that tests and tools use are imported here.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from rummy_agents.arena.play import probe_agent
from rummy_agents.web.catalog import REFEREE, catalog, check_cost, check_opponent
from rummy_agents.web.deadline import AgentStopped, Work, agent_moves_running
from rummy_agents.web.errors import ApiError
from rummy_agents.web.games import PlayGame, new_game
from rummy_agents.web.guard import (
    SAFE_METHODS,
    foreign_origin,
    host_name,
    is_json,
    json_object,
    parse_body,
    read_body,
)
from rummy_agents.web.limits import (
    COST_LIMITS,
    MAX_BODY_BYTES,
    MAX_GAME_STEPS,
    MAX_GAMES,
    MAX_JSON_DEPTH,
    MAX_RECORD_BYTES,
    MAX_REPLAYS,
    MAX_SESSIONS,
    MEMORY_BYTES,
    REQUEST_SECONDS,
    Limits,
)
from rummy_agents.web.memory import (
    GAME_BASE_BYTES,
    GAME_STEP_BYTES,
    GAME_STEP_CHUNK,
    Memory,
    MemoryFull,
    replay_bytes,
)
from rummy_agents.web.replays import ReplayView, confined, list_records, parse_record
from rummy_agents.web.sessions import COOKIE, Session, Sessions

log = logging.getLogger(__name__)


STATIC = ("index.html", "app.js", "style.css")
MEDIA = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}

HEADERS = {
    # the page loads only its own files: no inline script, nothing from elsewhere
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


Handler = Callable[[Request, Session, Any], Any]


LOCK_SECONDS = 5.0
"""A request waits this long for a game another request of the session is playing (409)."""


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=HEADERS)


@contextmanager
def _locked(g: Any) -> Iterator[None]:
    """Hold a game's (or replay's) lock, waiting :data:`LOCK_SECONDS` at most.

    Raises:
        ApiError: 409 when another request holds it all that time.
    """
    if not g.lock.acquire(timeout=LOCK_SECONDS):
        raise ApiError(409, "another request of this session is playing this game: try again")
    try:
        yield
    finally:
        g.lock.release()


async def _in_thread(request: Request, fn: Callable[[], Any], work: Work) -> Any:
    """``fn()`` in a worker thread (agents and envs are synchronous), its ``work`` cancelled
    when the client leaves before the answer.
    """
    outcome: dict[str, Any] = {}

    async def watch() -> None:
        while True:
            message = await request.receive()
            if message["type"] == "http.disconnect":
                work.cancel("the client left")
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        try:
            outcome["value"] = await run_in_threadpool(fn)
        except Exception as e:  # noqa: BLE001 - raised again below, outside the task group
            outcome["error"] = e
        tg.cancel_scope.cancel()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def create_app(
    records_dir: str | Path | None = None,
    allowed_hosts: Sequence[str] | None = None,
    limits: Limits | None = None,
) -> Starlette:
    """The browser app.

    Args:
        records_dir: a folder of game records to list and replay (nothing outside it is read);
            None: records are uploaded only.
        allowed_hosts: the host names requests may be addressed to (``rummy-env serve`` on a
            loopback address passes the loopback names, so a page of another site that points
            its name at 127.0.0.1 is refused); None: any.
        limits: the agents' deadlines and the memory and session limits (defaults:
            :class:`Limits`).

    Returns:
        A Starlette app (ASGI): serve it with uvicorn, or test it with Starlette's TestClient.
        ``app.state.shutdown()`` interrupts every agent's move and refuses new work (call it
        when the server is asked to stop); ``app.state.sessions`` and ``app.state.memory`` are
        its sessions and memory account.
    """
    root = None if records_dir is None else Path(records_dir)
    hosts = None if allowed_hosts is None else {host_name(h).lower() for h in allowed_hosts}
    limits = limits if limits is not None else Limits()
    memory = Memory(limits.memory_bytes)
    sessions = Sessions(limits.sessions, memory, limits.session_idle_seconds)
    running: set[Work] = set()
    stopping: list[str] = []

    def shutdown(reason: str = "the server is stopping") -> None:
        """Interrupt every agent's move now and refuse new requests that change anything."""
        if not stopping:
            stopping.append(reason)
        for w in list(running):
            w.cancel(reason)

    def endpoint(handler: Handler, body: bool = False) -> Callable[[Request], Awaitable[Response]]:
        """An endpoint: host and origin checks, session cookie, JSON body, the handler in a
        worker thread (cancelled when the client leaves), errors as JSON, the security headers.
        """

        async def run(request: Request) -> Response:
            if (
                hosts is not None
                and host_name(request.headers.get("host", "")).lower() not in hosts
            ):
                return _error(400, "this server answers only to its own address (Host header)")
            if request.method not in SAFE_METHODS:
                why = foreign_origin(request.headers, request.url.scheme)
                if why is not None:
                    return _error(
                        403,
                        f"refused: a request that changes something must come from this "
                        f"server's own page, not another site's ({why})",
                    )
                if not is_json(request.headers.get("content-type")):
                    got = request.headers.get("content-type", "none")[:60]
                    return _error(
                        415,
                        f"a request that changes something must be sent as Content-Type: "
                        f"application/json (got {got})",
                    )
                if stopping:
                    return _error(503, stopping[0])
            session, new = sessions.get(request.cookies.get(COOKIE))
            session.busy += 1
            work = Work(limits.request_seconds)
            if stopping:
                work.cancel(stopping[0])
            running.add(work)
            request.state.work = work
            body_key = memory.key()
            try:
                data = await read_body(request, memory, body_key) if body else None
                out = await _in_thread(request, lambda: handler(request, session, data), work)
            except ApiError as e:
                response: Response = _error(e.status, e.message)
            except Exception:  # a bug: logged here, never a traceback to the page
                log.exception("rummy-env serve: %s %s failed", request.method, request.url.path)
                response = _error(500, "internal error (see the server's log)")
            else:
                if isinstance(out, Response):
                    response = out
                else:
                    payload, status = out if isinstance(out, tuple) else (out, 200)
                    response = JSONResponse(payload, status_code=status)
                response.headers.update(HEADERS)
            finally:
                memory.free(body_key)
                running.discard(work)
                session.busy -= 1
                session.last_used = time.monotonic()
            if new and session.stored:
                response.set_cookie(COOKIE, session.id, httponly=True, samesite="strict", path="/")
            return response

        return run

    # -- static files --------------------------------------------------------------------------
    def static(request: Request, session: Session, _: Any) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in STATIC:
            raise ApiError(404, f"no file {name!r:.40}")
        text = (
            resources.files("rummy_agents.web").joinpath("static").joinpath(name).read_text("utf-8")
        )
        media = MEDIA[Path(name).suffix] + "; charset=utf-8"
        return Response(text, media_type=media)

    # -- play ----------------------------------------------------------------------------------
    def get_catalog(request: Request, session: Session, _: Any) -> dict:
        limits_out = {
            "games": MAX_GAMES,
            "replays": MAX_REPLAYS,
            "record_bytes": MAX_RECORD_BYTES,
            "memory_bytes": memory.budget,
            "agent_parameters": {k: [lo, hi] for k, (lo, hi, _) in COST_LIMITS.items()},
        }
        return {**catalog(), "records": root is not None, "limits": limits_out}

    def list_games(request: Request, session: Session, _: Any) -> dict:
        with session.lock:
            return {"games": [g.summary() for g in session.games.values()]}

    def start(request: Request, session: Session, body: Any) -> tuple[dict, int]:
        body = json_object(body)
        session.check_room()
        sessions.expire()
        sessions.keep(session)
        session.make_room(GAME_BASE_BYTES + GAME_STEP_BYTES * GAME_STEP_CHUNK)
        g, events = new_game(secrets.token_urlsafe(12), body, request.state.work, limits, memory)
        try:
            session.add_game(g)
        except BaseException:
            memory.free(g.mem_key)
            raise
        with _locked(g):
            return g.state(events=events), 201

    def get_game(request: Request, session: Session, _: Any) -> dict:
        g = session.game(request.path_params["gid"])
        with _locked(g):
            return g.state(log=True)

    def move(request: Request, session: Session, body: Any) -> dict:
        g = session.game(request.path_params["gid"])
        body = json_object(body)
        if "action" not in body:
            raise ApiError(400, 'give the move as {"action": id}')
        with _locked(g):
            events = g.move(body["action"], request.state.work)
            return g.state(events=events)

    def advance(request: Request, session: Session, body: Any) -> dict:
        g = session.game(request.path_params["gid"])
        json_object(body)
        with _locked(g):
            if g.over:
                raise ApiError(409, "the game is over: no more moves")
            return g.state(events=g.advance(request.state.work))

    def stop(request: Request, session: Session, _: Any) -> dict:
        g = session.game(request.path_params["gid"])
        with _locked(g):
            g.stop()
            return g.state()

    def delete_game(request: Request, session: Session, _: Any) -> dict:
        gid = request.path_params["gid"]
        g = session.game(gid)
        with _locked(g):  # not while a request plays it (its memory is given back here)
            session.drop_game(gid)
        return {"deleted": gid}

    def record(request: Request, session: Session, _: Any) -> Response:
        g = session.game(request.path_params["gid"])
        with _locked(g):
            text = g.record_text()
        name = f"rummy-{g.game}-{g.seed}.jsonl"
        return Response(
            text,
            media_type="application/x-ndjson; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    # -- replays -------------------------------------------------------------------------------
    def records(request: Request, session: Session, _: Any) -> dict:
        if root is None:
            return {"enabled": False, "records": [], "truncated": False}
        found, cut = list_records(root)
        return {"enabled": True, "records": found, "truncated": cut}

    def reserve(session: Session, nbytes: int) -> int:
        """Hold a replay's memory (room made among the session's own replays and finished
        games first); returns the key it is held under.
        """
        sessions.expire()
        sessions.keep(session)
        session.make_room(nbytes)
        key = memory.key()
        memory.set(key, nbytes, "this replay")
        return key

    def open_replay(request: Request, session: Session, body: Any) -> tuple[dict, int]:
        body = json_object(body)
        if "path" in body:
            if root is None:
                raise ApiError(404, "the server has no records folder (rummy-env serve --records)")
            path = confined(root, body["path"])
            size = path.stat().st_size
            if size > MAX_RECORD_BYTES:
                raise ApiError(413, f"{body['path']}: the record is over {MAX_RECORD_BYTES} bytes")
            source = str(body["path"])
            key = reserve(session, replay_bytes(size))
            try:
                text = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError) as e:
                memory.free(key)
                raise ApiError(422, f"{source}: cannot read the record: {e}") from None
        elif "text" in body:
            text = body["text"]
            if not isinstance(text, str):
                raise ApiError(400, "text must be the record's text (JSON lines)")
            name = body.get("name", "record")
            source = name if isinstance(name, str) and name else "record"
            source = source[-120:]
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > MAX_RECORD_BYTES:
                raise ApiError(413, f"{source}: the record is over {MAX_RECORD_BYTES} bytes")
            key = reserve(session, replay_bytes(size))
        else:
            raise ApiError(400, 'give a record as {"path": ...} or {"text": ...}')
        try:
            r = ReplayView(secrets.token_urlsafe(12), parse_record(text, source), source, key)
            session.add_replay(r)
        except BaseException:
            memory.free(key)
            raise
        return r.meta(), 201

    def get_replay(request: Request, session: Session, _: Any) -> dict:
        return session.replay(request.path_params["rid"]).meta()

    def frame(request: Request, session: Session, _: Any) -> dict:
        r = session.replay(request.path_params["rid"])
        q = request.query_params
        with _locked(r):
            return r.frame(q.get("step", "0"), q.get("view", REFEREE))

    def delete_replay(request: Request, session: Session, _: Any) -> dict:
        rid = request.path_params["rid"]
        session.replay(rid)
        session.drop_replay(rid)
        return {"deleted": rid}

    routes = [
        Route("/", endpoint(static), methods=["GET"]),
        Route("/static/{name}", endpoint(static), methods=["GET"]),
        Route("/favicon.ico", endpoint(lambda *_: Response(status_code=204)), methods=["GET"]),
        Route("/api/catalog", endpoint(get_catalog), methods=["GET"]),
        Route("/api/play", endpoint(list_games), methods=["GET"]),
        Route("/api/play", endpoint(start, body=True), methods=["POST"]),
        Route("/api/play/{gid}", endpoint(get_game), methods=["GET"]),
        Route("/api/play/{gid}", endpoint(delete_game, body=True), methods=["DELETE"]),
        Route("/api/play/{gid}/move", endpoint(move, body=True), methods=["POST"]),
        Route("/api/play/{gid}/advance", endpoint(advance, body=True), methods=["POST"]),
        Route("/api/play/{gid}/stop", endpoint(stop, body=True), methods=["POST"]),
        Route("/api/play/{gid}/record", endpoint(record), methods=["GET"]),
        Route("/api/records", endpoint(records), methods=["GET"]),
        Route("/api/replays", endpoint(open_replay, body=True), methods=["POST"]),
        Route("/api/replays/{rid}", endpoint(get_replay), methods=["GET"]),
        Route("/api/replays/{rid}", endpoint(delete_replay, body=True), methods=["DELETE"]),
        Route("/api/replays/{rid}/frame", endpoint(frame), methods=["GET"]),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        # unknown paths and methods: JSON as every other error
        status = getattr(exc, "status_code", 500)
        if status == 404:
            return _error(404, f"no such page: {request.url.path}")
        if status == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path}")
        return _error(status, str(getattr(exc, "detail", "error")))

    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    app.state.sessions = sessions  # for tests and tools: every session's games, by id
    app.state.memory = memory
    app.state.limits = limits
    app.state.shutdown = shutdown
    app.state.running = running
    return app


__all__ = [
    "COOKIE",
    "COST_LIMITS",
    "MAX_BODY_BYTES",
    "MAX_GAMES",
    "MAX_GAME_STEPS",
    "MAX_JSON_DEPTH",
    "MAX_RECORD_BYTES",
    "MAX_REPLAYS",
    "MAX_SESSIONS",
    "MEMORY_BYTES",
    "REQUEST_SECONDS",
    "AgentStopped",
    "ApiError",
    "Limits",
    "Memory",
    "MemoryFull",
    "PlayGame",
    "ReplayView",
    "Work",
    "agent_moves_running",
    "catalog",
    "check_cost",
    "check_opponent",
    "confined",
    "create_app",
    "foreign_origin",
    "is_json",
    "list_records",
    "new_game",
    "parse_body",
    "parse_record",
    "probe_agent",
    "replay_bytes",
]
