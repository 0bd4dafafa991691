"""Submissions of app command buffers with indirect and vertex-fetch checks
(``gpuav.layer.action_checks``): each is followed, in the same batch, by gpuav's command
buffers that check it and the secondaries it executes; the rest of the submission goes to the
layer's general hook unchanged.
"""

from __future__ import annotations

from typing import Any

from vulkan._vulkan import ffi as vkffi

from gpuav.layer import action_checks as checks
from gpuav.layer.native import hooks_queue
from gpuav.layer.native.dispatch import REGISTRY
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, chain, handles_at


def queue_submit(queue: int, count: int, submits: int, fence: int) -> int:
    keep: list[Any] = []
    passed = _with_validation(queue, "vkQueueSubmit", count, submits, keep, _submit_infos)
    return hooks_queue.queue_submit_hook(queue, count, passed, fence)


def queue_submit2(queue: int, count: int, submits: int, fence: int) -> int:
    keep: list[Any] = []
    passed = _with_validation(queue, "vkQueueSubmit2", count, submits, keep, _submit_infos2)
    return hooks_queue.queue_submit2_hook(queue, count, passed, fence)


def _with_validation(
    queue: int, command: str, count: int, submits: int, keep: list[Any], rewrite: Any
) -> int:
    record = REGISTRY.device_of(queue)
    state = None if record is None else record.state
    if record is None or state is None or state.action_checks is None or not count:
        return submits
    try:
        return int(rewrite(state, count, submits, keep))
    except BaseException as error:
        report_error(f"{command} (action checks)", error, record.instance.state)
        return submits


def _expanded(state: Any, handles: list[int]) -> list[int] | None:
    """The app's command buffers, each followed by gpuav's that check it; None: none to add."""
    added = False
    result: list[int] = []
    for handle in handles:
        result.append(handle)
        extra = checks.validation_command_buffers(state, handle)
        if extra:
            added = True
            result.extend(extra)
    return result if added else None


# Structures whose arrays follow the command buffers one to one: such a batch is left alone.
_PARALLEL_ARRAYS = frozenset({1000060005, 1000145000})  # device group, protected submit


def _copy_of(infos: Any, type_name: str, count: int, keep: list[Any]) -> Any:
    """A copy of the app's submit infos to change, made at the first change: most submits
    have no checks to add and pass as they are."""
    copies = vkffi.new(f"{type_name}[]", count)
    vkffi.memmove(copies, infos, vkffi.sizeof(type_name) * count)
    keep.append(copies)
    return copies


def _submit_infos(state: Any, count: int, submits: int, keep: list[Any]) -> int:
    infos = vkffi.cast("VkSubmitInfo *", submits)
    copies = None
    for index in range(count):
        info = infos[index]
        if any(kind in _PARALLEL_ARRAYS for kind, _ in chain(address(info.pNext))):
            continue
        handles = handles_at(address(info.pCommandBuffers), int(info.commandBufferCount))
        expanded = _expanded(state, handles)
        if expanded is None:
            continue
        array = vkffi.new("VkCommandBuffer[]", len(expanded))
        vkffi.cast("uintptr_t *", array)[0 : len(expanded)] = expanded
        keep.append(array)
        if copies is None:
            copies = _copy_of(infos, "VkSubmitInfo", count, keep)
        copies[index].commandBufferCount = len(expanded)
        copies[index].pCommandBuffers = array
    return submits if copies is None else address(copies)


def _submit_infos2(state: Any, count: int, submits: int, keep: list[Any]) -> int:
    infos = vkffi.cast("VkSubmitInfo2 *", submits)
    copies = None
    for index in range(count):
        info = infos[index]
        if any(kind in _PARALLEL_ARRAYS for kind, _ in chain(address(info.pNext))):
            continue
        items = [info.pCommandBufferInfos[k] for k in range(info.commandBufferInfoCount)]
        added: list[tuple[Any, int | None]] = []
        for item in items:
            added.append((item, None))
            for ours in checks.validation_command_buffers(state, address(item.commandBuffer)):
                added.append((item, ours))
        if len(added) == len(items):
            continue
        array = vkffi.new("VkCommandBufferSubmitInfo[]", len(added))
        for position, (item, extra) in enumerate(added):
            vkffi.memmove(array + position, vkffi.addressof(item),
                          vkffi.sizeof("VkCommandBufferSubmitInfo"))  # fmt: skip
            if extra is not None:
                array[position].pNext = vkffi.NULL
                array[position].commandBuffer = vkffi.cast("VkCommandBuffer", extra)
        keep.append(array)
        if copies is None:
            copies = _copy_of(infos, "VkSubmitInfo2", count, keep)
        copies[index].commandBufferInfoCount = len(added)
        copies[index].pCommandBufferInfos = array
    return submits if copies is None else address(copies)
