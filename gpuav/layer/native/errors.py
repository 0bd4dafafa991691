"""Reporting an exception caught at an entry point, without ever raising from here."""

from __future__ import annotations

from gpuav.layer.instance_state import InstanceState


def report_error(where: str, error: BaseException, instance: InstanceState | None = None) -> None:
    """Tell the app (its messengers, else stderr) that the layer failed in ``where``."""
    try:
        # Imported when needed: entry imports this module when Python starts (start-up cost).
        from gpuav.layer.reporting import internal_error_message, write_stderr

        message = internal_error_message(where, error)
        if instance is not None:
            # A failing hook tends to fail on every call (say, per draw): say it once.
            instance.reporter.emit_once(f"internal:{where}:{type(error).__name__}:{error}", message)
        else:
            write_stderr(message.message_id, "error", 0, message.text)
    except BaseException:
        pass
