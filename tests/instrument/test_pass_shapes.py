"""Shapes of descriptor use that real compilers emit beyond glslang's GLSL defaults.

A block chosen in a loop (OpPhi) or by OpSelect (variable pointers; a phi or select of images
is not valid Vulkan SPIR-V, spirv-val says, though glslang's HLSL front end emits them), an
image array of arrays indexed by two access chains, an OpCopyObject of the variable before
the chain (DXC), OpInBoundsAccessChain, indices that are OpSpecConstantOp. Each is a pass
test with CHECK lines and spirv-val; the loop and the split chain also run on lavapipe.
"""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from gpuav.instrument.api import instrument_module, instrument_shader
from gpuav.instrument.descriptor_state import (
    MAX_TRACKED_SETS,
    NO_STATE,
    binding_table_word,
    region_words,
)
from gpuav.instrument.record import ErrorCode
from gpuav.spirv import read
from gpuav.spirv.disassembler import disassemble
from gpuav.spirv.grammar import Op
from tests.harness import Binding, DescriptorSetSpec, VulkanContext
from tests.instrument.filecheck import filecheck
from tests.instrument.util import DEBUG_SET, SHADER_ID, instrumented, origins
from tests.shaders.glsl import compile_glsl, spirv_val
from tests.validate.asm import assemble

HEADER = """
               OpCapability Shader
               OpCapability VariablePointersStorageBuffer
               OpExtension "SPV_KHR_variable_pointers"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 1 1 1
               OpName %bufs "bufs"
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %Block Block
               OpMemberDecorate %Block 0 Offset 0
               OpDecorate %bufs DescriptorSet 0
               OpDecorate %bufs Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
     %uint_6 = OpConstant %uint 6
     %v3uint = OpTypeVector %uint 3
     %ptr_v3 = OpTypePointer Input %v3uint
        %gid = OpVariable %ptr_v3 Input
      %Block = OpTypeStruct %uint
        %arr = OpTypeArray %Block %uint_6
    %ptr_arr = OpTypePointer StorageBuffer %arr
  %ptr_block = OpTypePointer StorageBuffer %Block
   %ptr_uint = OpTypePointer StorageBuffer %uint
       %bufs = OpVariable %ptr_arr StorageBuffer
{globals}
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3uint %gid
          %x = OpCompositeExtract %uint %g 0
          %y = OpCompositeExtract %uint %g 1
{body}
               OpReturn
               OpFunctionEnd
"""


def _asm(body: str, globals_: str = "") -> list[int]:
    return assemble(HEADER.format(body=body, globals=globals_), "vulkan1.1")


def _split_chain_module() -> list[int]:
    """glslang's ``t[g.x][g.y]`` rewritten as two access chains (as spirv-opt or DXC emit)."""
    words = compile_glsl(
        """#version 450
        layout(local_size_x = 1) in;
        layout(set = 0, binding = 0) uniform sampler2D t[2][3];
        layout(set = 0, binding = 1) buffer Out { vec4 v[12]; } o;
        void main() {
            uvec3 g = gl_GlobalInvocationID;
            o.v[g.x * 4 + g.y] = textureLod(t[g.x][g.y], vec2(0.5), 0.0);
        }
        """,
        "comp",
        target_env="vulkan1.1",
    )
    lines = []
    for line in disassemble(words).splitlines():
        if "%t = OpVariable" in line:
            lines.append("%ptr_inner = OpTypePointer UniformConstant %_arr_{{S}}_uint_3")
        match = re.match(r"\s*(%\w+) = OpAccessChain (%\w+) %t (%\w+) (%\w+)$", line)
        if match:
            result, pointer, outer, inner = match.groups()
            lines.append(f"%outer = OpAccessChain %ptr_inner %t {outer}")
            line = f"{result} = OpAccessChain {pointer} %outer {inner}"
        lines.append(line)
    text = "\n".join(lines)
    sampled = re.search(r"%_arr_(\w+)_uint_3 = OpTypeArray", text)
    assert sampled is not None
    return assemble(text.replace("{{S}}", sampled.group(1)), "spv1.3")


def _forgive(vk: VulkanContext, marker: str) -> None:
    """Drop the one validation message these runs cause on purpose (the harness's device does
    not enable variable pointers; arrays of arrays break 04655): any other still fails."""
    vk.messages[:] = [m for m in vk.messages if marker not in m.text]


