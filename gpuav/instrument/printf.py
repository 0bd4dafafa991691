"""The printf pass: every ``NonSemantic.DebugPrintf`` instruction becomes a printf record.

``debugPrintfEXT("x = %d", x)`` compiles to ``OpExtInst %void %printf_set 1 %format %x``,
which drivers ignore. In its place the pass emits code that claims the record's words with
an atomic add on the output block's ``DataWrittenLength`` and, when the whole record fits
before the block's reserved last word, writes ``[size, shader id, instruction index, stage,
stage words, DEBUG_PRINTF, format string id, argument words...]`` (``gpuav.instrument.record``;
the words of each argument come from ``printf_arguments``). A line that does not fit adds one
to that last word, so the host can say exactly how many lines were lost. The instruction is
then removed, with the import and ``SPV_KHR_non_semantic_info`` once nothing else needs them.

The pass runs after the descriptor checks (whose output block, stage words and, in address
mode, resources it reuses) or alone, with the checks off or in a module without descriptors.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuav.instrument import record
from gpuav.instrument.descriptor_state import ContextAddressSource, PushConstantAddress
from gpuav.instrument.helpers import Helpers, declare_stage_info
from gpuav.instrument.printf_arguments import (
    FIRST_ARGUMENT_OPERAND,
    FORMAT_OPERAND,
    NON_SEMANTIC_PREFIX,
    ArgumentShape,
    argument_shape,
    is_printf,
    printf_set_ids,
)
from gpuav.instrument.resources import (
    AddressResources,
    Resources,
    SetResources,
    list_in_interfaces,
)
from gpuav.instrument.shader_index import ShaderIndex
from gpuav.instrument.stage_words import StageWords, check_supported
from gpuav.instrument.unsupported import DescriptorBoundsUnsupported
from gpuav.report.printf_format import ScalarKind
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import (
    RESULT_INDEX,
    TYPE_INDEX,
    Decoration,
    MemoryModel,
    Op,
    Scope,
    StorageClass,
)
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.spirv.module import Block, Function, Module

NON_SEMANTIC_EXTENSION = "SPV_KHR_non_semantic_info"


@dataclass(frozen=True)
class PrintfSite:
    """One debugPrintfEXT the pass replaced."""

    instruction_index: int
    format_string: int  # OpString id
    words: int  # argument words its record carries


class _DeclaredOutput:
    """The output block the descriptor pass's copied helpers declared, reached as they do."""

    def __init__(self, builder: Builder, variable: int, storage_class: int) -> None:
        self.builder = builder
        self.output = variable
        self.storage_class = storage_class

    def begin(self) -> None:
        """Nothing to load: the variable is a global."""

    def _pointer(self, *indices: int) -> int:
        builder = self.builder
        pointer = builder.type_pointer(self.storage_class, builder.type_int(32, False))
        return builder.op(Op.AccessChain, pointer, self.output, *indices)

    def length_pointer(self) -> int:
        return self._pointer(self.builder.constant_uint(record.WRITTEN_LENGTH_WORD))

    def data_pointer(self, index: int) -> int:
        return self._pointer(self.builder.constant_uint(record.DATA_FIRST_WORD), index)

    def capacity(self) -> int:
        uint = self.builder.type_int(32, False)
        return self.builder.op(Op.ArrayLength, uint, self.output, record.DATA_FIRST_WORD)

    def store(self, pointer: int, value: int) -> None:
        self.builder.op_void(Op.Store, pointer, value)


class _DeclaredAddress(AddressResources):
    """The context address the descriptor pass's helpers already load (address mode): its
    push-constant member or specialization constants are found, not declared again."""

    def _declare_source(self, source: ContextAddressSource) -> tuple[int, int]:
        module = self.builder.module
        decorations = module.annotations
        if isinstance(source, PushConstantAddress):
            for variable in module.globals:
                if (
                    variable.opcode != Op.Variable
                    or variable.operands[2] != StorageClass.PushConstant
                ):
                    continue
                pointer = next(g for g in module.globals if g.result_id == variable.operands[0])
                for decoration in decorations:
                    if (
                        decoration.opcode == Op.MemberDecorate
                        and decoration.operands[0] == pointer.operands[2]
                        and decoration.operands[2:] == [Decoration.Offset, source.offset]
                    ):
                        return variable.operands[1], decoration.operands[1]
            raise DescriptorBoundsUnsupported("the context address push constant is missing")
        ids = {
            decoration.operands[2]: decoration.operands[0]
            for decoration in decorations
            if decoration.opcode == Op.Decorate and decoration.operands[1] == Decoration.SpecId
        }
        low, high = ids.get(source.low_constant_id), ids.get(source.high_constant_id)
        if low is None or high is None:
            raise DescriptorBoundsUnsupported("the context address constants are missing")
        return low, high


Output = Resources | _DeclaredOutput


