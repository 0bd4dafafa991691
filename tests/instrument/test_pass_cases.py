"""Pass tests for the special cases, as assembly or GLSL with CHECK lines.

OpPtrAccessChain on a block pointer (seed 003), constant indices inside and outside the
array, specialization-constant lengths, SPIR-V versions (BufferBlock before 1.3, full
interface lists from 1.4), the Vulkan memory model, several entry points, and the shaders
the pass declines.
"""

from __future__ import annotations

import pytest

from gpuav.instrument.api import instrument_module, instrument_shader
from gpuav.instrument.descriptor_state import BOUND_AREA_WORDS, PushConstantAddress
from gpuav.instrument.unsupported import DescriptorBoundsUnsupported
from gpuav.spirv import read
from gpuav.spirv.disassembler import disassemble
from tests.instrument.filecheck import filecheck
from tests.instrument.util import instrumented
from tests.shaders.glsl import TargetEnv, compile_glsl, spirv_val
from tests.validate.asm import assemble

BLOCK_ARRAY = """
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
               OpDecorate %ptr_block ArrayStride 16
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_3 = OpConstant %uint 3
     %uint_4 = OpConstant %uint 4
     %uint_9 = OpConstant %uint 9
     %v3uint = OpTypeVector %uint 3
     %ptr_v3 = OpTypePointer Input %v3uint
        %gid = OpVariable %ptr_v3 Input
      %Block = OpTypeStruct %uint
        %arr = OpTypeArray %Block %uint_4
    %ptr_arr = OpTypePointer StorageBuffer %arr
  %ptr_block = OpTypePointer StorageBuffer %Block
   %ptr_uint = OpTypePointer StorageBuffer %uint
       %bufs = OpVariable %ptr_arr StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3uint %gid
          %x = OpCompositeExtract %uint %g 0
{body}
               OpReturn
               OpFunctionEnd
"""


def _asm(body: str) -> list[int]:
    return assemble(BLOCK_ARRAY.format(body=body), "vulkan1.1")


def test_ptr_access_chain_moves_the_descriptor_index() -> None:
    words = _asm(
        """
       %base = OpAccessChain %ptr_block %bufs %uint_1
      %moved = OpPtrAccessChain %ptr_block %base %x
     %member = OpAccessChain %ptr_uint %moved %uint_0
               OpStore %member %x
        """
    )
    text = disassemble(instrumented(words, "vulkan1.1"))
    filecheck(
        text,
        """
        CHECK: [[SUM:%[0-9]+]] = OpIAdd %uint %uint_1 %
        CHECK-NOT: OpULessThan
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+}} {{%[0-9]+}} %uint_4 %true
        CHECK-NEXT: OpIAdd %uint %uint_1 %
        CHECK-NEXT: OpUMod %uint {{%[0-9]+}} %uint_4
        CHECK-NEXT: OpISub %uint {{%[0-9]+}} %uint_1
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain %_ptr_StorageBuffer__struct_{{[0-9]+}} %bufs %uint_1
        CHECK-NEXT: OpPtrAccessChain {{%[_a-zA-Z0-9]+}} {{%[0-9]+}} {{%[0-9]+}}
        CHECK-NEXT: OpAccessChain %_ptr_StorageBuffer_uint
        CHECK-NEXT: OpStore
        """.replace("[[SUM:%[0-9]+]]", "{{%[0-9]+}}"),
    )


def test_constant_ptr_access_chain_inside_needs_no_check() -> None:
    words = _asm(
        """
       %base = OpAccessChain %ptr_block %bufs %uint_1
      %moved = OpPtrAccessChain %ptr_block %base %uint_1
     %member = OpAccessChain %ptr_uint %moved %uint_0
               OpStore %member %x
        """
    )
    assert instrument_shader(words, shader_id=1, descriptor_set=3) == words


def test_constant_index_outside_the_array_is_a_static_finding_and_guarded() -> None:
    words = _asm(
        """
     %member = OpAccessChain %ptr_uint %bufs %uint_9 %uint_0
               OpStore %member %x
        """
    )
    result = instrument_module(read(words), shader_id=1, descriptor_set=3)
    (finding,) = result.static_findings
    assert finding.lookups[0].static_index == 9 and finding.lookups[0].static_length == 4
    text = disassemble(instrumented(words, "vulkan1.1"))
    filecheck(
        text,
        """
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+}} %uint_9 %uint_4 %true
        CHECK-NEXT: OpUMod %uint %uint_9 %uint_4
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain %_ptr_StorageBuffer_uint %bufs {{%[0-9]+}} %uint_0
        """,
    )


