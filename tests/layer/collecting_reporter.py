"""A reporter that keeps the messages the engine emits, for tests that drive the engine's
entry points in-process."""

from __future__ import annotations

from gpuav.layer.reporting import MessageLike, Reporter


class CollectingReporter(Reporter):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[MessageLike] = []

    def emit(self, message: MessageLike, objects: object = ()) -> None:
        self.messages.append(message)
