"""Our disassembly equals spirv-dis 2023.1's (friendly names and --raw-id) on every corpus module.

Comparison normalises whitespace and spelling that differs only because our grammar is newer
(see ``normalize``); the corpus currently needs none of it, which ``test_corpus_is_exact``
keeps honest for the default mode.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuav.spirv import read
from gpuav.spirv.disassembler import disassemble, generator_name
from gpuav.spirv.disassembler_literals import format_float, hex_float
from gpuav.spirv.friendly_names import friendly_names, sanitize
from gpuav.spirv.grammar import OPCODE_NAMES, OPERAND_KINDS
from gpuav.spirv.grammar_tables import ALIASES
from tests.shaders.glsl import DebugMode, compile_glsl
from tests.spirv.corpus import CASE_IDS, CASES, assemble, corpus_words, run_tool

DATA = Path(__file__).resolve().parent / "data"


def _double_bits(value: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", value))[0])


def _canonical_names() -> set[str]:
    names = set(OPCODE_NAMES.values())
    for _category, enumerants in OPERAND_KINDS.values():
        if isinstance(enumerants, dict):
            names.update(info[0] for info in enumerants.values())
    return names


# Alias -> canonical spelling, leaving out aliases that are some other kind's canonical name
# (MemorySemantics' "None"): a token cannot say which kind it belongs to.
_ALIAS_TO_CANONICAL = {
    alias: canonical
    for aliases in ALIASES.values()
    for alias, canonical in aliases.items()
    if alias not in _canonical_names()
}
# Whole names, also inside friendly ids (`%_ptr_ShaderRecordBufferNV_S`): bounded by anything
# but a letter or digit.
_ALIAS_PATTERN = re.compile(
    r"(?<![A-Za-z0-9])("
    + "|".join(sorted(map(re.escape, _ALIAS_TO_CANONICAL), key=len, reverse=True))
    + r")(?![A-Za-z0-9])"
)


def normalize(text: str) -> str:
    """Collapse whitespace per line and map grammar aliases to their canonical names."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    text = "\n".join(line for line in lines if line)
    return _ALIAS_PATTERN.sub(lambda match: _ALIAS_TO_CANONICAL[match[1]], text)


@pytest.mark.parametrize(("name", "debug"), CASES, ids=CASE_IDS)
def test_corpus_matches_spirv_dis(name: str, debug: str) -> None:
    words = corpus_words(name, debug)  # type: ignore[arg-type]
    module = read(words)
    assert normalize(disassemble(module)) == normalize(run_tool("spirv-dis", words))
    raw = disassemble(module, friendly_names=False)
    assert normalize(raw) == normalize(run_tool("spirv-dis", words, "--raw-id"))
    no_header = disassemble(module, header=False)
    assert normalize(no_header) == normalize(run_tool("spirv-dis", words, "--no-header"))


def test_corpus_is_exact() -> None:
    """Byte-for-byte, before any normalisation, on the -g build of every corpus shader."""
    for name, debug in CASES:
        if debug == "g":
            words = corpus_words(name, debug)
            assert disassemble(words) == run_tool("spirv-dis", words), name


@pytest.mark.parametrize("source", sorted(DATA.glob("*.spvasm")), ids=lambda path: path.stem)
def test_hand_written_modules_match_spirv_dis(source: Path) -> None:
    """Literals, names and operand shapes the corpus does not reach (see the files' comments)."""
    words = assemble(source.read_text())
    for options, kwargs in (((), {}), (("--raw-id",), {"friendly_names": False})):
        ours = disassemble(words, **kwargs)  # type: ignore[arg-type]
        assert normalize(ours) == normalize(run_tool("spirv-dis", words, *options))


@pytest.mark.parametrize(
    "source", [*sorted(DATA.glob("*.frag")), *sorted(DATA.glob("*.comp"))], ids=lambda p: p.name
)
@pytest.mark.parametrize("debug", ["none", "g"])
def test_hand_written_shaders_match_spirv_dis(source: Path, debug: DebugMode) -> None:
    """GLSL features outside the corpus's reach (see each file's first line)."""
    words = compile_glsl(source, debug=debug)
    assert normalize(disassemble(words)) == normalize(run_tool("spirv-dis", words))
    raw = disassemble(words, friendly_names=False)
    assert normalize(raw) == normalize(run_tool("spirv-dis", words, "--raw-id"))


def test_normalize_maps_only_aliases() -> None:
    assert (
        normalize("  OpDecorate %x BuiltIn   LaunchIdNV\n") == "OpDecorate %x BuiltIn LaunchIdKHR"
    )
    assert normalize("%_ptr_ShaderRecordBufferNV_S") == "%_ptr_ShaderRecordBufferKHR_S"
    assert normalize("%LaunchIdNVx = OpNop") == "%LaunchIdNVx = OpNop"
    assert normalize("OpDemoteToHelperInvocationEXT") == "OpDemoteToHelperInvocation"


