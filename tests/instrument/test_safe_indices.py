"""The guarded access indexes its descriptor with a safe index, never the raw one.

lavapipe runs a guarded block even when every lane skips it, and fetches the descriptor of a
dynamically uniform index from lane 0 then: with the raw index that read memory past the
descriptor set (the tessellation-indexed crash of tests/layer/test_wild_apps.py). The safe
index is the index modulo the array's length (the descriptor state's length for a runtime
array), computed before the branch, so that no driver can fold it with the branch condition.
"""

from __future__ import annotations

import re

import pytest

from gpuav.instrument.api import instrument_shader
from gpuav.spirv.disassembler import disassemble
from tests.instrument.filecheck import filecheck
from tests.instrument.util import DEBUG_SET, SHADER_ID
from tests.shaders.glsl import compile_glsl, spirv_val

TESE = """#version 450
layout(triangles, equal_spacing, ccw) in;
layout(set = 0, binding = 0) uniform Tint { vec4 value; } tints[2];
layout(push_constant) uniform Push { uint draw; uint bad_draw; } push;
layout(location = 0) out vec4 color_out;
void main() {
    uint index = push.draw == push.bad_draw ? 2u : 0u;
    gl_Position = vec4(gl_TessCoord, 1.0);
    color_out = tints[index].value;
}
"""

GEOM = """#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
layout(set = 0, binding = 0) uniform Tint { vec4 value; } tints[2];
layout(push_constant) uniform Push { uint draw; uint bad_draw; } push;
layout(location = 0) out vec4 color_out;
void main() {
    uint index = push.draw == push.bad_draw ? 3u : 1u;
    for (int i = 0; i < 3; ++i) {
        gl_Position = gl_in[i].gl_Position;
        color_out = tints[index].value;
        EmitVertex();
    }
    EndPrimitive();
}
"""

RUNTIME_FRAG = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 3) uniform Tint { vec4 value; } tints[];
layout(location = 0) flat in uint index;
layout(location = 0) out vec4 color;
void main() { color = tints[nonuniformEXT(index)].value; }
"""


def _instrumented_text(source: str, stage: str, descriptor_state: bool) -> str:
    words = compile_glsl(source, stage, target_env="vulkan1.2")
    out = instrument_shader(
        words, shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=descriptor_state
    )
    spirv_val(out, "vulkan1.2")
    return disassemble(out)


def _descriptor_chains(text: str) -> list[tuple[str, str]]:
    """(index operand, block label) of every access chain on ``%tints``."""
    chains = []
    label = ""
    for line in text.splitlines():
        if line.strip().endswith("= OpLabel"):
            label = line.split("=")[0].strip()
        found = re.search(r"OpAccessChain %\w+ %tints (%\w+)", line)
        if found:
            chains.append((found.group(1), label))
    return chains


@pytest.mark.parametrize(("source", "stage"), [(TESE, "tese"), (GEOM, "geom")])
@pytest.mark.parametrize("descriptor_state", [False, True])
def test_draw_stage_descriptor_is_fetched_with_the_index_modulo_the_length(
    source: str, stage: str, descriptor_state: bool
) -> None:
    text = _instrumented_text(source, stage, descriptor_state)
    check = "gpuav_check_in_table" if descriptor_state else "gpuav_check_bounds"
    filecheck(
        text,
        f"""
        CHECK: OpFunctionCall %bool %{check}
        CHECK: OpUMod %uint {{{{%[0-9]+}}}} %uint_2
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK-NEXT: OpAccessChain %_ptr_Uniform_v4float %tints
        """,
    )
    safe = re.findall(r"(%\w+) = OpUMod %uint %\w+ %uint_2", text)
    chains = _descriptor_chains(text)
    # The guarded access comes first and uses the safe index. With the state, the geometry
    # shader's loop also has a copy without checks (after it, run where the index is proven
    # below the array's length), which uses the app's index.
    copies = 1 if stage == "geom" and descriptor_state else 0
    assert len(chains) == 1 + copies and chains[0][0] in safe


def test_runtime_array_index_is_taken_modulo_the_state_length() -> None:
    """The binding's table (its descriptors' offset, length and whether the state knows it)
    is read once, in the function's first block; the check and the safe index use it."""
    text = _instrumented_text(RUNTIME_FRAG, "frag", descriptor_state=True)
    filecheck(
        text,
        """
        CHECK: OpFunctionCall %v4uint %gpuav_binding_table %uint_0 %uint_3 %uint_4294967295
        CHECK: OpFunctionCall %bool %gpuav_check_in_table %uint_{{[0-9]+}} {{%[0-9]+}}
        CHECK-NEXT: OpCompositeExtract %uint {{%[0-9]+}} 1
        CHECK-NEXT: OpIEqual %bool
        CHECK-NEXT: OpSelect %uint {{%[0-9]+}} %uint_1
        CHECK-NEXT: OpUMod %uint
        CHECK-NEXT: OpSelectionMerge
        CHECK-NOT: %gpuav_descriptor_length = OpFunction
        """,
    )
    (table,) = re.findall(r"(%\w+) = OpFunctionCall %v4uint %gpuav_binding_table", text)
    assert re.search(rf"%gpuav_check_in_table %uint_\d+ {table} ", text)
    assert f"OpCompositeExtract %uint {table} 1" in text
    safe = re.findall(r"(%\w+) = OpUMod %uint", text)
    ((index, _),) = _descriptor_chains(text)
    assert index in safe
