"""The rows of gpuav's validation dispatch (``shaders/action_checks.comp``), one per checked
action in a storage buffer the host writes: which word means what, the kinds of action it
checks and their flags. The shader is compiled with these values as ``-D`` definitions
(``tools/generate_action_checks.py``), so the layer that fills the words and the shader that
reads them share this one table.
"""

from __future__ import annotations

from gpuav.instrument.record import RESERVED_TAIL_WORDS, ErrorCode, Stage

# Word indices.
P_KIND = 0
P_FLAGS = 1
P_FIRST_WORD = 2  # the first command's word in the commands window
P_STRIDE_WORDS = 3
P_DRAW_COUNT = 4  # drawCount, or maxDrawCount with a count buffer
P_DRAWS_IN_BUFFER = 5  # commands that lie wholly inside the buffer
P_COUNT_WORD = 6  # the count's word in the count window
P_LIMIT_X = 7  # group-count limits (compute, task or mesh)
P_LIMIT_Y = 8
P_LIMIT_Z = 9
P_LIMIT_TOTAL = 10
P_MAX_DRAW_INDIRECT_COUNT = 11
P_VERTEX_CAPACITY = 12  # vertices the bound vertex buffers hold for the pipeline's attributes
P_INSTANCE_CAPACITY = 13  # instances they hold for its per-instance attributes
P_INDEX_CAPACITY = 14  # indices bound
P_INDEX_FIRST_ELEMENT = 15  # the bound offset's index in the index window
P_DIRECT_FIRST_INDEX = 16  # vkCmdDrawIndexed's own parameters
P_DIRECT_INDEX_COUNT = 17
P_DIRECT_VERTEX_OFFSET = 18
P_GROUPS = 19  # workgroups that check this action (more than one: an index scan shared out)
# Where the row's group binds what it reads (its windows): slots of the group's descriptor
# array. The three precede P_BLOCK_WORD, which stays the row's last.
P_COMMANDS_SLOT = 20
P_COUNT_SLOT = 21
P_INDICES_SLOT = 22
P_BLOCK_WORD = 23  # the action's output block: its first word in the output chunk
PARAMETER_WORDS = 24
# KIND_REPORT: a record the host found (a direct draw's parameters), written as given.
P_REPORT_CODE = P_FLAGS
P_REPORT_WORDS = P_FIRST_WORD  # six words

KIND_GROUPS = 1  # VkDispatchIndirectCommand or VkDrawMeshTasksIndirectCommandEXT
KIND_DRAW = 2  # VkDrawIndirectCommand
KIND_DRAW_INDEXED = 3  # VkDrawIndexedIndirectCommand
KIND_DIRECT_INDEXED = 4  # vkCmdDrawIndexed: its index values
KIND_REPORT = 5

FLAG_COUNT_BUFFER = 1
FLAG_FIRST_INSTANCE = 2  # firstInstance must be 0 (drawIndirectFirstInstance off)
FLAG_INDEX16 = 4
FLAG_INDEX8 = 8
FLAG_RESTART = 16  # primitive restart: the all-ones index is no vertex
FLAG_SCAN_INDICES = 32  # check every index value against the vertices bound

# A group of rows binds up to this many windows (an array of storage buffers, read at a
# constant index each: no descriptor-indexing feature needed). With the row buffer and the
# output chunk that is 17 storage buffers; every device allows 24 in a set, most in a stage.
WINDOW_SLOTS = 15
STORAGE_BUFFERS = WINDOW_SLOTS + 2

UNLIMITED = 0xFFFF_FFFF
# Records of the validation dispatch name no shader of the app.
VALIDATION_SHADER_ID = 0
WORKGROUP_SIZE = 64
# Workgroups that scan index values: each writes at most one record per draw, and an output
# block holds 16.
SCAN_WORKGROUPS = 8


def shader_definitions() -> dict[str, int]:
    """Every name the shader uses, with its value."""
    names = {
        name: value
        for name, value in globals().items()
        if name.startswith(("P_", "KIND_", "FLAG_"))
    }
    names["PARAMETER_WORDS"] = PARAMETER_WORDS
    names["WINDOW_SLOTS"] = WINDOW_SLOTS
    names["RESERVED_TAIL_WORDS"] = RESERVED_TAIL_WORDS
    names["VALIDATION_SHADER_ID"] = VALIDATION_SHADER_ID
    names["STAGE_COMPUTE"] = int(Stage.COMPUTE)
    for code in (
        ErrorCode.GROUP_COUNT,
        ErrorCode.FIRST_INSTANCE,
        ErrorCode.DRAW_COUNT_LIMIT,
        ErrorCode.DRAW_COUNT_PAST_BUFFER,
        ErrorCode.INDEX_RANGE,
        ErrorCode.VERTEX_RANGE,
        ErrorCode.VERTEX_INDEX_RANGE,
    ):
        names[f"ERROR_{code.name}"] = int(code)
    return names
