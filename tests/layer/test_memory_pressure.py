"""gpuav's own allocations fail cleanly (issue 13): each Vulkan call the layer makes for its
own objects is made to fail with VK_ERROR_OUT_OF_DEVICE_MEMORY (``GPUAV_TEST_FAULTS``, see
``gpuav.layer.faults``: the call then never reaches lavapipe, as with a driver out of memory)
at device creation or when the output memory grows, in a real app run.

The app must complete with the data of the run without the layer, see exactly one
``GPUAV-resources-exhausted`` notice and no other gpuav failure, and the Khronos layer beneath
gpuav must see nothing wrong: no object made by a failed step leaks past vkDestroyDevice
(``VUID-vkDestroyDevice-device-05137``) and none is used (a buffer bound without memory, a set
of a destroyed pool).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.layer.conftest import APPS, VALIDATION_LAYER, RunPython, app_environment

pytestmark = pytest.mark.vulkan

OUT_OF_BOUNDS = "GPUAV-descriptor-index-out-of-bounds"
DISPATCHES = "40"
BLOCKS_PER_CHUNK = "8"  # 7 blocks and the spill block: the output memory grows by dispatch 8

# Calls made at device creation, in order: our two set layouts; the state buffer's create,
# allocate, bind and map (each call 1); the first output chunk's blocks (call 2) and bound-sets
# areas (call 3), its descriptor pool and sets (call 1). Growth repeats the chunk's calls
# (blocks 4, areas 5, pool and sets 2).
AT_START_UP = [
    "vkCreateDescriptorSetLayout:1",
    "vkCreateDescriptorSetLayout:2",
    "vkCreateBuffer:1",
    "vkAllocateMemory:1",
    "vkBindBufferMemory:1",
    "vkMapMemory:1",
    "vkCreateBuffer:2",
    "vkAllocateMemory:2",
    "vkBindBufferMemory:2",
    "vkMapMemory:2",
    "vkCreateBuffer:3",
    "vkAllocateMemory:3",
    "vkBindBufferMemory:3",
    "vkMapMemory:3",
    "vkCreateDescriptorPool:1",
    "vkAllocateDescriptorSets:1",
]
AT_GROWTH = [
    "vkCreateBuffer:4",
    "vkAllocateMemory:4",
    "vkBindBufferMemory:4",
    "vkMapMemory:4",
    "vkMapMemory-MAP_FAILED:4",  # lavapipe's VK_SUCCESS with mmap's MAP_FAILED, seen for real
    "vkCreateBuffer:5",
    "vkAllocateMemory:5",
    "vkBindBufferMemory:5",
    "vkMapMemory-MAP_FAILED:5",
    "vkCreateDescriptorPool:2",
    "vkAllocateDescriptorSets:2",
]


def _assert_failed_cleanly(run_messages: list[dict[str, object]], exhausted_count: int) -> None:
    ids = [str(message["id"]) for message in run_messages]
    assert ids.count("GPUAV-resources-exhausted") == exhausted_count, run_messages
    assert "GPUAV-internal-error" not in ids
    assert "GPUAV-setup-failed" not in ids


@pytest.fixture(scope="module")
def data_without_layer(spirv, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The app's data hash without the layer (region.comp computes what region_reporting.comp
    does)."""
    completed = subprocess.run(
        [sys.executable, str(APPS / "vk_app.py"), "--shader", str(spirv("region.comp")),
         "--dispatches", DISPATCHES],
        env=app_environment(None), cwd=tmp_path_factory.mktemp("alone"),
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return str(json.loads(completed.stdout.strip().splitlines()[-1])["data_sha256"])


@pytest.mark.parametrize("fault", AT_START_UP)
def test_failure_at_device_creation_leaves_the_device_unchecked(
    run_python_app: RunPython, spirv, layer_folder: Path, data_without_layer: str, fault: str
) -> None:
    run = run_python_app(
        ["--shader", str(spirv("region.comp")), "--dispatches", DISPATCHES, "--messenger"],
        layer_folder, layers=[VALIDATION_LAYER],
        extra={"GPUAV_TEST_FAULTS": fault, "GPUAV_BLOCKS_PER_CHUNK": BLOCKS_PER_CHUNK},
    )  # fmt: skip
    assert run.result["data_sha256"] == data_without_layer
    _assert_failed_cleanly(run.messages, 1)
    (exhausted,) = run.with_id("GPUAV-resources-exhausted")
    command = fault.partition(":")[0]
    assert f"at device creation: {command} failed with VkResult -2" in exhausted["text"]
    assert run.validation_errors() == []


@pytest.mark.parametrize("fault", AT_GROWTH)
def test_failure_at_growth_degrades_and_keeps_reporting(
    run_python_app: RunPython, spirv, layer_folder: Path, data_without_layer: str, fault: str
) -> None:
    """Dispatch 2 (a block of the first chunk) is still reported by name; the dispatches past
    the first chunk share the spill block."""
    run = run_python_app(
        ["--shader", str(spirv("region_reporting.comp")), "--dispatches", DISPATCHES,
         "--bad-dispatch", "2", "--messenger"],
        layer_folder, layers=[VALIDATION_LAYER],
        extra={"GPUAV_TEST_FAULTS": fault, "GPUAV_BLOCKS_PER_CHUNK": BLOCKS_PER_CHUNK},
    )  # fmt: skip
    assert run.result["data_sha256"] == data_without_layer
    _assert_failed_cleanly(run.messages, 1)
    (exhausted,) = run.with_id("GPUAV-resources-exhausted")
    assert "no device memory left for output blocks" in exhausted["text"]
    (report,) = run.with_id(OUT_OF_BOUNDS)
    assert "output blocks ran out" not in report["text"]
    assert run.validation_errors() == []


def test_growth_without_faults_takes_no_notice(
    run_python_app: RunPython, spirv, layer_folder: Path, data_without_layer: str
) -> None:
    """The same run with every call succeeding: the calls counted above are the ones made
    (six chunks are made, two buffers each: the state buffer's and theirs are calls 1 to 13,
    and nothing runs out)."""
    run = run_python_app(
        ["--shader", str(spirv("region_reporting.comp")), "--dispatches", DISPATCHES,
         "--bad-dispatch", "2", "--messenger"],
        layer_folder, layers=[VALIDATION_LAYER],
        extra={"GPUAV_TEST_FAULTS": "vkCreateBuffer:14",
               "GPUAV_BLOCKS_PER_CHUNK": BLOCKS_PER_CHUNK},
    )  # fmt: skip
    assert run.result["data_sha256"] == data_without_layer
    _assert_failed_cleanly(run.messages, 0)
    assert len(run.with_id(OUT_OF_BOUNDS)) == 1
    assert run.validation_errors() == []
