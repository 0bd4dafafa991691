"""Calling the app's debug-utils messenger and debug-report callbacks with a message.

Every instance's reporter names these functions; what they build the callback data with (the
``vulkan`` package) is imported at the first message, not at instance creation (start-up
cost).
"""

from __future__ import annotations

from gpuav.layer.message_delivery import MESSAGE_TYPE_VALIDATION

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from gpuav.layer.reporting import Messenger, ObjectRef, ReportCallback

# VkDebugReportObjectTypeEXT values for the VkObjectType values we name in messages.
_REPORT_OBJECT_TYPES = {6: 6, 15: 15, 19: 19, 4: 4, 3: 3}
LAYER_PREFIX = b"GPUAV"


def deliver_utils(
    messenger: Messenger,
    message_id: str,
    number: int,
    severity: int,
    text: str,
    objects: Sequence[ObjectRef],
) -> None:
    import vulkan._vulkan as vk
    from vulkan._vulkan import ffi as vkffi

    keep: list[Any] = []
    data = vkffi.new("VkDebugUtilsMessengerCallbackDataEXT *")
    data.sType = vk.VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT
    id_text = vkffi.new("char[]", message_id.encode("utf-8"))
    body = vkffi.new("char[]", text.encode("utf-8"))
    data.pMessageIdName = id_text
    data.messageIdNumber = number
    data.pMessage = body
    if objects:
        infos = vkffi.new("VkDebugUtilsObjectNameInfoEXT[]", len(objects))
        for index, ref in enumerate(objects):
            info = infos[index]
            info.sType = vk.VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT
            info.objectType = ref.object_type
            info.objectHandle = ref.handle
            if ref.name is not None:
                name = vkffi.new("char[]", ref.name.encode("utf-8"))
                keep.append(name)
                info.pObjectName = name
        data.objectCount = len(objects)
        data.pObjects = infos
        keep.append(infos)
    callback = vkffi.cast("PFN_vkDebugUtilsMessengerCallbackEXT", messenger.callback)
    callback(severity, MESSAGE_TYPE_VALIDATION, data, vkffi.cast("void *", messenger.user_data))


def deliver_report(
    callback: ReportCallback,
    flags: int,
    message_id: str,
    number: int,
    text: str,
    objects: Sequence[ObjectRef],
) -> None:
    from vulkan._vulkan import ffi as vkffi

    first = objects[0] if objects else None
    object_type = _REPORT_OBJECT_TYPES.get(first.object_type, 0) if first else 0
    function = vkffi.cast("PFN_vkDebugReportCallbackEXT", callback.callback)
    function(
        flags,
        object_type,
        first.handle if first else 0,
        0,
        number,
        vkffi.new("char[]", LAYER_PREFIX),
        vkffi.new("char[]", f"[ {message_id} ] {text}".encode()),
        vkffi.cast("void *", callback.user_data),
    )


def safe(function: Any) -> Any:
    """Wrap a delivery function so that a failing app callback cannot break the layer."""

    def deliver(*args: Any) -> None:
        try:
            function(*args)
        except Exception as error:
            from gpuav.layer.reporting import internal_error_message, write_stderr

            message = internal_error_message("debug callback delivery", error)
            write_stderr(message.message_id, "error", 0, message.text)

    return deliver
