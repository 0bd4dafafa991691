"""Whatever a record says, composing its message never raises: random records against real
shaders, and every instruction of every corpus shader in every debug mode."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuav.instrument.record import ACTION_CHECK_ERRORS, ErrorCode, ErrorRecord, Stage
from gpuav.report.context import ActionContext, ShaderContext
from gpuav.report.messages import compose_messages, unusable_buffer
from gpuav.report.shader_info import ShaderInfo
from gpuav.spirv.grammar import Op
from tests.report import stage_shaders
from tests.shaders.glsl import DEBUG_MODES, CorpusShader, DebugMode, compile_glsl, corpus_shaders

WORD = st.integers(min_value=0, max_value=2**32 - 1)
# Drawing whole records is slow in hypothesis; a few hundred lists of them cover the layout.
RECORD_LISTS = settings(max_examples=min(settings().max_examples, 300))


@functools.cache
def fragment_words(debug: DebugMode) -> tuple[int, ...]:
    return tuple(compile_glsl(stage_shaders.FRAGMENT, "frag", debug=debug))


@RECORD_LISTS
@given(
    st.sampled_from(DEBUG_MODES),
    st.lists(
        st.builds(
            ErrorRecord,
            shader_id=st.sampled_from([1, 2]) | WORD,
            instruction_index=st.integers(min_value=0, max_value=120) | WORD,
            stage=st.sampled_from(Stage),
            stage_words=st.tuples(WORD, WORD),
            # Printf records never reach compose_messages: the decoder keeps them apart.
            # printf lines and action-check records have message builders of their own
            error_code=st.sampled_from(
                [
                    c
                    for c in ErrorCode
                    if c is not ErrorCode.DEBUG_PRINTF and c not in ACTION_CHECK_ERRORS
                ]
            ),
            descriptor_index=WORD,
            array_length=st.none() | WORD,
            details=st.just(()) | st.tuples(WORD, WORD, WORD, WORD, WORD),
        ),
        max_size=10,
    ),
)
def test_any_record_gets_a_message(debug: DebugMode, records: list[ErrorRecord]) -> None:
    shaders = (
        ShaderContext(1, 0x10, None, 0x20, fragment_words(debug)),
        ShaderContext(2, 0x11, "broken", 0x20, (0x07230203, 0, 0, 1)),
    )
    action = ActionContext(0x1, None, 1, "vkCmdDraw", 0x20, None, shaders, {(0, 1): 6})
    messages = compose_messages(records, action)
    distinct = {
        (r.shader_id, r.instruction_index, r.error_code, r.descriptor_index) for r in records
    }
    assert len(messages) == len(distinct)
    assert sum(message.count for message in messages) == len(records)
    for message in messages:
        assert message.text.count("\n") >= 4
        prefixes = {
            ErrorCode.BUFFER_OUT_OF_BOUNDS: "VUID-vkCmdDraw-",
            ErrorCode.TEXEL_OUT_OF_BOUNDS: "GPUAV-texel-buffer-",
            ErrorCode.LOCAL_INDEX_OUT_OF_BOUNDS: "GPUAV-local-array-",
            ErrorCode.ADDRESS_OUT_OF_BOUNDS: "UNASSIGNED-Device address",
            ErrorCode.ADDRESS_MISALIGNED: "VUID-RuntimeSpirv-PhysicalStorageBuffer64-",
            ErrorCode.DESCRIPTOR_UNINITIALIZED: "VUID-vkCmdDraw-None-08114",
            # the broken rule's VUID (vkCmdDraw's or RuntimeSpirv's); none when the words
            # name no rule
            ErrorCode.DESCRIPTOR_MISMATCH: ("VUID-", "GPUAV-descriptor-mismatch"),
        }
        assert message.record is not None
        expected = prefixes.get(message.record.error_code, "GPUAV-descriptor-")
        if unusable_buffer(message.record) is not None:  # a range of 0: an unusable descriptor
            expected = "VUID-vkCmdDraw-None-08114"
        assert message.message_id.startswith(expected)


@pytest.mark.parametrize("shader", corpus_shaders(), ids=lambda shader: shader.name)
def test_every_instruction_of_the_corpus_can_be_described(shader: CorpusShader) -> None:
    for debug in DEBUG_MODES:
        if debug in shader.spirv_val_fails:
            continue
        words = compile_glsl(shader.path, target_env=shader.target_env, debug=debug)
        info = ShaderInfo(words)
        assert info.error is None
        located = 0
        for index in range(len(info.instructions)):
            assert info.instruction_text(index)
            location = info.location(index)
            info.descriptor(index)
            if location is not None:
                located += 1
                assert location.line > 0
                if debug == "g":
                    assert location.text is not None, (index, location)
        consumers = [
            index
            for index, item in enumerate(info.instructions)
            if item.opcode in (Op.ImageSampleImplicitLod, Op.ImageFetch, Op.ImageRead)
        ]
        if debug == "none":
            assert located == 0
        else:
            assert all(info.location(index) is not None for index in consumers)
