"""Where messages go: the app's debug-utils messengers and debug-report callbacks, else stderr.

The reporter belongs to an instance. It knows the app's messengers as plain numbers (callback
and user-data addresses); the front end supplies the two functions that actually call them.
Every message is also appended as a JSON line to the message log when one is configured (that
is how ``gpuav run`` collects them). Messages are duck-typed: anything with ``message_id``,
``severity`` (an enum or a string: error / warning / info) and ``text`` (``reporting``).

Every vkCreateInstance makes a reporter, so this module imports nothing beyond the interpreter's
own start (no ``typing``, no dataclass, ``json`` at the first logged message): on an interpreter
started by a C host those would cost more than the rest of instance creation (start-up cost).
"""

from __future__ import annotations

import sys
import zlib
from _thread import allocate_lock  # threading.Lock, without importing threading

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from gpuav.layer.reporting import MessageLike, Messenger, ObjectRef, ReportCallback

    DeliverUtils = Callable[[Messenger, str, int, int, str, Sequence[ObjectRef]], None]
    DeliverReport = Callable[[ReportCallback, int, str, int, str, Sequence[ObjectRef]], None]

# VkDebugUtilsMessageSeverityFlagBitsEXT / VkDebugUtilsMessageTypeFlagBitsEXT.
SEVERITY_BITS = {"verbose": 0x1, "info": 0x10, "warning": 0x100, "error": 0x1000}
MESSAGE_TYPE_VALIDATION = 0x2
# VkDebugReportFlagBitsEXT.
REPORT_FLAGS = {"verbose": 0x10, "info": 0x1, "warning": 0x2, "error": 0x8}


def severity_name(severity: Any) -> str:
    """error / warning / info / verbose, from an enum member or a string."""
    name = getattr(severity, "name", None)
    if not isinstance(name, str):
        name = getattr(severity, "value", severity)
    lowered = str(name).lower()
    for known in ("error", "warning", "info", "verbose"):
        if known in lowered:
            return known
    return "error"


def message_id_number(message_id: str) -> int:
    """A stable signed 32-bit number for the id, as the Khronos layers report one."""
    value = zlib.crc32(message_id.encode("utf-8"))
    return value - (1 << 32) if value >= 1 << 31 else value


class Reporter:
    """Delivers messages for one instance."""

    def __init__(
        self,
        message_log: str | None = None,
        deliver_utils: DeliverUtils | None = None,
        deliver_report: DeliverReport | None = None,
    ) -> None:
        self.message_log = message_log
        self.deliver_utils = deliver_utils
        self.deliver_report = deliver_report
        self.messengers: dict[int, Messenger] = {}
        self.report_callbacks: dict[int, ReportCallback] = {}
        self._said: set[str] = set()
        self._lock = allocate_lock()

    def emit(self, message: MessageLike, objects: Sequence[ObjectRef] = ()) -> None:
        severity = severity_name(message.severity)
        number = message_id_number(message.message_id)
        self._log(message, severity, objects)
        delivered = False
        for messenger in list(self.messengers.values()):
            if self.deliver_utils is None:
                break
            if messenger.severity_mask & SEVERITY_BITS[severity] and (
                messenger.type_mask & MESSAGE_TYPE_VALIDATION
            ):
                self.deliver_utils(
                    messenger, message.message_id, number, SEVERITY_BITS[severity],
                    message.text, objects,
                )  # fmt: skip
            delivered = True
        for callback in list(self.report_callbacks.values()):
            if self.deliver_report is None:
                break
            if callback.flags & REPORT_FLAGS[severity]:
                self.deliver_report(
                    callback, REPORT_FLAGS[severity], message.message_id, number,
                    message.text, objects,
                )  # fmt: skip
            delivered = True
        if not delivered and self.message_log is None:
            write_stderr(message.message_id, severity, number, message.text)

    def emit_once(self, key: str, message: MessageLike, objects: Sequence[ObjectRef] = ()) -> None:
        """Emit unless a message with this key was already emitted for this instance."""
        with self._lock:
            if key in self._said:
                return
            self._said.add(key)
        self.emit(message, objects)

    def _log(self, message: MessageLike, severity: str, objects: Sequence[ObjectRef]) -> None:
        if not self.message_log:
            return
        import json

        entry = {
            "message_id": message.message_id,
            "severity": severity,
            "text": message.text,
            "objects": [
                {"type": ref.object_type, "handle": ref.handle, "name": ref.name} for ref in objects
            ],
        }
        fields = getattr(message, "fields", None)  # a shader error's facts, as data
        if fields:
            entry["fields"] = fields
        try:
            with open(self.message_log, "a", encoding="utf-8") as log:
                log.write(json.dumps(entry) + "\n")
        except OSError as error:
            write_stderr("GPUAV-message-log", "warning", 0, f"cannot write message log: {error}")


def write_stderr(message_id: str, severity: str, number: int, text: str) -> None:
    """The fallback channel, in the Khronos layers' console format."""
    try:
        sys.stderr.write(
            f"{severity.upper()} : VALIDATION - Message Id Number: {number} | "
            f"Message Id Name: {message_id}\n\t{text}\n"
        )
        sys.stderr.flush()
    except Exception:  # nowhere left to report to
        pass
