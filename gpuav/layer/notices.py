"""The layer's own messages: set-up conditions, fallbacks and warnings of seed 000's
"Limitations". Shader errors are composed by ``gpuav.report.messages`` instead."""

from __future__ import annotations

from collections.abc import Sequence

from gpuav.layer.reporting import LayerMessage

PREFIX = "GPUAV"


def _message(name: str, severity: str, text: str) -> LayerMessage:
    return LayerMessage(message_id=f"{PREFIX}-{name}", severity=severity, text=text)


def vulkan_version_too_old(version: int) -> LayerMessage:
    major, minor = version >> 22, (version >> 12) & 0x3FF
    return _message(
        "setup-vulkan-version",
        "error",
        f"GPU-assisted validation is disabled: it needs Vulkan 1.1 (SPIR-V 1.3) and this "
        f"instance/device pair runs Vulkan {major}.{minor}.",
    )


def api_version_raised(asked: int, given: int) -> LayerMessage:
    def text(version: int) -> str:
        return f"{version >> 22}.{(version >> 12) & 0x3FF}"

    return _message(
        "setup-vulkan-version-raised",
        "info",
        f"The application asked for Vulkan {text(asked or 1 << 22)}; gpuav created the instance "
        f"with apiVersion {text(given)}, which GPU-assisted validation needs (SPIR-V 1.3), so that "
        f"the application's shaders are checked on devices that support it.",
    )


def graphics_stores_unsupported() -> LayerMessage:
    return _message(
        "setup-features",
        "warning",
        "The device lacks vertexPipelineStoresAndAtomics or fragmentStoresAndAtomics: graphics "
        "pipelines keep their original shaders; only compute shaders are checked.",
    )


def setup_failed(reason: str) -> LayerMessage:
    return _message(
        "setup-failed",
        "error",
        f"GPU-assisted validation is disabled for this device: {reason}",
    )


def instrumentation_failed(reason: str) -> LayerMessage:
    return _message(
        "instrumentation-skipped",
        "warning",
        f"A shader could not be instrumented and runs unchecked: {reason}. "
        "Further shaders failing for the same reason are not reported.",
    )


def module_passed_unchanged(source: str, reason: str) -> LayerMessage:
    """Issue 13: a module gpuav cannot vouch for is never rewritten (said once per module)."""
    return _message(
        "shader-passed-unchanged",
        "warning",
        f"{source} is passed to the driver unchanged and runs unchecked: {reason}. "
        f"GPU-assisted validation instruments only modules it can read and validate, so that "
        f"invalid SPIR-V the driver survives is never made worse.",
    )


def layout_uses_reserved_set(set_index: int, set_count: int) -> LayerMessage:
    return _message(
        "pipeline-layout-conflict",
        "error",
        f"A pipeline layout uses {set_count} descriptor sets, including set {set_index} which "
        f"GPU-assisted validation needs; the layout is left unchanged and pipelines made with "
        f"it run their original, unchecked shaders (they would be checked through buffer device "
        f"addresses if the device had Vulkan 1.2's bufferDeviceAddress and the instrumentation "
        f"took a context address). Enable reserve_binding_slot to have "
        f"maxBoundDescriptorSets reported one lower. Said once per device.",
    )


def layout_reaches_buffers_by_address(set_index: int, set_count: int, offset: int) -> LayerMessage:
    return _message(
        "pipeline-layout-by-address",
        "info",
        f"A pipeline layout uses {set_count} descriptor sets, including set {set_index} which "
        f"GPU-assisted validation would use; its pipelines reach GPU-AV's buffers through buffer "
        f"device addresses instead, pushed per draw or dispatch at push-constant byte {offset}. "
        f"Said once per device.",
    )


def pipeline_uses_original_shaders(pipeline_kind: str, set_index: int) -> LayerMessage:
    return _message(
        "pipeline-original-shaders",
        "warning",
        f"A {pipeline_kind} pipeline was created with its original shaders because its layout "
        f"occupies descriptor set {set_index}; it is not checked. Said once per device.",
    )


