"""Keeping the binding summaries of recorded actions true until their command buffer runs.

An action's bound-sets area carries, for each binding of its action tables, a summary of the
binding's descriptor words (``descriptor_state.summary``), made when the action was recorded;
where the summary answers, the shader reads no descriptor word. The words can change after
that: a resource destroyed, a descriptor updated after bind, a descriptor buffer's bytes
rewritten. So a command buffer remembers the change count of every region its summaries were
made from (``StateBuffer.set_tables``), and where one has changed by the time it is submitted,
every summary in its areas becomes 0: its shaders then read each descriptor's word, as the
state at submit time says it is. So does each area's verdict (``host_terms``), which was made
from the summaries: the shaders run their checks.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

from gpuav.instrument.descriptor_state import (
    NO_STATE,
    TABLE_ENTRY_WORDS,
    VERDICT_WORD,
    summary_word,
)
from gpuav.layer.output_buffers import Block
from gpuav.layer.state import CommandBufferState

_FIRST = summary_word(0, 0)
_NONE = array("I", [0]) * len(range(_FIRST, VERDICT_WORD, TABLE_ENTRY_WORDS))


def clear(block: Block) -> None:
    """Set every summary of ``block``'s bound-sets area to 0 (none), and its verdict, which
    was worked out from them."""
    start = block.bound_sets_offset
    words = block.chunk.area_words
    words[start + _FIRST : start + VERDICT_WORD : TABLE_ENTRY_WORDS] = _NONE
    words[start + VERDICT_WORD] = 0
    block.area = None


def drop_stale(command_buffers: Iterable[CommandBufferState]) -> None:
    """Clear the summaries of every command buffer (or secondary it executes) that was
    recorded with a region whose words have changed since."""
    for state in command_buffers:
        for member in (state, *state.executed):
            summarized = member.summarized
            if summarized and any(
                region.changes != changes or region.offset == NO_STATE
                for region, changes in list(summarized.items())
            ):
                for action in member.actions:
                    clear(action.block)
                summarized.clear()
