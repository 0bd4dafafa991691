"""Read + write speed of gpuav's SPIR-V core, against spirv-opt with no passes.

The layer reads and writes every shader inside vkCreateShaderModule, so this is its floor
cost. Issue 2's target: read + write of a 1 MiB module in at most 100 ms (median).

Two workloads:
- the test corpus (every shader without debug info, with -g and with -gV): median per module;
- one large fragment shader generated here (many functions of texture, matrix, branch and
  loop statements) compiled with ``glslangValidator -V -g``: per MiB.

spirv-opt with no passes also parses the module, builds its IR and emits it again. Its time
is a process's wall time (the fastest of the runs), less the same for a minimal module
(process start-up and tear-down), so that the ratio compares parsing work with parsing work. It runs
with ``--skip-validation`` (its default also runs the validator; that figure is shown too).

Usage: python benchmarks/bench_read_write.py [--repeat N] [--functions N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gc
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.shaders.glsl (the corpus and its compile cache)

from benchmarks.timing import median_seconds, print_table, ratio, wall_times  # noqa: E402
from gpuav.spirv import read, write, write_bytes  # noqa: E402
from tests.shaders.glsl import DEBUG_MODES, compile_glsl, corpus_shaders  # noqa: E402

MIB = 1 << 20
# Capability, memory model, entry point, execution mode, void, function type, function:
# the smallest module worth starting spirv-opt on.
MINIMAL_GLSL = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n"


def large_shader(functions: int, seed: int = 2) -> str:
    """A fragment shader whose size grows with ``functions`` (about 5 KiB of SPIR-V each)."""
    rng = random.Random(seed)
    lines = [
        "#version 450",
        "layout(set = 0, binding = 0) uniform sampler2D textures[8];",
        "layout(set = 0, binding = 1) uniform Uniforms { vec4 k[16]; mat4 m; int n; } u;",
        "layout(set = 0, binding = 2, std430) buffer Data { vec4 values[]; } data;",
        "layout(location = 0) in vec2 uv;",
        "layout(location = 0) out vec4 color;",
    ]
    statements = [
        "acc += texture(textures[index & 7], uv * {r} + acc.xy) * scale;",
        "acc = u.m * acc + u.k[(index + {j}) & 15];",
        "if (acc.x > {r}) {{ acc.yz = sin(acc.zw) * {r}; }} else {{ acc.w = dot(acc, u.k[{j}]); }}",
        "for (int t = 0; t < u.n; ++t) {{ acc = mix(acc, data.values[t + {j}], 0.5); }}",
        "acc = clamp(acc * vec4({r}, 2.0, 3.0, 4.0), vec4(0.0), vec4(1.0));",
        "data.values[index + {j}] = acc + textureLod(textures[{j} & 7], acc.zw, 1.0);",
    ]
    for number in range(functions):
        lines.append(f"vec4 step{number}(vec4 acc, float scale, int index) {{")
        for j in range(12):
            statement = rng.choice(statements)
            lines.append("    " + statement.format(r=f"{rng.random():.3f}", j=j))
        lines.append("    return acc;\n}")
    lines.append("void main() {\n    vec4 c = vec4(uv, 0.0, 1.0);")
    lines += [f"    c = step{n}(c, {rng.random():.3f}, {n});" for n in range(functions)]
    lines.append("    color = c;\n}")
    return "\n".join(lines) + "\n"


def to_bytes(words: list[int]) -> bytes:
    return b"".join(word.to_bytes(4, sys.byteorder) for word in words)


class SpirvOpt:
    """Times ``spirv-opt`` processes on module files, net of process start-up."""

    def __init__(self, work: Path, repeat: int) -> None:
        found = shutil.which("spirv-opt")
        if found is None:
            raise SystemExit("spirv-opt not found: install spirv-tools")
        self.executable = found
        self.work = work
        self.repeat = repeat
        minimal = compile_glsl(MINIMAL_GLSL, "comp")
        startup_runs = {
            validate: self.runs(minimal, validate, max(3 * repeat, 31))
            for validate in (False, True)
        }
        self.startup = {validate: min(runs) for validate, runs in startup_runs.items()}
        # How much start-up alone varies: per-module figures below this are noise.
        self.jitter = statistics.stdev(startup_runs[False])

    def gross(self, words: list[int], validate: bool) -> float:
        """Fastest of the runs: process timings only ever err upwards (scheduling, caches)."""
        return min(self.runs(words, validate, self.repeat))

    def runs(self, words: list[int], validate: bool, repeat: int) -> list[float]:
        source, output = self.work / "in.spv", self.work / "out.spv"
        source.write_bytes(to_bytes(words))
        command = [self.executable, str(source), "-o", str(output)]
        if not validate:
            command.insert(1, "--skip-validation")

        def run() -> None:
            subprocess.run(command, check=True, capture_output=True)

        return wall_times(run, repeat)

    def net(self, words: list[int], validate: bool = False) -> float:
        return max(0.0, self.gross(words, validate) - self.startup[validate])


def time_ours(words: list[int], repeat: int) -> tuple[float, float, float]:
    """(read, write, layer-like cycle) medians in seconds; checks the round trip first.

    The cycle is what vkCreateShaderModule does with a module: bytes in, read, write bytes
    out, free. It also allocates a few containers before freeing, so that a garbage
    collection that read() left due is paid for here rather than by whoever allocates next.
    """
    if write(read(words)) != words:
        raise SystemExit("round trip failed: write(read(words)) != words")
    data = to_bytes(words)

    def cycle() -> bytes:
        result = write_bytes(read(data))
        _later_allocations: list[list[int]] = [[] for _ in range(1000)]
        return result

    cycle_time = median_seconds(cycle, repeat)  # first, while no other module is alive
    read_time = median_seconds(lambda: read(words), repeat)
    module = read(words)
    write_time = median_seconds(lambda: write(module), repeat)
    return read_time, write_time, cycle_time


def corpus_rows(opt: SpirvOpt, repeat: int) -> list[list[str]]:
    modules = [shader.compile(debug) for shader in corpus_shaders() for debug in DEBUG_MODES]
    reads, writes, both, opt_net = [], [], [], []
    for words in modules:
        read_time, write_time, _bytes_time = time_ours(words, repeat)
        reads.append(read_time)
        writes.append(write_time)
        both.append(read_time + write_time)
        opt_net.append(opt.net(words))
    total_mib = sum(4 * len(words) for words in modules) / MIB
    median_kib = statistics.median(4 * len(words) for words in modules) / 1024
    ours, theirs = statistics.median(both), statistics.median(opt_net)
    return [
        [
            f"corpus, median of {len(modules)} modules",
            f"{median_kib:.1f} KiB",
            f"{statistics.median(reads) * 1e3:.2f} ms",
            f"{statistics.median(writes) * 1e3:.2f} ms",
            f"{ours * 1e3:.2f} ms",
            f"{theirs * 1e3:.2f} ms",
            ratio(ours, theirs),
        ],
        [
            "corpus, all modules per MiB",
            f"{total_mib:.2f} MiB",
            f"{sum(reads) * 1e3 / total_mib:.1f} ms/MiB",
            f"{sum(writes) * 1e3 / total_mib:.1f} ms/MiB",
            f"{sum(both) * 1e3 / total_mib:.1f} ms/MiB",
            f"{sum(opt_net) * 1e3 / total_mib:.1f} ms/MiB",
            ratio(sum(both), sum(opt_net)),
        ],
    ]


def large_rows(opt: SpirvOpt, repeat: int, functions: int, keep: Path | None) -> list[list[str]]:
    words = compile_glsl(large_shader(functions), "frag", debug="g", source_name="large.frag")
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / "large.spv").write_bytes(to_bytes(words))
    mib = 4 * len(words) / MIB
    if mib < 1:
        raise SystemExit(f"the large module is only {mib:.2f} MiB: raise --functions")
    read_time, write_time, bytes_time = time_ours(words, repeat)
    ours = read_time + write_time
    rows: list[list[str]] = []
    for label, validate in (("opt --skip-validation", False), ("opt validating", True)):
        theirs = opt.net(words, validate)
        rows.append(
            [
                f"large -g module; {label}",
                f"{mib:.2f} MiB",
                f"{read_time * 1e3 / mib:.1f} ms/MiB",
                f"{write_time * 1e3 / mib:.1f} ms/MiB",
                f"{ours * 1e3 / mib:.1f} ms/MiB",
                f"{theirs * 1e3 / mib:.1f} ms/MiB",
                ratio(ours, theirs),
            ]
        )
    cycle = f"{bytes_time * 1e3 / mib:.1f} ms/MiB"
    label = "large; bytes in/out, free, GC"
    rows.append([label, f"{mib:.2f} MiB", "", "", cycle, "", ratio(bytes_time, opt.net(words))])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="timed runs per measurement")
    parser.add_argument("--functions", type=int, default=600, help="size of the large module")
    parser.add_argument("--keep", type=Path, help="also write the large module here")
    args = parser.parse_args()
    gc.collect()
    with tempfile.TemporaryDirectory(prefix="gpuav-bench-") as work:
        opt = SpirvOpt(Path(work), args.repeat)
        print(
            f"spirv-opt start-up (minimal module): {opt.startup[False] * 1e3:.1f} ms, "
            f"{opt.startup[True] * 1e3:.1f} ms validating, varying by {opt.jitter * 1e3:.2f} ms "
            f"(stdev; spirv-opt figures of single small modules are within it); "
            f"Python {sys.version.split()[0]}"
        )
        rows = corpus_rows(opt, args.repeat)
        rows += large_rows(opt, args.repeat, args.functions, args.keep)
    print_table(
        ["workload", "size", "read", "write", "read+write", "spirv-opt net", "ours/opt"], rows
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
