"""Fuzz the running layer with mutated SPIR-V: find crashes that happen only under gpuav.

Mutants (``fuzz_layer_mutants.py``) go in batches through one process of the fuzz app
(``fuzz_layer_app.py``), once without and once with the layer. When a process crashes or
hangs, its progress file names the mutant that was running; that mutant is run alone, with
and without the layer, and the batch goes on after it. A mutant that crashes alone only with
the layer is a gpuav crash (its words are saved); one that crashes both ways is the driver's,
and one that crashed without the layer is not run with it.
A crash that no single mutant reproduces is bisected over the batch's mutants up to it.

    python tools/fuzz_layer.py --count 20000 --batch 500 --out /tmp/fuzz

Lavapipe is kept on one thread (``LP_NUM_THREADS=0``), and the process on one core with
``--cpu N`` (taskset).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
sys.path.insert(0, str(HERE))
from fuzz_layer_mutants import Seed, compile_seeds, mutant  # noqa: E402

APP = HERE / "fuzz_layer_app.py"
LAYER_NAME = "VK_LAYER_GPUAV_gpu_assisted"
LAYER_DISABLED = "gpuav: layer disabled"
BATCH_TIMEOUT_S = 600
SINGLE_TIMEOUT_S = 120
RUNS_WITHOUT_LAYER = 5
_CLEARED_PREFIXES = ("GPUAV_", "VK_INSTANCE_LAYERS", "VK_LAYER_", "VK_ADD_LAYER_PATH", "VK_LOADER")


@dataclass
class Outcome:
    """One app process: which mutants finished, and how it ended."""

    finished: list[str]  # labels: mutant numbers, or fileN for --module files
    statuses: dict[str, str]
    crashed_at: str | None  # begun, never ended
    ended: bool  # the app reached its end
    returncode: int
    stderr: str

    @property
    def crashed(self) -> bool:
        return not self.ended or self.returncode != 0


@dataclass
class FuzzResult:
    modules: int = 0
    with_layer_crashes: list[int] = field(default_factory=list)  # crash with gpuav only
    driver_crashes: list[int] = field(default_factory=list)  # crash with, and alone without
    without_layer_crashes: list[int] = field(default_factory=list)  # not run with the layer
    unreproduced: list[tuple[int, int]] = field(default_factory=list)  # batch ranges
    statuses: Counter[str] = field(default_factory=Counter)
    message_ids: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def summary(self) -> dict[str, object]:
        rate = len(self.with_layer_crashes) / self.modules if self.modules else 0.0
        return {
            "modules": self.modules,
            "crashes_only_with_gpuav": sorted(self.with_layer_crashes),
            "crashes_with_and_without": sorted(self.driver_crashes),
            "crashes_without_layer": sorted(self.without_layer_crashes),
            "unreproduced_crash_ranges": self.unreproduced,
            "rate_only_with_gpuav": rate,
            "statuses": dict(self.statuses),
            "message_ids": dict(self.message_ids.most_common(40)),
            "seconds": round(self.seconds, 1),
        }


class Fuzzer:
    """Runs mutant ranges through the app, with and without the layer."""

    def __init__(
        self,
        seeds: Sequence[Seed],
        run_seed: int,
        work: Path,
        layer_folder: Path,
        cpu: int | None = None,
        extra_environment: dict[str, str] | None = None,
        tree: Path = REPOSITORY,
    ) -> None:
        self.tree = tree
        self.seeds = list(seeds)
        self.run_seed = run_seed
        self.work = work
        self.layer_folder = layer_folder
        self.cpu = cpu
        self.extra_environment = extra_environment or {}
        self.seeds_file = work / "seeds.json"
        self.seeds_file.write_text(json.dumps([seed.to_json() for seed in self.seeds]))
        self.runs = 0

    def environment(self, with_layer: bool) -> dict[str, str]:
        environment = {
            key: value for key, value in os.environ.items() if not key.startswith(_CLEARED_PREFIXES)
        }
        environment["PYTHONPATH"] = str(self.tree)
        environment["LP_NUM_THREADS"] = "0"
        if with_layer:
            environment["VK_ADD_LAYER_PATH"] = str(self.layer_folder)
            environment["VK_INSTANCE_LAYERS"] = LAYER_NAME
            environment["GPUAV_ENABLE"] = "1"
        environment.update(self.extra_environment)
        return environment

    def run_app(
        self, numbers: Sequence[int], with_layer: bool, timeout_s: int = BATCH_TIMEOUT_S
    ) -> Outcome:
        """The app on mutants ``numbers`` (a contiguous range goes as first and count)."""
        numbers = list(numbers)
        if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
            selection = ["--first", str(numbers[0]), "--count", str(len(numbers))]
        else:
            selection = ["--only", ",".join(map(str, numbers))]
        return self._run(selection, with_layer, timeout_s)

    def run_modules(
        self,
        modules: Sequence[tuple[str, Path]],
        with_layer: bool,
        timeout_s: int = BATCH_TIMEOUT_S,
    ) -> Outcome:
        """The app on saved modules, given as (stage, path); labelled file0, file1, ..."""
        selection = [f"--module={stage}={path}" for stage, path in modules]
        return self._run(selection, with_layer, timeout_s)

    def _run(self, selection: list[str], with_layer: bool, timeout_s: int) -> Outcome:
        self.runs += 1
        progress = self.work / f"progress-{self.runs}.txt"
        command = [
            sys.executable, str(APP), "--seeds", str(self.seeds_file),
            "--progress", str(progress), "--run-seed", str(self.run_seed), *selection,
        ]  # fmt: skip
        if self.cpu is not None and shutil.which("taskset"):
            command = ["taskset", "-c", str(self.cpu), *command]
        try:
            completed = subprocess.run(
                command,
                env=self.environment(with_layer),
                cwd=self.work,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
            returncode, stderr = completed.returncode, completed.stderr
        except subprocess.TimeoutExpired as expired:
            returncode = -9
            stderr = (expired.stderr or b"").decode(errors="replace") + "\n(timed out)"
        if with_layer and LAYER_DISABLED in stderr:
            # Everything then went down the chain untouched: the run fuzzed no gpuav at all.
            raise RuntimeError(f"the layer could not start its Python side: {stderr[-500:]}")
        return _read_progress(progress, returncode, stderr[-3000:])

    def run_range(self, first: int, count: int, result: FuzzResult, log: bool = False) -> None:
        """Mutants first .. first+count-1 through both configurations. Mutants that crash
        without the layer are the driver's alone: they are not run again with it."""
        driver_crashes = len(result.without_layer_crashes)
        for with_layer in (False, True):
            known = set(result.without_layer_crashes[driver_crashes:]) if with_layer else set()
            pending = [n for n in range(first, first + count) if n not in known]
            while pending:
                outcome = self.run_app(pending, with_layer)
                self._count(outcome, result, with_layer)
                if not outcome.crashed:
                    break
                done = {int(label) for label in outcome.finished}
                culprit = None if outcome.crashed_at is None else int(outcome.crashed_at)
                if culprit is None:
                    # Crashed outside any mutant (start-up or exit): bisect what ran.
                    culprit = self._bisect(pending, with_layer)
                    if culprit is None:
                        result.unreproduced.append((pending[0], pending[-1]))
                        if log:
                            where = f"{pending[0]}..{pending[-1]} (layer={with_layer})"
                            print(f"unreproduced crash in {where}: {outcome.stderr[-500:]}")
                        break
                self._classify(culprit, pending, with_layer, result, log)
                pending = [n for n in pending if n not in done and n != culprit]
        result.modules += count

    def _count(self, outcome: Outcome, result: FuzzResult, with_layer: bool) -> None:
        if not with_layer:
            return
        for status in outcome.statuses.values():
            kind, _, ids = status.partition(" ")
            result.statuses[kind] += 1
            for item in filter(None, ids.split(",")):
                name, _, number = item.partition("=")
                result.message_ids[name] += int(number or 1)

    def _classify(
        self,
        culprit: int,
        pending: Sequence[int],
        with_layer: bool,
        result: FuzzResult,
        log: bool,
    ) -> None:
        if not with_layer:
            result.without_layer_crashes.append(culprit)
            return
        alone_with = self.run_app([culprit], True, SINGLE_TIMEOUT_S)
        if not alone_with.crashed:
            # Needs what ran before it: bisect the batch's mutants up to it.
            before = [n for n in pending if n <= culprit]
            found = self._bisect(before, True)
            if found is None:
                result.unreproduced.append((before[0], culprit))
                return
            culprit = found
        # Some of lavapipe's own crashes come one run in a few: a crash only with gpuav must
        # not happen in any of several runs without it.
        for _ in range(RUNS_WITHOUT_LAYER):
            if self.run_app([culprit], False, SINGLE_TIMEOUT_S).crashed:
                result.driver_crashes.append(culprit)
                return
        result.with_layer_crashes.append(culprit)
        self.save(culprit, alone_with)
        if log:
            name = mutant(self.seeds, self.run_seed, culprit)[0].name
            print(f"gpuav-only crash: mutant {culprit} ({name}) rc={alone_with.returncode}: "
                  f"{alone_with.stderr[-300:]!r}")  # fmt: skip

    def _bisect(self, numbers: Sequence[int], with_layer: bool) -> int | None:
        """A mutant of ``numbers`` whose run (alone, or last of a crashing half) crashes."""
        numbers = list(numbers)
        if not self.run_app(numbers, with_layer).crashed:
            return None
        while len(numbers) > 1:
            half = len(numbers) // 2
            later = numbers[half:]
            numbers = later if self.run_app(later, with_layer).crashed else numbers[:half]
        return numbers[0] if self.run_app(numbers, with_layer).crashed else None

    def save(self, number: int, outcome: Outcome) -> Path:
        seed, words = mutant(self.seeds, self.run_seed, number)
        path = self.work / "crashes" / f"mutant-{self.run_seed}-{number}-{seed.name}.spv"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(array("I", words).tobytes())
        path.with_suffix(".txt").write_text(f"returncode {outcome.returncode}\n{outcome.stderr}")
        return path


