"""Static validation speed: ``gpuav.validate.api.validate`` against ``spirv-val`` per module.

Issue 6's target: within 2x of spirv-val per module. Both sides get the same module files:

- ours: ``validate(bytes, target_env=..., features=every Vulkan feature, ...)``,
  reading the words included (spirv-val reads its file too); the median of the runs, in this
  process (no start-up to subtract);
- spirv-val: a process's wall time (the fastest of the runs, process timings only err upwards)
  less the fastest run on a minimal module (process start-up and tear-down), the two runs
  interleaved, so the figures compare validation work with validation work.

Workloads: the test corpus (each shader without debug info, with -g and with -gV, for its
own target environment) and one large fragment shader (bench_read_write's generator,
``-g``), per MiB. Also shown: the split between reading and the rules, and what the layer pays
when an app creates a module it already created (words hash, cached result).

The rule families measured are those registered in ``RULE_FAMILIES`` when this runs.

Usage: python benchmarks/bench_validate.py [--repeat N] [--functions N] [--breakdown]
"""

from __future__ import annotations

import argparse
import gc
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.shaders.glsl (the corpus and its compile cache)

from benchmarks.bench_read_write import MIB, MINIMAL_GLSL, large_shader, to_bytes  # noqa: E402
from benchmarks.timing import median_seconds, print_table, ratio, wall_times  # noqa: E402
from gpuav.layer import shader_validation  # noqa: E402
from gpuav.layer.reporting import Reporter  # noqa: E402
from gpuav.spirv import read  # noqa: E402
from gpuav.validate.api import RULE_FAMILIES, validate  # noqa: E402
from gpuav.validate.context import ValidationContext  # noqa: E402
from tests.shaders.glsl import DEBUG_MODES, compile_glsl, corpus_shaders  # noqa: E402
from tests.validate.features import every_extension, every_feature  # noqa: E402

# A device that enabled everything, so the corpus validates clean (no diagnostics to build).
FEATURES, EXTENSIONS = every_feature(), every_extension()


class SpirvVal:
    """Times ``spirv-val`` processes on module files, net of process start-up.

    Each run of the module is paired with a run on the minimal module just before it, so that
    the start-up subtracted was measured under the same load (the machine may be shared).
    """

    def __init__(self, work: Path, repeat: int) -> None:
        found = shutil.which("spirv-val")
        if found is None:
            raise SystemExit("spirv-val not found: install spirv-tools")
        self.executable, self.work, self.repeat = found, work, repeat
        self.minimal = self._write("minimal.spv", compile_glsl(MINIMAL_GLSL, "comp"))
        runs = wall_times(lambda: self._run(self.minimal, "vulkan1.1"), max(3 * repeat, 31))
        self.startup = min(runs)
        self.jitter = statistics.stdev(runs)

    def _write(self, name: str, words: list[int]) -> Path:
        path = self.work / name
        path.write_bytes(to_bytes(words))
        return path

    def _run(self, path: Path, target_env: str) -> None:
        subprocess.run(
            [self.executable, "--target-env", target_env, str(path)], capture_output=True
        )

    def net(self, words: list[int], target_env: str) -> float:
        module = self._write("module.spv", words)
        startup, gross = [], []
        for _ in range(self.repeat):
            startup += wall_times(lambda: self._run(self.minimal, target_env), 1)
            gross += wall_times(lambda: self._run(module, target_env), 1)
        # Fastest of each: process timings only ever err upwards (scheduling, caches).
        return max(0.0, min(gross) - min(startup))


def time_ours(words: list[int], target_env: str, repeat: int) -> tuple[float, float]:
    """(validate from bytes, read alone) medians in seconds."""
    data = to_bytes(words)
    total = median_seconds(
        lambda: validate(data, target_env=target_env, features=FEATURES, extensions=EXTENSIONS),
        repeat,
    )
    reading = median_seconds(lambda: read(data), repeat)
    return total, reading


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def corpus_rows(val: SpirvVal, repeat: int) -> list[list[str]]:
    cases = [
        (shader.compile(debug), shader.target_env)
        for shader in corpus_shaders()
        for debug in DEBUG_MODES
    ]
    ours, reads, theirs = [], [], []
    for words, target_env in cases:
        total, reading = time_ours(words, target_env, repeat)
        ours.append(total)
        reads.append(reading)
        theirs.append(val.net(words, target_env))
    per_module = [o / t for o, t in zip(ours, theirs, strict=True) if t > 0]
    mib = sum(4 * len(words) for words, _ in cases) / MIB
    median_kib = statistics.median(4 * len(words) for words, _ in cases) / 1024
    return [
        [
            f"corpus, median of {len(cases)} modules",
            f"{median_kib:.1f} KiB",
            _ms(statistics.median(ours)),
            _ms(statistics.median(reads)),
            _ms(statistics.median(theirs)),
            ratio(statistics.median(ours), statistics.median(theirs)),
        ],
        [
            "corpus, median of per-module ratios",
            "",
            "",
            "",
            "",
            f"{statistics.median(per_module):.2f}" if per_module else "n/a",
        ],
        [
            "corpus, all modules per MiB",
            f"{mib:.2f} MiB",
            f"{sum(ours) * 1e3 / mib:.1f} ms/MiB",
            f"{sum(reads) * 1e3 / mib:.1f} ms/MiB",
            f"{sum(theirs) * 1e3 / mib:.1f} ms/MiB",
            ratio(sum(ours), sum(theirs)),
        ],
    ]


