"""What the layer costs: the same app with no layer, with gpuav, and with the Khronos GPU-AV.

The app (tests/layer/apps/vk_app.py) records 200 dispatches into one command buffer and
times vkQueueSubmit + vkWaitForFences, plus shader-module creation, pipeline creation and
per-dispatch recording. Every configuration runs in fresh processes; the table shows the
median over runs of each run's median submit. Not a test: timings depend on the machine.

    python -m benchmarks.bench_layer_submit [--dispatches 200] [--runs 3] [--submits 20]

gpuav appears twice: with ``gpuav.instrument.api`` as it is in the tree (a shader it cannot
instrument runs unchanged, with no per-action work), and with the test suite's stand-in pass,
which marks every shader instrumented so that every dispatch gets its output block, binding
and read-back: the layer's full per-action cost, without the cost of checks in the shader.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.layer_apps import (
    REPOSITORY,
    app_timings,
    compile_shader,
    gpuav_environment,
    khronos_environment,
)
from gpuav.layer.native.build import layer_dir

APP = REPOSITORY / "tests" / "layer" / "apps" / "vk_app.py"
SHADER = REPOSITORY / "tests" / "layer" / "shaders" / "region.comp"


def configurations(layer_folder: str) -> dict[str, dict[str, str]]:
    return {
        "no layers": {},
        "gpuav, instrument_shader as shipped": gpuav_environment(layer_folder),
        "gpuav, every dispatch instrumented": gpuav_environment(layer_folder, stand_in=True),
        "Khronos validation, GPU-AV off": khronos_environment(gpu_assisted=False),
        "Khronos validation, GPU-AV on": khronos_environment(gpu_assisted=True),
    }


def run_once(
    shader: Path, extra: dict[str, str], dispatches: int, submits: int
) -> dict[str, float]:
    arguments = [str(APP), "--shader", str(shader), "--dispatches", str(dispatches)]
    timings = app_timings([*arguments, "--repeat", str(submits)], extra)
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

    layer_folder = str(layer_dir())
    with tempfile.TemporaryDirectory() as scratch:
        shader = Path(scratch) / "region.spv"
        compile_shader(SHADER, shader)
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