def _split_chain_instrumented() -> list[int]:
    # Arrays of arrays of descriptors break VUID-StandaloneSpirv-UniformConstant-04655 (spirv-val
    # in a Vulkan environment), yet glslang emits them and lavapipe runs them.
    out = instrument_shader(_split_chain_module(), shader_id=SHADER_ID, descriptor_set=DEBUG_SET)
    spirv_val(out, "spv1.3")  # type: ignore[arg-type]
    return out


def test_array_of_arrays_indexed_by_two_chains() -> None:
    words = _split_chain_module()
    assert instrument_module(read(words), shader_id=1, descriptor_set=7).findings.unchecked == []
    filecheck(
        disassemble(_split_chain_instrumented()),
        """
        CHECK: OpULessThan %bool {{%[0-9]+}} %uint_2
        CHECK: OpULessThan %bool {{%[0-9]+}} %uint_3
        CHECK: OpIMul %uint {{%[0-9]+}} %uint_3
        CHECK-NEXT: OpIAdd %uint
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+}} {{%[0-9]+}} %uint_6
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain %_ptr_UniformConstant__arr_{{[0-9]+}}_uint_3 %t
        CHECK-NEXT: OpAccessChain %_ptr_UniformConstant_{{[0-9]+}} {{%[0-9]+}}
        CHECK-NEXT: OpLoad
        CHECK-NEXT: OpImageSampleExplicitLod
        """,
    )


@pytest.mark.vulkan
def test_array_of_arrays_split_chain_on_lavapipe(vk: VulkanContext) -> None:
    words = _split_chain_instrumented()
    sampler = vk.sampler()
    textures = []
    for i in range(6):
        image = vk.image(1, 1, "R32G32B32A32_SFLOAT")
        image.upload(np.array([[[i + 1.0, 0.0, 0.0, 1.0]]], np.float32))
        textures.append((image.view(), sampler))
    out = vk.buffer(16 * 12)
    debug = vk.debug_buffer(capacity_words=256)
    sets = {
        0: [
            Binding(0, "combined_image_sampler", textures),
            Binding(1, "storage_buffer", [out]),
        ],
        **debug.sets(),
    }
    result = vk.run_compute(words, sets, group_count=(3, 4, 1))
    bad = {(x, y) for x in range(3) for y in range(4) if x >= 2 or y >= 3}
    records = debug.records()
    assert {(r.stage_words[0], r.stage_words[1] & 0xFFFF) for r in records} == bad
    assert len(records) == len(bad)
    assert {(r.descriptor_index, r.array_length) for r in records if r.stage_words[0] == 2} == {
        (6 + y, 6) for y in range(4)
    }
    red = result.buffer(out, np.float32).reshape(12, 4)[:, 0].tolist()
    expected = [0.0] * 12
    for x in range(2):
        for y in range(3):
            expected[x * 4 + y] = x * 3 + y + 1.0
    assert red == expected
    _forgive(vk, "VUID-StandaloneSpirv-UniformConstant-04655")


LOOP = """
      %first = OpAccessChain %ptr_block %bufs %uint_0
               OpBranch %header
     %header = OpLabel
          %p = OpPhi %ptr_block %first %entry %next %body
          %k = OpPhi %uint %uint_0 %entry %k1 %body
       %more = OpULessThan %bool %k %x
               OpLoopMerge %exit %body None
               OpBranchConditional %more %body %exit
       %body = OpLabel
       %next = OpAccessChain %ptr_block %bufs %k
         %k1 = OpIAdd %uint %k %uint_1
               OpBranch %header
       %exit = OpLabel
     %member = OpAccessChain %ptr_uint %p %uint_0
               OpStore %member %x
"""


def test_block_chosen_in_a_loop_is_checked_at_its_consumer() -> None:
    words = _asm(LOOP)
    result = instrument_module(read(words), shader_id=1, descriptor_set=7)
    assert result.findings.unchecked == [] and len(result.findings.accesses) == 1
    filecheck(
        disassemble(instrumented(words, "vulkan1.1")),
        """
        CHECK: OpPhi %_ptr_StorageBuffer__struct_{{[0-9]+}}
        CHECK-NEXT: OpPhi %uint %uint_0 {{%[0-9]+}} {{%[0-9]+}} {{%[0-9]+}}
        CHECK-NEXT: OpPhi %uint %uint_6 {{%[0-9]+}} %uint_6 {{%[0-9]+}}
        CHECK-NEXT: OpPhi %bool %true {{%[0-9]+}} %true {{%[0-9]+}}
        CHECK: OpLoopMerge
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+}} {{%[0-9]+}} {{%[0-9]+}}
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain %_ptr_StorageBuffer_uint {{%[0-9]+}} %uint_0
        CHECK-NEXT: OpStore
        """,
    )


