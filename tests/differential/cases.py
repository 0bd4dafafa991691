"""The differential cases: small programs with one descriptor bug each, and what they must report.

Every shader reads the index to use from a push constant (``p.index``), so one compiled
pipeline serves every index of a case; the line marked ``// BUG`` is the one a message must
name. A binding's ``written`` lists the array elements that get a descriptor (None: all of
``count``, or of ``variable_count`` for a variable-count binding); the others stay unwritten,
which only a PARTIALLY_BOUND binding allows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PARTIAL = "partial"  # PARTIALLY_BOUND
VARIABLE = "variable"  # VARIABLE_DESCRIPTOR_COUNT (with PARTIALLY_BOUND)

OUT_BINDING = 9  # every case's result buffer: set 0, binding 9
# A variable-count binding must have the largest binding number (VUID-...-pBindingFlags-03004).
VARIABLE_BINDING = 10

COMPUTE_HEAD = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x = {local_size}) in;
layout(buffer_reference, std430) buffer Data {{ vec4 v[]; }};
layout(push_constant) uniform P {{ uint index; uint pad; Data data; }} p;
layout(set = 0, binding = 9) buffer Out {{ vec4 v[4]; }} o;
"""

FRAGMENT_HEAD = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(push_constant) uniform P { uint index; } p;
layout(location = 0) out vec4 color;
"""

VERTEX = """#version 450
void main() {
    vec2 uv = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    gl_Position = vec4(uv * 2.0 - 1.0, 0.0, 1.0);
}
"""


@dataclass(frozen=True)
class BindingSpec:
    binding: int
    type: str  # a tests.harness descriptor type name
    count: int
    written: tuple[int, ...] | None = None
    flags: tuple[str, ...] = ()
    variable_count: int | None = None
    format: str = "R32G32B32A32_SFLOAT"  # of images and texel buffer views

    @property
    def length(self) -> int:
        """The array length a bounds check compares with (the allocated variable count)."""
        return self.variable_count if self.variable_count is not None else self.count

    def is_written(self, element: int) -> bool:
        return self.written is None or element in self.written


@dataclass(frozen=True)
class Case:
    """One program; ``indices`` are the push-constant values it runs with (one action each);
    ``p.data`` is the device address of a 64-byte buffer (compute only).

    ``checked`` is the binding whose index the bug line uses; ``spread`` > 1 runs that many
    invocations (compute) with index ``p.index + invocation`` (a nonuniform index).
    ``crashes_unchecked``: indices whose access, left unchecked, crashes lavapipe (not run
    under a layer that does not check them).
    """

    name: str
    stage: str  # "comp" or "frag"
    declarations: str
    body: str
    bindings: tuple[BindingSpec, ...]
    indices: tuple[int, ...]
    checked: int = 0
    spread: int = 1
    crashes_unchecked: tuple[int, ...] = field(default_factory=tuple)

    @property
    def source(self) -> str:
        head = (
            COMPUTE_HEAD.format(local_size=self.spread) if self.stage == "comp" else FRAGMENT_HEAD
        )
        return f"{head}{self.declarations}\nvoid main() {{\n{self.body}\n}}\n"

    @property
    def bug_line(self) -> int:
        return next(k for k, line in enumerate(self.source.splitlines(), 1) if "// BUG" in line)

    @property
    def stage_name(self) -> str:
        return "Compute" if self.stage == "comp" else "Fragment"

    def expected(self, index: int) -> set[tuple[str, int, int | None]]:
        """(kind, descriptor index, array length or None) for every error the run has."""
        spec = next(b for b in self.bindings if b.binding == self.checked)
        found: set[tuple[str, int, int | None]] = set()
        for element in range(index, index + self.spread):
            if element >= spec.length:
                found.add(("out-of-bounds", element, spec.length))
            elif not spec.is_written(element):
                found.add(("uninitialized", element, None))
        return found


def _compute(name: str, declarations: str, body: str, bindings: list[BindingSpec],
             indices: tuple[int, ...], **options: Any) -> Case:  # fmt: skip
    return Case(name, "comp", declarations, body, tuple(bindings), indices, **options)


def _fragment(name: str, declarations: str, body: str, bindings: list[BindingSpec],
              indices: tuple[int, ...], **options: int) -> Case:  # fmt: skip
    return Case(name, "frag", declarations, body, tuple(bindings), indices, **options)  # type: ignore[arg-type]


CASES: tuple[Case, ...] = (
    _compute(
        "combined-image-sampler-array",
        "layout(set = 0, binding = 0) uniform sampler2D t[4];",
        "    o.v[0] = textureLod(t[p.index], vec2(0.5), 0.0); // BUG",
        [BindingSpec(0, "combined_image_sampler", 4)],
        (1, 4, 1000),
    ),
    _compute(
        "sampled-image-array",
        "layout(set = 0, binding = 0) uniform texture2D t[3];\n"
        "layout(set = 0, binding = 1) uniform sampler s;",
        "    o.v[0] = textureLod(sampler2D(t[p.index], s), vec2(0.5), 0.0); // BUG",
        [BindingSpec(0, "sampled_image", 3), BindingSpec(1, "sampler", 1)],
        (2, 3),
    ),
    _compute(
        "sampler-array",
        "layout(set = 0, binding = 0) uniform sampler s[3];\n"
        "layout(set = 0, binding = 1) uniform texture2D t;",
        "    o.v[0] = textureLod(sampler2D(t, s[p.index]), vec2(0.5), 0.0); // BUG",
        [BindingSpec(0, "sampler", 3), BindingSpec(1, "sampled_image", 1)],
        (2, 5),
    ),
    _compute(
        "storage-image-array",
        "layout(set = 0, binding = 0, rgba32f) uniform image2D img[2];",
        "    o.v[0] = imageLoad(img[p.index], ivec2(0)); // BUG",
        [BindingSpec(0, "storage_image", 2)],
        (1, 2),
    ),
    _compute(
        "uniform-texel-buffer-array",
        "layout(set = 0, binding = 0) uniform samplerBuffer tb[3];",
        "    o.v[0] = texelFetch(tb[p.index], 0); // BUG",
        [BindingSpec(0, "uniform_texel_buffer", 3)],
        (0, 7),
    ),
    _compute(
        "storage-texel-buffer-array",
        "layout(set = 0, binding = 0, rgba32f) uniform imageBuffer tb[2];",
        "    imageStore(tb[p.index], 0, vec4(1.0)); // BUG",
        [BindingSpec(0, "storage_texel_buffer", 2)],
        (1, 2),
    ),
    _compute(
        "uniform-buffer-array",
        "layout(set = 0, binding = 0) uniform U { vec4 value; } u[2];",
        "    o.v[0] = u[p.index].value; // BUG",
        [BindingSpec(0, "uniform_buffer", 2)],
        (1, 2),
    ),
    _compute(
        "storage-buffer-array",
        "layout(set = 0, binding = 0) buffer S { vec4 value; } s[3];",
        "    s[p.index].value = vec4(2.0); // BUG",
        [BindingSpec(0, "storage_buffer", 3)],
        (0, 3),
    ),
    _compute(
        "runtime-storage-buffer-array",
        "layout(set = 0, binding = 10) buffer S { vec4 value; } s[];",
        "    o.v[0] = s[p.index].value; // BUG",
        [BindingSpec(10, "storage_buffer", 8, flags=(VARIABLE,), variable_count=4)],
        (3, 4, 6),
        checked=10,
    ),
    _compute(
        "runtime-sampler-array",
        "layout(set = 0, binding = 10) uniform sampler2D t[];",
        "    o.v[0] = textureLod(t[p.index], vec2(0.5), 0.0); // BUG",
        [BindingSpec(10, "combined_image_sampler", 6, flags=(VARIABLE,), variable_count=3)],
        (2, 3),
        checked=10,
    ),
    _compute(
        "partially-bound-sampler-array",
        "layout(set = 0, binding = 0) uniform sampler2D t[4];",
        "    o.v[0] = textureLod(t[p.index], vec2(0.5), 0.0); // BUG",
        [BindingSpec(0, "combined_image_sampler", 4, written=(0, 1, 3), flags=(PARTIAL,))],
        (1, 2, 4),
    ),
    _compute(
        "partially-bound-storage-buffer-array",
        "layout(set = 0, binding = 0) buffer S { vec4 value; } s[3];",
        "    o.v[0] = s[p.index].value; // BUG",
        [BindingSpec(0, "storage_buffer", 3, written=(0, 2), flags=(PARTIAL,))],
        (1, 2),
    ),
    _compute(
        "nonuniform-index",
        "layout(set = 0, binding = 0) uniform sampler2D t[4];",
        "    uint k = p.index + gl_LocalInvocationID.x;\n"
        "    o.v[gl_LocalInvocationID.x] = textureLod(t[nonuniformEXT(k)], vec2(0.5), 0.0); // BUG",
        [BindingSpec(0, "combined_image_sampler", 4)],
        (0, 2),
        spread=4,
    ),
    _compute(
        "sampler-passed-to-a-function",
        "layout(set = 0, binding = 0) uniform sampler2D t[3];\n"
        "vec4 fetch(sampler2D s) { return textureLod(s, vec2(0.5), 0.0); }",
        "    o.v[0] = fetch(t[p.index]); // BUG",
        [BindingSpec(0, "combined_image_sampler", 3)],
        (2, 3),
        crashes_unchecked=(3,),
    ),
    _compute(
        "sampler-array-passed-to-a-function",
        "layout(set = 0, binding = 0) uniform sampler2D t[3];\n"
        "vec4 pick(sampler2D s[3], uint i) {\n"
        "    return textureLod(s[i], vec2(0.5), 0.0); // BUG\n"
        "}",
        "    o.v[0] = pick(t, p.index);",
        [BindingSpec(0, "combined_image_sampler", 3)],
        (2, 3),
        crashes_unchecked=(3,),
    ),
    _compute(
        "storage-buffer-atomic-and-length",
        "layout(set = 0, binding = 0) buffer S { uint count; uint values[]; } s[2];",
        "    uint i = p.index;\n"
        "    o.v[0].x = float(atomicAdd(s[i].count, 1u) + s[i].values.length()); // BUG",
        [BindingSpec(0, "storage_buffer", 2)],
        (1, 2),
    ),
    _compute(
        "runtime-array-unwritten-element",
        "layout(set = 0, binding = 10) uniform sampler2D t[];",
        "    o.v[0] = textureLod(t[nonuniformEXT(p.index)], vec2(0.5), 0.0); // BUG",
        [
            BindingSpec(
                10,
                "combined_image_sampler",
                8,
                written=(0, 2),
                flags=(VARIABLE,),
                variable_count=4,
            )
        ],
        (0, 1, 3, 4),
        checked=10,
    ),
    _compute(
        "partially-bound-texel-buffer-array",
        "layout(set = 0, binding = 0) uniform samplerBuffer tb[3];",
        "    o.v[0] = texelFetch(tb[p.index], 0); // BUG",
        [BindingSpec(0, "uniform_texel_buffer", 3, written=(1,), flags=(PARTIAL,))],
        (0, 1, 3),
    ),
    _compute(
        "storage-image-array-store",
        "layout(set = 0, binding = 0, rgba32f) uniform writeonly image2D img[3];",
        "    imageStore(img[p.index], ivec2(0), vec4(3.0)); // BUG",
        [BindingSpec(0, "storage_image", 3)],
        (2, 0xFFFF_FFFF),
    ),
    _fragment(
        "fragment-partially-bound-sampled-image-array",
        "layout(set = 0, binding = 0) uniform texture2D t[4];\n"
        "layout(set = 0, binding = 1) uniform sampler s;",
        "    color = texture(sampler2D(t[p.index], s), vec2(0.5)); // BUG",
        [
            BindingSpec(0, "sampled_image", 4, written=(0, 1, 2), flags=(PARTIAL,)),
            BindingSpec(1, "sampler", 1),
        ],
        (2, 3, 4),
    ),
    _compute(
        "storage-buffer-range",
        "layout(set = 0, binding = 0) buffer S { vec4 values[]; } s[2];",
        "    o.v[0] = s[p.index].values[p.index * 100u]; // BUG",
        [BindingSpec(0, "storage_buffer", 2)],
        (0, 1),
    ),
    _compute(
        "dynamic-uniform-buffer-array",
        "layout(set = 0, binding = 0) uniform U { vec4 value; } u[2];",
        "    o.v[0] = u[p.index].value; // BUG",
        [BindingSpec(0, "uniform_buffer_dynamic", 2)],
        (1, 2),
    ),
    _compute(
        "dynamic-storage-buffer-array",
        "layout(set = 0, binding = 0) buffer S { vec4 value; } s[3];",
        "    s[p.index].value = vec4(5.0); // BUG",
        [BindingSpec(0, "storage_buffer_dynamic", 3)],
        (2, 3),
    ),
    _compute(
        "storage-image-atomic",
        "layout(set = 0, binding = 0, r32ui) uniform uimage2D img[2];",
        "    o.v[0].x = float(imageAtomicAdd(img[p.index], ivec2(0), 1u)); // BUG",
        [BindingSpec(0, "storage_image", 2, format="R32_UINT")],
        (1, 2),
        crashes_unchecked=(2,),
    ),
    _compute(
        "storage-texel-buffer-atomic",
        "layout(set = 0, binding = 0, r32ui) uniform uimageBuffer tb[2];",
        "    o.v[0].x = float(imageAtomicMax(tb[p.index], 0, 7u)); // BUG",
        [BindingSpec(0, "storage_texel_buffer", 2, format="R32_UINT")],
        (0, 2),
        crashes_unchecked=(2,),
    ),
    _compute(
        "device-address-range",
        "layout(set = 0, binding = 0) uniform sampler2D t[2];",
        "    o.v[0] = p.data.v[p.index * 4u]; // BUG",
        [BindingSpec(0, "combined_image_sampler", 2)],
        (0, 1),
    ),
    _fragment(
        "fragment-sampler-array",
        "layout(set = 0, binding = 0) uniform sampler2D t[2];",
        "    color = texture(t[p.index], vec2(0.5)); // BUG",
        [BindingSpec(0, "combined_image_sampler", 2)],
        (1, 2),
    ),
    _fragment(
        "fragment-runtime-storage-buffer-array",
        "layout(set = 0, binding = 10) readonly buffer S { vec4 value; } s[];",
        "    color = s[p.index].value; // BUG",
        [BindingSpec(10, "storage_buffer", 4, flags=(VARIABLE,), variable_count=2)],
        (1, 2),
        checked=10,
    ),
)
