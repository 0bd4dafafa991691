"""Which create infos make a pipeline library (the ``flags`` bit, or maintenance5's
``VkPipelineCreateFlags2CreateInfoKHR``, whose 64-bit flags replace ``flags`` when chained)
and which libraries they link (a ``VkPipelineLibraryCreateInfoKHR`` chained anywhere in a
graphics create info's pNext, or a ray-tracing create info's ``pLibraryInfo``), read from the
real structures. Missing a link would leave a linked pipeline without the trackers of its
libraries' instrumented stages and without an output block bound for them."""

from __future__ import annotations

from typing import Any

import pytest
import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer.native.hooks_pipelines import (
    _creates_library,
    _library_handles,
    _linked_libraries,
)

LIBRARIES = (0x1234, 0x5678)


def _info(flags: int, chained: Any = None) -> Any:
    info = vkffi.new("VkGraphicsPipelineCreateInfo *")
    info.sType = vk.VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO
    info.flags = flags
    if chained is not None:
        info.pNext = chained
    return info[0]


def _flags2(flags: int) -> Any:
    chained = vkffi.new("VkPipelineCreateFlags2CreateInfoKHR *")
    chained.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR
    chained.flags = flags
    return chained


@pytest.mark.parametrize(
    ("flags", "flags2", "expected"),
    [
        (0, None, False),
        (vk.VK_PIPELINE_CREATE_LIBRARY_BIT_KHR, None, True),
        (0, vk.VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR, True),
        # chained flags2 wins over flags (VkGraphicsPipelineCreateInfo, maintenance5)
        (vk.VK_PIPELINE_CREATE_LIBRARY_BIT_KHR, 0, False),
        (0, vk.VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR | (1 << 40), True),
    ],
)
def test_library_flags(flags: int, flags2: int | None, expected: bool) -> None:
    chained = None if flags2 is None else _flags2(flags2)
    assert _creates_library(_info(flags, chained)) is expected


def _link(keep: list[Any]) -> Any:
    handles = vkffi.new("uintptr_t[]", LIBRARIES)
    link = vkffi.new("VkPipelineLibraryCreateInfoKHR *")
    link.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR
    link.libraryCount = len(LIBRARIES)
    link.pLibraries = vkffi.cast("VkPipeline *", handles)
    keep.append(handles)
    return link


def test_graphics_libraries_chained_behind_flags2() -> None:
    keep: list[Any] = []
    flags2 = _flags2(vk.VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR)
    flags2.pNext = _link(keep)
    assert _linked_libraries(_info(0)) == ()
    assert _linked_libraries(_info(0, flags2)) == LIBRARIES


def test_ray_tracing_library_info() -> None:
    keep: list[Any] = []
    info = vkffi.new("VkRayTracingPipelineCreateInfoKHR *")
    assert _library_handles(info.pLibraryInfo) == ()
    info.pLibraryInfo = _link(keep)
    assert _library_handles(info.pLibraryInfo) == LIBRARIES