def find_printfs(module: Module) -> list[tuple[Function, Block, Instruction]]:
    """Every DebugPrintf instruction, in module order (the pure find phase)."""
    sets = printf_set_ids(module.ext_inst_imports)
    if not sets:
        return []
    return [
        (function, block, instruction)
        for function in module.functions
        for block in function.blocks
        for instruction in block.instructions
        if is_printf(instruction, sets)
    ]


def instrument_printf(
    module: Module,
    *,
    shader_id: int,
    descriptor_set: int,
    context_address: ContextAddressSource | None = None,
    helpers: Helpers | None = None,
) -> list[PrintfSite]:
    """Replace every DebugPrintf of ``module`` in place; ``helpers``: those the descriptor
    pass already put in the module (their output block and stage words are reused)."""
    found = find_printfs(module)
    if not found:
        return []
    for entry_point in module.entry_points:
        check_supported(entry_point)
    index = ShaderIndex(module, set())
    builder = Builder(module, index)
    types = _value_types(module)
    if helpers is None:
        stage_info = declare_stage_info(builder)
        output: Output
        if context_address is None:
            output = SetResources(builder, descriptor_set, with_state=False)
        else:
            output = AddressResources(builder, context_address)
        variables = [*output.variables, stage_info]
    else:
        stage_info = helpers.stage_info
        if context_address is None:
            output = _declared_output(builder, helpers.variables[0])
        else:
            output = _DeclaredAddress(builder, context_address)
        variables = []
    writer = _PrintfWriter(builder, output, shader_id & 0xFFFF_FFFF, stage_info)
    sites = []
    for _function, _block, instruction in reversed(found):
        place = index.place(instruction)
        if place is None:
            raise DescriptorBoundsUnsupported("a DebugPrintf instruction outside any block")
        function, block = place
        if instruction.origin is None:
            raise DescriptorBoundsUnsupported("a DebugPrintf instruction without an origin")
        shapes = [
            argument_shape(argument, index.defs, types)
            for argument in instruction.operands[FIRST_ARGUMENT_OPERAND:]
        ]
        words = sum(shape.words for shape in shapes)
        if record.COMMON_WORDS + 1 + words > record.MAX_PRINTF_RECORD_WORDS:
            raise DescriptorBoundsUnsupported(
                f"the debugPrintfEXT at instruction {instruction.origin} has {words} words of "
                f"arguments, more than a record holds"
            )
        builder.position_before(instruction, block, function)
        writer.write(instruction, shapes)
        _remove(module, instruction)
        sites.append(PrintfSite(instruction.origin, instruction.operands[FORMAT_OPERAND], words))
    _drop_unused_imports(module)
    if helpers is None:
        stage_words = StageWords(builder, Decorations(module), stage_info)
        functions = {function.id: function for function in module.functions}
        filled: dict[int, int] = {}  # function -> execution model
        for entry_point in module.entry_points:
            model, function_id = entry_point.operands[0], entry_point.operands[1]
            entry = functions.get(function_id)
            if entry is None:
                raise DescriptorBoundsUnsupported("an entry point function is missing")
            if function_id in filled:  # its stage words are stored already
                if filled[function_id] != model:
                    raise DescriptorBoundsUnsupported(
                        f"function %{function_id} is the entry point of two stages"
                    )
                continue
            filled[function_id] = model
            stage_words.fill(entry_point, entry)
    list_in_interfaces(builder, variables)
    return sites[::-1]


