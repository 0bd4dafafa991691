"""Issue 8 end to end: the descriptor state the layer builds, as the shader reads it.

``apps/indexing_app.py`` runs ``shaders/indexing_reporting.comp`` under the layer with the
stand-in instrumenter: the shader reads our set's bound-sets words (binding 1) and state
buffer (binding 2), checks its runtime-array index the way the instrumentation does, writes
the records, and copies the state words it read into the result buffer, so both the words
and the reports are checked here on lavapipe, independently of the real pass.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuav.instrument.descriptor_state import (
    NO_STATE,
    binding_size_word,
    binding_table_word,
    range_word,
)
from tests.layer.conftest import (
    APP_TIMEOUT,
    APPS,
    VALIDATION_LAYER,
    RunPython,
    app_environment,
)

pytestmark = pytest.mark.vulkan

OUT_OF_BOUNDS = "GPUAV-descriptor-index-out-of-bounds"
UNINITIALIZED = "VUID-vkCmdDispatch-None-08114"
UNINITIALIZED_DRAW = "VUID-vkCmdDraw-None-08114"
NOT_DUMPED = 7  # the shader's filler for table words past the binding's size
ITEM_WORD = range_word(16)  # a written item descriptor: a storage buffer of range 16
UNTOUCHED = 0xEEEEEEEE

RunIndexing = Callable[..., dict[str, Any]]


@pytest.fixture
def run_indexing(tmp_path: Path, spirv: Callable[[str], Path], layer_folder: Path) -> RunIndexing:
    def run(
        *arguments: str,
        shader: str = "indexing_reporting.comp",
        frag: str | None = None,
        layer: bool = True,
        **options: Any,
    ) -> dict[str, Any]:
        environment = app_environment(layer_folder if layer else None, **options)
        if frag is not None:
            arguments = ("--frag", str(spirv(frag)), *arguments)
        completed = subprocess.run(
            [sys.executable, str(APPS / "indexing_app.py"), "--shader", str(spirv(shader)),
             *arguments],
            env=environment, cwd=tmp_path, capture_output=True, text=True, timeout=APP_TIMEOUT,
        )  # fmt: skip
        assert completed.returncode == 0, completed.stderr[-4000:]
        result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
        return result

    return run


def slot(result: dict[str, Any], index: int, submit: int = 0) -> list[int]:
    """One action's dump; a written item descriptor's word (its 16-byte range) reads as 1."""
    words: list[int] = result["rounds"][submit]
    return [1 if word == ITEM_WORD else word for word in words[index * 32 : index * 32 + 32]]


def ids(result: dict[str, Any]) -> list[str]:
    return [message["id"] for message in result["messages"]]


def texts(result: dict[str, Any], message_id: str) -> list[str]:
    return [message["text"] for message in result["messages"] if message["id"] == message_id]


def test_the_shader_reads_binding_1_of_set_0_at_the_contract_words() -> None:
    # indexing_reporting.comp hard-codes these two word offsets.
    assert (binding_table_word(1), binding_size_word(1)) == (3, 4)


def test_state_words_are_the_variable_count_and_written_flags(run_indexing: RunIndexing) -> None:
    result = run_indexing("--variable-count", "8", "--write", "0,1,2,6", "--access", "0")
    words = slot(result, 0)
    assert words[0] == 1  # set 0 has a region
    assert words[1] == NO_STATE  # nothing bound at set 1
    assert words[2:4] == [2, 8]  # two binding slots; binding 1 allocated with 8 of 16
    assert words[4:20] == [1, 1, 1, 0, 0, 0, 1, 0] + [NOT_DUMPED] * 8
    assert words[31] == 1000
    assert ids(result) == []


@pytest.mark.parametrize("how", ["write", "copy", "template"])
def test_unwritten_descriptor_is_reported_only_where_accessed(
    run_indexing: RunIndexing, how: str
) -> None:
    result = run_indexing("--write", "0,1,2", "--access", "0,2,5,1", "--how", how)
    assert [slot(result, index)[4:12] for index in range(4)] == [[1, 1, 1, 0, 0, 0, 0, 0]] * 4
    (text,) = texts(result, UNINITIALIZED)
    assert "Descriptor index 5" in text
    assert "Dispatch Index 2 (vkCmdDispatch)" in text
    assert ids(result) == [UNINITIALIZED]
    assert [slot(result, index)[31] for index in range(4)] == [1000, 1002, UNTOUCHED, 1001]


def test_index_past_the_variable_count_is_out_of_bounds(run_indexing: RunIndexing) -> None:
    result = run_indexing("--variable-count", "5", "--write", "0,1,2,3,4", "--access", "4,5,12")
    messages = texts(result, OUT_OF_BOUNDS)
    assert len(messages) == 2
    assert "Index of 5 used to index descriptor array of length 5." in messages[0]
    assert "Dispatch Index 1" in messages[0]
    assert "Index of 12 used to index descriptor array of length 5." in messages[1]
    assert slot(result, 0)[31] == 1004
    assert UNINITIALIZED not in ids(result)


def test_update_after_bind_counts_at_submit_time(run_indexing: RunIndexing) -> None:
    result = run_indexing(
        "--update-after-bind", "--write", "0", "--late-write", "3,5", "--access", "3,5,4"
    )
    assert slot(result, 0)[4:12] == [1, 0, 0, 1, 0, 1, 0, 0]
    assert [slot(result, index)[31] for index in range(2)] == [1003, 1005]
    (text,) = texts(result, UNINITIALIZED)
    assert "Descriptor index 4" in text
    assert ids(result) == [UNINITIALIZED]


def test_binding_without_partially_bound_is_all_accessible(run_indexing: RunIndexing) -> None:
    result = run_indexing(
        "--not-partial", "--variable-count", "4", "--write", "0,1,2,3", "--access", "3"
    )
    assert slot(result, 0)[3:12] == [4, 1, 1, 1, 1] + [NOT_DUMPED] * 4
    assert ids(result) == []


def test_resubmitting_sees_the_same_state_and_freed_sets_are_forgotten(
    run_indexing: RunIndexing,
) -> None:
    result = run_indexing("--write", "0,1", "--access", "0,3", "--submits", "3", "--free-sets")
    assert ids(result) == [UNINITIALIZED] * 3
    assert slot(result, 1, submit=2)[4:8] == [1, 1, 0, 0]


@pytest.mark.parametrize("instrumenter", ["stand-in", "shipped"])
def test_correct_program_gives_identical_results_with_and_without_the_layer(
    run_indexing: RunIndexing, instrumenter: str
) -> None:
    arguments = ("--variable-count", "8", "--write", "0,1,2,3,4,5,6,7", "--access", "7,0,3,5")
    without = run_indexing(*arguments, shader="indexing.comp", layer=False)
    options: dict[str, Any] = {"instrumenter": None} if instrumenter == "shipped" else {}
    within = run_indexing(*arguments, shader="indexing.comp", **options)
    assert within["rounds"] == without["rounds"]
    assert [slot(within, index)[31] for index in range(4)] == [1007, 1000, 1003, 1005]
    assert ids(within) == []


def test_no_validation_errors_from_our_descriptor_state(run_indexing: RunIndexing) -> None:
    result = run_indexing(
        "--update-after-bind", "--write", "0,1", "--late-write", "2", "--access", "0,2,4,9",
        "--how", "template", "--free-sets", layers=[VALIDATION_LAYER],
    )  # fmt: skip
    foreign = [
        message["text"]
        for message in result["messages"]
        if message["id"] not in (OUT_OF_BOUNDS, UNINITIALIZED)
    ]
    assert foreign == []
    assert sorted(ids(result)) == [OUT_OF_BOUNDS, UNINITIALIZED]


# -- no pipeline left unchecked: every set index taken, buffers reached by device address -----

CONTEXT_INSTRUMENTER = "tests.layer.fake_context_instrument:instrument"
BY_ADDRESS = "GPUAV-pipeline-layout-by-address"


def test_layout_using_every_set_is_checked_through_device_addresses(
    run_indexing: RunIndexing,
) -> None:
    result = run_indexing(
        "--fill-sets", "--write", "0,1,2", "--access", "0,3,9",
        shader="indexing_reporting_bda.comp", instrumenter=CONTEXT_INSTRUMENTER,
    )  # fmt: skip
    assert slot(result, 0)[:12] == [1, NO_STATE, 2, 8, 1, 1, 1, 0, 0, 0, 0, 0]
    assert slot(result, 0)[31] == 1000
    (uninitialized,) = texts(result, UNINITIALIZED)
    assert "Descriptor index 3" in uninitialized
    assert "Dispatch Index 1 (vkCmdDispatch)" in uninitialized
    (out_of_bounds,) = texts(result, OUT_OF_BOUNDS)
    assert "Index of 9 used to index descriptor array of length 8." in out_of_bounds
    assert "Dispatch Index 2 (vkCmdDispatch)" in out_of_bounds
    (notice,) = texts(result, BY_ADDRESS)
    assert "uses 8 descriptor sets, including set 7" in notice
    assert "GPUAV-pipeline-layout-conflict" not in ids(result)
    assert "GPUAV-pipeline-original-shaders" not in ids(result)


def test_device_address_path_keeps_results_identical(run_indexing: RunIndexing) -> None:
    arguments = ("--fill-sets", "--write", "0,1,2,3,4,5,6,7", "--access", "6,1,7")
    without = run_indexing(*arguments, shader="indexing.comp", layer=False)
    within = run_indexing(*arguments, shader="indexing.comp", instrumenter=CONTEXT_INSTRUMENTER)
    assert within["rounds"] == without["rounds"]
    assert [slot(within, index)[31] for index in range(3)] == [1006, 1001, 1007]
    assert len(texts(within, BY_ADDRESS)) == 1


def test_no_validation_errors_on_the_device_address_path(run_indexing: RunIndexing) -> None:
    result = run_indexing(
        "--fill-sets", "--update-after-bind", "--write", "0,1", "--late-write", "2",
        "--access", "0,2,4,9", shader="indexing_reporting_bda.comp",
        instrumenter=CONTEXT_INSTRUMENTER, layers=[VALIDATION_LAYER],
    )  # fmt: skip
    khronos = [
        message["text"]
        for message in result["messages"]
        if message["text"].startswith(("Validation Error", "Validation Warning"))
    ]
    assert khronos == []
    assert sorted(set(ids(result)) & {OUT_OF_BOUNDS, UNINITIALIZED}) == [
        OUT_OF_BOUNDS,
        UNINITIALIZED,
    ]


# -- the shipped instrumentation pass (gpuav.instrument.api) on the layer's state -------------


@pytest.mark.parametrize("fill_sets", [False, True], ids=["our-set", "by-address"])
def test_shipped_pass_checks_runtime_arrays_against_the_state(
    run_indexing: RunIndexing, fill_sets: bool
) -> None:
    arguments = ["--write", "0,1,2", "--access", "0,3,9,1"]
    if fill_sets:
        arguments.append("--fill-sets")
    result = run_indexing(*arguments, shader="indexing.comp", instrumenter=None)
    assert [slot(result, index)[31] for index in range(4)][::3] == [1000, 1001]
    (uninitialized,) = texts(result, UNINITIALIZED)
    assert "Descriptor index 3 used to index descriptor array of length 8 is uninitialized." in (
        uninitialized
    )
    assert "Descriptor: items (block Item), set 0, binding 1." in uninitialized
    assert "Dispatch Index 1 (vkCmdDispatch)" in uninitialized
    (out_of_bounds,) = texts(result, OUT_OF_BOUNDS)
    assert "Index of 9 used to index descriptor array of length 8." in out_of_bounds
    assert "Dispatch Index 2 (vkCmdDispatch)" in out_of_bounds
    assert (BY_ADDRESS in ids(result)) == fill_sets


def test_shipped_pass_update_after_bind_and_copies(run_indexing: RunIndexing) -> None:
    result = run_indexing(
        "--update-after-bind", "--how", "copy", "--write", "0", "--late-write", "5",
        "--access", "5,0,6", shader="indexing.comp", instrumenter=None,
    )  # fmt: skip
    assert [slot(result, index)[31] for index in range(2)] == [1005, 1000]
    (uninitialized,) = texts(result, UNINITIALIZED)
    assert "Descriptor index 6 used to index" in uninitialized
    assert ids(result) == [UNINITIALIZED]


@pytest.mark.parametrize("fill_sets", [False, True], ids=["our-set", "by-address"])
def test_shipped_pass_checks_runtime_arrays_in_fragment_shaders(
    run_indexing: RunIndexing, fill_sets: bool
) -> None:
    arguments = ["--write", "0,1,2", "--access", "2,3,9"]
    if fill_sets:
        arguments.append("--fill-sets")
    result = run_indexing(
        *arguments, shader="fullscreen.vert", frag="indexing.frag", instrumenter=None
    )
    assert slot(result, 0)[31] == 1002
    (uninitialized,) = texts(result, UNINITIALIZED_DRAW)
    assert "Descriptor index 3 used to index descriptor array of length 8" in uninitialized
    assert "Draw Index 1 (vkCmdDraw)" in uninitialized
    assert "Stage = Fragment." in uninitialized
    (out_of_bounds,) = texts(result, OUT_OF_BOUNDS)
    assert "Index of 9 used to index descriptor array of length 8." in out_of_bounds
    assert "Draw Index 2 (vkCmdDraw)" in out_of_bounds
    assert (BY_ADDRESS in ids(result)) == fill_sets


def test_correct_fragment_program_gives_identical_results(run_indexing: RunIndexing) -> None:
    arguments = ("--write", "0,1,2,3,4,5,6,7", "--access", "7,0,4")
    shaders = {"shader": "fullscreen.vert", "frag": "indexing.frag"}
    without = run_indexing(*arguments, layer=False, **shaders)
    within = run_indexing(*arguments, instrumenter=None, **shaders)
    assert within["rounds"] == without["rounds"]
    assert [slot(within, index)[31] for index in range(3)] == [1007, 1000, 1004]
    assert ids(within) == []


def test_no_validation_errors_drawing_by_address_with_the_shipped_pass(
    run_indexing: RunIndexing,
) -> None:
    result = run_indexing(
        "--fill-sets", "--write", "0,1", "--access", "0,5,9", shader="fullscreen.vert",
        frag="indexing.frag", instrumenter=None, layers=[VALIDATION_LAYER],
    )  # fmt: skip
    khronos = [
        message["text"]
        for message in result["messages"]
        if message["text"].startswith(("Validation Error", "Validation Warning"))
    ]
    assert khronos == []
    assert {OUT_OF_BOUNDS, UNINITIALIZED_DRAW, BY_ADDRESS} <= set(ids(result))


def test_pushed_descriptors_are_checked_against_their_layout(run_indexing: RunIndexing) -> None:
    result = run_indexing(
        "--push", "--layout-count", "8", "--write", "0,1,2", "--access", "0,2,9,1",
        shader="indexing.comp", instrumenter=None,
    )  # fmt: skip
    assert [slot(result, index)[31] for index in (0, 1, 3)] == [1000, 1002, 1001]
    (out_of_bounds,) = texts(result, OUT_OF_BOUNDS)
    assert "Index of 9 used to index descriptor array of length 8." in out_of_bounds
    assert "Dispatch Index 2 (vkCmdDispatch)" in out_of_bounds
    assert ids(result) == [OUT_OF_BOUNDS]  # pushed descriptors count as written


def test_sets_bound_with_maintenance6_are_tracked(run_indexing: RunIndexing) -> None:
    result = run_indexing(
        "--bind2", "--write", "0,1,2", "--access", "0,3,9",
        shader="indexing.comp", instrumenter=None,
    )  # fmt: skip
    assert slot(result, 0)[31] == 1000
    assert sorted(ids(result)) == [OUT_OF_BOUNDS, UNINITIALIZED]
    (out_of_bounds,) = texts(result, OUT_OF_BOUNDS)
    assert "Index of 9 used to index descriptor array of length 8." in out_of_bounds


def test_a_full_state_buffer_leaves_later_sets_untracked_and_says_so(
    run_indexing: RunIndexing,
) -> None:
    # 16 words: the first set's region (13 words) fits, the staging set's (21) does not.
    result = run_indexing("--write", "0,1", "--access", "0,2", extra={"GPUAV_STATE_WORDS": "16"})
    assert slot(result, 1)[:8] == [1, NO_STATE, 2, 8, 1, 1, 0, 0]
    (notice,) = texts(result, "GPUAV-descriptor-state-full")
    assert "GPUAV_STATE_WORDS" in notice
    assert len(texts(result, UNINITIALIZED)) == 1


def test_without_vulkan_1_2_a_full_layout_keeps_its_original_shaders(
    run_python_app: RunPython, spirv: Callable[[str], Path], layer_folder: Path
) -> None:
    arguments = ["--shader", str(spirv("region_array.comp")), "--fill-sets", "--messenger", "--api"]
    without = run_python_app([*arguments, "1.1"])
    run = run_python_app([*arguments, "1.1"], layer_folder, instrumenter=None)
    assert run.result["data_sha256"] == without.result["data_sha256"]
    (conflict,) = run.with_id("GPUAV-pipeline-layout-conflict")
    assert "bufferDeviceAddress" in conflict["text"]
    assert len(run.with_id("GPUAV-pipeline-original-shaders")) == 1
    assert run.with_id(BY_ADDRESS) == []
