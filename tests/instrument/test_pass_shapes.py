"""Shapes of descriptor use that real compilers emit beyond glslang's GLSL defaults.

A block chosen in a loop (OpPhi) or by OpSelect (variable pointers; a phi or select of images
is not valid Vulkan SPIR-V, spirv-val says, though glslang's HLSL front end emits them), an
image array of arrays indexed by two access chains, an OpCopyObject of the variable before
the chain (DXC), OpInBoundsAccessChain, OpSpecConstantOp and 64-bit indices, hoisted loads,
OpImage and sparse sampling, a descriptor array passed to a function. Each is a pass test
with CHECK lines and spirv-val; ``test_execution_shapes`` runs them on lavapipe.
"""

from __future__ import annotations

import re

from gpuav.instrument.api import instrument_module, instrument_shader
from gpuav.spirv import read
from gpuav.spirv.disassembler import disassemble
from tests.instrument.filecheck import filecheck
from tests.instrument.util import DEBUG_SET, SHADER_ID, instrumented
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


def asm(body: str, globals_: str = "") -> list[int]:
    return assemble(HEADER.format(body=body, globals=globals_), "vulkan1.1")


def split_chain_module() -> list[int]:
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


def split_chain_instrumented() -> list[int]:
    # Arrays of arrays of descriptors break VUID-StandaloneSpirv-UniformConstant-04655 (spirv-val
    # in a Vulkan environment), yet glslang emits them and lavapipe runs them.
    out = instrument_shader(split_chain_module(), shader_id=SHADER_ID, descriptor_set=DEBUG_SET)
    spirv_val(out, "spv1.3")  # type: ignore[arg-type]
    return out


def test_array_of_arrays_indexed_by_two_chains() -> None:
    words = split_chain_module()
    assert instrument_module(read(words), shader_id=1, descriptor_set=7).findings.unchecked == []
    filecheck(
        disassemble(split_chain_instrumented()),
        """
        CHECK: OpULessThan %bool {{%[0-9]+}} %uint_2
        CHECK: OpULessThan %bool {{%[0-9]+}} %uint_3
        CHECK: OpIMul %uint {{%[0-9]+}} %uint_3
        CHECK-NEXT: OpIAdd %uint
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+}} {{%[0-9]+}} %uint_6
        CHECK-NEXT: OpUMod %uint {{%[0-9]+}} %uint_2
        CHECK-NEXT: OpUMod %uint {{%[0-9]+}} %uint_3
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain %_ptr_UniformConstant__arr_{{[0-9]+}}_uint_3 %t {{%[0-9]+}}
        CHECK-NEXT: OpAccessChain %_ptr_UniformConstant_{{[0-9]+}} {{%[0-9]+ %[0-9]+}}
        CHECK-NEXT: OpLoad
        CHECK-NEXT: OpImageSampleExplicitLod
        """,
    )


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
    words = asm(LOOP)
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


def test_copy_object_of_the_variable_and_in_bounds_chain() -> None:
    words = asm(
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
        CHECK-NEXT: OpUMod %uint {{%[0-9]+}} %uint_6
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpCopyObject %_ptr_StorageBuffer__arr_{{.*}} %bufs
        CHECK-NEXT: OpInBoundsAccessChain %_ptr_StorageBuffer_uint {{%[0-9]+ %[0-9]+}} %uint_0
        CHECK-NEXT: OpStore
        """,
    )


SELECT = """
       %cond = OpULessThan %bool %x %y
          %a = OpAccessChain %ptr_block %bufs %x
          %b = OpAccessChain %ptr_block %bufs %y
          %p = OpSelect %ptr_block %cond %a %b
     %member = OpAccessChain %ptr_uint %p %uint_0
               OpStore %member %x
"""


def test_pointer_chosen_by_select_is_checked_with_the_chosen_index() -> None:
    words = asm(SELECT)
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
    words = asm(
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
    words = asm(
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
        CHECK-NEXT: OpUMod %uint {{%[0-9]+}} %uint_3
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain
        CHECK-NEXT: OpLoad
        CHECK-NEXT: OpImage
        CHECK-NEXT: OpImageFetch
        CHECK: OpFunctionCall %bool %gpuav_check_bounds
        CHECK-NEXT: OpUMod %uint {{%[0-9]+}} %uint_3
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
        CHECK-NEXT: OpUMod %uint {{%[0-9]+}} %uint_4
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain %_ptr_UniformConstant_{{[0-9]+}} %s {{%[0-9]+}}
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


def test_ptr_access_chain_on_a_selected_block_moves_the_chosen_index() -> None:
    body = SELECT.replace(
        "%member = OpAccessChain %ptr_uint %p %uint_0",
        "%moved = OpPtrAccessChain %ptr_block %p %uint_1\n"
        "%member = OpAccessChain %ptr_uint %moved %uint_0",
    )
    stride = "OpDecorate %bufs Binding 0\nOpDecorate %ptr_block ArrayStride 16"
    source = HEADER.replace("OpDecorate %bufs Binding 0", stride)
    words = assemble(source.format(body=body, globals=""), "vulkan1.1")
    filecheck(
        disassemble(instrumented(words, "vulkan1.1")),
        """
        CHECK: [[FLAT:%[0-9]+]] = OpSelect %uint
        CHECK: [[MOVED:%[0-9]+]] = OpIAdd %uint [[FLAT]] %uint_1
        CHECK-NEXT: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+}} [[MOVED]] {{%[0-9]+}}
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpPtrAccessChain
        """.replace("[[FLAT:%[0-9]+]]", "{{%[0-9]+}}")
        .replace("[[MOVED:%[0-9]+]]", "{{%[0-9]+}}")
        .replace("[[FLAT]]", "{{%[0-9]+}}")
        .replace("[[MOVED]]", "{{%[0-9]+}}"),
    )
