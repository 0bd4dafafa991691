"""GPU time of issue 17's compute kernel: no layer, gpuav, and gpuav without the NonWritable
and Restrict decorations on its own buffers (the pass before issue 17's first step).

Each configuration runs shader_time_app.py in fresh processes, round-robin; each cell is the
median over runs of the run's median dispatch (the first dispatch of a run, which pays the
pipeline's first use, is left out). Not a test: timings depend on the machine.

    python -m benchmarks.bench_shader_time [--runs 3] [--dispatches 20]
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

from benchmarks.layer_apps import _LAYER_VARIABLES, REPOSITORY, gpuav_environment
from gpuav.layer.native.build import layer_dir

APP = REPOSITORY / "benchmarks" / "shader_time_app.py"
SHADER = REPOSITORY / "benchmarks" / "shaders" / "indexed_fetches.comp"
WITHOUT_READ_ONLY = "benchmarks.without_read_only:instrument"


def configurations(layer_folder: str) -> dict[str, dict[str, str]]:
    without = gpuav_environment(layer_folder)
    without["GPUAV_INSTRUMENTER"] = WITHOUT_READ_ONLY
    return {
        "no layer": {},
        "gpuav": gpuav_environment(layer_folder),
        "gpuav, no NonWritable/Restrict": without,
    }


def one_run(shader: Path, dispatches: int, configuration: dict[str, str]) -> dict[str, object]:
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(_LAYER_VARIABLES)
    }
    environment["PYTHONPATH"] = str(REPOSITORY)
    environment.update(configuration)
    done = subprocess.run(
        [sys.executable, str(APP), str(shader), "--dispatches", str(dispatches)],
        env=environment, capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    if done.stderr.strip():
        result["stderr"] = done.stderr.strip()[-400:]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dispatches", type=int, default=20)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuav-bench-") as work:
        shader = Path(work) / "indexed_fetches.spv"
        subprocess.run(
            ["glslangValidator", "-V", "--target-env", "vulkan1.2", "-o", str(shader), str(SHADER)],
            check=True, capture_output=True,
        )  # fmt: skip
        configs = configurations(str(layer_dir()))
        medians: dict[str, list[float]] = {name: [] for name in configs}
        checksums: dict[str, set[int]] = {name: set() for name in configs}
        device = ""
        for _ in range(options.runs):
            for name, configuration in configs.items():
                result = one_run(shader, options.dispatches, configuration)
                times = result["ms"]
                assert isinstance(times, list)
                medians[name].append(statistics.median(times[1:]))
                checksums[name].add(int(str(result["checksum"])))
                device = str(result["device"])
                if "stderr" in result:
                    print(f"{name}: stderr: {result['stderr']}")
    print(f"{device}; 1M invocations x 64 indexed SSBO fetches; median of run medians (ms)")
    plain = statistics.median(medians["no layer"])
    for name, values in medians.items():
        median = statistics.median(values)
        runs = " ".join(f"{v:.3f}" for v in values)
        print(f"{name:34s} {median:9.3f} ms  {median / plain:5.2f}x   runs: {runs}"
              f"   checksums: {sorted(checksums[name])}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
