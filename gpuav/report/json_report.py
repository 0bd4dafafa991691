"""``gpuav run --json``: the report document, version 1 of ``report_schema.json``.

The layer logs every message it delivers (JSON lines, ``GPUAV_MESSAGE_LOG``), with the facts
of a shader error as data (``message_fields``). The report folds an error or warning logged
again with the same id and text (the same action of a command buffer submitted again) into one
object with its number of occurrences, and gives every message object the same keys, null
where a fact does not apply, so tools read it without guessing. ``report_schema.json`` says
what each key means; a change to the shape is a new version.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

SCHEMA_NAME = "gpuav-report"
SCHEMA_VERSION = 1
# Keys of a message object beyond id, severity, text, occurrences and objects.
FACT_KEYS = (
    "error",
    "action",
    "pipeline",
    "shader",
    "invocation",
    "invocations",
    "source",
    "descriptor",
    "recorded_at",
    "labels",
    "memory",
)
_FOLDED_SEVERITIES = ("error", "warning")


def report_schema() -> dict[str, Any]:
    """The JSON Schema of the report (shipped in the package)."""
    text = resources.files("gpuav.report").joinpath("report_schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _message_object(entry: Mapping[str, Any]) -> dict[str, Any]:
    facts = entry.get("fields") or {}
    message: dict[str, Any] = {
        "id": str(entry.get("message_id", "")),
        "severity": str(entry.get("severity", "error")),
        "text": str(entry.get("text", "")),
        "occurrences": 1,
        "objects": list(entry.get("objects", [])),
    }
    for key in FACT_KEYS:
        message[key] = facts.get(key, [] if key == "labels" else None)
    return message


def build_report(log_entries: Iterable[Mapping[str, Any]], exit_status: int) -> dict[str, Any]:
    """The report of one run from the layer's message log, in the order messages came."""
    messages: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for entry in log_entries:
        message = _message_object(entry)
        key = (message["id"], message["severity"], message["text"])
        earlier = seen.get(key) if message["severity"] in _FOLDED_SEVERITIES else None
        if earlier is None:
            seen[key] = message
            messages.append(message)
            continue
        earlier["occurrences"] += 1
        if earlier["invocations"] is not None and message["invocations"] is not None:
            earlier["invocations"] += message["invocations"]
    return {
        "schema": SCHEMA_NAME,
        "version": SCHEMA_VERSION,
        "exit_status": exit_status,
        "errors": sum(1 for message in messages if message["severity"] == "error"),
        "warnings": sum(1 for message in messages if message["severity"] == "warning"),
        "messages": messages,
    }
