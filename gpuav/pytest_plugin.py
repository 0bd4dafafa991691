"""``pytest --gpuav``: every Vulkan program a test session starts runs under gpuav.

Installed as a pytest plugin (entry point ``pytest11``) that does nothing unless asked, with
``--gpuav``, ``--gpuav-warn`` or ``-p gpuav``. Then, before any test module is imported, the
session's environment loads the layer with GPU-AV on (``gpuav run``'s environment), so the
programs tests run in-process (the layer then runs in pytest's own interpreter) and the
subprocesses they start are all checked, and every message goes to one message log for the
session. Each test phase (setup, call, teardown) gets the messages logged since the previous
one; a phase during which gpuav reported an error fails with the messages in its report
(``--gpuav-warn``: passes, with the messages in a "gpuav" section), and the terminal summary
lists the tests gpuav reported on.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

PLUGIN_NAME = "gpuav"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup(PLUGIN_NAME, "GPU-assisted validation of Vulkan programs (gpuav)")
    group.addoption(
        "--gpuav",
        action="store_true",
        help="run the session's Vulkan programs under gpuav; a test during which it reports "
        "an error fails",
    )
    group.addoption(
        "--gpuav-warn",
        action="store_true",
        help="like --gpuav, but gpuav's messages only go into a 'gpuav' section of the report",
    )


def _asked_for(config: pytest.Config) -> bool:
    plugins = getattr(config.option, "plugins", None) or []
    return bool(
        config.getoption("gpuav") or config.getoption("gpuav_warn") or PLUGIN_NAME in plugins
    )


def pytest_configure(config: pytest.Config) -> None:
    if _asked_for(config):
        config.pluginmanager.register(GpuavSession(config), "gpuav-session")


class GpuavSession:
    """The layer's environment for the session, and the message log read test by test."""

    def __init__(self, config: pytest.Config) -> None:
        # Imported here: an installed plugin that was not asked for costs a session nothing.
        from gpuav.errors import SetupError
        from gpuav.layer.cli import layer_environment
        from gpuav.layer.native.build import layer_dir

        self.fail_on_error = not config.getoption("gpuav_warn")
        try:
            folder = layer_dir()
        except SetupError as error:
            raise pytest.UsageError(f"gpuav: the layer cannot be built: {error}") from error
        self.scratch = Path(tempfile.mkdtemp(prefix="gpuav-pytest-"))
        self.log = self.scratch / "messages.jsonl"
        self.log.touch()
        self.offset = 0
        self.reported: dict[str, int] = {}  # test id -> errors gpuav reported during it
        wanted = layer_environment(folder, self.log)
        self.saved = {
            key: os.environ.get(key) for key in wanted if os.environ.get(key) != wanted[key]
        }
        os.environ.update({key: wanted[key] for key in self.saved})

    def new_messages(self) -> list[dict[str, Any]]:
        """Messages logged since the last call (whole lines only: a program may be writing)."""
        with open(self.log, "rb") as log:
            log.seek(self.offset)
            data = log.read()
        end = data.rfind(b"\n") + 1
        self.offset += end
        messages = []
        for line in data[:end].splitlines():
            try:
                messages.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return messages

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        messages = self.new_messages()
        if not messages:
            return
        errors = [message for message in messages if message.get("severity") == "error"]
        text = "\n".join(
            f"gpuav: [{message.get('message_id')}] {message.get('text')}" for message in messages
        )
        report.sections.append((f"gpuav messages ({report.when})", text))
        if not errors:
            return
        self.reported[item.nodeid] = self.reported.get(item.nodeid, 0) + len(errors)
        if self.fail_on_error and report.passed:
            report.outcome = "failed"
            report.longrepr = (
                f"gpuav reported {len(errors)} error{'s' if len(errors) > 1 else ''} "
                f"during {report.when}:\n{text}"
            )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.reported:
            return
        terminalreporter.section("gpuav")
        for nodeid, count in self.reported.items():
            terminalreporter.write_line(f"{nodeid}: {count} error{'s' if count > 1 else ''}")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(self.scratch, ignore_errors=True)
