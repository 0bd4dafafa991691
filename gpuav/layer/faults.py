"""Fault injection for tests: ``GPUAV_TEST_FAULTS=point,point`` makes those points raise.

It proves that an engine failure never reaches the application: the entry point reports it
and the Vulkan call still goes down the chain. Points are named after the hook they break.
"""

from __future__ import annotations

import os


class InjectedFault(RuntimeError):
    """Raised on purpose at a named point."""


_POINTS = frozenset(
    point.strip() for point in os.environ.get("GPUAV_TEST_FAULTS", "").split(",") if point.strip()
)


def check(point: str) -> None:
    if _POINTS and point in _POINTS:
        raise InjectedFault(f"fault injected at {point} (GPUAV_TEST_FAULTS)")


def active(point: str) -> bool:
    return point in _POINTS