def test_constant_index_inside_the_array_needs_no_check() -> None:
    words = compile_glsl(
        """#version 450
        layout(set = 0, binding = 0) uniform sampler2D t[4];
        layout(location = 0) out vec4 color;
        void main() { color = texture(t[3], vec2(0.5)); }
        """,
        "frag",
    )
    assert instrument_shader(words, shader_id=1, descriptor_set=3) == words


def test_specialization_constant_length_is_compared_at_run_time() -> None:
    words = compile_glsl(
        """#version 450
        layout(constant_id = 0) const int COUNT = 3;
        layout(set = 0, binding = 0) uniform sampler2D t[COUNT];
        layout(location = 0) flat in int k;
        layout(location = 0) out vec4 color;
        void main() { color = texture(t[k], vec2(0.5)) + texture(t[0], vec2(0.5)); }
        """,
        "frag",
    )
    text = disassemble(instrumented(words, "vulkan1.1"))
    filecheck(
        text,
        """
        CHECK: %COUNT = OpSpecConstant %int 3
        CHECK: [[BITS:%[0-9]+]] = OpBitcast %uint %COUNT
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+}} {{%[0-9]+}} [[BITS]] %true
        CHECK: OpImageSampleImplicitLod
        """.replace("[[BITS:%[0-9]+]]", "{{%[0-9]+}}").replace("[[BITS]]", "{{%[0-9]+}}"),
    )
    assert text.count("OpFunctionCall %bool %gpuav_check_bounds") == 1  # t[0] is always valid


SAMPLE_FRAG = """#version 450
layout(set = 0, binding = 0) uniform sampler2D t[4];
layout(set = 0, binding = 1) buffer B { uint v; } b[2];
layout(location = 0) flat in int k;
layout(location = 0) out vec4 color;
void main() { color = texture(t[k], vec2(0.5)); b[k].v = 1u; }
"""


def test_spirv_1_0_uses_a_buffer_block_in_the_uniform_class() -> None:
    words = compile_glsl(SAMPLE_FRAG, "frag", target_env="vulkan1.0")
    filecheck(
        disassemble(instrumented(words, "vulkan1.0")),
        """
        CHECK: OpEntryPoint Fragment %main "main" %color %k %gl_FragCoord
        CHECK: OpDecorate %gpuav_output_block BufferBlock
        CHECK: OpDecorate %gpuav_output DescriptorSet 7
        CHECK: OpDecorate %gpuav_output Binding 0
        CHECK: %gpuav_output = OpVariable %_ptr_Uniform_gpuav_output_block Uniform
        CHECK: OpAtomicIAdd %uint {{%[0-9]+}} %uint_1 %uint_0
        """,
    )


def test_spirv_1_4_lists_every_global_in_the_interface() -> None:
    words = compile_glsl(SAMPLE_FRAG, "frag", target_env="vulkan1.3")
    filecheck(
        disassemble(instrumented(words, "vulkan1.3")),
        """
        CHECK: OpEntryPoint Fragment %main "main" {{.*}}%gl_FragCoord %gpuav_output %gpuav_stage_
        CHECK: OpDecorate %gpuav_output_block Block
        CHECK: %gpuav_output = OpVariable %_ptr_StorageBuffer_gpuav_output_block StorageBuffer
        """,
    )


def test_vulkan_memory_model_uses_queue_family_scope() -> None:
    words = compile_glsl(
        """#version 460
        #extension GL_KHR_memory_scope_semantics : require
        #pragma use_vulkan_memory_model
        layout(local_size_x = 1) in;
        layout(set = 0, binding = 0) buffer B { uint v; } b[2];
        void main() { b[gl_GlobalInvocationID.x].v = 1u; }
        """,
        "comp",
        target_env="vulkan1.3",
    )
    filecheck(
        disassemble(instrumented(words, "vulkan1.3")),
        """
        CHECK: OpMemoryModel Logical Vulkan
        CHECK: OpAtomicIAdd %uint {{%[0-9]+}} %uint_5 %uint_0
        """,
    )


