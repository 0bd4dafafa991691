"""Buffer view creation and destruction: the texel counts behind texel buffer descriptors."""

from __future__ import annotations

from gpuav.layer.buffer_views import BufferView
from gpuav.layer.native.dispatch import REGISTRY
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, at, handles_at
from gpuav.layer.resource_lifetimes import BUFFER_VIEW

ERROR_INITIALIZATION_FAILED = -3


def create_buffer_view(device: int, create_info: int, allocator: int, view_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkCreateBufferView(device, create_info, allocator, view_out))
    state = record.state
    if result == 0 and state is not None and state.enabled and state.descriptors is not None:
        try:
            info = at(create_info, "VkBufferViewCreateInfo")
            view = BufferView(
                address(info.buffer), int(info.format), int(info.offset), int(info.range)
            )
            handle = handles_at(view_out, 1)[0]
            state.descriptors.views.create(handle, view)
            state.descriptors.lifetimes.created(handle, BUFFER_VIEW, view.buffer)
        except BaseException as error:
            report_error("vkCreateBufferView", error, record.instance.state)
    return result


def destroy_buffer_view(device: int, view: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    state = record.state
    if state is not None and state.descriptors is not None and view:
        state.descriptors.views.destroy(view)
        state.descriptors.retire(view, BUFFER_VIEW)  # descriptors naming it (08114)
    record.next.vkDestroyBufferView(device, view, allocator)
