"""Shader-module and compute-pipeline creation under no layer, gpuav and the Khronos layer
1.4.309's GPU-AV, side by side in one run, cold and warm (issue 17 target 2).

A C program (``module_creation_app.c``, knowing nothing of gpuav) creates every module of the
corpus (tests/shaders/corpus in every debug mode, the compute shaders of tests/layer/shaders
and benchmarks/shaders) and, for compute modules, a compute pipeline whose layout comes from
the module's own resources (``shader_resources``); the device has every core feature on.
Each configuration runs in two fresh processes in a row that share a fresh
``XDG_CACHE_HOME`` (gpuav's module cache and Mesa's shader cache live there), and each
process creates everything twice:

- cold: the first process's first pass (nothing cached anywhere);
- warm memory: the first process's second pass (the same modules again);
- warm disk: the second process's first pass (a second run of the same program).

A fourth configuration runs the words gpuav's pass makes of each module (and gpuav's set in
the layout) with no layer: the driver's own cost of compiling instrumented code, apart from
the layer's work. Figures are each module's median over ``--runs`` (fresh caches each), then
the median and mean over modules, in microseconds. Not a test: timings depend on the machine.

    python -m benchmarks.bench_module_creation [--runs 3] [--no-khronos] [--compare-tree PATH]
        [--khronos-root $NK_ROOT] [--no-pipelines]

``--compare-tree`` adds gpuav as another checkout has it (its own layer build and Python), in
the same interleaved runs: before and after a change, side by side. ``--no-pipelines``
creates the modules alone, one after another, as a program that makes all its modules
before its pipelines does: no pipeline compile between two modules leaves the CPU's caches
cold for the next.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import os
import statistics
import subprocess
import tempfile
from array import array
from collections import defaultdict
from pathlib import Path

from benchmarks.bench_shader_time import khronos_configuration
from benchmarks.layer_apps import LAYER_NAME, REPOSITORY, tree_layer_folder
from benchmarks.shader_resources import NoLayout, resources_of
from benchmarks.timing import print_table
from gpuav.layer.native.build import layer_dir
from tests.apps_common.build import compile_c_program
from tests.shaders.glsl import DEBUG_MODES, compile_glsl, corpus_shaders

APP_SOURCE = Path(__file__).with_name("module_creation_app.c")
NEWER_KHRONOS = Path("/work/shared/tools/newer-khronos.sh")
EXTRA_COMPUTE = [
    *sorted((REPOSITORY / "tests" / "layer" / "shaders").glob("*.comp")),
    *sorted((REPOSITORY / "benchmarks" / "shaders").glob("*.comp")),
]
EXTRA_COMPUTE = [path for path in EXTRA_COMPUTE if "models" not in path.name]  # need -DVARIANT
_LAYER_VARIABLES = ("GPUAV_", "VK_INSTANCE_LAYERS", "VK_LAYER_", "VK_ADD_LAYER_PATH")
DRIVER_ON_GPUAV_WORDS = "no layer, gpuav's words"
GPUAV_SET = 7  # lavapipe's last descriptor set, where gpuav puts its own
SCENARIOS = {"cold": (0, 0), "warm memory": (0, 1), "warm disk": (1, 0)}  # (process, pass)
Figures = dict[tuple[str, str], list[tuple[float, float]]]  # (configuration, scenario)


def write_corpus(folder: Path) -> Path:
    """Every module as a .spv file, and the list the app reads."""
    modules: list[tuple[str, list[int]]] = [
        (f"{shader.name}-{debug}", shader.compile(debug))
        for shader in corpus_shaders()
        for debug in DEBUG_MODES
    ]
    modules += [(path.name, compile_glsl(path, debug="g")) for path in EXTRA_COMPUTE]
    lines = []
    for name, words in modules:
        path = folder / f"{name}.spv"
        path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        pipeline, layout = 0, "0 0"
        if ".comp" in name:
            with contextlib.suppress(NoLayout):
                pipeline, layout = 1, resources_of(words).line()
        lines.append(f"{path} {pipeline} {layout}")
    listing = folder / "modules.txt"
    listing.write_text("\n".join(lines) + "\n")
    return listing


def drop_pipelines(listing: Path) -> None:
    """Ask no pipeline of any module."""
    lines = [line.split(" ", 2) for line in listing.read_text().splitlines()]
    listing.write_text("".join(f"{path} 0 {layout}\n" for path, _, layout in lines))


def drop_failing_pipelines(app: Path, listing: Path) -> None:
    """Ask no pipeline of a module whose pipeline the driver alone cannot create (a feature or
    extension the device lacks)."""
    argv, environment = command("no layer", [str(app), str(listing), "1"], listing.parent)
    failing = {index for (_, index), (_, us) in run_app(argv, environment).items() if us == -2}
    lines = listing.read_text().splitlines()
    for index in failing:
        path, _, layout = lines[index].split(" ", 2)
        lines[index] = f"{path} 0 {layout}"
    listing.write_text("\n".join(lines) + "\n")


def command(
    configuration: str,
    argv: list[str],
    cache: Path,
    trees: dict[str, Path] | None = None,
    khronos_root: Path | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The app's command line and environment under ``configuration``; ``trees``: the
    checkouts of the "gpuav at PATH" configurations; ``khronos_root``: the Khronos layer laid
    out as newer-khronos.sh lays out ``$NK_ROOT`` (None: that script, on this machine)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(_LAYER_VARIABLES)}
    environment["XDG_CACHE_HOME"] = str(cache)
    tree = (trees or {}).get(configuration)
    if configuration == "gpuav" or tree is not None:
        environment.update(
            VK_ADD_LAYER_PATH=tree_layer_folder(tree) if tree else str(layer_dir()),
            VK_INSTANCE_LAYERS=LAYER_NAME,
            GPUAV_ENABLE="1",
            PYTHONPATH=str(tree or REPOSITORY),
        )
    elif configuration == "Khronos 1.4.309" and khronos_root is not None:
        khronos = khronos_configuration(khronos_root, native=False, post_process=True)
        environment.update(khronos.environment)
        return [*khronos.prefix, *argv], environment
    elif configuration == "Khronos 1.4.309":
        quoted = " ".join(f"'{part}'" for part in argv)
        return ["bash", "-c", f"source '{NEWER_KHRONOS}' && nk_vvl14 {quoted}"], environment
    return argv, environment


def run_app(
    argv: list[str], environment: dict[str, str]
) -> dict[tuple[int, int], tuple[float, float]]:
    """(pass, module index) -> (module us, pipeline us or -1)."""
    done = subprocess.run(
        argv, env=environment, capture_output=True, text=True, check=True, timeout=1800
    )
    timings = {}
    for line in done.stdout.splitlines():
        words = line.split()
        if words and words[0] == "module":
            timings[int(words[1]), int(words[2])] = (float(words[3]), float(words[4]))
    return timings


def write_instrumented(listing: Path) -> Path:
    """The list with each module as gpuav instruments it (the pass as the layer runs it, at
    lavapipe's last set) and gpuav's bindings in its pipeline layout: what the driver alone
    makes of gpuav's words."""
    from gpuav.errors import GpuavError
    from gpuav.instrument.api import instrument_shader
    from gpuav.instrument.descriptor_state import BOUND_SETS_BINDING, OUTPUT_BINDING, STATE_BINDING

    gpuav_bindings = [
        f"{GPUAV_SET} {b} 7 1" for b in (OUTPUT_BINDING, BOUND_SETS_BINDING, STATE_BINDING)
    ]
    lines = []
    for line in listing.read_text().splitlines():
        path_text, pipeline, push_bytes, count, *bindings = line.split()
        path = Path(path_text)
        words = array("I", path.read_bytes()).tolist()
        with contextlib.suppress(GpuavError):
            words = instrument_shader(
                words, shader_id=1, descriptor_set=GPUAV_SET, descriptor_state=True
            )
        instrumented = path.with_suffix(".gpuav.spv")
        instrumented.write_bytes(array("I", words).tobytes())
        if pipeline == "1":
            count = str(int(count) + len(gpuav_bindings))
            bindings += " ".join(gpuav_bindings).split()
        lines.append(" ".join([str(instrumented), pipeline, push_bytes, count, *bindings]))
    written = listing.with_name("modules.gpuav.txt")
    written.write_text("\n".join(lines) + "\n")
    return written


def measure(
    app: Path,
    listings: dict[str, Path],
    configurations: list[str],
    runs: int,
    trees: dict[str, Path] | None = None,
    khronos_root: Path | None = None,
) -> Figures:
    per_module: dict[tuple[str, str, int], list[tuple[float, float]]] = defaultdict(list)
    for _ in range(runs):
        for configuration in configurations:
            listing = listings.get(configuration, listings["no layer"])
            layers = "no layer" if configuration == DRIVER_ON_GPUAV_WORDS else configuration
            with tempfile.TemporaryDirectory(prefix="gpuav-bench-cache-") as cache:
                argv, environment = command(
                    layers, [str(app), str(listing), "2"], Path(cache), trees, khronos_root
                )
                processes = [run_app(argv, environment) for _ in range(2)]
            for scenario, (process, pass_index) in SCENARIOS.items():
                for (pass_, index), timing in processes[process].items():
                    if pass_ == pass_index:
                        per_module[configuration, scenario, index].append(timing)
    figures: Figures = defaultdict(list)
    for (configuration, scenario, _index), timings in per_module.items():
        module = statistics.median(t[0] for t in timings)
        pipeline = statistics.median(t[1] for t in timings)
        figures[configuration, scenario].append((module, pipeline))
    return figures


def summary(values: list[float]) -> str:
    if not values:
        return f"{'-':>8} {'-':>8}"
    return f"{statistics.median(values):8.1f} {statistics.mean(values):8.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-khronos", action="store_true")
    parser.add_argument("--compare-tree", type=Path)
    parser.add_argument("--no-pipelines", action="store_true")
    parser.add_argument("--khronos-root", type=Path, help="$NK_ROOT of newer-khronos.sh")
    options = parser.parse_args()
    configurations = ["no layer", "gpuav"]
    configurations += [] if options.no_pipelines else [DRIVER_ON_GPUAV_WORDS]
    trees = {}
    if options.compare_tree:
        trees[f"gpuav at {options.compare_tree}"] = options.compare_tree.resolve()
        configurations.insert(2, f"gpuav at {options.compare_tree}")
    for tree in [REPOSITORY, *trees.values()]:
        compileall.compile_dir(str(tree / "gpuav"), quiet=1)  # as an installed package runs
    configurations += [] if options.no_khronos else ["Khronos 1.4.309"]
    with tempfile.TemporaryDirectory(prefix="gpuav-bench-modules-") as folder_name:
        folder = Path(folder_name)
        app = compile_c_program(folder / "module_creation_app", [APP_SOURCE])
        listing = write_corpus(folder)
        listings = {"no layer": listing}
        if options.no_pipelines:
            drop_pipelines(listing)
        else:
            drop_failing_pipelines(app, listing)
            listings[DRIVER_ON_GPUAV_WORDS] = write_instrumented(listing)
        figures = measure(app, listings, configurations, options.runs, trees, options.khronos_root)
    modules = len(next(iter(figures.values())))
    pipelines = sum(1 for _, pipeline in next(iter(figures.values())) if pipeline >= 0)
    print(f"{modules} modules, {pipelines} with a compute pipeline; median of {options.runs} runs")
    print("figures: median and mean over modules, microseconds")
    rows = []
    for scenario in SCENARIOS:
        for configuration in configurations:
            timings = figures[configuration, scenario]
            with_pipeline = [(m, p) for m, p in timings if p >= 0]
            rows.append(
                [
                    scenario,
                    configuration,
                    summary([m for m, _ in timings]),
                    summary([p for _, p in with_pipeline]),
                    summary([m + p for m, p in with_pipeline]),
                ]
            )
    print_table(
        ["scenario", "configuration", "vkCreateShaderModule", "vkCreateComputePipelines",
         "module + pipeline"],
        rows,
    )  # fmt: skip


if __name__ == "__main__":
    main()
