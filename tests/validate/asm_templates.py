"""Skeleton modules for rule tests: a test writes only the lines its rule is about.

``shader(...)`` returns SPIR-V assembly with the common scalar and vector types and a few
constants already declared, so positive and negative modules differ only in what the test says.
``compute_module(...)`` is the smallest compute shader (no types beyond void), for capability
and extension tests and for timing spirv-val's start-up.
"""

from __future__ import annotations

COMMON_TYPES = """
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%float = OpTypeFloat 32
%uint = OpTypeInt 32 0
%int = OpTypeInt 32 1
%v2float = OpTypeVector %float 2
%v3float = OpTypeVector %float 3
%v4float = OpTypeVector %float 4
%v2int = OpTypeVector %int 2
%v3uint = OpTypeVector %uint 3
%v4uint = OpTypeVector %uint 4
%uint_0 = OpConstant %uint 0
%uint_1 = OpConstant %uint 1
%uint_3 = OpConstant %uint 3
%int_0 = OpConstant %int 0
%int_1 = OpConstant %int 1
%float_0 = OpConstant %float 0
%float_1 = OpConstant %float 1
"""

_MODES = {
    "GLCompute": "OpExecutionMode %main LocalSize 1 1 1",
    "Fragment": "OpExecutionMode %main OriginUpperLeft",
    "Geometry": "OpExecutionMode %main InputPoints\nOpExecutionMode %main OutputPoints\n"
    "OpExecutionMode %main OutputVertices 1\nOpExecutionMode %main Invocations 1",
    "TessellationControl": "OpExecutionMode %main OutputVertices 3",
    "TessellationEvaluation": "OpExecutionMode %main Triangles",
    "Vertex": "",
}


def shader(
    model: str = "GLCompute",
    *,
    capabilities: str = "",
    extensions: str = "",
    interface: str = "",
    decorations: str = "",
    types: str = "",
    body: str = "",
    variables: str = "",
) -> str:
    """A whole module with one entry point ``main`` of ``model``; ``body`` goes after the
    function's label (OpVariable lines of Function storage first, in ``variables``)."""
    return "\n".join(
        [
            "OpCapability Shader",
            capabilities,
            extensions,
            "OpMemoryModel Logical GLSL450",
            f'OpEntryPoint {model} %main "main" {interface}',
            _MODES[model],
            decorations,
            COMMON_TYPES,
            types,
            "%main = OpFunction %void None %fn",
            "%entry = OpLabel",
            variables,
            body,
            "OpReturn",
            "OpFunctionEnd",
            "",
        ]
    )


def compute_module(capabilities: str = "", extensions: str = "") -> str:
    """A minimal compute shader declaring extra capabilities and extensions."""
    return f"""OpCapability Shader
{capabilities}
{extensions}
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%main = OpFunction %void None %fn
%label = OpLabel
OpReturn
OpFunctionEnd
"""
