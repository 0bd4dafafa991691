"""Def-use for whole-module validation, built about twice as fast as ``DefUse(module)``.

Def-use is the largest single cost of validating a module (more than reading it). This builds
the same ``DefUse`` object (same defs, users and places; ``record`` and ``forget`` work on it)
in one loop with the grammar's fast shapes inlined, and without the reference cycle through
IdOperands that would keep every validated module alive until a full collection.

Instructions of variable shape (names, decorations, strings, constants, extended
instructions: four in ten of glslang's) need a grammar walk to find their ids; within a
module their shapes repeat, and for the opcodes in ``SHAPE_OPERANDS`` the id positions depend
only on the operand count and the operands named there, so each shape is walked once.
"""

from __future__ import annotations

import weakref
from collections import defaultdict

from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.grammar import FAST_SHAPES, RESULT_INDEX, TAIL_IDS, Op
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, Function, Module

# Opcode -> operands that, with the operand count, decide where the ids are: the decoration,
# execution mode or loop control (whose parameters follow it), OpExtInst's set and
# instruction. The other operands are strings (running to the end) and literals.
SHAPE_OPERANDS: dict[int, tuple[int, ...]] = {
    Op.Name: (),
    Op.MemberName: (),
    Op.String: (),
    Op.Constant: (),
    Op.SpecConstant: (),
    Op.ModuleProcessed: (),
    Op.Extension: (),
    Op.SourceExtension: (),
    Op.ExtInstImport: (),
    Op.Source: (),
    Op.Decorate: (1,),
    Op.MemberDecorate: (2,),
    Op.ExecutionMode: (1,),
    Op.LoopMerge: (2,),
    Op.ExtInst: (2, 3),
}


def _acyclic_id_operands(module: Module) -> IdOperands:
    """IdOperands whose walk context reaches back to it only weakly.

    IdOperands gives its WalkContext its own bound ``type_of``: a reference cycle that holds
    the whole module until a full collection. Validation drops its analyses right away, so
    here the context calls ``type_of`` through a weak reference instead.
    """
    id_operands = IdOperands(module)
    type_of = weakref.WeakMethod(id_operands.type_of)

    def weak_type_of(value: int) -> int | None:
        method = type_of()
        return None if method is None else method(value)

    id_operands.context.type_of = weak_type_of
    return id_operands


def build_def_use(module: Module) -> DefUse:
    """``DefUse(module)``, faster; raises what the grammar walk raises on a malformed shape."""
    id_operands = _acyclic_id_operands(module)
    walk = id_operands.positions
    defs: dict[int, Instruction] = {}
    users: defaultdict[int, list[Instruction]] = defaultdict(list)
    walked: dict[tuple[int, ...], list[int]] = {}
    for instruction in module.instructions():
        opcode, operands = instruction.opcode, instruction.operands
        at = RESULT_INDEX.get(opcode)
        result = None
        if at is not None:
            result = operands[at]
            defs[result] = instruction
        fixed, id_positions, tail, _result = FAST_SHAPES[opcode]
        length = len(operands)
        positions: range | tuple[int, ...] | list[int]
        if length == fixed or (tail and length > fixed):
            positions = range(fixed) if id_positions is None else id_positions
            if tail == TAIL_IDS:
                for used in operands[fixed:]:
                    if used != result:
                        users[used].append(instruction)
        else:
            deciding = SHAPE_OPERANDS.get(opcode)
            if deciding is None:
                positions = walk(instruction)
            else:
                key = (opcode, length, *[operands[i] for i in deciding if i < length])
                found = walked.get(key)
                if found is None:
                    found = walked[key] = walk(instruction)
                positions = found
        for position in positions:
            used = operands[position]
            if used != result:  # DefUse.used_ids leaves out the instruction's own result
                users[used].append(instruction)
    places: dict[int, tuple[Function, Block]] = {}
    for function in module.functions:
        for block in function.blocks:
            place = (function, block)
            places[id(block.label)] = place
            for instruction in block.instructions:
                places[id(instruction)] = place
    def_use = DefUse.__new__(DefUse)
    def_use.module, def_use.id_operands = module, id_operands
    def_use.defs, def_use.users, def_use.places = defs, users, places
    return def_use
