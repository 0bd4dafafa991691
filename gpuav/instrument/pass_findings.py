"""What a pass's find phase hands its rewrite: the accesses to guard, and the uses it leaves
unchecked with the reason (instruction origin, reason; for ``gpuav instrument``'s report)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

Access = TypeVar("Access")


@dataclass
class PassFindings(Generic[Access]):
    accesses: list[Access] = field(default_factory=list)
    unchecked: list[tuple[int | None, str]] = field(default_factory=list)
