"""gpuav against the Khronos layer's GPU-AV (Debian's 1.3.239) on lavapipe, case by case.

Every case of ``cases.py`` runs under both layers in one process each (the two run side by
side): every descriptor error Khronos reports (kind, index, length, stage) must also come
from gpuav (``BEYOND_DESCRIPTORS`` lists the actions whose bug is a buffer range); gpuav must
report exactly the case's bugs, naming the source line; and Khronos must report them too
except where ``KHRONOS_DIFFERENCES`` documents what it misses (a pinned version: a change
there is worth knowing).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuav.layer.native.build import layer_dir
from tests.differential.cases import CASES, VERTEX, Case
from tests.differential.messages import Finding, findings, is_descriptor_error
from tests.layer.conftest import APP_TIMEOUT, REPOSITORY, VALIDATION_LAYER, app_environment
from tests.shaders.glsl import compile_glsl, words_to_bytes

pytestmark = pytest.mark.vulkan

GPU_ASSISTED = "VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT"

# What the Khronos layer 1.3.239 reports differently from the case's bugs, and why.
KHRONOS_DIFFERENCES: dict[str, tuple[set[tuple[str, int, int | None]], str]] = {
    "sampler-array/5": (
        set(),
        "no check on an array of separate samplers (OpSampledImage's sampler)",
    ),
    "storage-buffer-atomic-and-length/2": (
        set(),
        "no check of atomics or OpArrayLength on a buffer array (only loads and stores)",
    ),
    "sampler-passed-to-a-function/3": (
        set(),
        "no check of a descriptor passed to a function: the unchecked sample crashes lavapipe, "
        "so this action is not run under Khronos",
    ),
    "storage-image-atomic/2": (
        set(),
        "no check of image atomics (OpImageTexelPointer): the unchecked atomic crashes "
        "lavapipe, so this action is not run under Khronos",
    ),
    "storage-texel-buffer-atomic/2": (
        set(),
        "no check of texel-buffer atomics (OpImageTexelPointer): crashes lavapipe, not run",
    ),
    "sampler-array-passed-to-a-function/3": (
        set(),
        "no check of an array indexed in a function it was passed to: crashes lavapipe, not run",
    ),
    "nonuniform-index/2": (
        {("out-of-bounds", 4, 4)},
        "one record per shader instruction and action: the second bad invocation goes unsaid",
    ),
}


# Actions whose bug is not a descriptor error, by action: the Khronos layer's message id,
# gpuav's, and what it is (tests/layer/test_buffer_*_khronos.py compare these families).
BEYOND_DESCRIPTORS: dict[str, tuple[str, str, str]] = {
    "storage-buffer-range/1": (
        "VUID-vkCmdDispatch-None-02706",
        "VUID-vkCmdDispatch-storageBuffers-06936",
        "buffer range: an in-range descriptor read past the end of its buffer",
    ),
    "device-address-range/1": (
        "UNASSIGNED-Device address out of bounds",
        "UNASSIGNED-Device address out of bounds",
        "buffer device address range: a read past the end of the buffer a pointer points into",
    ),
}


def _run(folder: Path, environment: dict[str, str], *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.differential.runner", str(folder), *options],
        env=environment, cwd=REPOSITORY, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _result(process: subprocess.Popen[str]) -> dict[str, list[dict[str, str]]]:
    stdout, stderr = process.communicate(timeout=APP_TIMEOUT)
    assert process.returncode == 0, stderr[-4000:]
    result: dict[str, list[dict[str, str]]] = json.loads(stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Both layers' messages by ``case/index`` (shaders compiled once, with -g)."""
    folder = tmp_path_factory.mktemp("differential")
    for case in CASES:
        words = compile_glsl(case.source, case.stage, target_env="vulkan1.2", debug="g")
        (folder / f"{case.name}.spv").write_bytes(words_to_bytes(words))
    vertex = compile_glsl(VERTEX, "vert", target_env="vulkan1.2")
    (folder / "vertex.spv").write_bytes(words_to_bytes(vertex))
    khronos = _run(
        folder,
        app_environment(None, layers=[VALIDATION_LAYER], extra={"VK_LAYER_ENABLES": GPU_ASSISTED}),
        "--unchecked",
    )
    gpuav = _run(folder, app_environment(layer_dir(), instrumenter=None))
    yield {"khronos": _result(khronos), "gpuav": _result(gpuav)}


def _actions(case: Case) -> list[tuple[str, int]]:
    return [(f"{case.name}/{index}", index) for index in case.indices]


CASE_PARAMS = [pytest.param(case, id=case.name) for case in CASES]


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_every_khronos_error_is_reported_by_gpuav(runs: dict[str, Any], case: Case) -> None:
    for action, _ in _actions(case):
        khronos = findings(runs["khronos"].get(action, []))
        gpuav = findings(runs["gpuav"][action])
        ours = {(*_comparable(f), f.stage) for f in gpuav}
        for finding in khronos:
            wanted = (*_comparable(finding), finding.stage)
            assert wanted in ours, f"{action}: Khronos reported {finding}, gpuav {gpuav}"


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_gpuav_reports_exactly_the_bugs_with_their_source_line(
    runs: dict[str, Any], case: Case
) -> None:
    source_line = case.source.splitlines()[case.bug_line - 1].strip()
    for action, index in _actions(case):
        messages = runs["gpuav"][action]
        others = [m["id"] for m in messages if not is_descriptor_error(m)]
        assert others == ([BEYOND_DESCRIPTORS[action][1]] if action in BEYOND_DESCRIPTORS else [])
        found = findings(messages)
        expected = case.expected(index)
        assert {_comparable(f) for f in found} == expected, action
        assert {f.stage for f in found} <= {case.stage_name}
        for message in messages:
            assert f"At shader.{case.stage} line {case.bug_line}." in message["text"], action
            assert source_line in message["text"], action


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_khronos_reports_the_bugs_but_for_documented_differences(
    runs: dict[str, Any], case: Case
) -> None:
    for action, index in _actions(case):
        if action not in runs["khronos"]:
            assert index in case.crashes_unchecked and action in KHRONOS_DIFFERENCES
            continue
        messages = runs["khronos"][action]
        # Our test programs are valid Vulkan: any other validation error is ours to fix, or
        # the buffer bug of an action beyond descriptors.
        others = [m["id"] for m in messages if not is_descriptor_error(m)]
        wanted = [BEYOND_DESCRIPTORS[action][0]] if action in BEYOND_DESCRIPTORS else []
        assert others == wanted, action
        expected = case.expected(index)
        if action in KHRONOS_DIFFERENCES:
            expected = KHRONOS_DIFFERENCES[action][0]
        found = findings(messages)
        assert {_comparable(f) for f in found} == expected, action
        assert {f.stage for f in found} <= {case.stage_name}


def _comparable(finding: Finding) -> tuple[str, int, int | None]:
    """An uninitialized finding without its length (Khronos gives none; the cases neither)."""
    if finding.kind == "uninitialized":
        return (finding.kind, finding.index, None)
    return finding.key()