@pytest.mark.vulkan
def test_block_chosen_in_a_loop_on_lavapipe(vk: VulkanContext) -> None:
    words = _asm(LOOP)
    buffers = [vk.buffer(16) for _ in range(6)]
    debug = vk.debug_buffer(capacity_words=256)
    sets = {0: [Binding(0, "storage_buffer", buffers)], **debug.sets()}
    result = vk.run_compute(instrumented(words, "vulkan1.1"), sets, group_count=(9, 1, 1))
    records = sorted(debug.records(), key=lambda r: r.stage_words)
    # The loop ends on bufs[x - 1] (bufs[0] for x = 0): x = 7 and 8 are past the end.
    assert [(r.stage_words[0], r.descriptor_index, r.array_length) for r in records] == [
        (7, 6, 6),
        (8, 7, 6),
    ]
    assert {r.instruction_index for r in records} == set(origins(words, Op.Store))
    assert all(r.error_code is ErrorCode.INDEX_OUT_OF_BOUNDS for r in records)
    # bufs[k] holds k + 1 (x = 0 and 1 both end on bufs[0], in any order).
    assert [int(result.buffer(b)[0]) for b in buffers][1:] == [2, 3, 4, 5, 6]
    _forgive(vk, "(VariablePointersStorageBuffer) was declared")


def test_copy_object_of_the_variable_and_in_bounds_chain() -> None:
    words = _asm(
        """
       %copy = OpCopyObject %ptr_arr %bufs
     %member = OpInBoundsAccessChain %ptr_uint %copy %x %uint_0
               OpStore %member %x
        """
    )
    filecheck(
        disassemble(instrumented(words, "vulkan1.1")),
        """
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+}} {{%[0-9]+}} %uint_6
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpCopyObject %_ptr_StorageBuffer__arr_{{.*}} %bufs
        CHECK-NEXT: OpInBoundsAccessChain %_ptr_StorageBuffer_uint {{%[0-9]+ %[0-9]+}} %uint_0
        CHECK-NEXT: OpStore
        """,
    )


def test_pointer_chosen_by_select_is_checked_with_the_chosen_index() -> None:
    words = _asm(
        """
       %cond = OpULessThan %bool %x %y
          %a = OpAccessChain %ptr_block %bufs %x
          %b = OpAccessChain %ptr_block %bufs %y
          %p = OpSelect %ptr_block %cond %a %b
     %member = OpAccessChain %ptr_uint %p %uint_0
               OpStore %member %x
        """
    )
    result = instrument_module(read(words), shader_id=1, descriptor_set=7)
    assert result.findings.unchecked == [] and len(result.findings.accesses) == 1
    filecheck(
        disassemble(instrumented(words, "vulkan1.1")),
        """
        CHECK: OpSelect %_ptr_StorageBuffer__struct_{{[0-9]+}} {{%[0-9]+}}
        CHECK-NEXT: OpSelect %uint {{%[0-9]+}} {{%[0-9]+}} {{%[0-9]+}}
        CHECK-NEXT: OpSelect %uint {{%[0-9]+}} %uint_6 %uint_6
        CHECK-NEXT: OpSelect %bool {{%[0-9]+}} %true %true
        CHECK: OpFunctionCall %bool %gpuav_check_bounds
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain %_ptr_StorageBuffer_uint {{%[0-9]+}} %uint_0
        CHECK-NEXT: OpStore
        """,
    )


def test_spec_constant_op_index() -> None:
    words = _asm(
        """
     %member = OpAccessChain %ptr_uint %bufs %spec_x %uint_0
               OpStore %member %x
        """,
        """
      %spec = OpSpecConstant %uint 1
    %spec_x = OpSpecConstantOp %uint IAdd %spec %uint_1
        """,
    )
    filecheck(
        disassemble(instrumented(words, "vulkan1.1")),
        """
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+ %[0-9]+}} %uint_6
        CHECK: OpAccessChain %_ptr_StorageBuffer_uint %bufs {{%[0-9]+}} %uint_0
        """,
    )


