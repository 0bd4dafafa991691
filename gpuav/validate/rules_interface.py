"""Rule family: interface locations and transform feedback (issue 7, seeds 001 and 004).

``check(context)`` reports, per entry point, missing or misplaced Location/Component
decorations, overlapping slots, locations beyond the device limits in ``context.limits``, and
the transform-feedback rules. Limits absent from the context are not checked.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuav.errors import GpuavError
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.interface import EntryPointInterface, InterfaceAnalysis
from gpuav.validate.interface_rules import location_diagnostics
from gpuav.validate.transform_feedback import (
    TransformFeedback,
    emit_stream_diagnostics,
    xfb_diagnostics,
)

UNREADABLE_RULE = "GPUAV-Interface-unreadable"


def interfaces(context: ValidationContext) -> list[EntryPointInterface]:
    return InterfaceAnalysis(context.module, context.types, context.decorations).entry_points()


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    try:
        found = list(_check(context))
    except (GpuavError, KeyError, IndexError, ValueError, RecursionError) as error:
        # A module too broken to walk (dangling or cyclic type ids): other families say why.
        yield Diagnostic(UNREADABLE_RULE, f"interface analysis stopped: {error!r}")
        return
    yield from found


def _check(context: ValidationContext) -> Iterator[Diagnostic]:
    feedback = TransformFeedback(context.module, context.types, context.decorations)
    for entry in interfaces(context):
        yield from location_diagnostics(entry, context.limits)
        yield from feedback.block_buffer_conflicts(entry)
        yield from xfb_diagnostics(entry, feedback.captures(entry), context.limits)
    yield from emit_stream_diagnostics(context.module, context.types, context.limits)
