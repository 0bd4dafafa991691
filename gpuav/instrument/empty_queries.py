"""A ray query whose start (OpRayQueryInitializeKHR) is skipped, because its acceleration
structure descriptor may not be used, is started on no acceleration structure instead.

The query's later instructions (OpRayQueryProceedKHR, the getters) run whatever the guard
decided, and on a query never started they are undefined: a driver may loop over garbage or
read it. Started on the null acceleration structure (address 0), the query finds nothing, as
on an empty scene (lavapipe: no step, no hit), and the program goes on as with a missed ray.
"""

from __future__ import annotations

from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction


def empty_start_of(consumer: Instruction) -> Instruction | None:
    """A copy of ``consumer`` (taken before the guard renames its operands) for the skipped
    branch, when it starts a ray query; None for any other consumer."""
    if consumer.opcode != Op.RayQueryInitializeKHR:
        return None
    return Instruction(consumer.opcode, list(consumer.operands), None)


def emit_empty_start(builder: Builder, types: Types, start: Instruction) -> None:
    """Start the query of ``start`` on the acceleration structure at address 0."""
    structure_type = types.type_of(start.operands[1])
    if structure_type is None:
        raise RuntimeError(f"no type for the acceleration structure of {start!r}")
    address = builder.constant_null(builder.type_vector(builder.type_int(32, False), 2))
    start.operands[1] = builder.op(Op.ConvertUToAccelerationStructureKHR, structure_type, address)
    builder.emit(start)
