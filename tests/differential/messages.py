"""Findings parsed from either layer's messages: (kind, descriptor index, array length, stage).

The Khronos layer (1.3.239) says "Index of 4 used to index descriptor array of length 4" and
"Descriptor index 2 is uninitialized" under the ids ``UNASSIGNED-Descriptor index out of
bounds`` / ``UNASSIGNED-Descriptor uninitialized``; gpuav says the same sentences (the second
with the array's length) under ``GPUAV-descriptor-index-out-of-bounds`` /
``VUID-vkCmdDispatch-None-08114`` (``vkCmdDraw``). Both name the stage as ``Stage = Compute``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OUT_OF_BOUNDS = "out-of-bounds"
UNINITIALIZED = "uninitialized"

_KINDS = {
    "UNASSIGNED-Descriptor index out of bounds": OUT_OF_BOUNDS,
    "UNASSIGNED-Descriptor uninitialized": UNINITIALIZED,
    "GPUAV-descriptor-index-out-of-bounds": OUT_OF_BOUNDS,
    "GPUAV-descriptor-uninitialized": UNINITIALIZED,  # off any known command
    **{f"VUID-{command}-None-08114": UNINITIALIZED for command in ("vkCmdDispatch", "vkCmdDraw")},
}
_BOUNDS = re.compile(r"Index of (\d+) used to index descriptor array of length (\d+)")
_UNINITIALIZED = re.compile(r"Descriptor index (\d+)")
_STAGE = re.compile(r"Stage = (\w+)")


@dataclass(frozen=True)
class Finding:
    kind: str
    index: int
    length: int | None  # None for an uninitialized descriptor (Khronos gives no length)
    stage: str

    def key(self) -> tuple[str, int, int | None]:
        return (self.kind, self.index, self.length)


def is_descriptor_error(message: dict[str, str]) -> bool:
    return message["id"] in _KINDS


def parse(message: dict[str, str]) -> Finding:
    """The finding of one descriptor error message (ValueError for anything else)."""
    kind = _KINDS[message["id"]]
    text = message["text"]
    stage = _STAGE.search(text)
    if stage is None:
        raise ValueError(f"no stage in {text!r}")
    if kind == OUT_OF_BOUNDS:
        bounds = _BOUNDS.search(text)
        if bounds is None:
            raise ValueError(f"no index and length in {text!r}")
        return Finding(kind, int(bounds.group(1)), int(bounds.group(2)), stage.group(1))
    index = _UNINITIALIZED.search(text)
    if index is None:
        raise ValueError(f"no index in {text!r}")
    return Finding(kind, int(index.group(1)), None, stage.group(1))


def findings(messages: list[dict[str, str]]) -> set[Finding]:
    return {parse(message) for message in messages if is_descriptor_error(message)}
