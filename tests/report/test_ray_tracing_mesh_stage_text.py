"""The stage words of ray-tracing, task and mesh records as messages, JSON fields and printf
lines say them (record.py's table), at the edges of their packing."""

from __future__ import annotations

import pytest

from gpuav.instrument.record import (
    ErrorCode,
    ErrorRecord,
    Stage,
    pack_compute_yz,
    pack_workgroup_x,
)
from gpuav.report.message_fields import invocation_fields
from gpuav.report.messages import stage_text
from gpuav.report.printf_messages import invocation_text


def _record(stage: Stage, words: tuple[int, int]) -> ErrorRecord:
    return ErrorRecord(1, 2, stage, words, ErrorCode.INDEX_OUT_OF_BOUNDS, 0, 4)


@pytest.mark.parametrize(
    ("stage", "name"),
    [
        (Stage.RAY_GENERATION, "Ray Generation"),
        (Stage.INTERSECTION, "Intersection"),
        (Stage.ANY_HIT, "Any Hit"),
        (Stage.CLOSEST_HIT, "Closest Hit"),
        (Stage.MISS, "Miss"),
        (Stage.CALLABLE, "Callable"),
    ],
)
def test_ray_tracing_stages_name_the_launch_id(stage: Stage, name: str) -> None:
    record = _record(stage, (1919, pack_compute_yz(1079, 2)))
    assert stage_text(record) == f"Stage = {name}. Launch ID (x, y, z) = (1919, 1079, 2)."
    fields = invocation_fields(record)
    assert fields["launch_id"] == [1919, 1079, 2]
    assert fields["stage"] == name.lower().replace(" ", "-")
    assert invocation_text(record) == f"{name}, launch (1919, 1079, 2)"


@pytest.mark.parametrize(("stage", "name"), [(Stage.TASK, "Task"), (Stage.MESH, "Mesh")])
def test_task_and_mesh_name_the_workgroup_and_the_invocation_in_it(stage: Stage, name: str) -> None:
    # The largest workgroup x of a 2^22-group dispatch and the last of 1024 invocations.
    record = _record(stage, (pack_workgroup_x(0x3F_FFFF, 1023), pack_compute_yz(3, 65535)))
    assert stage_text(record) == (
        f"Stage = {name}. Workgroup ID (x, y, z) = (4194303, 3, 65535). "
        "Local invocation index = 1023."
    )
    assert invocation_fields(record) == {
        "stage": name.lower(),
        "workgroup_id": [4194303, 3, 65535],
        "local_invocation_index": 1023,
    }
    assert invocation_text(record) == (
        f"{name}, workgroup (4194303, 3, 65535), local invocation 1023"
    )
