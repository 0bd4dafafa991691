"""Per-family validation time over the shader corpus, against spirv-val on the same modules.

Each family runs on a fresh ValidationContext whose shared analyses (def-use, decorations) are
built first and timed separately, so a family's figure is its own work. spirv-val's figure per
module is its fastest run on the module minus its fastest run on a trivial module (process
start-up excluded), over ``--runs`` runs.

    .venv/bin/python -m benchmarks.bench_validate_families [--runs 5] [--families a,b]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.timing import fastest
from gpuav.spirv import read
from gpuav.validate import api
from gpuav.validate.context import ValidationContext
from tests.shaders.glsl import corpus_shaders, tool, words_to_bytes
from tests.validate.asm import assemble
from tests.validate.asm_templates import compute_module


def spirv_val_seconds(words: list[int], target_env: str, runs: int, work: Path) -> float:
    path = work / "module.spv"
    path.write_bytes(words_to_bytes(words))
    command = [tool("spirv-val"), "--target-env", target_env, str(path)]
    return fastest(lambda: subprocess.run(command, capture_output=True, check=False), runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--families", default="", help="module names, e.g. rules_memory")
    options = parser.parse_args()
    families = [
        family
        for family in api.RULE_FAMILIES
        if not options.families
        or family.__module__.rsplit(".", 1)[-1] in options.families.split(",")
    ]
    modules = [(s.name, s.compile("none"), s.target_env) for s in corpus_shaders()]
    totals = {family.__module__.rsplit(".", 1)[-1]: 0.0 for family in families}
    setup = ours = theirs = 0.0
    with tempfile.TemporaryDirectory(prefix="gpuav-bench-") as directory:
        work = Path(directory)
        baseline = {
            env: spirv_val_seconds(assemble(compute_module(), env), env, options.runs, work)
            for env in {env for _, _, env in modules}
        }
        for _name, words, env in modules:
            theirs += max(0.0, spirv_val_seconds(words, env, options.runs, work) - baseline[env])

            def analyses(words: list[int] = words, env: str = env) -> ValidationContext:
                context = ValidationContext(read(words), target_env=env)
                _ = context.def_use, context.decorations, context.types
                return context

            setup += fastest(analyses, options.runs)
            for family in families:
                # A fresh context per run: the family pays for anything it caches on it.
                contexts = [analyses() for _ in range(options.runs)]
                best = float("inf")
                for context in contexts:
                    start = time.perf_counter()
                    list(family(context))
                    best = min(best, time.perf_counter() - start)
                totals[family.__module__.rsplit(".", 1)[-1]] += best

            def validate(words: list[int] = words, env: str = env) -> object:
                return api.validate(words, target_env=env, families=families)

            ours += fastest(validate, options.runs)
    count = len(modules)
    print(f"{count} corpus modules, fastest of {options.runs} runs, milliseconds per module")
    print(f"  read + analyses (def-use, decorations, types): {1000 * setup / count:8.3f}")
    for key, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"  {key:<28} {1000 * seconds / count:8.3f}")
    print(f"  gpuav validate (these families, end to end): {1000 * ours / count:8.3f}")
    print(f"  spirv-val (minus start-up):                   {1000 * theirs / count:8.3f}")
    print(f"  ratio gpuav / spirv-val:                      {ours / theirs:8.2f}")
    print(f"  median spirv-val start-up: {1000 * statistics.median(baseline.values()):.3f} ms")


if __name__ == "__main__":
    main()
