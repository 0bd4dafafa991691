"""What the layer's engine spends per shader module at vkCreateShaderModule: validation then
instrumentation, and how many times it decodes the words (issue 19 item 7: once).

Runs the engine's own entry points in this process, as the native layer calls them:
``shader_validation.pre_call_validate_create_shader_module`` then
``shader_modules.pre_call_record_create_shader_module``, for every corpus module
(tests/shaders/corpus, every debug mode), on a device that enabled every feature (so the
corpus validates clean and is instrumented). Three cases:

- validation on, first creation of the module (its validation result not cached yet);
- validation on, the module created again (validation result cached);
- validation off (``GPUAV_VALIDATE_SHADERS=0``: no environment recorded for the device).

Each module's figure is its fastest of ``--repeat`` runs (the machine is shared); the table
gives the median and the mean over modules, and the decodes per creation (calls of the
reader). Not a test: timings depend on the machine.

    python benchmarks/bench_module_decode.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.shaders.glsl (the corpus and its compile cache)

from benchmarks.timing import print_table  # noqa: E402
from gpuav.layer import shader_modules, shader_validation  # noqa: E402
from gpuav.layer.calls import PhysicalDeviceFacts  # noqa: E402
from gpuav.layer.reporting import Reporter  # noqa: E402
from gpuav.layer.settings import Settings  # noqa: E402
from gpuav.layer.state import DeviceState, InstanceState  # noqa: E402
from gpuav.spirv import reader  # noqa: E402
from tests.shaders.glsl import DEBUG_MODES, corpus_shaders  # noqa: E402
from tests.validate.features import every_extension, every_feature  # noqa: E402

DEVICE = 0xDEC0DE
VULKAN_1_3 = (1 << 22) | (3 << 12)


class Silent(Reporter):
    def emit(self, *_arguments: object, **_keywords: object) -> None:
        pass


def device_state() -> DeviceState:
    """An enabled device as device_setup leaves it, without a Vulkan device behind it (the
    creation path asks the driver nothing before the module is created)."""
    facts = PhysicalDeviceFacts(VULKAN_1_3, 8, 16, 1 << 27, (0,), True, True)
    settings = Settings(enabled=True, shader_cache=False)  # the work itself, not the cache
    instance = InstanceState(1, settings, VULKAN_1_3, Silent())
    return DeviceState(DEVICE, instance, None, facts, enabled=True, set_index=7)  # type: ignore[arg-type]


class DecodeCounter:
    """Counts calls of the reader's one decoding entry point."""

    def __init__(self) -> None:
        self.calls = 0
        self.original = reader._Reader.read

    def __enter__(self) -> DecodeCounter:
        counter = self

        def counting(this: reader._Reader) -> object:
            counter.calls += 1
            return counter.original(this)

        reader._Reader.read = counting  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *_exception: object) -> None:
        reader._Reader.read = self.original  # type: ignore[method-assign]


def create(device: DeviceState, words: list[int], forget_results: bool) -> None:
    if forget_results:
        shader_validation._RESULTS.clear()  # the module's first creation
    shader_validation.pre_call_validate_create_shader_module(device.handle, words, Silent())
    shader_modules.pre_call_record_create_shader_module(device, words)


def fastest(action: Callable[[], None], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return min(samples)


def measure(
    device: DeviceState, modules: list[list[int]], repeat: int, forget_results: bool
) -> tuple[list[float], float]:
    """Each module's fastest time (ms), and the decodes per creation."""
    times = [
        fastest(lambda words=words: create(device, words, forget_results), repeat) * 1e3
        for words in modules
    ]
    with DecodeCounter() as counter:
        for words in modules:
            create(device, words, forget_results)
    return times, counter.calls / len(modules)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=10)
    arguments = parser.parse_args()
    modules = [shader.compile(debug) for shader in corpus_shaders() for debug in DEBUG_MODES]
    device = device_state()
    environment = shader_validation.ShaderEnvironment(
        "vulkan1.3", every_feature(), every_extension()
    )
    rows = []
    cases = [("validation on, first creation", True, True)]
    cases += [("validation on, created again", True, False)]
    cases += [("validation off", False, False)]
    for name, validating, forget_results in cases:
        if validating:
            shader_validation.post_call_record_create_device(DEVICE, environment)
        else:
            shader_validation.pre_call_record_destroy_device(DEVICE)
        times, decodes = measure(device, modules, arguments.repeat, forget_results)
        rows.append(
            [
                name,
                f"{statistics.median(times):.3f} ms",
                f"{statistics.mean(times):.3f} ms",
                f"{decodes:.2f}",
            ]
        )
    print(f"{len(modules)} corpus modules, fastest of {arguments.repeat} runs each")
    print_table(["case", "median/module", "mean/module", "decodes/creation"], rows)


if __name__ == "__main__":
    main()