def test_descriptor_loaded_in_another_block_is_loaded_again_under_the_guard() -> None:
    words = _asm(
        """
          %p = OpAccessChain %ptr_uint %bufs %x %uint_0
          %v = OpLoad %uint %p
       %cond = OpULessThan %bool %x %y
               OpSelectionMerge %merge None
               OpBranchConditional %cond %then %merge
       %then = OpLabel
          %q = OpAccessChain %ptr_uint %bufs %y %uint_0
               OpStore %q %v
               OpBranch %merge
      %merge = OpLabel
        """
    )
    text = disassemble(instrumented(words, "vulkan1.1"))
    assert text.count("OpFunctionCall %bool %gpuav_check_bounds") == 2
    filecheck(
        text,
        """
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+ %[0-9]+}} %uint_6
        CHECK: OpAccessChain %_ptr_StorageBuffer_uint %bufs
        CHECK-NEXT: OpLoad %uint
        CHECK: OpBranchConditional
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+ %[0-9]+}} %uint_6
        CHECK: OpAccessChain %_ptr_StorageBuffer_uint %bufs
        CHECK-NEXT: OpStore
        """,
    )


def test_64_bit_index_is_compared_at_full_width() -> None:
    source = HEADER.format(
        globals_="",
        globals="",
        body="""
       %wide = OpUConvert %ulong %x
     %member = OpAccessChain %ptr_uint %bufs %wide %uint_0
               OpStore %member %x
        """,
    ).replace("OpCapability Shader", "OpCapability Shader\nOpCapability Int64")
    source = source.replace(
        "%uint = OpTypeInt 32 0", "%uint = OpTypeInt 32 0\n%ulong = OpTypeInt 64 0"
    )
    words = assemble(source, "vulkan1.1")
    filecheck(
        disassemble(instrumented(words, "vulkan1.1")),
        """
        CHECK: OpUConvert %uint {{%[0-9]+}}
        CHECK: OpUConvert %ulong %uint_6
        CHECK-NEXT: OpULessThan %bool {{%[0-9]+ %[0-9]+}}
        CHECK: OpFunctionCall %bool %gpuav_check_bounds
        """,
    )


SAMPLED_COMP = """#version 450
#extension GL_ARB_sparse_texture2 : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform sampler2D t[3];
layout(set = 0, binding = 1) buffer Out { vec4 v[2]; } o;
layout(push_constant) uniform P { uint index; } p;
void main() {
    o.v[0] = texelFetch(t[p.index], ivec2(0), 0);
    vec4 texel;
    int code = sparseTextureLodARB(t[p.index], vec2(0.5), 0.0, texel);
    o.v[1] = texel * float(code);
}
"""


def test_image_of_a_sampled_image_and_sparse_sample_are_guarded() -> None:
    words = compile_glsl(SAMPLED_COMP, "comp", target_env="vulkan1.1")
    text = disassemble(instrumented(words, "vulkan1.1"))
    filecheck(
        text,
        """
        CHECK: OpFunctionCall %bool %gpuav_check_bounds
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain
        CHECK-NEXT: OpLoad
        CHECK-NEXT: OpImage
        CHECK-NEXT: OpImageFetch
        CHECK: OpFunctionCall %bool %gpuav_check_bounds
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain
        CHECK-NEXT: OpLoad
        CHECK-NEXT: OpImageSparseSampleExplicitLod %ResType
        CHECK: OpPhi %ResType {{%[0-9]+ %[0-9]+}} %{{\\w+}}
        """,
    )