TWO_STAGES = """
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint Vertex %vs "vs" %index %pos
               OpEntryPoint Fragment %fs "fs" %index_in %color
               OpExecutionMode %fs OriginUpperLeft
               OpName %ubos "ubos"
               OpName %vs "vs"
               OpName %fs "fs"
               OpName %shared "shared"
               OpName %k "k"
               OpName %index "index"
               OpName %index_in "index_in"
               OpName %pos "pos"
               OpName %color "color"
               OpDecorate %index Location 0
               OpDecorate %index_in Location 0
               OpDecorate %index_in Flat
               OpDecorate %color Location 0
               OpDecorate %pos BuiltIn Position
               OpDecorate %Block Block
               OpMemberDecorate %Block 0 Offset 0
               OpDecorate %ubos DescriptorSet 0
               OpDecorate %ubos Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
    %v4float = OpTypeVector %float 4
  %fn_shared = OpTypeFunction %v4float %uint
     %uint_0 = OpConstant %uint 0
     %uint_2 = OpConstant %uint 2
   %ptr_in_u = OpTypePointer Input %uint
 %ptr_out_v4 = OpTypePointer Output %v4float
      %index = OpVariable %ptr_in_u Input
   %index_in = OpVariable %ptr_in_u Input
        %pos = OpVariable %ptr_out_v4 Output
      %color = OpVariable %ptr_out_v4 Output
      %Block = OpTypeStruct %v4float
        %arr = OpTypeArray %Block %uint_2
    %ptr_arr = OpTypePointer Uniform %arr
    %ptr_v4u = OpTypePointer Uniform %v4float
       %ubos = OpVariable %ptr_arr Uniform
     %shared = OpFunction %v4float None %fn_shared
          %k = OpFunctionParameter %uint
         %s0 = OpLabel
          %p = OpAccessChain %ptr_v4u %ubos %k %uint_0
          %v = OpLoad %v4float %p
               OpReturnValue %v
               OpFunctionEnd
         %vs = OpFunction %void None %fn
         %v0 = OpLabel
         %vi = OpLoad %uint %index
         %vv = OpFunctionCall %v4float %shared %vi
               OpStore %pos %vv
               OpReturn
               OpFunctionEnd
         %fs = OpFunction %void None %fn
         %f0 = OpLabel
         %fi = OpLoad %uint %index_in
         %fv = OpFunctionCall %v4float %shared %fi
               OpStore %color %fv
               OpReturn
               OpFunctionEnd
"""


def test_entry_points_of_two_stages_share_a_checked_function() -> None:
    words = assemble(TWO_STAGES, "vulkan1.1")
    filecheck(
        disassemble(instrumented(words, "vulkan1.1")),
        """
        CHECK: OpEntryPoint Vertex %vs "vs" %index %pos %gl_VertexIndex %gl_InstanceIndex
        CHECK: OpEntryPoint Fragment %fs "fs" %index_in %color %gl_FragCoord
        CHECK: %shared = OpFunction
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{[0-9]+}} %k %uint_2 %true
        CHECK: %vs = OpFunction
        CHECK: OpCompositeConstruct %v3uint %uint_0
        CHECK: OpStore %gpuav_stage_info
        CHECK: %fs = OpFunction
        CHECK: OpCompositeConstruct %v3uint %uint_4
        CHECK: OpStore %gpuav_stage_info
        """,
    )


def test_kernel_modules_are_declined() -> None:
    words = assemble(
        """
               OpCapability Kernel
               OpCapability Addresses
               OpMemoryModel Physical64 OpenCL
        """,
        "spv1.0",
    )
    with pytest.raises(DescriptorBoundsUnsupported, match="Kernel"):
        instrument_shader(words, shader_id=1, descriptor_set=3)


def test_ray_tracing_stage_is_checked_with_its_launch_id() -> None:
    """A ray generation shader's records carry its stage code (its execution model) and
    gl_LaunchIDEXT, packed as compute packs the global invocation."""
    source = """#version 460
#extension GL_EXT_ray_tracing : require
layout(set = 0, binding = 0) buffer B { uint v; } bufs[4];
void main() { bufs[gl_LaunchIDEXT.x].v = 1u; }
"""
    words = compile_glsl(source, "rgen", target_env="vulkan1.2")
    filecheck(
        disassemble(instrumented(words, "vulkan1.2")),
        """
        CHECK: OpEntryPoint RayGenerationKHR %main "main" %bufs %gl_LaunchIDEXT %gpuav_output
        CHECK: OpDecorate %gl_LaunchIDEXT BuiltIn LaunchIdKHR
        CHECK: %uint_5313 = OpConstant %uint 5313
        CHECK: OpCompositeConstruct %v3uint %uint_5313
        """,
    )


