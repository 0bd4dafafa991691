"""Which descriptor a consuming instruction uses: name, set and binding from the original
module, through OpSampledImage, OpImage, OpLoad, OpCopyObject and (Ptr)AccessChain."""

from __future__ import annotations

from gpuav.report.descriptor_lookup import DescriptorVariable
from gpuav.report.shader_info import ShaderInfo
from gpuav.spirv.grammar import Op
from tests.instrument.test_pass_shapes import HEADER, LOOP, SELECT
from tests.report.helpers import instruction_indices
from tests.shaders.glsl import compile_glsl, spirv_val
from tests.validate.asm import assemble

KINDS = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) uniform texture2D textures[4];
layout(set = 0, binding = 1) uniform sampler samplers[2];
layout(set = 1, binding = 0, rgba8) uniform writeonly image2D targets[3];
layout(set = 1, binding = 1) uniform samplerBuffer texels[5];
layout(set = 2, binding = 7) buffer Counters { uint count[]; } counters[6];
layout(set = 2, binding = 8) uniform Params { vec4 scale; } params[2];
layout(set = 3, binding = 0) buffer Loose { uint loose[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    vec4 color = textureLod(sampler2D(textures[i], samplers[i & 1u]), vec2(0.5), 0.0);
    color *= texelFetch(texels[i], 0) * params[i & 1u].scale;
    imageStore(targets[i], ivec2(i), color);
    atomicAdd(counters[i].count[0], 1u);
    loose[i] = i;
}
"""


def kinds_info() -> tuple[list[int], ShaderInfo]:
    words = compile_glsl(KINDS, "comp", debug="g", target_env="vulkan1.2")
    return words, ShaderInfo(words)


def described(info: ShaderInfo, index: int) -> str:
    found = info.descriptor(index)
    assert found is not None, info.instruction_text(index)
    return found.describe()


def test_images_through_sampled_image_and_image() -> None:
    words, info = kinds_info()
    (sample,) = instruction_indices(words, Op.ImageSampleExplicitLod)
    (fetch,) = instruction_indices(words, Op.ImageFetch)
    (write,) = instruction_indices(words, Op.ImageWrite)
    # OpSampledImage takes the image first: the texture, not the sampler, is the descriptor.
    assert described(info, sample) == "textures, set 0, binding 0"
    assert described(info, fetch) == "texels, set 1, binding 1"
    assert described(info, write) == "targets, set 1, binding 0"


def test_buffers_through_access_chains() -> None:
    words, info = kinds_info()
    (atomic,) = instruction_indices(words, Op.AtomicIAdd)
    assert described(info, atomic) == "counters (block Counters), set 2, binding 7"
    loads = [index for index in instruction_indices(words, Op.Load) if info.descriptor(index)]
    assert "params (block Params), set 2, binding 8" in {described(info, at) for at in loads}


def test_anonymous_block_is_named_by_its_type() -> None:
    words, info = kinds_info()
    (store,) = [index for index in instruction_indices(words, Op.Store) if info.descriptor(index)]
    assert described(info, store) == "Loose, set 3, binding 0"


def test_values_computed_from_a_buffer_are_not_descriptors() -> None:
    words, info = kinds_info()
    # The multiply consumes a vec4 loaded from params: it is not the descriptor's consumer.
    multiplies = instruction_indices(words, Op.FMul) + instruction_indices(
        words, Op.VectorTimesScalar
    )
    assert multiplies and all(info.descriptor(index) is None for index in multiplies)
    # Names and decorations mention the variables without consuming them.
    assert all(info.descriptor(index) is None for index in instruction_indices(words, Op.Decorate))


PTR_ACCESS_CHAIN = """
               OpCapability Shader
               OpCapability VariablePointers
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 1 1 1
               OpName %buffers "buffers"
               OpName %Data "Data"
               OpDecorate %buffers DescriptorSet 0
               OpDecorate %buffers Binding 3
               OpDecorate %Data Block
               OpMemberDecorate %Data 0 Offset 0
               OpDecorate %rta ArrayStride 4
               OpDecorate %ptr_Data ArrayStride 16
               OpDecorate %gid BuiltIn GlobalInvocationId
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
     %uint_0 = OpConstant %uint 0
     %uint_4 = OpConstant %uint 4
     %v3uint = OpTypeVector %uint 3
  %ptr_in_v3 = OpTypePointer Input %v3uint
%ptr_in_uint = OpTypePointer Input %uint
        %gid = OpVariable %ptr_in_v3 Input
        %rta = OpTypeRuntimeArray %uint
       %Data = OpTypeStruct %rta
   %ptr_Data = OpTypePointer StorageBuffer %Data
        %arr = OpTypeArray %Data %uint_4
    %ptr_arr = OpTypePointer StorageBuffer %arr
   %ptr_uint = OpTypePointer StorageBuffer %uint
    %buffers = OpVariable %ptr_arr StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
       %gidx = OpAccessChain %ptr_in_uint %gid %uint_0
        %idx = OpLoad %uint %gidx
      %first = OpAccessChain %ptr_Data %buffers %uint_0
      %other = OpPtrAccessChain %ptr_Data %first %idx
       %copy = OpCopyObject %ptr_Data %other
       %elem = OpAccessChain %ptr_uint %copy %uint_0 %uint_0
               OpStore %elem %idx
               OpReturn
               OpFunctionEnd
"""


def test_ptr_access_chain_block_reindex() -> None:
    """Seed 003: OpPtrAccessChain on a pointer to a Block element selects another buffer."""
    words = assemble(PTR_ACCESS_CHAIN)
    spirv_val(words)
    info = ShaderInfo(words)
    (store,) = instruction_indices(words, Op.Store)
    found = info.descriptor(store)
    assert found is not None
    assert found == DescriptorVariable(found.variable_id, "buffers", "Data", 0, 3)
    assert info.instructions[_definition(info, found.variable_id)].opcode == Op.Variable
    assert described(info, store) == "buffers (block Data), set 0, binding 3"


def _definition(info: ShaderInfo, id_: int) -> int:
    (index,) = [at for at, item in enumerate(info.instructions) if item.result_id == id_]
    return index


def test_blocks_merged_by_phi_or_select_are_named_when_they_share_a_variable() -> None:
    """A block chosen in a loop or by OpSelect (variable pointers) comes from one array."""
    for body in (LOOP, SELECT):
        words = shape_module(body)
        info = ShaderInfo(words)
        (store,) = instruction_indices(words, Op.Store)
        assert described(info, store) == "bufs, set 0, binding 0"


def test_a_merge_of_different_descriptors_names_none() -> None:
    words = shape_module(
        SELECT.replace(
            "%b = OpAccessChain %ptr_block %bufs %y", "%b = OpAccessChain %ptr_block %more %y"
        ),
        "%more = OpVariable %ptr_arr StorageBuffer",
        "OpDecorate %more DescriptorSet 0\nOpDecorate %more Binding 1",
    )
    info = ShaderInfo(words)
    (store,) = instruction_indices(words, Op.Store)
    assert info.descriptor(store) is None


def shape_module(body: str, globals_: str = "", decorations: str = "") -> list[int]:
    """The instrumentation shape tests' module (variable pointers) around ``body``."""
    header = HEADER.replace(
        "OpDecorate %bufs Binding 0", f"OpDecorate %bufs Binding 0\n{decorations}"
    )
    words = assemble(header.format(body=body, globals=globals_), "vulkan1.1")
    spirv_val(words)
    return words