ARRAY_ARGUMENT_COMP = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform sampler2D t[4];
layout(set = 0, binding = 1) buffer Out { vec4 v[4]; } o;
layout(push_constant) uniform P { uint index; } p;
vec4 pick(sampler2D s[4], uint i) { return textureLod(s[i], vec2(0.5), 0.0); }
void main() { o.v[0] = pick(t, p.index); }
"""


def test_descriptor_array_passed_to_a_function_is_checked_in_the_callee() -> None:
    words = compile_glsl(ARRAY_ARGUMENT_COMP, "comp", target_env="vulkan1.1")
    result = instrument_module(read(words), shader_id=1, descriptor_set=7)
    assert result.findings.unchecked == [] and len(result.findings.accesses) == 1
    filecheck(
        disassemble(instrumented(words, "vulkan1.1")),
        """
        CHECK: %pick_s21_4__u1_ = OpFunction
        CHECK: %s = OpFunctionParameter
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+ %[0-9]+}} %uint_4 %true
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain %_ptr_UniformConstant_{{[0-9]+}} %s
        CHECK-NEXT: OpLoad
        CHECK-NEXT: OpImageSampleExplicitLod
        """,
    )


def test_function_taking_two_different_descriptor_arrays_is_reported_unchecked() -> None:
    source = ARRAY_ARGUMENT_COMP.replace(
        "uniform sampler2D t[4];",
        "uniform sampler2D t[4];\nlayout(set = 0, binding = 2) uniform sampler2D u[4];",
    ).replace("pick(t, p.index); }", "pick(t, p.index) + pick(u, p.index); }")
    words = compile_glsl(source, "comp", target_env="vulkan1.1")
    result = instrument_module(read(words), shader_id=1, descriptor_set=7)
    assert {u.reason for u in result.findings.unchecked} == {
        "function called with different descriptor arrays"
    }


@pytest.mark.vulkan
@pytest.mark.parametrize("index", [3, 4])
def test_descriptor_array_passed_to_a_function_on_lavapipe(vk: VulkanContext, index: int) -> None:
    words = compile_glsl(ARRAY_ARGUMENT_COMP, "comp", target_env="vulkan1.1")
    sampler = vk.sampler()
    textures = []
    for i in range(4):
        image = vk.image(1, 1, "R32G32B32A32_SFLOAT")
        image.upload(np.array([[[i + 1.0, 0.0, 0.0, 1.0]]], np.float32))
        textures.append((image.view(), sampler))
    out = vk.buffer(64)
    debug = vk.debug_buffer(capacity_words=64)
    sets = {
        0: [Binding(0, "combined_image_sampler", textures), Binding(1, "storage_buffer", [out])],
        **debug.sets(),
    }
    push = struct.pack("<I", index)
    result = vk.run_compute(instrumented(words, "vulkan1.1"), sets, push_constants=push)
    value = result.buffer(out, np.float32)[:4].tolist()
    records = debug.records()
    if index < 4:
        assert value == [index + 1.0, 0.0, 0.0, 1.0] and records == []
        return
    assert value == [0.0] * 4
    (record,) = records
    assert (record.descriptor_index, record.array_length) == (4, 4)
    assert record.instruction_index == origins(words, Op.ImageSampleExplicitLod)[0]


@pytest.mark.vulkan
def test_block_chosen_in_a_loop_against_descriptor_state(vk: VulkanContext) -> None:
    """The layer's mode: set and binding ride through the phis to the state lookup, which
    finds the unwritten block 3 and the end of the six."""
    words = _asm(LOOP)
    checked = instrument_shader(
        words, shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    )
    spirv_val(checked, "vulkan1.1")
    state = region_words({0: 6})
    state[state[binding_table_word(0)] + 3] = 0  # bufs[3] never written
    bound = np.array([0] + [NO_STATE] * (MAX_TRACKED_SETS - 1), np.uint32)
    debug = vk.debug_buffer(capacity_words=256)
    ours = DescriptorSetSpec(
        [
            debug.binding(),
            Binding(1, "storage_buffer", [vk.buffer(data=bound)]),
            Binding(2, "storage_buffer", [vk.buffer(data=np.array(state, np.uint32))]),
        ]
    )
    buffers = [vk.buffer(16) for _ in range(6)]
    sets = {0: [Binding(0, "storage_buffer", buffers)], DEBUG_SET: ours}
    vk.run_compute(checked, sets, group_count=(8, 1, 1))
    records = sorted(debug.records(), key=lambda r: r.stage_words)
    assert [(r.stage_words[0], r.error_code, r.descriptor_index) for r in records] == [
        (4, ErrorCode.DESCRIPTOR_UNINITIALIZED, 3),
        (7, ErrorCode.INDEX_OUT_OF_BOUNDS, 6),
    ]
    _forgive(vk, "(VariablePointersStorageBuffer) was declared")
