"""Deliver one action's debugPrintfEXT lines where the settings say, and the count of lost ones.

Each line goes to the app's messengers at INFO severity (``GPUAV-debug-printf``) or, with
``printf_to_stdout``, to stdout; either way to the message log, so ``gpuav run --json`` has
them. Lines that did not fit in the action's printf buffer are counted exactly by the shaders
and said once per action, as a warning.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from gpuav.layer.reporting import LayerMessage, ObjectRef, internal_error_message
from gpuav.layer.state import DeviceState
from gpuav.report.context import ActionContext
from gpuav.report.decode import DecodedBuffer
from gpuav.report.printf_messages import PRINTF_FULL_ID, compose_printf_lines, dropped_text


def deliver_printf(
    device: DeviceState,
    context: ActionContext,
    decoded: DecodedBuffer,
    objects: Sequence[ObjectRef],
) -> None:
    settings = device.instance.settings
    reporter = device.reporter
    try:
        lines = compose_printf_lines(decoded.printf_records, context)
    except Exception as error:  # the report side must not cost the app its run
        reporter.emit(internal_error_message("compose_printf_lines", error), objects)
        lines = []
    for line in lines:
        if settings.printf_to_stdout:
            _print(line.text)
            reporter._log(line, "info", objects)  # for gpuav run's JSON all the same
        else:
            reporter.emit(line, objects)
    if decoded.printf_dropped:
        size = device.output.printf_bytes if device.output is not None else 0
        text = dropped_text(context, decoded.printf_dropped, size)
        reporter.emit(LayerMessage(PRINTF_FULL_ID, "warning", text), objects)


def _print(text: str) -> None:
    try:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    except Exception:  # a closed stdout must not cost the app its run
        pass
