"""Hook modules imported at the first call of one of their entry points (start-up cost).

Importing every hook module, and the engine behind them, when the first vkCreateInstance
starts Python cost more than the instance itself; most of it serves calls an app makes
later, or never (a program that only lists its devices). ``entry`` names each hook module
through a ``LazyHooks``; an attribute of one is a ``LazyHook``, which ``entry.attach`` binds
to the C entry point. Its first call imports the module, binds the entry point to the real
function (later calls go straight there) and makes the call.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Binder = Callable[[Callable[..., Any]], object]


class LazyHook:
    """``module.attribute``, imported when first called."""

    __slots__ = ("attribute", "bind", "module")

    def __init__(self, module: str, attribute: str) -> None:
        self.module = module
        self.attribute = attribute
        self.bind: Binder | None = None  # binds the entry point to the real function

    def resolve(self) -> Callable[..., Any]:
        # __import__ and sys.modules: importlib.import_module, without importing importlib
        # (and the warnings module it imports) at the first vkCreateInstance.
        __import__(self.module)
        function: Callable[..., Any] = getattr(sys.modules[self.module], self.attribute)
        return function

    def __call__(self, *arguments: Any) -> Any:
        function = self.resolve()
        if self.bind is not None:
            self.bind(function)
        return function(*arguments)


class LazyHooks:
    """A hook module not imported yet: its attributes are ``LazyHook`` stand-ins."""

    def __init__(self, module: str) -> None:
        self.module = module

    def __getattr__(self, attribute: str) -> LazyHook:
        return LazyHook(self.module, attribute)
