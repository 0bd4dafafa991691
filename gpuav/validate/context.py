"""What every rule family reads: the module, the environment it targets, and shared analyses.

Rule families are functions ``check(context) -> Iterable[Diagnostic]``; the analyses they need
are built once per validation, on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.module import Module
from gpuav.validate.diagnostics import Diagnostic


@dataclass
class ValidationContext:
    """``features`` are Vulkan feature names (``shaderFloat64``); ``extensions`` are device
    extension names (``VK_KHR_8bit_storage``); ``limits`` are VkPhysicalDeviceLimits (and
    transform-feedback property) names with their values, empty when unknown."""

    module: Module
    target_env: str = "vulkan1.1"
    features: frozenset[str] = frozenset()
    extensions: frozenset[str] = frozenset()
    limits: Mapping[str, int] = field(default_factory=dict)

    @cached_property
    def def_use(self) -> DefUse:
        return DefUse(self.module)

    @cached_property
    def decorations(self) -> Decorations:
        return Decorations(self.module)

    @cached_property
    def types(self) -> Types:
        return Types(self.def_use.defs)

    @property
    def vulkan_version(self) -> tuple[int, int]:
        major, minor = self.target_env.removeprefix("vulkan").split(".")
        return int(major), int(minor)


RuleFamily = Callable[[ValidationContext], Iterable[Diagnostic]]
