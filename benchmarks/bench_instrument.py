"""What instrumentation costs at shader-module creation: gpuav's pass against Khronos GPU-AV.

1. gpuav: ``instrument_shader`` (read + descriptor-bounds pass + write; also with
   ``descriptor_state=True``, as the layer calls it) on every corpus module
   (tests/shaders/corpus, every debug mode), each timed ``--repeat`` times; the table gives
   the median and p95 over modules of each module's fastest time (the machine is shared:
   the fastest run is the one least disturbed).
2. Khronos: vkCreateShaderModule on the same modules on lavapipe with
   VK_LAYER_KHRONOS_validation, GPU-AV on minus GPU-AV off (same layer, so only GPU-AV's
   own work is left), in fresh processes (``--worker``), as ``benchmarks/bench_layer_submit``
   enables it. Recent Khronos layers instrument at pipeline creation instead, so the small
   compute app of bench_layer_submit is also run for its module + pipeline times.

    python benchmarks/bench_instrument.py [--repeat 20] [--runs 3]

Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))
KHRONOS = "VK_LAYER_KHRONOS_validation"
GPU_AV = {"VK_LAYER_ENABLES": "VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT"}


def corpus() -> list[tuple[str, list[int]]]:
    from tests.shaders.glsl import DEBUG_MODES, corpus_shaders

    return [
        (f"{shader.name}-{debug}", shader.compile(debug))
        for shader in corpus_shaders()
        for debug in DEBUG_MODES
    ]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def time_gpuav(
    modules: list[tuple[str, list[int]]], repeat: int, descriptor_state: bool = False
) -> dict[str, float]:
    from gpuav.errors import GpuavError
    from gpuav.instrument.api import instrument_shader

    per_module: dict[str, float] = {}
    for name, words in modules:
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            with contextlib.suppress(GpuavError):
                instrument_shader(
                    words, shader_id=1, descriptor_set=7, descriptor_state=descriptor_state
                )
            samples.append(time.perf_counter() - start)
        per_module[name] = min(samples) * 1000
    return per_module


def worker(repeat: int) -> None:
    """Time vkCreateShaderModule per corpus module under whatever layers the environment sets."""
    import vulkan as vk

    app = vk.VkApplicationInfo(apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
    instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
    physical = vk.vkEnumeratePhysicalDevices(instance)[0]
    features = vk.vkGetPhysicalDeviceFeatures(physical)
    queue = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0])
    device = vk.vkCreateDevice(
        physical,
        vk.VkDeviceCreateInfo(
            queueCreateInfoCount=1, pQueueCreateInfos=[queue], pEnabledFeatures=features
        ),
        None,
    )
    result: dict[str, float] = {}
    for name, words in corpus():
        code = b"".join(word.to_bytes(4, sys.byteorder) for word in words)
        info = vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code)
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            module = vk.vkCreateShaderModule(device, info, None)
            samples.append(time.perf_counter() - start)
            vk.vkDestroyShaderModule(device, module, None)
        result[name] = min(samples) * 1000
    vk.vkDestroyDevice(device, None)
    vk.vkDestroyInstance(instance, None)
    print(json.dumps(result))


def run_worker(extra: dict[str, str], repeat: int) -> dict[str, float]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GPUAV_", "VK_INSTANCE_LAYERS", "VK_LAYER_", "VK_ADD_LAYER_PATH"))
    }
    environment.update({"PYTHONPATH": str(REPOSITORY), "VK_INSTANCE_LAYERS": KHRONOS, **extra})
    done = subprocess.run(
        [sys.executable, __file__, "--worker", "--repeat", str(repeat)],
        env=environment, capture_output=True, text=True, check=True, timeout=900,
    )  # fmt: skip
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def summary(label: str, values: list[float]) -> str:
    return (
        f"{label:<52} median {statistics.median(values):7.3f} ms   "
        f"p95 {percentile(values, 0.95):7.3f} ms   max {max(values):7.3f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3, help="runs of the Khronos compute app")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        worker(options.repeat)
        return 0

    modules = corpus()
    gpuav = time_gpuav(modules, options.repeat)
    with_state = time_gpuav(modules, options.repeat, descriptor_state=True)
    off = run_worker({}, options.repeat)
    on = run_worker(GPU_AV, options.repeat)
    khronos = {name: on[name] - off[name] for name in on}
    print(f"{len(modules)} corpus modules, fastest of {options.repeat} repetitions each")
    print(summary("gpuav instrument_shader (read + pass + write)", list(gpuav.values())))
    print(summary("gpuav, descriptor_state=True (as the layer runs it)", list(with_state.values())))
    print(summary("Khronos vkCreateShaderModule, GPU-AV off", list(off.values())))
    print(summary("Khronos vkCreateShaderModule, GPU-AV on", list(on.values())))
    print(summary("Khronos GPU-AV cost at vkCreateShaderModule (on-off)", list(khronos.values())))
    compute = [name for name in gpuav if name.endswith(".comp-none")]
    print(summary("gpuav, compute modules without debug info", [gpuav[n] for n in compute]))
    print(summary("Khronos GPU-AV, same modules", [khronos[n] for n in compute]))

    from benchmarks.bench_layer_submit import SHADER, run_once

    spv = Path(os.environ.get("TMPDIR", "/tmp")) / "gpuav-bench-region.spv"
    subprocess.run(
        ["glslangValidator", "-V", "--target-env", "vulkan1.1", "-o", str(spv), str(SHADER)],
        check=True, capture_output=True,
    )  # fmt: skip
    app: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
    for _ in range(options.runs):
        app["off"].append(run_once(spv, {"VK_INSTANCE_LAYERS": KHRONOS}, 1, 1))
        app["on"].append(run_once(spv, {"VK_INSTANCE_LAYERS": KHRONOS, **GPU_AV}, 1, 1))
    row: dict[str, Any] = {
        key: statistics.median(r[key] for r in app["on"])
        - statistics.median(r[key] for r in app["off"])
        for key in ("module_ms", "pipeline_ms")
    }
    from gpuav.instrument.api import instrument_shader
    from gpuav.spirv import words_from_bytes

    words = words_from_bytes(spv.read_bytes())
    samples = []
    for _ in range(options.repeat):
        start = time.perf_counter()
        instrument_shader(words, shader_id=1, descriptor_set=7)
        samples.append(time.perf_counter() - start)
    print(
        f"small compute shader ({SHADER.name}): Khronos GPU-AV adds {row['module_ms']:.3f} ms "
        f"at vkCreateShaderModule and {row['pipeline_ms']:.3f} ms at vkCreateComputePipelines; "
        f"gpuav instrument_shader {min(samples) * 1000:.3f} ms (fastest)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
