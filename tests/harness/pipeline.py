"""Running a compute shader once, and the pieces graphics runs share with it.

Every run builds its own pipeline, layout and descriptor sets and destroys them afterwards, so
tests stay independent; the buffers and images a test created outlive the run and can be read
back (``RunResult.buffers`` holds a snapshot of every buffer the run referenced).
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import vulkan as vkapi

from tests.harness.buffers import Buffer, BytesLike, as_bytes, memory_barrier
from tests.harness.descriptors import DescriptorSets, SetsArg, normalize_sets

if TYPE_CHECKING:
    from tests.harness.context import VulkanContext

ffi = vkapi.ffi

SpirvWords = Sequence[int] | bytes | np.ndarray
Specialization = Mapping[int, int | float | bool | bytes]


@dataclass
class RunResult:
    """What a run left behind: buffer snapshots, and the colour image for graphics runs."""

    buffers: dict[Buffer, bytes] = field(default_factory=dict)
    color: Any = None  # numpy array (height, width[, channels]) for graphics runs

    def buffer(self, buffer: Buffer, dtype: Any = np.uint32) -> Any:
        """The snapshot of ``buffer`` as a numpy array of ``dtype``."""
        raw = self.buffers[buffer]
        usable = len(raw) - len(raw) % np.dtype(dtype).itemsize
        return np.frombuffer(raw[:usable], dtype=dtype).copy()


def spirv_bytes(words: SpirvWords) -> bytes:
    if isinstance(words, bytes):
        return words
    if isinstance(words, np.ndarray):
        return np.ascontiguousarray(words, dtype=np.uint32).tobytes()
    return array("I", words).tobytes()


def create_shader_module(vk: VulkanContext, words: SpirvWords) -> Any:
    code = spirv_bytes(words)
    info = vkapi.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code)
    return vkapi.vkCreateShaderModule(vk.device, info, None)


def _pack_constant(value: int | float | bool | bytes) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, bool):
        return struct.pack("<I", vkapi.VK_TRUE if value else vkapi.VK_FALSE)
    if isinstance(value, float):
        return struct.pack("<f", value)
    if value < 0:
        return struct.pack("<i" if value >= -(2**31) else "<q", value)
    return struct.pack("<I" if value < 2**32 else "<Q", value)


class Keep:
    """Holds cffi structs until the call that reads them returns.

    The ``vulkan`` package copies a list of structs into a fresh C array but does not keep the
    Python structs alive, and those own the memory behind their own pointer fields (names,
    nested arrays). Anything nested must therefore be referenced from here.
    """

    def __init__(self) -> None:
        self.items: list[Any] = []

    def __call__(self, item: Any) -> Any:
        self.items.append(item)
        return item


def specialization_info(keep: Keep, constants: Specialization | None) -> Any:
    if not constants:
        return None
    entries, data = [], b""
    for constant_id, value in sorted(constants.items()):
        packed = _pack_constant(value)
        entries.append(
            vkapi.VkSpecializationMapEntry(
                constantID=constant_id, offset=len(data), size=len(packed)
            )
        )
        data += packed
    # pData is void*: the package cannot turn bytes into void[], so hand it a char[] cdata.
    payload = keep(ffi.new("char[]", data))
    return keep(vkapi.VkSpecializationInfo(pMapEntries=entries, dataSize=len(data), pData=payload))


def stage_info(keep: Keep, stage: int, module: Any, entry: str, constants: Any) -> Any:
    return keep(
        vkapi.VkPipelineShaderStageCreateInfo(
            stage=stage, module=module, pName=entry, pSpecializationInfo=constants
        )
    )


@dataclass
class PipelineLayout:
    """Descriptor sets plus a pipeline layout covering them (gaps filled) and push constants."""

    vk: VulkanContext
    sets: DescriptorSets
    push_constant_stages: int
    push_constants: bytes | None
    handle: Any = None

    def __post_init__(self) -> None:
        ranges = None
        if self.push_constants:
            ranges = [
                vkapi.VkPushConstantRange(
                    stageFlags=self.push_constant_stages,
                    offset=0,
                    size=len(self.push_constants),
                )
            ]
        info = vkapi.VkPipelineLayoutCreateInfo(
            pSetLayouts=self.sets.layouts or None, pPushConstantRanges=ranges
        )
        self.handle = vkapi.vkCreatePipelineLayout(self.vk.device, info, None)

    def bind(self, command_buffer: Any, bind_point: int) -> None:
        self.sets.bind(command_buffer, bind_point, self.handle)
        if self.push_constants:
            data = ffi.from_buffer(self.push_constants)  # void* wants a cdata, not bytes
            vkapi.vkCmdPushConstants(
                command_buffer,
                self.handle,
                self.push_constant_stages,
                0,
                len(self.push_constants),
                data,
            )

    def destroy(self) -> None:
        vkapi.vkDestroyPipelineLayout(self.vk.device, self.handle, None)
        self.sets.destroy()


def make_layout(
    vk: VulkanContext, sets: SetsArg | None, stages: int, push_constants: BytesLike | None
) -> PipelineLayout:
    raw = None if push_constants is None else as_bytes(push_constants)
    if raw is not None and len(raw) % 4:
        raise ValueError("push constant size must be a multiple of 4")
    descriptor_sets = DescriptorSets(vk, normalize_sets(sets))
    try:
        return PipelineLayout(vk, descriptor_sets, stages, raw)
    except BaseException:
        descriptor_sets.destroy()
        raise


def snapshot(buffers: Sequence[Buffer]) -> dict[Buffer, bytes]:
    return {buffer: buffer.read() for buffer in buffers}


def run_compute(
    vk: VulkanContext,
    spirv_words: SpirvWords,
    sets: SetsArg | None = None,
    push_constants: BytesLike | None = None,
    specialization: Specialization | None = None,
    group_count: tuple[int, int, int] = (1, 1, 1),
    entry: str = "main",
    indirect_buffer: Buffer | None = None,
) -> RunResult:
    """Dispatch ``spirv_words`` once (or indirectly from ``indirect_buffer``) and wait."""
    keep = Keep()
    with ExitStack() as cleanup:
        layout = make_layout(vk, sets, vkapi.VK_SHADER_STAGE_COMPUTE_BIT, push_constants)
        cleanup.callback(layout.destroy)
        module = create_shader_module(vk, spirv_words)
        cleanup.callback(vkapi.vkDestroyShaderModule, vk.device, module, None)
        constants = specialization_info(keep, specialization)
        stage = stage_info(keep, vkapi.VK_SHADER_STAGE_COMPUTE_BIT, module, entry, constants)
        info = vkapi.VkComputePipelineCreateInfo(
            stage=stage, layout=layout.handle, basePipelineIndex=-1
        )
        pipeline = vkapi.vkCreateComputePipelines(vk.device, None, 1, [info], None)[0]
        cleanup.callback(vkapi.vkDestroyPipeline, vk.device, pipeline, None)
        bind_point = vkapi.VK_PIPELINE_BIND_POINT_COMPUTE

        def record(command_buffer: Any) -> None:
            memory_barrier(command_buffer)
            vkapi.vkCmdBindPipeline(command_buffer, bind_point, pipeline)
            layout.bind(command_buffer, bind_point)
            if indirect_buffer is not None:
                vkapi.vkCmdDispatchIndirect(command_buffer, indirect_buffer.handle, 0)
            else:
                vkapi.vkCmdDispatch(command_buffer, *group_count)
            memory_barrier(command_buffer, host_read=True)

        vk.submit(record)
        referenced = layout.sets.buffers()
        if indirect_buffer is not None and indirect_buffer not in referenced:
            referenced.append(indirect_buffer)
        return RunResult(buffers=snapshot(referenced))
