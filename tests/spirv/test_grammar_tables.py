"""The committed grammar tables are exactly what the generator makes from the pinned grammar."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from gpuav.spirv.grammar import FAST_SHAPES, OPCODES_BY_NAME, Op, StorageClass

ROOT = Path(__file__).resolve().parents[2]


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "generate_grammar", ROOT / "tools" / "generate_grammar.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_tables_match_a_fresh_generation() -> None:
    generator = _generator()
    fresh = generator.render(generator.default_grammar_dir())
    committed = (ROOT / "gpuav" / "spirv" / "grammar_tables.py").read_text()
    assert committed == fresh, "grammar_tables.py is stale: run tools/generate_grammar.py"


def test_names_keep_the_grammar_spelling() -> None:
    assert Op.AccessChain == OPCODES_BY_NAME["OpAccessChain"] == 65
    assert StorageClass.StorageBuffer == 12
    assert StorageClass.PhysicalStorageBufferEXT == StorageClass.PhysicalStorageBuffer


def test_fast_shapes_cover_every_opcode_and_are_sound() -> None:
    # OpIAdd: four ids, nothing optional; OpLoad: three ids then an optional MemoryAccess.
    assert FAST_SHAPES[Op.IAdd][:3] == (4, None, 0)
    assert FAST_SHAPES[Op.Load][0] == 3
    # OpDecorate's Decoration may carry parameters: always walked.
    assert FAST_SHAPES[Op.Decorate][0] == -1
    assert set(FAST_SHAPES) == set(OPCODES_BY_NAME.values())
