"""Running a test app (tests/layer/apps) in a fresh process under one layer configuration.

The layer benchmarks compare no layer, gpuav and the Khronos layer on the same app; each run
starts from an environment with every layer variable of the caller removed, so that only the
configuration's own variables decide which layers load.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parent.parent
LAYER_NAME = "VK_LAYER_GPUAV_gpu_assisted"
KHRONOS = "VK_LAYER_KHRONOS_validation"
STAND_IN_INSTRUMENTER = "tests.layer.fake_instrument:instrument"
_LAYER_VARIABLES = ("GPUAV_", "VK_INSTANCE_LAYERS", "VK_LAYER_", "VK_ADD_LAYER_PATH")


_LAYER_DIR_SCRIPT = "from gpuav.layer.native.build import layer_dir; print(layer_dir())"


def tree_layer_folder(tree: Path) -> str:
    """The built layer of a checkout (built there on first use). Run from the checkout: ``-c``
    puts the working folder before PYTHONPATH, and another tree's gpuav there would build
    its own layer (whose binary the checkout's Python then refuses)."""
    done = subprocess.run(
        [sys.executable, "-c", _LAYER_DIR_SCRIPT],
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip().splitlines()[-1]


def gpuav_environment(layer_folder: str, *, stand_in: bool = False) -> dict[str, str]:
    """gpuav enabled; ``stand_in``: with the test suite's pass, which marks every shader
    instrumented (every action gets its output block: the layer's own cost)."""
    environment = {
        "VK_ADD_LAYER_PATH": layer_folder,
        "VK_INSTANCE_LAYERS": LAYER_NAME,
        "GPUAV_ENABLE": "1",
    }
    if stand_in:
        environment["GPUAV_INSTRUMENTER"] = STAND_IN_INSTRUMENTER
    return environment


def khronos_environment(*, gpu_assisted: bool) -> dict[str, str]:
    environment = {"VK_INSTANCE_LAYERS": KHRONOS}
    if gpu_assisted:
        environment["VK_LAYER_ENABLES"] = "VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT"
    return environment


def compile_shader(source: Path, output: Path) -> None:
    subprocess.run(
        ["glslangValidator", "-V", "--target-env", "vulkan1.1", "-o", str(output), str(source)],
        check=True,
        capture_output=True,
    )


def app_timings(arguments: list[str], configuration: dict[str, str]) -> dict[str, Any]:
    """The ``timings`` of the JSON line an app prints last, run under ``configuration``."""
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(_LAYER_VARIABLES)
    }
    environment["PYTHONPATH"] = str(REPOSITORY)
    environment.update(configuration)
    done = subprocess.run(
        [sys.executable, *arguments],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    timings: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])["timings"]
    return timings
