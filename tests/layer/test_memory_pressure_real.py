"""gpuav under a real address-space limit (issue 13, item 6).

``apps/pressure.c`` makes everything it needs, caps its own RLIMIT_AS at its size plus a
headroom, then records 10,000 dispatches of an instrumented shader; alone it needs about
2.2 MiB of that headroom. Under gpuav (8 blocks per output chunk, so the output memory grows
all the time) every growth used to crash inside lavapipe, which memsets its descriptor sets'
mappings unchecked (MAP_FAILED under the limit), or left the app no room for its own
recording. Now gpuav stops growing while the headroom left is below what it needs plus a
reserve for the app: one GPUAV-resources-exhausted notice, and the app's data is identical."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.apps_common.build import compile_c_program
from tests.layer.conftest import APP_TIMEOUT, APPS, app_environment, parse_c_output

pytestmark = pytest.mark.vulkan

HEADROOMS_KIB = [8 << 10, 16 << 10, 32 << 10]


@pytest.fixture(scope="module")
def pressure_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_c_program(
        tmp_path_factory.mktemp("pressure") / "pressure", [APPS / "pressure.c"]
    )


def _data(completed: subprocess.CompletedProcess[str]) -> str:
    return next(line for line in completed.stdout.splitlines() if line.startswith("data "))


@pytest.mark.parametrize("headroom_kib", HEADROOMS_KIB)
def test_growth_stops_cleanly_under_an_address_space_limit(
    pressure_app: Path, spirv: Callable[[str], Path], layer_folder: Path, headroom_kib: int
) -> None:
    argv = [str(pressure_app), str(spirv("region_array.comp")), "--messenger",
            "--headroom-kib", str(headroom_kib)]  # fmt: skip
    alone = subprocess.run(
        argv, env=app_environment(None), capture_output=True, text=True, timeout=APP_TIMEOUT
    )
    assert alone.returncode == 0, alone.stderr[-2000:]
    layered = subprocess.run(
        argv,
        env=app_environment(
            layer_folder, instrumenter=None, extra={"GPUAV_BLOCKS_PER_CHUNK": "8"}
        ),
        capture_output=True, text=True, timeout=APP_TIMEOUT,
    )  # fmt: skip
    assert layered.returncode == 0, layered.stderr[-2000:]
    assert _data(layered) == _data(alone)
    ids = [message["id"] for message in parse_c_output(layered.stdout)["messages"]]
    assert ids.count("GPUAV-resources-exhausted") == 1
    assert "GPUAV-internal-error" not in ids


@pytest.mark.parametrize("headroom_kib", HEADROOMS_KIB)
def test_first_error_after_the_limit_is_reported(
    pressure_app: Path, spirv: Callable[[str], Path], layer_folder: Path, headroom_kib: int
) -> None:
    """The first record a shader writes comes after the app capped its address space: what
    gpuav needs to report it must not take the room the app counted on."""
    argv = [str(pressure_app), str(spirv("region_array.comp")), "--messenger",
            "--headroom-kib", str(headroom_kib), "--bad-dispatch", "7"]  # fmt: skip
    layered = subprocess.run(
        argv, env=app_environment(layer_folder, instrumenter=None),
        capture_output=True, text=True, timeout=APP_TIMEOUT,
    )  # fmt: skip
    assert layered.returncode == 0, layered.stderr[-2000:]
    messages = parse_c_output(layered.stdout)["messages"]
    ids = [message["id"] for message in messages]
    assert "GPUAV-internal-error" not in ids
    found = [
        message["text"]
        for message in messages
        if message["id"] == "GPUAV-descriptor-index-out-of-bounds"
    ]
    assert found, ids
    assert all("Index of 1" in text and "Dispatch Index 7 " in text for text in found), found