def _read_progress(path: Path, returncode: int, stderr: str) -> Outcome:
    begun: str | None = None
    finished: list[str] = []
    statuses: dict[str, str] = {}
    ended = False
    text = path.read_text() if path.exists() else ""
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "begin":
            begun = rest
        elif kind == "end":
            number, _, status = rest.partition(" ")
            finished.append(number)
            statuses[number] = status
            begun = None
        elif kind == "finished":
            ended = True
    return Outcome(finished, statuses, begun, ended, returncode, stderr)


def fuzz(
    count: int,
    batch: int,
    run_seed: int,
    work: Path,
    layer_folder: Path,
    first: int = 0,
    cpu: int | None = None,
    log: bool = False,
    extra_environment: dict[str, str] | None = None,
    tree: Path = REPOSITORY,
) -> FuzzResult:
    """Mutants first .. first+count-1 in batches; the result so far is written after each."""
    fuzzer = Fuzzer(compile_seeds(), run_seed, work, layer_folder, cpu, extra_environment, tree)
    result = FuzzResult()
    start = time.perf_counter()
    for batch_first in range(first, first + count, batch):
        size = min(batch, first + count - batch_first)
        fuzzer.run_range(batch_first, size, result, log)
        result.seconds = time.perf_counter() - start
        (work / "summary.json").write_text(json.dumps(result.summary(), indent=1))
        if log:
            print(f"{result.modules} modules, {len(result.with_layer_crashes)} gpuav-only, "
                  f"{len(result.without_layer_crashes)} without layer, "
                  f"{result.seconds:.0f} s", flush=True)  # fmt: skip
    return result


def built_layer(tree: Path) -> Path:
    """The layer folder of the gpuav in ``tree``, built if needed (in a process of its own, so
    that the gpuav imported is the tree's)."""
    completed = subprocess.run(
        [sys.executable, "-c",
         "from gpuav.layer.native.build import layer_dir; print(layer_dir())"],
        cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Path(completed.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cpu", type=int, default=None, help="pin the app to this core")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--tree", type=Path, default=REPOSITORY, help="the folder holding the gpuav to fuzz"
    )
    options = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    work = options.out or Path(tempfile.mkdtemp(prefix="gpuav-fuzz-layer-"))
    work.mkdir(parents=True, exist_ok=True)
    result = fuzz(
        options.count, options.batch, options.seed, work, built_layer(options.tree),
        options.first, options.cpu, log=True, tree=options.tree,
    )  # fmt: skip
    print(json.dumps(result.summary(), indent=1))
    return 1 if result.with_layer_crashes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
