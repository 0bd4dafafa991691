"""Assembly helpers shared by the validator tests: spirv-as, spirv-val, and running rule families.

Test modules are SPIR-V assembly written next to the test; ``assemble`` turns them into words
with the real ``spirv-as`` (a missing tool fails the test, it never skips).
"""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from array import array
from collections.abc import Iterable, Mapping
from pathlib import Path

from gpuav.spirv import read
from gpuav.validate.api import RULE_FAMILIES
from gpuav.validate.context import RuleFamily, ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from tests.shaders.glsl import tool, words_to_bytes


def assemble(text: str, target_env: str = "vulkan1.1") -> list[int]:
    """Words of ``text`` assembled by spirv-as for ``target_env`` (asserts that it assembled)."""
    with tempfile.TemporaryDirectory(prefix="gpuav-validate-") as work:
        source, output = Path(work) / "module.spvasm", Path(work) / "module.spv"
        source.write_text(text)
        result = subprocess.run(
            [tool("spirv-as"), "--target-env", target_env, str(source), "-o", str(output)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, f"spirv-as failed:\n{result.stderr}\n{text}"
        data = output.read_bytes()
    return array("I", data).tolist()  # spirv-as writes host byte order


def spirv_val(words: list[int], target_env: str = "vulkan1.1", *options: str) -> tuple[bool, str]:
    """Whether spirv-val accepts the module for ``target_env``, and what it said."""
    with tempfile.TemporaryDirectory(prefix="gpuav-validate-") as work:
        path = Path(work) / "module.spv"
        path.write_bytes(words_to_bytes(words))
        result = subprocess.run(
            [tool("spirv-val"), "--target-env", target_env, *options, str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
    return result.returncode == 0, result.stdout + result.stderr


# spirv-val 2025.1 comes from ../shared/tools/newer-khronos.sh (Debian 13's SPIRV-Tools, run
# under its own glibc); $NK_SPIRV_VAL names it when the script was sourced already.
NEWER_KHRONOS_SCRIPT = Path(__file__).resolve().parents[3] / "shared" / "tools" / "newer-khronos.sh"


@functools.cache
def newer_spirv_val_path() -> str:
    """The spirv-val 2025.1 wrapper (downloaded on first use; a missing script fails)."""
    known = os.environ.get("NK_SPIRV_VAL")
    if known and Path(known).is_file():
        return known
    assert NEWER_KHRONOS_SCRIPT.is_file(), f"{NEWER_KHRONOS_SCRIPT} is missing"
    result = subprocess.run(
        ["bash", "-c", f'source "{NEWER_KHRONOS_SCRIPT}" >/dev/null && echo "$NK_SPIRV_VAL"'],
        capture_output=True,
        text=True,
        check=False,
    )
    path = result.stdout.strip()
    assert result.returncode == 0 and Path(path).is_file(), result.stderr
    return path


def newer_spirv_val(
    words: list[int], target_env: str = "vulkan1.1", *options: str
) -> tuple[bool, str]:
    """Whether spirv-val 2025.1 accepts the module for ``target_env``, and what it said."""
    with tempfile.TemporaryDirectory(prefix="gpuav-validate-") as work:
        path = Path(work) / "module.spv"
        path.write_bytes(words_to_bytes(words))
        result = subprocess.run(
            [newer_spirv_val_path(), "--target-env", target_env, *options, str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
    return result.returncode == 0, result.stdout + result.stderr


def assert_spirv_val_reports(text: str, rule: str, target_env: str = "vulkan1.1") -> None:
    """spirv-val rejects ``text`` naming ``rule``: the reference agrees with our verdict."""
    accepted, output = spirv_val(assemble(text, target_env), target_env)
    assert not accepted and rule in output, output


def assert_verdicts(
    text: str,
    families: Iterable[RuleFamily],
    target_env: str,
    rule: str | None,
    spirv_val_accepts: bool,
    features: Iterable[str] = (),
) -> None:
    """``families`` report exactly ``rule`` (or nothing) on ``text``, and spirv-val accepts it
    or not as ``spirv_val_accepts`` says (it may not check the same rule)."""
    words = assemble(text, target_env)
    found = rules(
        validate_words(words, families=families, target_env=target_env, features=features)
    )
    assert found == ({rule} if rule else set())
    accepted, message = spirv_val(words, target_env)
    assert accepted == spirv_val_accepts, message


def validate_words(
    words: list[int],
    *,
    families: Iterable[RuleFamily] | None = None,
    target_env: str = "vulkan1.1",
    features: Iterable[str] = (),
    extensions: Iterable[str] = (),
    limits: Mapping[str, int] | None = None,
) -> list[Diagnostic]:
    """Diagnostics of ``families`` (default: every registered family) on a module."""
    context = ValidationContext(
        read(words),
        target_env=target_env,
        features=frozenset(features),
        extensions=frozenset(extensions),
        limits=dict(limits or {}),
    )
    chosen = RULE_FAMILIES if families is None else families
    return [diagnostic for family in chosen for diagnostic in family(context)]


def validate_asm(
    text: str,
    *,
    families: Iterable[RuleFamily] | None = None,
    target_env: str = "vulkan1.1",
    features: Iterable[str] = (),
    extensions: Iterable[str] = (),
    limits: Mapping[str, int] | None = None,
) -> list[Diagnostic]:
    """Assemble ``text`` for ``target_env`` and return the diagnostics of ``families``."""
    return validate_words(
        assemble(text, target_env),
        families=families,
        target_env=target_env,
        features=features,
        extensions=extensions,
        limits=limits,
    )


def rules(diagnostics: Iterable[Diagnostic]) -> set[str]:
    """The rule ids broken, for assertions such as ``assert RULE in rules(...)``."""
    return {diagnostic.rule for diagnostic in diagnostics}
