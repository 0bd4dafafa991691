"""pytest fixtures: one Vulkan context per session, handed to each test as ``vk``.

``vk`` frees what the test made through it and fails the test if the validation layer reported
an error meanwhile (a test that provokes errors on purpose checks and then calls
``vk.clear_messages()``). The validation layer is on when installed; set
``GPUAV_TEST_VALIDATION=0`` to run without it. A missing Vulkan device fails, never skips.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.harness.context import VulkanContext

VALIDATION_ENV = "GPUAV_TEST_VALIDATION"


@pytest.fixture(scope="session")
def vk_session() -> Iterator[VulkanContext]:
    try:
        # Imported here: without a Vulkan loader, importing `vulkan` raises OSError, and that
        # must fail only the tests that need a device, not the collection of the whole suite.
        from tests.harness.context import VulkanContext

        context = VulkanContext(validation=os.environ.get(VALIDATION_ENV, "1") != "0")
    except Exception as error:
        pytest.fail(f"cannot set up Vulkan for the test harness: {error!r}", pytrace=False)
    yield context
    context.close()


@pytest.fixture
def vk(vk_session: VulkanContext) -> Iterator[VulkanContext]:
    mark = vk_session.mark()
    vk_session.clear_messages()
    yield vk_session
    vk_session.release_since(mark)
    errors = vk_session.validation_errors
    vk_session.clear_messages()
    if errors:
        pytest.fail("validation layer errors:\n" + "\n".join(str(e) for e in errors), pytrace=False)