def pipeline_library_mixed(set_index: int) -> LayerMessage:
    return _message(
        "pipeline-library-mixed",
        "error",
        f"A pipeline links libraries made with independent-sets layouts of which one uses "
        f"descriptor set {set_index} while another's took GPU-assisted validation's set there "
        f"(and the device has no buffer device addresses to reach GPU-AV's buffers otherwise): "
        f"its library stages were instrumented when each library was made, but no binding "
        f"serves them all, so the linked pipeline is not checked and its instrumented stages "
        f"find no GPU-AV set. Use fewer sets, or enable reserve_binding_slot. Said once per "
        f"device.",
    )


def ray_tracing_library_by_address(set_index: int) -> LayerMessage:
    return _message(
        "ray-tracing-library-by-address",
        "warning",
        f"A ray-tracing pipeline library, or a pipeline linking one, has a layout that occupies "
        f"descriptor set {set_index}, so its stages could reach GPU-assisted validation's "
        f"buffers only through a pushed device address, and linked ray-tracing pipelines read "
        f"push constants as zero on lavapipe (Mesa 25.0): its stages keep their original code "
        f"and are not checked. Said once per device.",
    )


def shader_object_unchecked(
    context_offset: int | None, push_ranges: Sequence[tuple[int, int, int]]
) -> LayerMessage:
    """Shader objects reach GPU-AV's buffers only through the pushed context address."""
    if context_offset is None:
        reason = (
            "GPU-assisted validation reaches its buffers from shader objects only through a "
            "device address pushed with each action, and this device lacks Vulkan 1.2's "
            "bufferDeviceAddress or shaderInt64"
        )
    else:
        ranges = ", ".join(f"bytes [{start}, {start + size})" for _, start, size in push_ranges)
        reason = (
            f"its push-constant ranges ({ranges}) do not all end at one offset of at most "
            f"{context_offset}, so the device address GPU-assisted validation pushes at byte "
            f"{context_offset} cannot join them without making the app's own pushes invalid"
        )
    return _message(
        "shader-object-unchecked",
        "warning",
        f"A shader object (VK_EXT_shader_object) runs its original, unchecked code: {reason}. "
        f"Said once per device.",
    )


def shader_object_binary() -> LayerMessage:
    return _message(
        "shader-object-binary-unchecked",
        "warning",
        "A shader object was created from binary code (VK_SHADER_CODE_TYPE_BINARY_EXT) that is "
        "not the binary of a shader object GPU-assisted validation instrumented in this "
        "process: binary code is the driver's, not SPIR-V, so it cannot be instrumented and "
        "runs unchecked (create it from SPIR-V to have it checked). Said once per device.",
    )


def resources_exhausted(reason: str) -> LayerMessage:
    return _message(
        "resources-exhausted",
        "error",
        f"GPU-assisted validation ran out of resources ({reason}); new shaders and pipelines are "
        f"no longer instrumented and errors of running ones may go unreported.",
    )


def descriptor_state_full(capacity_words: int) -> LayerMessage:
    return _message(
        "descriptor-state-full",
        "warning",
        f"The descriptor-state buffer ({capacity_words} words) is full: descriptor sets "
        f"allocated from now on are not tracked, so shaders cannot check their runtime array "
        f"sizes or unwritten descriptors. Raise GPUAV_STATE_WORDS. Said once per device.",
    )


def descriptor_buffer_unread(address: int) -> LayerMessage:
    return _message(
        "descriptor-buffer-unread",
        "warning",
        f"The descriptor buffer bytes of a set at device address {address:#x} lie in memory "
        f"the application has not mapped, or that commands write (vkCmdCopyBuffer and the "
        f"like) (VK_EXT_descriptor_buffer): GPU-assisted validation cannot read its descriptors "
        f"as they will be when used, so their array indices are checked but not whether they "
        f"were written or the ranges of their buffers. Said once per device.",
    )


def vertex_bindings_unfollowed() -> LayerMessage:
    return _message(
        "vertex-bindings-unfollowed",
        "warning",
        "A command buffer bound a vertex buffer at binding 64 or above, which gpuav does not "
        "follow: the vertex fetches of its draws are not checked (index buffers still are). "
        "Said once per device.",
    )


def action_checks_unavailable(storage_buffers: int, needed: int) -> LayerMessage:
    return _message(
        "setup-action-checks",
        "warning",
        f"The device lets a compute shader bind {storage_buffers} storage buffers "
        f"(maxPerStageDescriptorStorageBuffers) and gpuav's validation dispatch needs "
        f"{needed}: indirect commands, index values and vertex fetches are not "
        f"checked on it; shaders still are.",
    )
