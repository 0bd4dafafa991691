"""Interface analysis and split-output-structs timings over the shader corpus.

For every corpus module (compiled once, read once): the interface analysis alone (tables for
every entry point), the whole interface rule family (analysis, location, limit and
transform-feedback rules, with lavapipe-like limits), and, for the modules that have
struct-typed outputs, read + split-output-structs + write. Fastest of ``--runs`` runs each.

    .venv/bin/python -m benchmarks.bench_interface [--runs 20]
"""

from __future__ import annotations

import argparse
from functools import partial

from benchmarks.timing import fastest
from gpuav.spirv import read, write
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.module import Module
from gpuav.transform.split_output_structs import plan_splits, split_output_structs
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.interface import analyze_interfaces
from gpuav.validate.interface_rules import VULKAN_MINIMUM_LIMITS
from gpuav.validate.rules_interface import check
from tests.shaders.glsl import corpus_shaders

LIMITS = {**VULKAN_MINIMUM_LIMITS, "maxVertexOutputComponents": 128}


def _rules(module: Module) -> list[Diagnostic]:
    return list(check(ValidationContext(module, limits=LIMITS)))


def _split(words: list[int]) -> list[int]:
    return write(split_output_structs(read(words)))


def _round_trip(words: list[int]) -> list[int]:
    return write(read(words))


def _has_struct_outputs(words: list[int]) -> bool:
    module = read(words)
    def_use = DefUse(module)
    return bool(plan_splits(module, Types(def_use.defs), Decorations(module)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    shaders = [(shader.name, shader.compile()) for shader in corpus_shaders()]
    analysis = rules = 0.0
    for _name, words in shaders:
        module = read(words)
        analysis += fastest(partial(analyze_interfaces, module), args.runs)
        rules += fastest(partial(_rules, module), args.runs)
    count = len(shaders)
    print(f"corpus: {count} modules, {sum(len(w) for _, w in shaders) * 4} bytes")
    for label, total in (("interface analysis", analysis), ("interface rules", rules)):
        print(f"{label:20} {total * 1e3:8.2f} ms total, {total / count * 1e6:7.1f} us/module")
    for name, words in shaders:
        if not _has_struct_outputs(words):
            continue
        seconds = fastest(partial(_split, words), args.runs)
        baseline = fastest(partial(_round_trip, words), args.runs)
        print(
            f"split-output-structs {name}: {seconds * 1e6:7.1f} us "
            f"(read+write alone {baseline * 1e6:7.1f} us, {len(words) * 4} bytes)"
        )


if __name__ == "__main__":
    main()
