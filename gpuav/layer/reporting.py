"""The layer's messages and the objects they name: ``LayerMessage`` (about the layer itself),
``ObjectRef``, the app's messengers and report callbacks as plain numbers, and the report of a
layer bug. ``message_delivery`` has the reporter that delivers them (imported here too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from gpuav.layer.message_delivery import Reporter as Reporter
from gpuav.layer.message_delivery import write_stderr as write_stderr


class MessageLike(Protocol):
    @property
    def message_id(self) -> str: ...

    @property
    def severity(self) -> Any: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class LayerMessage:
    """A message about the layer itself (set-up, fallbacks, resources), not a shader error."""

    message_id: str
    severity: str
    text: str


@dataclass(frozen=True)
class ObjectRef:
    """An object a message is about (VkDebugUtilsObjectNameInfoEXT in the callback data)."""

    object_type: int
    handle: int
    name: str | None = None


@dataclass(frozen=True)
class Messenger:
    severity_mask: int
    type_mask: int
    callback: int
    user_data: int


@dataclass(frozen=True)
class ReportCallback:
    flags: int
    callback: int
    user_data: int


def internal_error_message(where: str, error: BaseException) -> LayerMessage:
    """A layer bug, reported instead of letting the exception reach the application."""
    return LayerMessage(
        message_id="GPUAV-internal-error",
        severity="error",
        text=f"gpuav internal error in {where}; the call was passed down unchanged. "
        f"{type(error).__name__}: {error}\n{_last_frames(error)}",
    )


def _last_frames(error: BaseException) -> str:
    """The exception's innermost frames. ``traceback`` is imported at the first internal
    error, not with the device (3.5 ms of vkCreateDevice on the lent H100); where even that
    import fails (no memory left), the message goes without them."""
    try:
        import traceback
    except (ImportError, MemoryError):
        return ""
    frames = traceback.format_exception(type(error), error, error.__traceback__)
    return "".join(frames[-6:])