def test_a_module_without_descriptor_arrays_comes_back_unchanged() -> None:
    words = _asm("")
    assert instrument_shader(words, shader_id=1, descriptor_set=3) == words


RUNTIME_BLOCKS = """
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 1 1 1
               OpName %bufs "bufs"
               OpName %ubos "ubos"
               OpName %x "x"
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %rt ArrayStride 4
               OpDecorate %Block Block
               OpMemberDecorate %Block 0 Offset 0
               OpMemberDecorate %Block 1 Offset 4
               OpDecorate %bufs DescriptorSet 0
               OpDecorate %bufs Binding 0
               OpDecorate %Ubo Block
               OpMemberDecorate %Ubo 0 Offset 0
               OpDecorate %ubos DescriptorSet 0
               OpDecorate %ubos Binding 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_3 = OpConstant %uint 3
     %v3uint = OpTypeVector %uint 3
     %ptr_v3 = OpTypePointer Input %v3uint
        %gid = OpVariable %ptr_v3 Input
         %rt = OpTypeRuntimeArray %uint
      %Block = OpTypeStruct %uint %rt
        %arr = OpTypeArray %Block %uint_3
    %ptr_arr = OpTypePointer StorageBuffer %arr
  %ptr_block = OpTypePointer StorageBuffer %Block
   %ptr_uint = OpTypePointer StorageBuffer %uint
       %bufs = OpVariable %ptr_arr StorageBuffer
        %Ubo = OpTypeStruct %uint
       %uarr = OpTypeArray %Ubo %uint_3
   %ptr_uarr = OpTypePointer Uniform %uarr
  %ptr_uuint = OpTypePointer Uniform %uint
       %ubos = OpVariable %ptr_uarr Uniform
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3uint %gid
          %x = OpCompositeExtract %uint %g 0
{body}
               OpReturn
               OpFunctionEnd
"""

BUFFER_FAMILIES = [
    (
        "OpLoad",
        "%p = OpAccessChain %ptr_uuint %ubos %x %uint_0\n%v = OpLoad %uint %p",
        "%ubos",
    ),
    ("OpStore", "%p = OpAccessChain %ptr_uint %bufs %x %uint_0\nOpStore %p %x", "%bufs"),
    (
        "OpAtomicIAdd",
        "%p = OpAccessChain %ptr_uint %bufs %x %uint_1 %x\n"
        "%v = OpAtomicIAdd %uint %p %uint_1 %uint_0 %uint_1",
        "%bufs",
    ),
    (
        "OpArrayLength",
        "%p = OpAccessChain %ptr_block %bufs %x\n%v = OpArrayLength %uint %p 1",
        "%bufs",
    ),
    (
        "OpCopyMemory",
        "%p = OpAccessChain %ptr_uint %bufs %x %uint_0\n"
        "%q = OpAccessChain %ptr_uint %bufs %uint_1 %uint_0\nOpCopyMemory %q %p",
        "%bufs",
    ),
]


@pytest.mark.parametrize(
    ("consumer", "body", "variable"), BUFFER_FAMILIES, ids=[c[0] for c in BUFFER_FAMILIES]
)
def test_buffer_access_is_guarded(consumer: str, body: str, variable: str) -> None:
    words = assemble(RUNTIME_BLOCKS.format(body=body), "vulkan1.1")
    filecheck(
        disassemble(instrumented(words, "vulkan1.1")),
        f"""
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{{{{[0-9]+}}}} %x %uint_3 %true
        CHECK-NEXT: OpUMod %uint %x %uint_3
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK: OpAccessChain {{{{%[_a-zA-Z0-9]+}}}} {variable} {{{{%[0-9]+}}}}
        CHECK: {consumer}
        """,
    )


PUSHED_FRAG = """#version 450
layout(set = 0, binding = 0) uniform sampler2D t[4];
layout(push_constant) uniform P { mat4 m; uint k; } p;
layout(location = 0) out vec4 color;
void main() { color = p.m * texture(t[p.k], vec2(0.5)); }
"""