class _PrintfWriter:
    """Emits, at the builder's insert point, the code that writes one printf record."""

    def __init__(self, builder: Builder, output: Output, shader_id: int, stage_info: int):
        self.builder = builder
        self.output = output
        self.shader_id = shader_id
        self.stage_info = stage_info
        vulkan_model = any(i.operands[1] == MemoryModel.Vulkan for i in builder.module.memory_model)
        self.scope = Scope.QueueFamily if vulkan_model else Scope.Device  # as record_writer

    def write(self, instruction: Instruction, shapes: list[ArgumentShape]) -> None:
        builder = self.builder
        output = self.output
        uint = builder.type_int(32, False)
        bool_ = builder.type_bool()
        arguments = instruction.operands[FIRST_ARGUMENT_OPERAND:]
        words: list[int] = []
        for argument, shape in zip(arguments, shapes, strict=True):
            words += self._argument_words(argument, shape)
        size = record.COMMON_WORDS + 1 + len(words)
        output.begin()
        info = builder.op(Op.Load, builder.type_vector(uint, 3), self.stage_info)
        stage, word0, word1 = (builder.op(Op.CompositeExtract, uint, info, k) for k in range(3))
        size_id = builder.constant_uint(size)
        scope = builder.constant_uint(self.scope)
        relaxed = builder.constant_uint(0)
        start = builder.op(Op.AtomicIAdd, uint, output.length_pointer(), scope, relaxed, size_id)
        # The last word of Data counts lost lines: records end before it.
        capacity = output.capacity()
        has_tail = builder.op(
            Op.UGreaterThanEqual, bool_, capacity, builder.constant_uint(record.RESERVED_TAIL_WORDS)
        )
        usable = builder.op(
            Op.ISub, uint, capacity, builder.constant_uint(record.RESERVED_TAIL_WORDS)
        )
        room = builder.op(Op.ISub, uint, usable, start)
        fits = builder.op(
            Op.LogicalAnd,
            bool_,
            builder.op(
                Op.LogicalAnd, bool_, has_tail, builder.op(Op.ULessThanEqual, bool_, start, usable)
            ),
            builder.op(Op.ULessThanEqual, bool_, size_id, room),
        )
        values = [
            size_id,
            builder.constant_uint(self.shader_id),
            builder.constant_uint(instruction.origin or 0),
            stage,
            word0,
            word1,
            builder.constant_uint(record.ErrorCode.DEBUG_PRINTF),
            builder.constant_uint(instruction.operands[FORMAT_OPERAND]),
            *words,
        ]
        with builder.if_else(fits) as (then_branch, else_branch):
            with then_branch:
                for offset, value in enumerate(values):
                    at = (
                        start
                        if not offset
                        else builder.op(Op.IAdd, uint, start, builder.constant_uint(offset))
                    )
                    output.store(output.data_pointer(at), value)
            with else_branch, builder.if_then(has_tail):
                builder.op(
                    Op.AtomicIAdd,
                    uint,
                    output.data_pointer(usable),
                    scope,
                    relaxed,
                    builder.constant_uint(1),
                )

    def _argument_words(self, argument: int, shape: ArgumentShape) -> list[int]:
        words: list[int] = []
        for component in range(shape.components):
            value = argument
            if shape.components > 1:
                value = self.builder.op(
                    Op.CompositeExtract, self._scalar_type(shape), argument, component
                )
            words += self._scalar_words(value, shape)
        return words

    def _scalar_type(self, shape: ArgumentShape) -> int:
        builder = self.builder
        if shape.kind is ScalarKind.BOOL:
            return builder.type_bool()
        if shape.kind is ScalarKind.FLOAT:
            return builder.type_float(shape.source_width)
        return builder.type_int(shape.source_width, shape.kind is ScalarKind.SIGNED)

    def _scalar_words(self, value: int, shape: ArgumentShape) -> list[int]:
        builder = self.builder
        uint = builder.type_int(32, False)
        kind, width = shape.kind, shape.source_width
        if kind is ScalarKind.BOOL:
            one, zero = builder.constant_uint(1), builder.constant_uint(0)
            return [builder.op(Op.Select, uint, value, one, zero)]
        if width == 64:
            pair = builder.op(Op.Bitcast, builder.type_vector(uint, 2), value)
            return [builder.op(Op.CompositeExtract, uint, pair, k) for k in range(2)]
        if width < 32:
            if kind is ScalarKind.FLOAT:
                value = builder.op(Op.FConvert, builder.type_float(32), value)
            elif kind is ScalarKind.SIGNED:
                value = builder.op(Op.SConvert, builder.type_int(32, True), value)
            else:
                value = builder.op(Op.UConvert, uint, value)
        if kind is not ScalarKind.UNSIGNED:
            value = builder.op(Op.Bitcast, uint, value)
        return [value]


def _declared_output(builder: Builder, variable: int) -> _DeclaredOutput:
    definition = next(g for g in builder.module.globals if g.result_id == variable)
    return _DeclaredOutput(builder, variable, definition.operands[2])


def _value_types(module: Module) -> dict[int, int]:
    """Type id of every value id (globals and function code)."""
    types: dict[int, int] = {}
    for instruction in module.instructions():
        at = TYPE_INDEX.get(instruction.opcode)
        result_at = RESULT_INDEX.get(instruction.opcode)
        if at is not None and result_at is not None:
            types[instruction.operands[result_at]] = instruction.operands[at]
    return types


def _remove(module: Module, instruction: Instruction) -> None:
    """Take the instruction out of whichever block it is in now (the write split its block)."""
    for function in module.functions:
        for block in function.blocks:
            for at, candidate in enumerate(block.instructions):
                if candidate is instruction:
                    del block.instructions[at]
                    return


def _drop_unused_imports(module: Module) -> None:
    """The DebugPrintf import once no instruction uses it, and the non-semantic extension once
    no NonSemantic.* import is left (SPIR-V 1.6 has it in core, so nothing else needs it)."""
    sets = printf_set_ids(module.ext_inst_imports)
    used = {
        instruction.operands[2]
        for instruction in module.instructions()
        if instruction.opcode == Op.ExtInst and instruction.operands[2] in sets
    }
    module.ext_inst_imports = [
        i for i in module.ext_inst_imports if i.operands[0] not in sets - used
    ]
    gone = sets - used
    module.debug_names = [i for i in module.debug_names if i.operands[0] not in gone]
    if not any(
        decode_string(i.operands, 1)[0].startswith(NON_SEMANTIC_PREFIX)
        for i in module.ext_inst_imports
    ):
        module.extensions = [
            i
            for i in module.extensions
            if decode_string(i.operands, 0)[0] != NON_SEMANTIC_EXTENSION
        ]
