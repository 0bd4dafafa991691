"""Issue 13: invalid SPIR-V that the driver survives never crashes the app under gpuav.

Mutated modules go through the running layer in a real Vulkan app on lavapipe
(``tools/fuzz_layer_app.py``: each one a shader module, a compute or graphics pipeline and a
dispatch or draw), run by ``tools/fuzz_layer.py`` with and without the layer. Any crash that
happens only with the layer fails the test. The long run (>= 20,000 mutants) is the tool
itself; here a bounded number runs, plus every cause the long runs found, as its own mutant.

Found causes (``fuzz_mutants/``, mutants of the tool's seeds):
- ``id_bound_2e30.*``: one bit flipped in the header's id bound (2^30 + the real bound). The
  module reads and validates, but the instrumented module's new ids lie above 2^30 and
  lavapipe crashed on it; the original, with only its bound wrong, runs.
- ``access_chain_function_type.*`` (run 1, mutant 4453): an OpTypePointer turned into an
  OpTypeFunction, the Result Type of an OpAccessChain. Lavapipe refuses the original with
  VK_ERROR_UNKNOWN but crashed in pipeline creation on the instrumented module; gpuav's
  validator now refuses it (``GPUAV-AccessChain-ResultType``).
- ``endless_loop.*`` (run 1, mutant 7263): a loop header's branch retargeted past the exit
  test, so the loop can never be left. Lavapipe drops the loop (it has no side effect); with
  gpuav's checks in it, it ran forever and the layer's wait for the queue hung. The intake now
  refuses modules with such a loop (``gpuav.spirv.analysis.endless_loops``).
"""

from __future__ import annotations

import os
import random
import sys
from array import array
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuav.layer.module_intake import MAX_ID_BOUND
from tests.layer.conftest import REPOSITORY

sys.path.insert(0, str(REPOSITORY / "tools"))  # tools/ is no package: its modules, by name
from fuzz_layer import Fuzzer, FuzzResult, Outcome
from fuzz_layer_mutants import Seed, compile_seeds

MUTANTS = Path(__file__).parent / "fuzz_mutants"
NOTICE = "GPUAV-shader-passed-unchanged"
# Like the hypothesis profiles of tests/conftest.py: CI runs the same mutants every time,
# 'dev' fewer, and 'explore' fresh ones (the run seed is in the failure message). Mutant 426
# of run seed 13 hangs lavapipe itself (without the layer): CI's 300 stop before it.
PROFILE = os.environ.get("GPUAV_HYPOTHESIS_PROFILE", "ci")
BOUNDED_COUNT = {"dev": 60}.get(PROFILE, 300)
RUN_SEED = random.randrange(1 << 30) if PROFILE == "explore" else 13


@pytest.fixture(scope="module")
def seeds() -> list[Seed]:
    return compile_seeds()


@pytest.fixture
def fuzzer(seeds: list[Seed], layer_folder: Path, tmp_path: Path) -> Fuzzer:
    return Fuzzer(seeds, RUN_SEED, tmp_path, layer_folder)


def _stage(path: Path) -> str:
    return path.name.split(".")[-2]


def _notices(outcome: Outcome, label: str) -> int:
    ids = outcome.statuses[label].partition(" ")[2]
    counts = dict(item.partition("=")[::2] for item in ids.split(",") if item)
    return int(counts.get(NOTICE, 0))


def _near_limit(seeds: list[Seed], tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Seeds whose id bound is valid (SPIR-V's limit minus 2) but leaves the pass no room."""
    for seed in seeds[::3]:  # one per source, no debug information
        words = list(seed.words)
        words[3] = MAX_ID_BOUND - 2
        path = tmp_path / f"near_limit.{seed.name}.spv"
        path.write_bytes(array("I", words).tobytes())
        yield seed.stage, path
        if seed.stage == "comp":
            yield "comp-inline", path


def test_found_mutants_run_with_one_notice_each(
    fuzzer: Fuzzer, seeds: list[Seed], tmp_path: Path
) -> None:
    modules = [(_stage(path), path) for path in sorted(MUTANTS.glob("*.spv"))]
    modules += list(_near_limit(seeds, tmp_path))
    without = fuzzer.run_modules(modules, with_layer=False)
    assert not without.crashed, without.stderr
    with_layer = fuzzer.run_modules(modules, with_layer=True)
    assert not with_layer.crashed, with_layer.stderr
    labels = [f"file{index}" for index in range(len(modules))]
    assert with_layer.finished == labels
    # Each module is passed on unchanged, and said so once; the app sees what it saw alone.
    assert [_notices(with_layer, label) for label in labels] == [1] * len(modules)
    assert [with_layer.statuses[label].split(" ")[0] for label in labels] == [
        without.statuses[label].split(" ")[0] for label in labels
    ]


def test_valid_seeds_are_instrumented_without_notice(fuzzer: Fuzzer, seeds: list[Seed]) -> None:
    modules = []
    for seed in seeds:
        path = fuzzer.work / f"{seed.name}.spv"
        path.write_bytes(array("I", seed.words).tobytes())
        modules.append((seed.stage, path))
    outcome = fuzzer.run_modules(modules, with_layer=True)
    assert not outcome.crashed, outcome.stderr
    assert [_notices(outcome, f"file{i}") for i in range(len(modules))] == [0] * len(modules)
    assert {status.split(" ")[0] for status in outcome.statuses.values()} == {"ok"}


def test_bounded_fuzz_has_no_crash_only_with_gpuav(fuzzer: Fuzzer) -> None:
    result = FuzzResult()
    fuzzer.run_range(0, BOUNDED_COUNT, result)
    assert result.modules == BOUNDED_COUNT
    assert result.with_layer_crashes == [], (RUN_SEED, result.summary())
    assert result.unreproduced == [], (RUN_SEED, result.summary())
    # The mutants reached the layer: some were refused before instrumenting, some ran.
    assert result.message_ids[NOTICE] > 0
    assert result.statuses["ok"] > 0
