"""What the layer costs: the same app with no layer, with gpuav, and with the Khronos GPU-AV.

The app (tests/layer/apps/vk_app.py) records 200 dispatches into one command buffer and
times vkQueueSubmit + vkWaitForFences, plus shader-module creation, pipeline creation and
per-dispatch recording. Every configuration runs in fresh processes; the table shows the
median over runs of each run's median submit. Not a test: timings depend on the machine.

    python benchmarks/bench_layer_submit.py [--dispatches 200] [--runs 3] [--submits 20]

gpuav appears twice: with ``gpuav.instrument.api`` as it is in the tree (a shader it cannot
instrument runs unchanged, with no per-action work), and with the test suite's stand-in pass,
which marks every shader instrumented so that every dispatch gets its output block, binding
and read-back: the layer's full per-action cost, without the cost of checks in the shader.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
APP = REPOSITORY / "tests" / "layer" / "apps" / "vk_app.py"
SHADER = REPOSITORY / "tests" / "layer" / "shaders" / "region.comp"
LAYER_NAME = "VK_LAYER_GPUAV_gpu_assisted"
KHRONOS = "VK_LAYER_KHRONOS_validation"


def configurations(layer_folder: str) -> dict[str, dict[str, str]]:
    gpuav = {
        "VK_ADD_LAYER_PATH": layer_folder,
        "VK_INSTANCE_LAYERS": LAYER_NAME,
        "GPUAV_ENABLE": "1",
    }
    return {
        "no layers": {},
        "gpuav, instrument_shader as shipped": gpuav,
        "gpuav, every dispatch instrumented": {
            **gpuav,
            "GPUAV_INSTRUMENTER": "tests.layer.fake_instrument:instrument",
        },
        "Khronos validation, GPU-AV off": {"VK_INSTANCE_LAYERS": KHRONOS},
        "Khronos validation, GPU-AV on": {
            "VK_INSTANCE_LAYERS": KHRONOS,
            "VK_LAYER_ENABLES": "VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT",
        },
    }


def run_once(
    shader: Path, extra: dict[str, str], dispatches: int, submits: int
) -> dict[str, float]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GPUAV_", "VK_INSTANCE_LAYERS", "VK_LAYER_", "VK_ADD_LAYER_PATH"))
    }
    environment["PYTHONPATH"] = str(REPOSITORY)
    environment.update(extra)
    done = subprocess.run(
        [sys.executable, str(APP), "--shader", str(shader), "--dispatches", str(dispatches),
         "--repeat", str(submits)],
        env=environment, capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    timings = json.loads(done.stdout.strip().splitlines()[-1])["timings"]
    return {
        "module_ms": timings["create_shader_module_ms"],
        "pipeline_ms": timings["create_pipeline_ms"],
        "record_us": timings["record_per_dispatch_us"],
        "submit_ms": statistics.median(timings["submit_all_ms"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dispatches", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--submits", type=int, default=30)
    options = parser.parse_args()

    sys.path.insert(0, str(REPOSITORY))
    from gpuav.layer.native.build import layer_dir

    layer_folder = str(layer_dir())
    with tempfile.TemporaryDirectory() as scratch:
        shader = Path(scratch) / "region.spv"
        subprocess.run(
            ["glslangValidator", "-V", "--target-env", "vulkan1.1", "-o", str(shader), str(SHADER)],
            check=True, capture_output=True,
        )  # fmt: skip
        # Round-robin over configurations so that drift in machine load hits them alike.
        configs = configurations(layer_folder)
        samples: dict[str, list[dict[str, float]]] = {name: [] for name in configs}
        for _ in range(options.runs):
            for name, extra in configs.items():
                samples[name].append(run_once(shader, extra, options.dispatches, options.submits))
        rows = {
            name: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
            for name, runs in samples.items()
        }

    base = rows["no layers"]["submit_ms"]
    header = (
        f"{'configuration':<38} {'module ms':>9} {'pipeline ms':>11} {'record us':>9} "
        f"{'submit ms':>9} {'added ms':>8}"
    )
    print(f"{options.dispatches} dispatches, {options.runs} runs x {options.submits} submits")
    print(header)
    print("-" * len(header))
    for name, row in rows.items():
        print(
            f"{name:<38} {row['module_ms']:>9.2f} {row['pipeline_ms']:>11.2f} "
            f"{row['record_us']:>9.1f} {row['submit_ms']:>9.2f} {row['submit_ms'] - base:>8.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
