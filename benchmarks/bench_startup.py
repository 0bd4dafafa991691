"""What a layer adds to a program's start: vkCreateInstance, vkCreateDevice and the first
vkCreateShaderModule of a process, under no layer, gpuav and the Khronos layer 1.4.309's GPU-AV
(issue 17 target 3: instance creation + first module <= 25 ms over no layer).

The program is ``module_creation_app.c`` (C, so the layer starts its own interpreter, the
worst case) creating one small compute module (tests/layer/shaders/region.comp) and its
pipeline. Each configuration runs ``--runs`` times, interleaved; gpuav runs twice, with its
module cache warm (a second run of the program) and with the cache off. gpuav's bytecode is
compiled first (``compileall``), as an installed package's is. Figures are medians, in
milliseconds. Not a test: timings depend on the machine.

    python -m benchmarks.bench_startup [--runs 15] [--no-khronos] [--compare-tree PATH]
        [--khronos-root $NK_ROOT]

``--compare-tree`` adds gpuav as another checkout has it (its own layer build and Python),
in the same interleaved runs: before and after a change, side by side.

"paired by round" is the median of each round's own difference from the no-layer run of
that round: a machine whose speed drifts during the call moves it less than the difference
of the medians.

"vkCreateInstance to first module" is the wall time from the one call to the return of the
other, the app's calls between them included: a layer that starts its work in the background
and makes a later call wait shows it there.
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import tempfile
from pathlib import Path

from benchmarks.bench_module_creation import APP_SOURCE, command
from benchmarks.layer_apps import REPOSITORY, tree_layer_folder
from benchmarks.shader_resources import resources_of
from benchmarks.timing import print_table
from tests.apps_common.build import compile_c_program
from tests.shaders.glsl import compile_glsl

SHADER = REPOSITORY / "tests" / "layer" / "shaders" / "region.comp"
COLUMNS = (
    "vkCreateInstance",
    "vkCreateDevice",
    "first vkCreateShaderModule",
    "vkCreateInstance to first module",
)


def startup(argv: list[str], environment: dict[str, str]) -> tuple[float, ...]:
    """(instance, device, first module, span) in ms, from the app's ``startup`` line."""
    done = subprocess.run(
        argv, env=environment, capture_output=True, text=True, check=True, timeout=600
    )
    for line in done.stdout.splitlines():
        words = line.split()
        if words and words[0] == "startup":
            return tuple(float(word) / 1000 for word in words[1:5])
    raise RuntimeError(f"no startup line in {done.stdout[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-khronos", action="store_true")
    parser.add_argument("--compare-tree", type=Path)
    parser.add_argument("--khronos-root", type=Path, help="$NK_ROOT of newer-khronos.sh")
    options = parser.parse_args()
    trees = [REPOSITORY] + ([options.compare_tree] if options.compare_tree else [])
    for tree in trees:
        compileall.compile_dir(str(tree / "gpuav"), quiet=1)
    configurations = ["no layer", "gpuav", "gpuav, cache off"]
    if options.compare_tree:
        configurations.append(f"gpuav at {options.compare_tree}")
    configurations += [] if options.no_khronos else ["Khronos 1.4.309"]
    with tempfile.TemporaryDirectory(prefix="gpuav-bench-startup-") as folder_name:
        folder = Path(folder_name)
        app = compile_c_program(folder / "module_creation_app", [APP_SOURCE])
        words = compile_glsl(SHADER, debug="g")
        spv = folder / "region.spv"
        spv.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        listing = folder / "modules.txt"
        listing.write_text(f"{spv} 1 {resources_of(words).line()}\n")
        argv = [str(app), str(listing), "1"]
        samples: dict[str, list[tuple[float, ...]]] = {c: [] for c in configurations}
        for _ in range(options.runs):
            for configuration in configurations:
                name = "gpuav" if configuration.startswith("gpuav") else configuration
                run_argv, environment = command(
                    name, argv, folder / "cache", khronos_root=options.khronos_root
                )
                if configuration == "gpuav, cache off":
                    environment["GPUAV_SHADER_CACHE"] = "0"
                if configuration.startswith("gpuav at") and options.compare_tree:
                    environment["VK_ADD_LAYER_PATH"] = tree_layer_folder(options.compare_tree)
                    environment["PYTHONPATH"] = str(options.compare_tree)
                samples[configuration].append(startup(run_argv, environment))
    print(f"median of {options.runs} runs, milliseconds; one module ({SHADER.name}, -g)")
    rows = []
    base = [statistics.median(column) for column in zip(*samples["no layer"], strict=True)]
    for configuration in configurations:
        medians = [
            statistics.median(column) for column in zip(*samples[configuration], strict=True)
        ]
        added = medians[0] + medians[2] - base[0] - base[2]
        paired = statistics.median(
            run[0] + run[2] - alone[0] - alone[2]
            for run, alone in zip(samples[configuration], samples["no layer"], strict=True)
        )
        span_added = medians[3] - base[3]
        rows.append([configuration, *(f"{m:.2f}" for m in medians), f"{added:+.2f}",
                     f"{paired:+.2f}", f"{span_added:+.2f}"])  # fmt: skip
    print_table(
        ["configuration", *COLUMNS, "instance + first module over no layer",
         "the same, paired by round", "span over no layer"],
        rows,
    )  # fmt: skip


if __name__ == "__main__":
    main()