def large_rows(val: SpirvVal, repeat: int, functions: int) -> list[list[str]]:
    words = compile_glsl(large_shader(functions), "frag", debug="g", source_name="large.frag")
    mib = 4 * len(words) / MIB
    total, reading = time_ours(words, "vulkan1.1", repeat)
    theirs = val.net(words, "vulkan1.1")
    rows = [
        [
            "large -g module",
            f"{mib:.2f} MiB",
            f"{total * 1e3 / mib:.1f} ms/MiB",
            f"{reading * 1e3 / mib:.1f} ms/MiB",
            f"{theirs * 1e3 / mib:.1f} ms/MiB",
            ratio(total, theirs),
        ]
    ]
    # The layer's path for a module it has seen: hash the words, find the cached result.
    device = 1
    environment = shader_validation.ShaderEnvironment("vulkan1.1", FEATURES, EXTENSIONS)
    shader_validation.post_call_record_create_device(device, environment)

    class Silent(Reporter):
        def emit(self, *_arguments: object, **_keywords: object) -> None:
            pass

    def create() -> object:
        return shader_validation.pre_call_validate_create_shader_module(
            device,
            words,
            Silent(),
        )

    create()
    cached = median_seconds(create, repeat)
    rows.append(["large, layer cache hit", f"{mib:.2f} MiB", _ms(cached), "", "", ""])
    return rows


def breakdown_rows(repeat: int) -> list[list[str]]:
    """Where our time goes on the corpus: reading, each shared analysis, each rule family
    (summed over the modules, fastest of the repeats, shown per module)."""
    cases = [
        (to_bytes(shader.compile(debug)), shader.target_env)
        for shader in corpus_shaders()
        for debug in DEBUG_MODES
    ]
    totals: dict[str, list[float]] = {}
    spent: dict[str, float] = {}

    def lap(name: str, start: float) -> float:
        now = time.perf_counter()
        spent[name] = spent.get(name, 0.0) + now - start
        return now

    for _ in range(repeat):
        spent.clear()

        for data, target_env in cases:
            start = time.perf_counter()
            module = read(data)
            start = lap("read", start)
            context = ValidationContext(
                module, target_env=target_env, features=FEATURES, extensions=EXTENSIONS
            )
            start = time.perf_counter()
            _ = context.def_use
            start = lap("analysis: def_use", start)
            _ = context.decorations
            start = lap("analysis: decorations", start)
            _ = context.types
            start = lap("analysis: types", start)
            for family in RULE_FAMILIES:
                list(family(context))
                start = lap(family.__module__.rsplit(".", 1)[-1], start)
        for name, seconds in spent.items():
            totals.setdefault(name, []).append(seconds)
    return [
        [f"  {name}", "", _ms(min(runs) / len(cases)), "", "", ""] for name, runs in totals.items()
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="timed runs per measurement")
    parser.add_argument("--functions", type=int, default=200, help="size of the large module")
    parser.add_argument(
        "--breakdown", action="store_true", help="also time reading, analyses and each family"
    )
    args = parser.parse_args()
    gc.collect()
    families = ", ".join(f"{family.__module__}.{family.__name__}" for family in RULE_FAMILIES)
    with tempfile.TemporaryDirectory(prefix="gpuav-bench-") as work:
        val = SpirvVal(Path(work), args.repeat)
        print(
            f"spirv-val start-up (minimal module): {val.startup * 1e3:.2f} ms, varying by "
            f"{val.jitter * 1e3:.2f} ms (stdev; spirv-val figures of single small modules are "
            f"within it); Python {sys.version.split()[0]}\nrule families: {families}"
        )
        rows = corpus_rows(val, args.repeat)
        rows += large_rows(val, args.repeat, args.functions)
    if args.breakdown:
        rows.append(["corpus breakdown, per module:", "", "", "", "", ""])
        rows += breakdown_rows(args.repeat)
    print_table(
        ["workload", "size", "gpuav validate", "of which read", "spirv-val net", "ours/val"],
        rows,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
