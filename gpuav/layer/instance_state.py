"""What the engine keeps per instance, and making it at vkCreateInstance.

Instance creation starts the layer's Python side, so this module and what it imports stay small:
no dataclass (``dataclasses`` costs more to import than the rest of the instance path), nothing
of the device-level engine (start-up cost).
"""

from __future__ import annotations

from gpuav.layer.api_versions import API_VERSION_1_0

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up cost)
if TYPE_CHECKING:
    from gpuav.layer.message_delivery import Reporter
    from gpuav.layer.settings import Settings


class InstanceState:
    """One instance of the app: its settings, the API version it runs at, its reporter."""

    def __init__(
        self,
        handle: int,
        settings: Settings,
        api_version: int,
        reporter: Reporter,
        asked_api_version: int | None = None,
    ) -> None:
        self.handle = handle
        self.settings = settings
        self.api_version = api_version
        self.reporter = reporter
        # The app's own apiVersion when gpuav raised it (told at device creation, when the
        # app's messengers exist), else None.
        self.asked_api_version = asked_api_version


def post_call_record_create_instance(
    handle: int, settings: Settings, api_version: int, reporter: Reporter
) -> InstanceState:
    reporter.message_log = settings.message_log
    return InstanceState(handle, settings, api_version or API_VERSION_1_0, reporter)
