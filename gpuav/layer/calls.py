"""The narrow interface between the engine and a front end, in plain Python types.

The engine decides; a front end (the native layer) translates Vulkan structures into the
facts below and performs the Vulkan calls the engine asks for through ``DeviceCalls``.
Handles are ints. A failing call raises ``VulkanCallFailed`` with its VkResult.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from gpuav.errors import ResourceExhausted
from gpuav.layer.api_versions import API_VERSION_1_1 as API_VERSION_1_1
from gpuav.layer.api_versions import API_VERSION_1_2 as API_VERSION_1_2

# Vulkan constants the engine reasons with (values from the Vulkan specification).
PIPELINE_BIND_POINT_GRAPHICS = 0
PIPELINE_BIND_POINT_COMPUTE = 1
PIPELINE_BIND_POINT_RAY_TRACING = 1000165000

SHADER_STAGE_VERTEX = 0x01
SHADER_STAGE_TESSELLATION_CONTROL = 0x02
SHADER_STAGE_TESSELLATION_EVALUATION = 0x04
SHADER_STAGE_GEOMETRY = 0x08
SHADER_STAGE_FRAGMENT = 0x10
SHADER_STAGE_COMPUTE = 0x20
SHADER_STAGE_TASK = 0x40
SHADER_STAGE_MESH = 0x80
# Ray generation, any hit, closest hit, miss, intersection, callable.
SHADER_STAGES_RAY_TRACING = 0x3F00
SHADER_STAGES_INSTRUMENTED = 0x3FFF  # the stages with a stage code (record.Stage)
SHADER_STAGES_CORE = 0x3F  # those every device has; the others come with their extensions
# (VUID-VkPushConstantRange-stageFlags-parameter: no stage bit of an extension not enabled)
STAGE_EXTENSIONS = {
    "VK_EXT_mesh_shader": SHADER_STAGE_TASK | SHADER_STAGE_MESH,
    "VK_KHR_ray_tracing_pipeline": SHADER_STAGES_RAY_TRACING,
}
SHADER_STAGES_GRAPHICS = 0x1F  # those of vertexPipelineStoresAndAtomics and fragment stores

PIPELINE_STAGE_2_HOST = 0x00004000

MEMORY_PROPERTY_DEVICE_LOCAL = 0x01
MEMORY_PROPERTY_HOST_VISIBLE = 0x02
MEMORY_PROPERTY_HOST_COHERENT = 0x04
MEMORY_PROPERTY_HOST_CACHED = 0x08

COMMAND_BUFFER_LEVEL_PRIMARY = 0

OBJECT_TYPE_SHADER_MODULE = 15
OBJECT_TYPE_SHADER_EXT = 1000482000  # VK_EXT_shader_object
OBJECT_TYPE_PIPELINE = 19
OBJECT_TYPE_COMMAND_BUFFER = 6
OBJECT_TYPE_QUEUE = 4
OBJECT_TYPE_DEVICE = 3


class VulkanCallFailed(ResourceExhausted):
    """A call the layer made on its own behalf returned an error code."""

    def __init__(self, command: str, result: int) -> None:
        self.command = command
        self.result = result
        super().__init__(f"{command} failed with VkResult {result}")


@dataclass(frozen=True)
class PhysicalDeviceFacts:
    """What the engine needs to know about the physical device at CreateDevice."""

    api_version: int
    max_bound_descriptor_sets: int
    min_storage_buffer_offset_alignment: int
    max_storage_buffer_range: int
    memory_type_flags: tuple[int, ...]
    fragment_stores_and_atomics: bool
    vertex_pipeline_stores_and_atomics: bool
    buffer_device_address: bool = False  # Vulkan 1.2 feature (issue 8's context path)
    max_push_constants_size: int = 128
    shader_int64: bool = False  # the pushed context address is a uint64
    # VK_PHYSICAL_DEVICE_TYPE_CPU (llvmpipe): unrolled loop copies run slower there
    cpu: bool = False
    # The shader stages of the extensions the device is created with (STAGE_EXTENSIONS).
    extension_stages: int = 0


@dataclass(frozen=True)
class FeatureRequest:
    """Features to enable on top of the app's (seed 000: GpuPreCallRecordCreateDevice)."""

    fragment_stores_and_atomics: bool
    vertex_pipeline_stores_and_atomics: bool
    buffer_device_address: bool = False
    shader_int64: bool = False


@dataclass(frozen=True)
class StageInfo:
    """One shader stage of a pipeline create info."""

    stage: int
    module: int
    inline_words: tuple[int, ...] | None = None  # VkShaderModuleCreateInfo chained (module 0)
    name: str = ""  # of the entry point


@dataclass(frozen=True)
class PipelineInfo:
    """One pipeline create info, as far as GPU-AV cares."""

    layout: int
    stages: tuple[StageInfo, ...]
    libraries: tuple[int, ...] = ()  # the pipeline libraries it links (VK_KHR_pipeline_library)
    # VK_EXT_pipeline_robustness: the storage- and uniform-buffer behaviours it asks for
    # (VkPipelineRobustnessBufferBehaviorEXT; 0, the device's default, when it asks nothing).
    buffer_robustness: tuple[int, int] = (0, 0)
    library: bool = False  # made with VK_PIPELINE_CREATE_LIBRARY_BIT_KHR, to be linked


class PushedConstants(Protocol):
    """The push constants pushed in a command buffer's recording so far."""

    @property
    def words(self) -> int:
        """A bit per 32-bit word pushed."""

    def data(self) -> bytes:
        """The bytes pushed last."""

    def span(self, start: int, end: int) -> tuple[int, bytes]:
        """The bytes ``[start, end)`` (whole words), with a bit for each of their words that
        was pushed: what terms reading only those words are worked out from."""


