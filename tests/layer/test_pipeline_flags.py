"""Which create infos make or use pipeline libraries, read from the real structures: the
``flags`` bit, a chained ``VkPipelineLibraryCreateInfoKHR``, and maintenance5's
``VkPipelineCreateFlags2CreateInfoKHR``, whose 64-bit flags replace ``flags`` when chained.
Missing the last one would instrument a library's stages, whose linked pipeline never gets
an output block bound."""

from __future__ import annotations

from typing import Any

import pytest
import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer.native.hooks_pipelines import _uses_libraries


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
    assert _uses_libraries(_info(flags, chained)) is expected


def test_linking_libraries() -> None:
    link = vkffi.new("VkPipelineLibraryCreateInfoKHR *")
    link.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR
    assert _uses_libraries(_info(0, link)) is True
