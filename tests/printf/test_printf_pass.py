"""The printf pass on real glslang modules: spirv-val accepts every module it emits, with the
descriptor checks on or off, through our set or a pushed context address; the DebugPrintf
import and SPV_KHR_non_semantic_info go when nothing else needs them; and printf records
decode back (size word, format string id, argument words, the count of lost lines)."""

from __future__ import annotations

import pytest

from gpuav.instrument import record
from gpuav.instrument.api import instrument_module, instrument_read_module
from gpuav.instrument.descriptor_state import PushConstantAddress
from gpuav.instrument.printf import find_printfs
from gpuav.instrument.printf_arguments import PRINTF_SET
from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage
from gpuav.report.decode import decode_output_buffer
from gpuav.spirv import read
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import decode_string
from tests.printf.stage_shaders import MAINS, source
from tests.shaders.glsl import DebugMode, compile_glsl, spirv_val

DESCRIPTORS_AND_PRINTF = """#version 450
#extension GL_EXT_debug_printf : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform sampler2D textures[4];
layout(set = 0, binding = 1) buffer Out { vec4 values[]; } o;
layout(push_constant) uniform P { uint index; } p;
void main() {
    debugPrintfEXT("index %u of %d", p.index, 4);
    o.values[0] = texture(textures[p.index], vec2(0.5));
}
"""


def _imports(words: list[int]) -> list[str]:
    return [decode_string(i.operands, 1)[0] for i in read(words).ext_inst_imports]


def _extensions(words: list[int]) -> list[str]:
    return [decode_string(i.operands, 0)[0] for i in read(words).extensions]


def _function_names(words: list[int]) -> set[str]:
    module = read(words)
    functions = {function.id for function in module.functions}
    return {
        decode_string(i.operands, 1)[0]
        for i in module.debug_names
        if i.opcode == Op.Name and i.operands[0] in functions
    }


@pytest.mark.parametrize("debug", ["none", "g", "gV"])
@pytest.mark.parametrize("stage", list(MAINS))
@pytest.mark.parametrize("checks", [True, False])
def test_every_stage_shader_validates(stage: str, debug: DebugMode, checks: bool) -> None:
    words = compile_glsl(source(stage), stage, target_env="vulkan1.3", debug=debug)
    assert PRINTF_SET in _imports(words)
    out = instrument_read_module(
        read(words),
        shader_id=3,
        descriptor_set=7,
        descriptor_state=True,
        printf=True,
        checks=checks,
    )
    assert out is not None
    spirv_val(out, "vulkan1.3")
    assert PRINTF_SET not in _imports(out)
    # -gV's NonSemantic.Shader.DebugInfo.100 still needs the extension; nothing else does.
    assert ("SPV_KHR_non_semantic_info" in _extensions(out)) == (debug == "gV")
    printfs = len(find_printfs(read(words)))
    atomics = sum(1 for i in read(out).instructions() if i.opcode == Op.AtomicIAdd)
    assert printfs and atomics >= printfs


@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("by_address", [False, True])
def test_printf_beside_descriptor_checks(checks: bool, by_address: bool) -> None:
    words = compile_glsl(DESCRIPTORS_AND_PRINTF, "comp", target_env="vulkan1.2")
    address = PushConstantAddress(8) if by_address else None
    result = instrument_module(
        read(words),
        shader_id=9,
        descriptor_set=1,
        descriptor_state=True,
        context_address=address,
        printf=True,
        checks=checks,
    )
    # An entry function the layer can decide is kept twice, its printf in both copies.
    copies = 1 + len(result.entry_verdicts)
    assert [site.words for site in result.printf_sites] == [2] * copies
    assert bool(result.findings.accesses) == checks
    from gpuav.spirv import write

    out = write(result.module)
    spirv_val(out, "vulkan1.2")
    names = _function_names(out)
    assert ("gpuav_check_bounds" in names) == checks
    # One output block: the pass reuses the checks' variable (or context) instead of a second.
    variables = [
        i for i in read(out).debug_names if decode_string(i.operands, 1)[0] == "gpuav_output"
    ]
    assert len(variables) == (0 if by_address else 1)


def test_module_with_nothing_to_do_is_unchanged() -> None:
    words = compile_glsl(
        "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n", "comp", debug="g"
    )
    out = instrument_read_module(read(words), shader_id=1, descriptor_set=0, printf=True)
    assert out is None


def test_printf_records_decode_with_the_lost_count() -> None:
    printf = ErrorRecord(4, 77, Stage.COMPUTE, (3, 0), ErrorCode.DEBUG_PRINTF, 12, None, (5, 6, 7))
    error = ErrorRecord(4, 80, Stage.COMPUTE, (1, 0), ErrorCode.INDEX_OUT_OF_BOUNDS, 9, 4)
    data = printf.encode() + error.encode() + printf.encode()
    assert printf.encode()[record.RECORD_SIZE] == record.COMMON_WORDS + 1 + 3
    capacity = len(data) + 5
    words = [len(data), *data, *[0] * (capacity - len(data) - 1), 42]
    decoded = decode_output_buffer(words, record.RESERVED_TAIL_WORDS)
    assert decoded.records == (error,)
    assert decoded.printf_records == (printf, printf)
    assert decoded.printf_dropped == 42
    assert decoded.diagnostics == ()


NARROW = """#version 450
#extension GL_EXT_debug_printf : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 1) in;
layout(push_constant) uniform P { uint value; } p;
void main() {
    int16_t small = int16_t(p.value) - int16_t(7);
    float16_t half_value = float16_t(p.value) * float16_t(0.5);
    uint8_t byte = uint8_t(p.value);
    debugPrintfEXT("%d %f %u %v2d %v3f", small, half_value, byte, i16vec2(small, 3),
                   f16vec3(half_value, 1.0, 2.0));
}
"""


def test_narrow_arguments_are_widened_to_a_word_each() -> None:
    words = compile_glsl(NARROW, "comp", target_env="vulkan1.2")
    result = instrument_module(
        read(words), shader_id=2, descriptor_set=3, printf=True, checks=False
    )
    # int16, float16, uint8, two int16, three float16: one word per component.
    assert [site.words for site in result.printf_sites] == [1 + 1 + 1 + 2 + 3]
    from gpuav.spirv import write

    spirv_val(write(result.module), "vulkan1.2")
