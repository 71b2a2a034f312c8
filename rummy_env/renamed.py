"""Old public names kept as deprecated aliases for one release after their rename.

A renamed function or class answers to its old name through the module's ``__getattr__``
(PEP 562) with a ``DeprecationWarning`` that names the new one; the alias goes in the release
named by :data:`REMOVAL`. Old versions of env modules are not aliases: they raise, naming the
current module, as PettingZoo's do (``rummy_env.__getattr__``).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

REMOVAL = "0.3.0"
"""The release without the aliases (they stay through 0.2.0, the release after the rename)."""


def renamed_attributes(module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` resolving each old name in ``names`` to its new one.

    Args:
        module: The module's ``__name__``; the new names are its attributes.
        names: Old name to new name.

    Returns:
        The function to assign to the module's ``__getattr__``: an old name warns
        (``DeprecationWarning``) and returns the new object; any other name raises
        ``AttributeError`` as a module without the attribute does.
    """
    old_names = dict(names)

    def __getattr__(name: str) -> Any:
        new = old_names.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is now {module}.{new}; the old name is a deprecated alias "
            f"removed in {REMOVAL}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(sys.modules[module], new)

    return __getattr__


__all__ = ["REMOVAL", "renamed_attributes"]
