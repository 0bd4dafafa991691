"""What remembering the Python recording site costs per action (``gpuav.layer.recording_site``).

Two figures, both the median of several runs (the machine is shared):

- the frame walk alone, ``capture()``, called as the layer calls it: under three frames of
  gpuav's layer, one of the Vulkan binding (a ``vulkan`` package file) and the app's function,
  against the same call stack reaching a function that does nothing;
- per dispatch recorded by a real app (tests/layer/apps/vk_app.py, compute mode, every
  dispatch instrumented by the test suite's stand-in pass so that each one gets its output
  block) under gpuav on lavapipe, with the walk and with ``capture`` replaced by a function
  that returns None. Not a test: timings depend on the machine.

    python -m benchmarks.bench_recording_site [--calls 200000] [--dispatches 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.layer_apps import REPOSITORY, app_timings, compile_shader, gpuav_environment
from gpuav.layer import recording_site
from gpuav.layer.native.build import layer_dir

APP = REPOSITORY / "tests" / "layer" / "apps" / "vk_app.py"
SHADER = REPOSITORY / "tests" / "layer" / "shaders" / "region.comp"
LAYER_FILE = str(Path(recording_site.__file__).with_name("hooks_stand_in.py"))
BINDING_FILE = "/venv/lib/python3.11/site-packages/vulkan/_vulkan.py"
WITHOUT_CAPTURE = (
    "import gpuav.layer.recording_site as site; site.capture = lambda skip=0: None; "
    "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def _function(source: str, filename: str, name: str, scope: dict[str, Any]) -> Any:
    """A function whose code carries ``filename``, as if defined in that file."""
    exec(compile(source, filename, "exec"), scope)
    return scope[name]


def stack_to(target: Callable[[], object]) -> Callable[[], object]:
    """app -> binding -> three layer frames -> target, as a draw reaches the layer's hook."""
    scope: dict[str, Any] = {"target": target}
    _function("def hook():\n    return target(skip=2)\n", LAYER_FILE, "hook", scope)
    _function("def action():\n    return hook()\n", LAYER_FILE, "action", scope)
    _function("def draw():\n    return action()\n", LAYER_FILE, "draw", scope)
    _function("def vkCmdDraw():\n    return draw()\n", BINDING_FILE, "vkCmdDraw", scope)
    return _function("def record():\n    return vkCmdDraw()\n", "app.py", "record", scope)


def nanoseconds_per_call(call: Callable[[], object], calls: int, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - start) / calls * 1e9)
    return statistics.median(times)


def per_dispatch_us(shader: Path, dispatches: int, with_capture: bool) -> float:
    arguments = [str(APP), "--shader", str(shader), "--dispatches", str(dispatches)]
    if not with_capture:
        arguments = ["-c", WITHOUT_CAPTURE, *arguments]
    environment = gpuav_environment(str(layer_dir()), stand_in=True)
    return float(app_timings(arguments, environment)["record_per_dispatch_us"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--dispatches", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()

    walk = nanoseconds_per_call(stack_to(recording_site.capture), options.calls, options.runs)
    empty = nanoseconds_per_call(stack_to(lambda skip=0: None), options.calls, options.runs)
    site = recording_site.site_of(stack_to(recording_site.capture)())
    print(f"capture() under 5 frames: {walk - empty:.0f} ns more than an empty call "
          f"({walk:.0f} vs {empty:.0f} ns for the whole stack); site {site}")  # fmt: skip
    with tempfile.TemporaryDirectory() as scratch:
        shader = Path(scratch) / "region.spv"
        compile_shader(SHADER, shader)
        samples: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(options.runs):
            for with_capture in (True, False):
                samples[with_capture].append(
                    per_dispatch_us(shader, options.dispatches, with_capture)
                )
    with_walk, without = (statistics.median(samples[flag]) for flag in (True, False))
    print(f"vkCmdDispatch recorded under gpuav ({options.dispatches} dispatches, median of "
          f"{options.runs} runs): {with_walk:.2f} us with the site, {without:.2f} us without "
          f"({(with_walk - without) * 1e3:.0f} ns per action)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
