"""What the layer knows about the action whose output block held error records.

The layer builds one ``ActionContext`` per draw or dispatch that reported something and hands
it, with the decoded records, to ``gpuav.report.messages.compose_messages``. Handles are ints;
names are the app's ``vkSetDebugUtilsObjectNameEXT`` names, or None.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from gpuav.report.address_text import AddressedBuffer
from gpuav.report.buffer_range_text import BufferDescriptor
from gpuav.report.unusable_descriptor_text import RetiredResource


@dataclass(frozen=True)
class ShaderContext:
    """One shader of the action's pipeline, found through the record's shader id."""

    shader_id: int
    shader_module: int  # 0 when the code was given inline (VkShaderModuleCreateInfo in pNext)
    shader_module_name: str | None
    pipeline: int
    words: tuple[int, ...]  # the original (uninstrumented) SPIR-V
    shader_object: int = 0  # the VkShaderEXT that runs it (then pipeline and module are 0)
    shader_object_name: str | None = None


@dataclass(frozen=True)
class RecordingSite:
    """The Python source line that recorded an action (only for programs written in Python)."""

    file: str
    line: int
    function: str

    def describe(self) -> str:
        """``train.py:42 in step()``."""
        return f"{os.path.basename(self.file)}:{self.line} in {self.function}()"


def _no_buffer(address: int, size: int) -> AddressedBuffer | None:
    return None


def _no_descriptor(descriptor_set: int, binding: int, index: int) -> BufferDescriptor | None:
    return None


def _not_retired(descriptor_set: int, binding: int, index: int) -> RetiredResource | None:
    return None


def _not_described(descriptor_set: int, binding: int, index: int) -> str | None:
    return None


@dataclass(frozen=True)
class ActionContext:
    """A draw or dispatch: where it was recorded and what it ran."""

    command_buffer: int
    command_buffer_name: str | None
    # From 0, counting every draw and dispatch in the command buffer (as the Khronos layer
    # does); None when unknown (the spill block's records, a decoded file)
    action_number: int | None
    command: str  # the Vulkan command, e.g. "vkCmdDispatch"
    pipeline: int
    pipeline_name: str | None
    shaders: tuple[ShaderContext, ...]
    # Descriptor count of each (set, binding) of the pipeline layout, where the layer knows it
    # (for variable-count bindings, the count allocated): messages about uninitialized
    # descriptors quote it.
    binding_sizes: Mapping[tuple[int, int], int] = field(default_factory=dict)
    # The buffer descriptor at (set, binding, index) of the action's bound sets, where the
    # layer tracks it (buffer-range messages name the buffer).
    buffer_descriptor: Callable[[int, int, int], BufferDescriptor | None] = _no_descriptor
    # Robust buffer access (the device's robustBufferAccess(2), or the pipeline's robustness)
    # for (storage, uniform) buffers: out-of-range accesses are defined behaviour there,
    # reported as warnings.
    robust_buffers: tuple[bool, bool] = (False, False)
    recorded_at: RecordingSite | None = None
    labels: tuple[str, ...] = ()  # debug-utils label regions open at the action, outermost first
    # The buffer a device address falls in or lies nearest to (address, size), where the layer
    # knows one (device-address messages name it).
    address_buffer: Callable[[int, int], AddressedBuffer | None] = _no_buffer
    # Why a descriptor (set, binding, index) of the action's bound sets may not be used,
    # when its resource was destroyed (None: never written, or not known).
    retired_descriptor: Callable[[int, int, int], RetiredResource | None] = _not_retired
    # What an image or sampler descriptor (set, binding, index) of the action's bound sets
    # holds, described (messages about a descriptor not fitting its access quote it).
    image_descriptor: Callable[[int, int, int], str | None] = _not_described
    # The pipeline bind point the action ran at (None: not known), for commands that draw or
    # dispatch alike (vkCmdExecuteGeneratedCommandsEXT).
    bind_point: int | None = None
    # The set indices whose descriptors the action found in descriptor buffers
    # (VK_EXT_descriptor_buffer): an unusable one there is VUID-...-None-08116.
    descriptor_buffer_sets: frozenset[int] = frozenset()

    def robust(self, storage: bool) -> bool:
        return self.robust_buffers[0 if storage else 1]

    def shader(self, shader_id: int) -> ShaderContext | None:
        """The shader a record names, or None for an unknown id (corrupt record)."""
        for shader in self.shaders:
            if shader.shader_id == shader_id:
                return shader
        return None
