"""Decorations by target id: the questions passes and validators ask (set, binding, ...)."""

from __future__ import annotations

from collections import defaultdict

from gpuav.spirv.grammar import Decoration, Op
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Module


class Decorations:
    """Indexes OpDecorate/OpMemberDecorate (and decoration groups) of a module."""

    def __init__(self, module: Module) -> None:
        self.module = module
        # target id -> [(decoration, parameter words)]
        self.by_target: defaultdict[int, list[tuple[int, list[int]]]] = defaultdict(list)
        # (struct id, member) -> [(decoration, parameter words)]
        self.by_member: defaultdict[tuple[int, int], list[tuple[int, list[int]]]] = defaultdict(
            list
        )
        for instruction in module.annotations:
            self.index(instruction)

    def index(self, instruction: Instruction) -> None:
        """Add one annotation; passes call this for the decorations they emit."""
        operands = instruction.operands
        opcode = instruction.opcode
        if opcode in (Op.Decorate, Op.DecorateId, Op.DecorateString):
            self.by_target[operands[0]].append((operands[1], operands[2:]))
        elif opcode in (Op.MemberDecorate, Op.MemberDecorateString):
            self.by_member[operands[0], operands[1]].append((operands[2], operands[3:]))
        elif opcode == Op.GroupDecorate:
            for target in operands[1:]:
                self.by_target[target].extend(self.by_target.get(operands[0], []))
        elif opcode == Op.GroupMemberDecorate:
            pairs = operands[1:]
            for at in range(0, len(pairs) - 1, 2):
                self.by_member[pairs[at], pairs[at + 1]].extend(self.by_target.get(operands[0], []))

    def of(self, target: int) -> list[tuple[int, list[int]]]:
        return self.by_target.get(target, [])

    def has(self, target: int, decoration: int) -> bool:
        return any(found == decoration for found, _ in self.by_target.get(target, []))

    def value(self, target: int, decoration: int) -> int | None:
        """The first parameter word of a decoration on ``target`` (Binding, Location, ...)."""
        for found, parameters in self.by_target.get(target, []):
            if found == decoration and parameters:
                return parameters[0]
        return None

    def member_value(self, struct: int, member: int, decoration: int) -> int | None:
        for found, parameters in self.by_member.get((struct, member), []):
            if found == decoration and parameters:
                return parameters[0]
        return None

    def member_has(self, struct: int, member: int, decoration: int) -> bool:
        return any(found == decoration for found, _ in self.by_member.get((struct, member), []))

    def members_with(self, struct: int, decoration: int) -> list[int]:
        return sorted(
            member
            for (target, member), entries in self.by_member.items()
            if target == struct and any(found == decoration for found, _ in entries)
        )

    def descriptor_set(self, variable: int) -> int | None:
        return self.value(variable, Decoration.DescriptorSet)

    def binding(self, variable: int) -> int | None:
        return self.value(variable, Decoration.Binding)

    def location(self, variable: int) -> int | None:
        return self.value(variable, Decoration.Location)

    def builtin(self, target: int) -> int | None:
        return self.value(target, Decoration.BuiltIn)

    def is_block(self, struct: int) -> bool:
        return self.has(struct, Decoration.Block)

    def is_buffer_block(self, struct: int) -> bool:
        return self.has(struct, Decoration.BufferBlock)
