"""Whole-message golden tests: every stage, both error kinds, with and without debug info."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage, pack_compute_yz
from gpuav.report import shader_info as shader_info_module
from gpuav.report.context import ActionContext, ShaderContext
from gpuav.report.messages import Message, compose_messages
from gpuav.report.shader_info import ShaderInfo
from gpuav.spirv.grammar import Op
from gpuav.spirv.module import Module
from gpuav.spirv.reader import read
from tests.report import stage_shaders
from tests.report.helpers import float_bits, instruction_indices
from tests.shaders.glsl import compile_glsl

SHADER_ID = 17
OOB = ErrorCode.INDEX_OUT_OF_BOUNDS
UNINITIALIZED = ErrorCode.DESCRIPTOR_UNINITIALIZED
NEVER_WRITTEN = (
    "It was never written (vkUpdateDescriptorSets, a copy, an update template, or "
    "vkGetDescriptorEXT into a descriptor buffer) when the command buffer was submitted; the "
    "access was skipped."
)


def context(words: list[int], command: str = "vkCmdDraw", **changes: object) -> ActionContext:
    fields: dict[str, object] = {
        "command_buffer": 0xBC24B0,
        "command_buffer_name": "CubeDrawCommandBuf",
        "action_number": 2,
        "command": command,
        "pipeline": 0x45,
        "pipeline_name": "CubePipeline",
        "shaders": (ShaderContext(SHADER_ID, 0x43, "cube.frag", 0x45, tuple(words)),),
    }
    fields.update(changes)
    return ActionContext(**fields)  # type: ignore[arg-type]


def one_message(records: list[ErrorRecord], action: ActionContext) -> Message:
    (message,) = compose_messages(records, action)
    return message


def consumer(words: list[int], opcode: int) -> int:
    (index,) = instruction_indices(words, opcode)
    return index


def test_fragment_out_of_bounds_seed_example() -> None:
    words = compile_glsl(stage_shaders.FRAGMENT, "frag", debug="g", source_name="cube.frag")
    index = consumer(words, Op.ImageSampleImplicitLod)
    fragment = (float_bits(419.5), float_bits(254.5))
    record = ErrorRecord(SHADER_ID, index, Stage.FRAGMENT, fragment, OOB, 6, 6)
    message = one_message([record], context(words))
    assert message.message_id == "GPUAV-descriptor-index-out-of-bounds"
    assert message.severity.value == "error"
    assert message.text == (
        "Index of 6 used to index descriptor array of length 6. At cube.frag line 7.\n"
        "  7: uFragColor = push.light * texture(tex[push.tex_ind], texcoord.xy);\n"
        "  Descriptor: tex, set 0, binding 1.\n"
        "  Command buffer (CubeDrawCommandBuf)(0xbc24b0). Draw Index 2 (vkCmdDraw).\n"
        "  Pipeline (CubePipeline)(0x45). Shader Module (cube.frag)(0x43).\n"
        f"  Shader Instruction Index = {index}.\n"
        "  Stage = Fragment. Fragment coord (x,y) = (419.5, 254.5)."
    )


def test_vertex_stage_words() -> None:
    words = compile_glsl(stage_shaders.VERTEX, "vert", debug="g", source_name="terrain.vert")
    index = consumer(words, Op.ImageSampleExplicitLod)
    record = ErrorRecord(SHADER_ID, index, Stage.VERTEX, (4, 5), OOB, 5, 4)
    action = context(words, "vkCmdDrawIndexed", action_number=1, pipeline_name=None)
    assert one_message([record], action).text == (
        "Index of 5 used to index descriptor array of length 4. At terrain.vert line 5.\n"
        "  5: float height = textureLod(heights[gl_InstanceIndex], position, 0.0).r;\n"
        "  Descriptor: heights, set 0, binding 0.\n"
        "  Command buffer (CubeDrawCommandBuf)(0xbc24b0). Draw Index 1 (vkCmdDrawIndexed).\n"
        "  Pipeline (0x45). Shader Module (cube.frag)(0x43).\n"
        f"  Shader Instruction Index = {index}.\n"
        "  Stage = Vertex. Vertex index = 4. Instance index = 5."
    )


def test_tessellation_control_stage_words() -> None:
    words = compile_glsl(stage_shaders.TESS_CONTROL, "tesc", debug="g", source_name="lod.tesc")
    index = consumer(words, Op.ImageSampleExplicitLod)
    record = ErrorRecord(SHADER_ID, index, Stage.TESSELLATION_CONTROL, (2, 7), OOB, 7, 2)
    assert one_message([record], context(words)).text == (
        "Index of 7 used to index descriptor array of length 2. At lod.tesc line 5.\n"
        "  5: float level = textureLod(lod_maps[gl_PrimitiveID], vec2(0.5), 0.0).r;\n"
        "  Descriptor: lod_maps, set 0, binding 0.\n"
        "  Command buffer (CubeDrawCommandBuf)(0xbc24b0). Draw Index 2 (vkCmdDraw).\n"
        "  Pipeline (CubePipeline)(0x45). Shader Module (cube.frag)(0x43).\n"
        f"  Shader Instruction Index = {index}.\n"
        "  Stage = Tessellation Control. Invocation ID = 2. Primitive ID = 7."
    )


def test_tessellation_evaluation_storage_block_array() -> None:
    words = compile_glsl(
        stage_shaders.TESS_EVALUATION, "tese", debug="g", source_name="displace.tese"
    )
    index = _block_load(words)
    record = ErrorRecord(SHADER_ID, index, Stage.TESSELLATION_EVALUATION, (3, 0), OOB, 3, 3)
    assert one_message([record], context(words)).text == (
        "Index of 3 used to index descriptor array of length 3. At displace.tese line 6.\n"
        "  6: gl_Position = at + offsets[gl_PrimitiveID].offset;\n"
        "  Descriptor: offsets (block Offsets), set 1, binding 4.\n"
        "  Command buffer (CubeDrawCommandBuf)(0xbc24b0). Draw Index 2 (vkCmdDraw).\n"
        "  Pipeline (CubePipeline)(0x45). Shader Module (cube.frag)(0x43).\n"
        f"  Shader Instruction Index = {index}.\n"
        "  Stage = Tessellation Evaluation. Primitive ID = 3."
    )


def _block_load(words: list[int]) -> int:
    """The OpLoad through the access chain into ``offsets``."""
    info = ShaderInfo(words)
    (index,) = [
        at
        for at in instruction_indices(words, Op.Load)
        if (found := info.descriptor(at)) is not None and found.name == "offsets"
    ]
    return index


def test_geometry_storage_image() -> None:
    words = compile_glsl(stage_shaders.GEOMETRY, "geom", debug="g", source_name="sprites.geom")
    index = consumer(words, Op.ImageRead)
    record = ErrorRecord(SHADER_ID, index, Stage.GEOMETRY, (11, 0), OOB, 11, 8)
    assert one_message([record], context(words)).text == (
        "Index of 11 used to index descriptor array of length 8. At sprites.geom line 6.\n"
        "  6: float size = imageLoad(sizes[gl_PrimitiveID], ivec2(0)).r;\n"
        "  Descriptor: sizes, set 0, binding 2.\n"
        "  Command buffer (CubeDrawCommandBuf)(0xbc24b0). Draw Index 2 (vkCmdDraw).\n"
        "  Pipeline (CubePipeline)(0x45). Shader Module (cube.frag)(0x43).\n"
        f"  Shader Instruction Index = {index}.\n"
        "  Stage = Geometry. Primitive ID = 11. Invocation ID = 0."
    )


def compute_words() -> list[int]:
    return compile_glsl(stage_shaders.COMPUTE, "comp", debug="g", source_name="particles.comp")


def compute_context(words: list[int], **changes: object) -> ActionContext:
    return context(
        words,
        "vkCmdDispatch",
        command_buffer_name=None,
        action_number=3,
        pipeline_name="Particles",
        shaders=(ShaderContext(SHADER_ID, 0x99, None, 0x45, tuple(words)),),
        **changes,
    )


def test_compute_uninitialized_descriptor_without_binding_size() -> None:
    words = compute_words()
    index = _particles_store(words)
    record = ErrorRecord(
        SHADER_ID, index, Stage.COMPUTE, (5, pack_compute_yz(1, 2)), UNINITIALIZED, 2
    )
    message = one_message([record], compute_context(words))
    assert message.message_id == "VUID-vkCmdDispatch-None-08114"
    assert message.text == (
        "Descriptor index 2 is uninitialized. At particles.comp line 7.\n"
        "  7: particles[which].position[gl_GlobalInvocationID.x] = "
        "vec4(gl_GlobalInvocationID, 1.0);\n"
        "  Descriptor: particles (block Particles), set 0, binding 0.\n"
        f"  {NEVER_WRITTEN}\n"
        "  Command buffer (0xbc24b0). Dispatch Index 3 (vkCmdDispatch).\n"
        "  Pipeline (Particles)(0x45). Shader Module (0x99).\n"
        f"  Shader Instruction Index = {index}.\n"
        "  Stage = Compute. Global invocation ID (x, y, z) = (5, 1, 2)."
    )


def test_compute_uninitialized_descriptor_quotes_the_binding_size() -> None:
    words = compute_words()
    index = consumer(words, Op.ImageFetch)
    record = ErrorRecord(SHADER_ID, index, Stage.COMPUTE, (3, 0), UNINITIALIZED, 1)
    action = compute_context(words, binding_sizes={(0, 1): 2, (0, 0): 3})
    assert one_message([record], action).text == (
        "Descriptor index 1 used to index descriptor array of length 2 is uninitialized. "
        "At particles.comp line 6.\n"
        "  6: uint which = texelFetch(lookup[gl_WorkGroupID.x], int(gl_LocalInvocationIndex)).r;\n"
        "  Descriptor: lookup, set 0, binding 1.\n"
        f"  {NEVER_WRITTEN}\n"
        "  Command buffer (0xbc24b0). Dispatch Index 3 (vkCmdDispatch).\n"
        "  Pipeline (Particles)(0x45). Shader Module (0x99).\n"
        f"  Shader Instruction Index = {index}.\n"
        "  Stage = Compute. Global invocation ID (x, y, z) = (3, 0, 0)."
    )


def _particles_store(words: list[int]) -> int:
    info = ShaderInfo(words)
    (index,) = [at for at in instruction_indices(words, Op.Store) if info.descriptor(at)]
    return index


def test_without_debug_info_the_instruction_is_disassembled() -> None:
    words = compile_glsl(stage_shaders.FRAGMENT, "frag")
    index = consumer(words, Op.ImageSampleImplicitLod)
    record = ErrorRecord(SHADER_ID, index, Stage.FRAGMENT, (float_bits(0.5), 0), OOB, 9, 6)
    assert one_message([record], context(words)).text == (
        "Index of 9 used to index descriptor array of length 6. "
        f"At SPIR-V instruction {index} (the shader has no source line information).\n"
        "  SPIR-V: %36 = OpImageSampleImplicitLod %v4float %31 %35\n"
        "  Compile the shader with debug information (-g) for its source line.\n"
        "  Descriptor: tex, set 0, binding 1.\n"
        "  Command buffer (CubeDrawCommandBuf)(0xbc24b0). Draw Index 2 (vkCmdDraw).\n"
        "  Pipeline (CubePipeline)(0x45). Shader Module (cube.frag)(0x43).\n"
        f"  Shader Instruction Index = {index}.\n"
        "  Stage = Fragment. Fragment coord (x,y) = (0.5, 0)."
    )


def test_debug_info_100_without_embedded_text_says_so() -> None:
    words = compile_glsl(stage_shaders.FRAGMENT, "frag", debug="gV", source_name="cube.frag")
    index = consumer(words, Op.ImageSampleImplicitLod)
    record = ErrorRecord(SHADER_ID, index, Stage.FRAGMENT, (0, 0), OOB, 6, 6)
    lines = one_message([record], context(words)).text.split("\n")
    assert lines[:3] == [
        "Index of 6 used to index descriptor array of length 6. At cube.frag line 7.",
        "  7: (the shader does not embed this source line)",
        "  Descriptor: tex, set 0, binding 1.",
    ]


def fragment_setup() -> tuple[list[int], int]:
    words = compile_glsl(stage_shaders.FRAGMENT, "frag", debug="g", source_name="cube.frag")
    return words, consumer(words, Op.ImageSampleImplicitLod)


def test_records_differing_only_in_the_invocation_are_counted() -> None:
    words, index = fragment_setup()

    def at(x: float, descriptor_index: int = 6) -> ErrorRecord:
        position = (float_bits(x), float_bits(1.5))
        return ErrorRecord(SHADER_ID, index, Stage.FRAGMENT, position, OOB, descriptor_index, 6)

    records = [at(0.5), at(1.5), at(2.5, descriptor_index=7), *(at(x + 3.5) for x in range(41))]
    first, second = compose_messages(records, context(words))
    assert first.count == 43 and second.count == 1
    assert first.text.endswith(
        "  Stage = Fragment. Fragment coord (x,y) = (0.5, 1.5).\n"
        "  (and 42 more invocations with this error)"
    )
    assert second.text.startswith("Index of 7 used to index descriptor array of length 6.")
    assert second.text.endswith("Fragment coord (x,y) = (2.5, 1.5).")
    pair = compose_messages([at(0.5), at(1.5)], context(words))
    assert pair[0].text.endswith("\n  (and 1 more invocation with this error)")


def test_unknown_shader_id_still_reports_the_record() -> None:
    words, index = fragment_setup()
    record = ErrorRecord(99, index, Stage.FRAGMENT, (0, 0), OOB, 6, 6)
    assert one_message([record], context(words)).text == (
        "Index of 6 used to index descriptor array of length 6. (unknown shader)\n"
        "  Command buffer (CubeDrawCommandBuf)(0xbc24b0). Draw Index 2 (vkCmdDraw).\n"
        "  Pipeline (CubePipeline)(0x45). Unknown shader id 99 (not a shader of this pipeline).\n"
        f"  Shader Instruction Index = {index}.\n"
        "  Stage = Fragment. Fragment coord (x,y) = (0, 0)."
    )


def test_instruction_index_outside_the_shader() -> None:
    words, _ = fragment_setup()
    count = len(ShaderInfo(words).instructions)
    record = ErrorRecord(SHADER_ID, 5000, Stage.VERTEX, (0, 0), OOB, 6, 6)
    lines = one_message([record], context(words)).text.split("\n")
    assert lines[:2] == [
        "Index of 6 used to index descriptor array of length 6. "
        "(instruction index 5000 is outside the shader)",
        f"  The shader has {count} instructions.",
    ]


def test_unreadable_shader_words_are_named_not_raised() -> None:
    words = [0x07230203, 0x10000, 0, 10, 0, 0xFFFF0011]
    record = ErrorRecord(SHADER_ID, 3, Stage.COMPUTE, (0, 0), OOB, 1, 1)
    lines = one_message([record], context(words)).text.split("\n")
    assert lines[0].endswith("(the shader's SPIR-V could not be read)")
    assert lines[1].startswith("  invalid SPIR-V at byte offset")


def test_spilled_actions_and_inline_code() -> None:
    words, index = fragment_setup()
    record = ErrorRecord(SHADER_ID, index, Stage.FRAGMENT, (0, 0), OOB, 6, 6)
    action = context(
        words,
        "unknown action (output blocks ran out)",
        action_number=None,
        shaders=(ShaderContext(SHADER_ID, 0, None, 0x45, tuple(words)),),
    )
    lines = one_message([record], action).text.split("\n")
    assert lines[3:5] == [
        "  Command buffer (CubeDrawCommandBuf)(0xbc24b0). "
        "Action: unknown action (output blocks ran out).",
        "  Pipeline (CubePipeline)(0x45). "
        "Shader Module (none: code given in the pipeline create info).",
    ]


def test_the_shader_is_parsed_once_for_many_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layer reads blocks back after every submit: parsing is per shader, not per record
    nor per message nor per submit."""
    words = compile_glsl(stage_shaders.COMPUTE, "comp", debug="g", source_name="cache.comp")
    calls: list[int] = []

    def counting_read(data: Sequence[int]) -> Module:
        calls.append(len(data))
        return read(data)

    monkeypatch.setattr(shader_info_module, "read", counting_read)
    shader_info_module.clear_cache()
    index = consumer(words, Op.ImageFetch)
    records = [
        ErrorRecord(SHADER_ID, index, Stage.COMPUTE, (x, 0), OOB, x % 5, 2) for x in range(500)
    ]
    for _ in range(3):  # three submits; each builds its own context (a new tuple of words)
        assert len(compose_messages(records, compute_context(words))) == 5
    assert calls == [len(words)]
