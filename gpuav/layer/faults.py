"""Fault injection for tests: ``GPUAV_TEST_FAULTS=point,point`` makes those points fail.

Engine points (named after the hook they break) raise ``InjectedFault``: that proves an engine
failure never reaches the application, the entry point reports it and the Vulkan call still
goes down the chain. Vulkan points (named after a call the layer makes for its own objects,
``vkAllocateMemory``) make that call return VK_ERROR_OUT_OF_DEVICE_MEMORY without reaching the
driver, as a driver out of memory would, so the layer's own checks and clean-up run;
``vkAllocateMemory:3`` fails the third such call and every later one (start-up or growth).
``vkMapMemory-MAP_FAILED`` makes vkMapMemory succeed with mmap's MAP_FAILED as its pointer,
as lavapipe does once the address space is exhausted.
"""

from __future__ import annotations

import os
from collections import Counter

ERROR_OUT_OF_DEVICE_MEMORY = -2


class InjectedFault(RuntimeError):
    """Raised on purpose at a named point."""


_POINTS = frozenset(
    point.strip() for point in os.environ.get("GPUAV_TEST_FAULTS", "").split(",") if point.strip()
)


def _first_failing_calls() -> dict[str, int]:
    """Vulkan points: the command and the number of its first failing call."""
    firsts: dict[str, int] = {}
    for point in _POINTS:
        command, _, number = point.partition(":")
        if command.startswith("vk"):
            firsts[command] = int(number) if number.isdigit() and int(number) > 0 else 1
    return firsts


_FIRST_FAILING_CALL = _first_failing_calls()
_calls_made: Counter[str] = Counter()


def check(point: str) -> None:
    if _POINTS and point in _POINTS:
        raise InjectedFault(f"fault injected at {point} (GPUAV_TEST_FAULTS)")


def active(point: str) -> bool:
    return point in _POINTS


def injected_result(command: str) -> int:
    """VK_ERROR_OUT_OF_DEVICE_MEMORY when this call of ``command`` is to fail, else 0."""
    first = _FIRST_FAILING_CALL.get(command)
    if first is None:
        return 0
    _calls_made[command] += 1
    return ERROR_OUT_OF_DEVICE_MEMORY if _calls_made[command] >= first else 0
