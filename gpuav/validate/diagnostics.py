"""The one result type of every validator: a broken rule, where, and why."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Diagnostic:
    """``rule`` is the full VUID (``VUID-StandaloneSpirv-Location-04916``) where the spec has
    one, else a stable gpuav rule id (``GPUAV-...``). ``instruction_index`` is the origin index
    of the offending instruction in the validated module, None for module-wide rules."""

    rule: str
    message: str
    instruction_index: int | None = None
    severity: Severity = Severity.ERROR