def test_context_address_after_the_app_push_constants() -> None:
    words = compile_glsl(PUSHED_FRAG, "frag", target_env="vulkan1.2")
    out = instrument_shader(
        words, shader_id=1, descriptor_set=3, context_address=PushConstantAddress(72)
    )
    filecheck(
        disassemble(out),
        """
        CHECK: OpCapability PhysicalStorageBufferAddresses
        CHECK: OpMemoryModel PhysicalStorageBuffer64 GLSL450
        CHECK: OpMemberDecorate %P 2 Offset 72
        CHECK: %P = OpTypeStruct %mat4v4float %uint %ulong
        CHECK: OpConvertUToPtr %_ptr_PhysicalStorageBuffer_gpuav_context
        CHECK: OpLoad %ulong {{%[0-9]+}} Aligned 8
        """,
    )
    spirv_val(out, "vulkan1.2")


RUNTIME_FRAG = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 0) uniform sampler2D t[];
layout(push_constant) uniform P { mat4 m; uint k; } p;
layout(location = 0) out vec4 color;
void main() {
    vec4 sum = vec4(0.0);
    for (uint i = 0u; i < 64u; ++i) sum += texture(t[p.k + i], vec2(0.5));
    color = p.m * sum;
}
"""


@pytest.mark.parametrize("target_env", ["vulkan1.0", "vulkan1.3"])
def test_read_only_buffers_of_our_set_are_non_writable_and_restrict(target_env: TargetEnv) -> None:
    """Issue 17: the state look-ups must not be taken as aliased with the record writes; the
    bound-sets area is a uniform block (read-only by its kind) of uvec4 words."""
    words = compile_glsl(RUNTIME_FRAG, "frag", target_env=target_env)
    out = instrument_shader(words, shader_id=1, descriptor_set=3, descriptor_state=True)
    filecheck(
        disassemble(out),
        """
        CHECK-NOT: OpDecorate %gpuav_output NonWritable
        CHECK: OpDecorate %gpuav_output Restrict
        CHECK-NOT: OpDecorate %gpuav_output NonWritable
        CHECK: OpDecorate %gpuav_state NonWritable
        CHECK-NEXT: OpDecorate %gpuav_state Restrict
        CHECK-NOT: %gpuav_output NonWritable
        CHECK: = OpTypeArray %v4uint %uint_QUADS
        CHECK: %gpuav_bound_sets = OpVariable {{%[a-zA-Z_0-9]+}} Uniform
        CHECK: %gpuav_state = OpVariable
        """.replace("QUADS", str(BOUND_AREA_WORDS // 4)),
    )
    spirv_val(out, target_env)


def test_read_only_blocks_behind_the_context_address_have_non_writable_members() -> None:
    """No variable to decorate through an address: the members of the blocks carry it."""
    words = compile_glsl(RUNTIME_FRAG, "frag", target_env="vulkan1.2")
    out = instrument_shader(
        words,
        shader_id=1,
        descriptor_set=3,
        descriptor_state=True,
        context_address=PushConstantAddress(72),
    )
    text = disassemble(out)
    filecheck(
        text,
        """
        CHECK: OpMemberDecorate %gpuav_context 0 NonWritable
        CHECK-NEXT: OpMemberDecorate %gpuav_context 1 NonWritable
        CHECK-NEXT: OpMemberDecorate %gpuav_context 2 NonWritable
        CHECK-NEXT: OpMemberDecorate %gpuav_context 3 NonWritable
        CHECK: OpMemberDecorate %gpuav_words_block 0 NonWritable
        CHECK: OpConvertUToPtr %_ptr_PhysicalStorageBuffer_gpuav_words_block
        """,
    )
    non_writable = [line for line in text.splitlines() if "NonWritable" in line]
    assert len(non_writable) == 5, non_writable  # the output block stays writable
    spirv_val(out, "vulkan1.2")


@pytest.mark.parametrize("offset", [64, 68, 4])
def test_context_address_overlapping_the_app_push_constants_is_declined(offset: int) -> None:
    words = compile_glsl(PUSHED_FRAG, "frag", target_env="vulkan1.2")
    with pytest.raises(DescriptorBoundsUnsupported, match="push-constant"):
        instrument_shader(
            words, shader_id=1, descriptor_set=3, context_address=PushConstantAddress(offset)
        )