def test_result_ids_are_right_aligned_to_the_opcode_column() -> None:
    text = disassemble(corpus_words(*CASES[0]), header=False)
    for line in text.splitlines():
        if " = " in line and line.startswith(" "):
            assert line.index(" = ") == 12, line
        elif not line.lstrip().startswith("%") and line.startswith("   "):
            assert line.index("Op") == 15 or not line.strip().startswith("Op"), line


@pytest.mark.parametrize(
    ("bits", "width", "text"),
    [
        (0x3F000000, 32, "0.5"),
        (0x3DCCCCCD, 32, "0.100000001"),
        (0x80000000, 32, "-0"),
        (0x7F800000, 32, "0x1p+128"),
        (0xFFC00000, 32, "-0x1.8p+128"),
        (0x00000001, 32, "0x1p-149"),
        (0x00000003, 32, "0x1.8p-148"),
        (0x3FB999999999999A, 64, "0.10000000000000001"),
        (_double_bits(1e-310), 64, "0x1.2688b70e62bp-1030"),
        (0x3C00, 16, "0x1p+0"),
        (0x0000, 16, "0x0p+0"),
        (0x7BFF, 16, "0x1.ffcp+15"),
        (0x8001, 16, "-0x1p-24"),
    ],
)
def test_float_spelling(bits: int, width: int, text: str) -> None:
    words = [bits & 0xFFFFFFFF, bits >> 32] if width == 64 else [bits]
    assert format_float(words, width) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_double_spelling_reads_back_exactly(value: float) -> None:
    bits = _double_bits(value)
    text = format_float([bits & 0xFFFFFFFF, bits >> 32], 64)
    parsed = float.fromhex(text) if "0x" in text else float(text)
    assert _double_bits(parsed) == bits, text


@given(st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_float_spelling_reads_back_exactly(value: float) -> None:
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    text = format_float([bits], 32)
    parsed = float.fromhex(text) if "0x" in text else float(text)
    assert struct.unpack("<I", struct.pack("<f", parsed))[0] == bits, text


@given(st.integers(0, 0xFFFF).filter(lambda bits: bits & 0x7C00 != 0x7C00))
def test_half_spelling_reads_back_exactly(bits: int) -> None:
    parsed = float.fromhex(format_float([bits], 16))
    assert struct.unpack("<H", struct.pack("<e", parsed))[0] == bits
    assert hex_float(bits, 5, 10) == format_float([bits], 16)


def test_generator_names() -> None:
    assert generator_name(8 << 16 | 11) == "Khronos Glslang Reference Front End; 11"
    assert generator_name(0 << 16 | 3) == "Khronos; 3"
    assert generator_name(4000 << 16 | 1) == "Unknown(4000); 1"


def test_sanitize_and_deduplication() -> None:
    assert sanitize(b"") == "_"
    assert sanitize(b"polynomial(d1;") == "polynomial_d1_"
    assert sanitize("é".encode()) == "__"  # one '_' per byte, as spirv-dis does
    words = assemble(
        'OpCapability Shader\nOpMemoryModel Logical GLSL450\nOpName %a "x"\nOpName %b "x"\n'
        'OpName %c "x_0"\nOpName %a "y"\n%a = OpTypeInt 32 0\n%b = OpTypeInt 32 1\n'
        "%c = OpTypeFloat 32\n%d = OpTypeFloat 32\n"
    )
    assert list(friendly_names(read(words)).values()) == ["x", "x_0", "x_0_0", "float"]


DEBUG_PRINTF_SHADER = """#version 450
#extension GL_EXT_debug_printf : enable
layout(local_size_x = 1) in;
void main() { debugPrintfEXT("id %u", gl_GlobalInvocationID.x); }
"""


@pytest.mark.parametrize("debug", ["none", "gV"])
def test_debug_printf_disassembly_reassembles_to_the_same_words(debug: DebugMode) -> None:
    """spirv-as has no grammar for NonSemantic.DebugPrintf: we print its numbers, as spirv-dis.
    With --raw-id the words come back exactly; with friendly names (which spirv-as renumbers)
    they equal what spirv-dis's own friendly text assembles to."""
    words = compile_glsl(DEBUG_PRINTF_SHADER, "comp", debug=debug)
    version = f"spv{(words[1] >> 16) & 0xFF}.{(words[1] >> 8) & 0xFF}"
    raw = disassemble(words, friendly_names=False)
    assert re.search(r"OpExtInst %\d+ %\d+ 1 ", raw), raw
    reassembled = assemble(raw, version, "--preserve-numeric-ids")
    assert reassembled[:2] == words[:2] and reassembled[3:] == words[3:]  # [2]: generator
    friendly = assemble(disassemble(words), version)
    assert friendly == assemble(run_tool("spirv-dis", words), version)
