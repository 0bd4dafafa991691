"""validate(): runs every family, orders diagnostics, turns a family's crash into a diagnostic."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gpuav.errors import DecodeError
from gpuav.spirv import read
from gpuav.validate import api, rules_nonuniform
from gpuav.validate.api import INTERNAL_ERROR_RULE, validate
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic, Severity
from tests.shaders.glsl import DEBUG_MODES, DebugMode, compile_glsl, corpus_shaders
from tests.validate.features import every_extension, every_feature

COMPUTE = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint values[]; };
void main() { values[gl_GlobalInvocationID.x] = 1u; }
"""


def _words() -> list[int]:
    return compile_glsl(COMPUTE, "comp")


def _late(context: ValidationContext) -> Iterator[Diagnostic]:
    yield Diagnostic("GPUAV-test-late", "late", 7)
    yield Diagnostic("GPUAV-test-module", "module-wide")


def _early(context: ValidationContext) -> Iterator[Diagnostic]:
    yield Diagnostic("GPUAV-test-early", "early", 3)


def _crashes_after_one(context: ValidationContext) -> Iterator[Diagnostic]:
    yield Diagnostic("GPUAV-test-before-crash", "found before the crash", 1)
    raise KeyError(12345)


def test_diagnostics_module_wide_first_then_by_instruction() -> None:
    found = validate(_words(), families=(_late, _early))
    assert [d.rule for d in found] == ["GPUAV-test-module", "GPUAV-test-early", "GPUAV-test-late"]


def test_a_crashing_family_becomes_an_internal_error_diagnostic() -> None:
    found = validate(_words(), families=(_crashes_after_one, _early))
    rules = [d.rule for d in found]
    assert INTERNAL_ERROR_RULE in rules
    # What the family found before it failed is kept, and later families still run.
    assert {"GPUAV-test-before-crash", "GPUAV-test-early"} <= set(rules)
    internal = next(d for d in found if d.rule == INTERNAL_ERROR_RULE)
    assert "_crashes_after_one" in internal.message and "KeyError" in internal.message


def test_module_words_and_bytes_give_the_same_answer() -> None:
    words = _words()
    data = b"".join(word.to_bytes(4, "little") for word in words)
    by_words = validate(words, families=(_early,))
    assert validate(read(words), families=(_early,)) == by_words
    assert validate(data, families=(_early,)) == by_words


@pytest.mark.parametrize("words", [[], [0x07230203], [1, 2, 3, 4, 5], [0x07230203] * 4])
def test_unreadable_words_raise_decode_error(words: list[int]) -> None:
    with pytest.raises(DecodeError):
        validate(words)


def test_unknown_target_environment_is_refused() -> None:
    with pytest.raises(ValueError, match=r"vulkan9\.9"):
        validate(_words(), target_env="vulkan9.9")


def test_registered_families_are_module_check_functions() -> None:
    assert api.RULE_FAMILIES, "no rule family registered"
    for family in api.RULE_FAMILIES:
        assert family.__name__ == "check"
        assert family.__module__.startswith("gpuav.validate.rules_")


@pytest.mark.parametrize("debug", DEBUG_MODES)
def test_corpus_validates_clean_with_its_features(debug: DebugMode) -> None:
    # Every family over real glslang output, with every feature and extension enabled: no
    # error (a false positive here would reach every app through the layer). The corpus indexes
    # descriptor arrays with varying values and no nonuniformEXT on purpose (it exercises the
    # bounds checks): the NonUniform warning is the one warning it may and must draw.
    features, extensions = every_feature(), every_extension()
    errors = {}
    warned_rules: set[str] = set()
    for shader in corpus_shaders():
        diagnostics = validate(
            shader.compile(debug),
            target_env=shader.target_env,
            features=features,
            extensions=extensions,
        )
        shader_errors = [(d.rule, d.message) for d in diagnostics if d.severity is Severity.ERROR]
        if shader_errors:
            errors[shader.name] = shader_errors
        warned_rules |= {d.rule for d in diagnostics if d.severity is Severity.WARNING}
    assert errors == {}
    assert warned_rules == {rules_nonuniform.MISSING_NON_UNIFORM}


def test_collector_state_is_restored_even_when_a_family_fails() -> None:
    import gc

    assert gc.isenabled()
    validate(_words(), families=(_crashes_after_one,))
    assert gc.isenabled()
    gc.disable()
    try:
        validate(_words(), families=(_early,))
        assert not gc.isenabled()
    finally:
        gc.enable()
