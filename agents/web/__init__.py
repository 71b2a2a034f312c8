"""The browser app: ``rummy-env serve`` (:mod:`rummy_agents.web.app`).

This module holds only the command (its parser and its checks), so that the command line builds
without the web extra; the app itself needs starlette and uvicorn (``pip install
"rummy_env[web]"``), imported when the command runs.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
import time
from pathlib import Path
from typing import Any

from rummy_agents.cli import CLIError

INSTALL = (
    "rummy-env serve needs starlette and uvicorn, which are not installed: pip install "
    '"rummy_env[web]" (in a checkout: pip install -c constraints.txt -e ".[web]")'
)

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) only listens on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    """Run ``rummy-env serve``: check the flags, then serve the app until Ctrl+C or SIGTERM."""
    records = None
    if args.records is not None:
        records = Path(args.records).expanduser()
        if not records.is_dir():
            raise CLIError(f"--records {args.records!r} is not a folder")
    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be 0..65535, got {args.port}")
    try:
        import uvicorn  # noqa: F401 - serve() runs it: say now that it is missing

        from rummy_agents.web.app import create_app
    except ImportError:
        raise CLIError(INSTALL) from None
    local = is_loopback(args.host)
    # a loopback server answers only to its own names (no DNS rebinding from a web page)
    hosts = [args.host, *LOOPBACK_NAMES] if local else None
    app = create_app(records, allowed_hosts=hosts)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"rummy-env serve: http://{shown}:{args.port}/ (Ctrl+C stops it)", flush=True)
    if not local:
        print(
            f"rummy-env serve: note: {args.host} is not a loopback address: anyone who reaches "
            "this machine can play here"
            + (" and read the records of --records" if records else ""),
            flush=True,
        )
    serve(app, args.host, args.port)
    return 0


STOP_SECONDS = 3
"""After Ctrl+C or SIGTERM, the requests still running get this long to end (their agents'
moves are interrupted at once, so they end sooner)."""


def serve(app: Any, host: str, port: int) -> None:
    """Serve ``app`` with uvicorn until Ctrl+C or SIGTERM, then stop within a few seconds:
    the signal interrupts every agent's move at once (``app.state.shutdown()``), uvicorn waits
    :data:`STOP_SECONDS` at most for the requests still open, and should a worker thread still
    be busy after that (a compiled kernel that does not return), the process exits anyway.
    """
    import uvicorn

    from rummy_agents.web.app import agent_moves_running

    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=STOP_SECONDS
    )
    server = uvicorn.Server(config)
    handle_exit = server.handle_exit

    def stop(sig: int, frame: Any) -> None:
        # uvicorn only stops taking requests and waits for the open ones: end their work now
        app.state.shutdown()
        handle_exit(sig, frame)

    server.handle_exit = stop  # type: ignore[method-assign]
    try:
        # after SIGTERM uvicorn raises it again once stopped: the default action ends the
        # process there, busy worker threads or not; Ctrl+C raises KeyboardInterrupt
        server.run()
    except KeyboardInterrupt:
        pass
    app.state.shutdown()
    deadline = time.monotonic() + STOP_SECONDS
    while agent_moves_running() and time.monotonic() < deadline:
        time.sleep(0.05)
    if agent_moves_running():
        print("rummy-env serve: an agent's move did not stop: exiting now", flush=True)
        sys.stdout.flush()
        os._exit(0)


def add_serve_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``serve`` command."""
    p = sub.add_parser(
        "serve",
        help="play and replay games in the browser (a local web app)",
        description=(
            "Serve a web app on this machine: play any game against agents of the arena's "
            "registry, with the table drawn from your seat, and step through game records "
            "(uploaded, or from --records DIR) in any seat's view. Needs starlette and uvicorn: "
            'pip install "rummy_env[web]".'
        ),
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only)",
    )
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--records",
        default=None,
        metavar="DIR",
        help="a folder of game records (.jsonl, searched recursively; rummy-env arena --record "
        "writes them) to list on the replay page; nothing outside it is served",
    )
    p.set_defaults(func=cmd_serve)


__all__ = ["INSTALL", "add_serve_parser", "cmd_serve", "is_loopback", "serve"]
