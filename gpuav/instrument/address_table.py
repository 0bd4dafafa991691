"""Where shaders find the live buffer device addresses: the contract between the layer, which
publishes them, and the device-address checks, which search them (both import it from here).

The table is a region of the descriptor-state buffer (``gpuav.instrument.descriptor_state``);
state word ``TABLE_OFFSET_WORD`` holds its word offset, 0 while the layer has published none
(the checks then pass: the layer owns that word, so no region starts there). The region is

    table[0]                 the number of entries, n
    table[1 + 4k .. 4 + 4k]  entry k: its start address and its reach (low word, high word each)

Entries are the live buffers' ``[start, start + size)`` sorted by start; an entry's *reach* is
the largest end of it and every entry before it. So an access ``[a, a + s)`` lies inside one
buffer exactly when the last entry starting at or below ``a`` reaches ``a + s`` or further,
overlapping (aliased) buffers included, and a binary search finds that entry.
"""

from __future__ import annotations

from collections.abc import Iterable

TABLE_OFFSET_WORD = 0
COUNT_WORD = 0
ENTRY_WORDS = 4
FIRST_ENTRY_WORD = 1
START_LOW, START_HIGH, REACH_LOW, REACH_HIGH = range(ENTRY_WORDS)
_WORD = 0xFFFF_FFFF


def table_words(ranges: Iterable[tuple[int, int]]) -> list[int]:
    """The table region for buffers at ``(start, size)``."""
    words = [0]
    reach = 0
    for start, size in sorted(ranges):
        reach = max(reach, start + size)
        words += [start & _WORD, start >> 32 & _WORD, reach & _WORD, reach >> 32 & _WORD]
    words[COUNT_WORD] = (len(words) - FIRST_ENTRY_WORD) // ENTRY_WORDS
    return words