class OutputBindBeforeAction(Protocol):
    """A command buffer's bind of an output block made by the layer's going down with the
    command being recorded (an action, or the pipeline bind), just before that command: the
    engine's hook of the command calls ``bind`` instead of ``cmd_bind_output_block``."""

    def bind(self, bind_point: int, layout: int, set_index: int, descriptor_set: int) -> None: ...


class DeviceCalls(Protocol):
    """Vulkan calls down the chain on one device, made on the engine's behalf."""

    def create_descriptor_set_layout(self, storage_buffer_stages: int | None) -> int:
        """Our layout (storage buffers at OUTPUT_BINDING, BOUND_SETS_BINDING and
        STATE_BINDING of ``gpuav.instrument.descriptor_state``) or, with None, an empty one."""

    def destroy_descriptor_set_layout(self, layout: int) -> None: ...

    def create_output_chunk(self, layout: ChunkLayout) -> OutputChunkHandles:
        """A host-coherent storage buffer, mapped, holding ``layout.blocks`` output blocks
        followed by as many bound-sets areas, with one descriptor set per block: binding 0
        covers its block, binding 1 its bound-sets area, binding 2 the whole state buffer."""

    def destroy_output_chunk(self, chunk: OutputChunkHandles) -> None: ...

    def create_state_buffer(
        self, size: int, memory_type_flags: tuple[int, ...], device_address: bool = False
    ) -> StateBufferHandles:
        """A host-coherent storage buffer of ``size`` bytes, mapped and zeroed; with
        ``device_address``, shaders may also reach it through its device address."""

    def destroy_state_buffer(self, handles: StateBufferHandles) -> None: ...

    def create_shader_module(self, words: list[int]) -> int: ...

    def destroy_shader_module(self, module: int) -> None: ...

    def destroy_pipeline_layout(self, layout: int) -> None: ...

    def cmd_bind_output_block(
        self,
        command_buffer: int,
        bind_point: int,
        layout: int,
        set_index: int,
        descriptor_set: int,
    ) -> None: ...

    def output_bind_before_action(self, command_buffer: int) -> OutputBindBeforeAction:
        """Where the command buffer's hooks of actions put the block to bind: kept by the
        command buffer's state while it lives."""

    def pushed_constants(self, command_buffer: int) -> PushedConstants:
        """The push constants the app pushes in the command buffer's recordings, as they
        stand whenever read: kept by the command buffer's state while it lives."""

    def cmd_push_context(
        self, command_buffer: int, layout: int, stages: int, offset: int, context: int
    ) -> None:
        """Push the 64-bit device address ``context`` at byte ``offset`` (issue 8)."""

    def cmd_host_read_barrier(self, command_buffer: int) -> None:
        """Make shader writes available to host reads (recorded at the end of a primary)."""

    def queue_signal_fence(self, queue: int) -> int:
        """Submit nothing but a fence of ours (a spare one, or new) on ``queue``; returns it."""

    def fence_signaled(self, fence: int, timeout_ns: int = 0) -> bool:
        """Whether the fence signaled, waiting at most ``timeout_ns``."""

    def destroy_fence(self, fence: int) -> None: ...

    def recycle_fence(self, fence: int) -> None:
        """Reset a signalled fence and keep it for a later ``queue_signal_fence``."""

    def destroy_spare_fences(self) -> None: ...


@dataclass(frozen=True)
class OutputChunkHandles:
    """Vulkan objects behind one output chunk: the blocks' buffer (``words`` views its mapped
    memory as uint32) and the bound-sets areas' (``area_words``), see ``ChunkLayout``."""

    buffer: int
    memory: int
    descriptor_pool: int
    descriptor_sets: tuple[int, ...]
    words: memoryview
    areas_buffer: int
    areas_memory: int
    area_words: memoryview
    # Device address of each block's context (three uint64 addresses: its output block, its
    # bound-sets area, the state buffer), written once; empty without buffer device addresses.
    context_addresses: tuple[int, ...] = ()


@dataclass(frozen=True)
class StateBufferHandles:
    """The descriptor-state buffer; ``words`` views its mapped memory as uint32."""

    buffer: int
    memory: int
    size: int
    words: memoryview
    device_address: int = 0


@dataclass(frozen=True)
class ChunkLayout:
    """Where things lie in one output chunk's two buffers (all in bytes). The blocks, which the
    host reads back after every submit, are in host-cached memory. The bound-sets areas and
    the contexts, which the host only writes and every action's shaders read first, are in
    device-local memory where the device has a host-visible kind: read across the bus, a
    new address each draw cost the H100 about 2 µs a draw."""

    blocks: int
    block_range: int
    bound_sets_range: int
    set_layout: int
    memory_type_flags: tuple[int, ...]
    state_buffer: int
    state_address: int = 0  # nonzero: give each block a context (buffer device addresses)

    @property
    def size(self) -> int:
        """Of the blocks' buffer."""
        return self.blocks * self.block_range

    @property
    def contexts_start(self) -> int:
        """In the areas' buffer, after the areas."""
        return self.blocks * self.bound_sets_range

    @property
    def areas_size(self) -> int:
        contexts = CONTEXT_BYTES * self.blocks if self.state_address else 0
        return self.contexts_start + contexts


CONTEXT_BYTES = 32  # descriptor_state: three uint64 addresses and the data word count
