"""Checks of the folders the command line and the APIs write runs into."""

from __future__ import annotations

import os
from pathlib import Path


def check_out_folder(path: Path, name: str = "out") -> Path:
    """``path`` if a run can write its files there: a folder, or a path whose first existing
    parent is a writable folder (nothing is created here). ``name`` names the argument (or the
    flag) in the messages.

    Raises:
        ValueError: if it is a file, or under a file, or cannot be written.
    """
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name} {str(path)!r} is a file, not a folder")
    parent = path
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ValueError(f"{name} {str(path)!r}: {str(parent)!r} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{name} {str(path)!r}: cannot write in {str(parent)!r}")
    return path


__all__ = ["check_out_folder"]
