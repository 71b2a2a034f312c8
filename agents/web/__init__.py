"""The browser app: ``rummy-env serve`` (:mod:`rummy_agents.web.app`).

This module holds only the command (its parser and its checks), so that the command line builds
without the web extra; the app itself needs starlette and uvicorn (``pip install
"rummy_env[web]"``), imported when the command runs.
"""

from __future__ import annotations

import argparse
import ipaddress
from pathlib import Path

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
    """Run ``rummy-env serve``: check the flags, then serve the app until Ctrl+C."""
    records = None
    if args.records is not None:
        records = Path(args.records).expanduser()
        if not records.is_dir():
            raise CLIError(f"--records {args.records!r} is not a folder")
    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be 0..65535, got {args.port}")
    try:
        import uvicorn

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
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


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


__all__ = ["INSTALL", "add_serve_parser", "cmd_serve", "is_loopback"]
