"""What the find phase hands the rewrite: descriptor lookups, the accesses that need a guard,
and the uses left unchecked (with the reason, for ``gpuav instrument``'s report)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuav.spirv.instruction import Instruction


@dataclass(frozen=True)
class DescriptorLookup:
    """One lookup in a descriptor array: ``variable[indices...]`` (+ ``element``, seed 003).

    ``lengths`` are the ids of the array lengths (constants or specialization constants),
    None for a runtime array; ``element`` is the first index of an OpPtrAccessChain on the
    block pointer, which moves the descriptor index. ``static_index``/``static_length`` are
    the flattened values when they are compile-time constants.
    """

    variable: int
    indices: tuple[int, ...]
    lengths: tuple[int | None, ...]
    element: int | None = None
    static_index: int | None = None
    static_length: int | None = None
    descriptor_set: int | None = None
    binding: int | None = None

    @property
    def runtime_sized(self) -> bool:
        return any(length is None for length in self.lengths)

    @property
    def statically_out_of_bounds(self) -> bool:
        return (
            self.static_index is not None
            and self.static_length is not None
            and not 0 <= self.static_index < self.static_length
        )


@dataclass(frozen=True, eq=False)
class MergedLookup:
    """A descriptor (or a pointer into one) chosen by OpPhi or OpSelect among known lookups.

    Checked at its consumer, like any lookup, with the index, length, set and binding of
    whichever incoming lookup was chosen: the rewrite carries them through merges parallel
    to ``merge``. ``incoming`` pairs each incoming value id with its lookup; ``element`` is
    an OpPtrAccessChain's move of the chosen block (seed 003), added at the check.
    """

    merge: Instruction
    incoming: tuple[tuple[int, Lookup], ...]
    element: int | None = None
    static_index: None = None
    static_length: None = None

    @property
    def runtime_sized(self) -> bool:
        return any(lookup.runtime_sized for _, lookup in self.incoming)

    @property
    def statically_out_of_bounds(self) -> bool:
        return False


Lookup = DescriptorLookup | MergedLookup


@dataclass(frozen=True)
class DescriptorAccess:
    """A consumer of descriptors that needs a guard, and everything the guard needs."""

    consumer: Instruction
    instruction_index: int | None  # origin of the image instruction / memory access
    links: tuple[Instruction, ...]  # naming instructions, operands before users
    lookups: tuple[Lookup, ...]
    kind: str  # "image", "acceleration structure" or "buffer"

    @property
    def statically_out_of_bounds(self) -> bool:
        return any(lookup.statically_out_of_bounds for lookup in self.lookups)


@dataclass(frozen=True)
class UncheckedUse:
    """A descriptor use the pass leaves unchecked, with the reason (for the CLI's report)."""

    instruction_index: int | None
    reason: str


@dataclass
class Findings:
    accesses: list[DescriptorAccess] = field(default_factory=list)
    unchecked: list[UncheckedUse] = field(default_factory=list)
