"""How instrumented shaders find the state of the application's descriptor sets (issue 8).

This is the contract between the layer, which writes the state, and the instrumentation pass,
which emits the code that reads it; both import it from here. In the spirit of seed 002 (a
descriptor set's bindings laid out in memory at per-binding offsets with their array sizes),
every tracked descriptor set has a *region* of 32-bit words in one device buffer:

    region[0]            B, the number of binding slots (highest binding number + 1)
    region[1 + 2b]       word offset, from the region's start, of binding b's descriptor table
    region[2 + 2b]       binding b's actual array size: its descriptorCount, or for a
                         variable-count binding the count the set was allocated with; 0 for a
                         binding number the layout does not have
    region[table + i]    0 when descriptor i of binding b may not be accessed: unwritten
                         (by an update, copy, template or push) in a PARTIALLY_BOUND binding;
                         else 1, or for a uniform or storage buffer descriptor whose bound
                         range the layer knows, range_word(bytes)

Our descriptor set at the reserved index holds, per action (draw or dispatch):

    binding OUTPUT_BINDING       the action's output block {uint DataWrittenLength; uint Data[];}
    binding BOUND_SETS_BINDING   {uint words[BOUND_AREA_WORDS];}, the *bound-sets area*:
                                 words[s] for each set index s < MAX_TRACKED_SETS, the word
                                 offset in the state buffer of the region of the set the
                                 application had bound at s when the action was recorded, or
                                 NO_STATE when none (or one we cannot track) was bound; then
                                 the *action tables* (``set_tables``): for each set index
                                 below TABLE_SETS and binding below TABLE_BINDINGS, where the
                                 binding's descriptor words start in the state buffer, its
                                 actual size and its *summary*, so that a shader reaches a
                                 descriptor's word with one load from this area and one from
                                 the state, instead of following the region's header itself,
                                 and needs no load from the state where the summary answers;
                                 then the verdict word (VERDICT_WORD)
    binding STATE_BINDING        {uint words[];}: the state buffer holding every region

When the application uses every set index, the shader reaches the same three buffers without a
descriptor set: a *context* of three 64-bit device addresses (ADDRESS_* below, in that order)
whose own address is delivered either in a push constant (a uint64 member the pass adds to the
entry point's push-constant block at a byte offset the layer chooses) or in two 32-bit
specialization constants (low and high words, at constant ids the layer chooses).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpuav.instrument.record import MAX_RECORD_WORDS

OUTPUT_BINDING = 0
BOUND_SETS_BINDING = 1
STATE_BINDING = 2

MAX_TRACKED_SETS = 32
NO_STATE = 0xFFFF_FFFF

# The action tables: TABLE_ENTRY_WORDS words per (set, binding) pair below these, after the
# region words: the start of the binding's descriptor words, its size, its summary.
TABLE_SETS = 4
TABLE_BINDINGS = 16
TABLE_ENTRY_WORDS = 3
ACTION_TABLE_WORD = MAX_TRACKED_SETS
# After the tables, the *verdict* (``host_terms``): a bit for each shader stage of the action's
# pipeline whose checks the layer found would all pass, so that its entry function runs
# unchecked (``function_versions``). The area ends on a whole uvec4.
VERDICT_WORD = ACTION_TABLE_WORD + TABLE_ENTRY_WORDS * TABLE_SETS * TABLE_BINDINGS
BOUND_AREA_WORDS = VERDICT_WORD + 4
# A binding's summary is the OR of its descriptors' words where none of them is 0, else 0
# (``summary``). Where it is not 0 and has none of an access's forbidden bits, every
# descriptor of the binding passes that access's word test, so the shader takes the summary
# for the descriptor's word and reads nothing from the state; of a binding of one descriptor
# it is that descriptor's word, range included. Bindings larger than this get 0 (the host
# would pay for every descriptor whenever the set changes).
SUMMARY_LIMIT = 4096

BINDING_COUNT_WORD = 0
ACCESSIBLE = 1
# What gpuav_buffer_range returns for a descriptor whose range the state does not give.
RANGE_UNKNOWN = 0xFFFF_FFFF
RANGE_BASE = 2

# Index of each 64-bit address in the context, in uint64 units.
ADDRESS_OUTPUT = 0
ADDRESS_BOUND_SETS = 1
ADDRESS_STATE = 2
CONTEXT_ADDRESSES = 3
# Added for the pass (its padding so far): the fourth uint64 of a context is the number of
# words in the output block's ``Data``. OpArrayLength cannot measure a buffer reached through
# an address, so in address mode this is the only bound the shader has. 0 (the padding left
# as it is) means MIN_CONTEXT_DATA_WORDS: 16 records of the largest size, which every output
# block holds (the layer sizes blocks for RECORDS_PER_BLOCK = 16 such records).
CONTEXT_DATA_WORDS = 3
MIN_CONTEXT_DATA_WORDS = 16 * MAX_RECORD_WORDS


def binding_table_word(binding: int) -> int:
    """Word (in the region) holding the offset of ``binding``'s descriptor table."""
    return 1 + 2 * binding


def binding_size_word(binding: int) -> int:
    """Word (in the region) holding ``binding``'s actual array size."""
    return 2 + 2 * binding


def table_entry_word(set_index: int, binding: int) -> int:
    """Word (in the bound-sets area) of a (set, binding) pair's action table entry:
    [where its descriptor words start in the state buffer, its actual size, its summary]. An
    entry's start is NO_STATE where the set's region is not known; a binding its set lacks
    has size 0."""
    return ACTION_TABLE_WORD + TABLE_ENTRY_WORDS * (set_index * TABLE_BINDINGS + binding)


def summary_word(set_index: int, binding: int) -> int:
    """Word (in the bound-sets area) of a (set, binding) pair's summary."""
    return table_entry_word(set_index, binding) + 2


def summary(words: Sequence[int]) -> int:
    """The summary of a binding whose descriptors have these ``words``."""
    if not 0 < len(words) <= SUMMARY_LIMIT:
        return 0
    distinct = set(words)
    if 0 in distinct:
        return 0
    combined = 0
    for word in distinct:
        combined |= word
    return combined


def set_tables(region: int, words: Sequence[int]) -> list[int]:
    """The action table entries of the TABLE_BINDINGS first bindings of the set whose
    region starts at ``region`` and holds ``words`` (its header, then its descriptors')."""
    entries = []
    count = words[BINDING_COUNT_WORD]
    for binding in range(TABLE_BINDINGS):
        if binding < count:
            table = words[binding_table_word(binding)]
            size = words[binding_size_word(binding)]
            entries += [region + table, size, summary(words[table : table + size])]
        else:
            entries += [region, 0, 0]
    return entries


UNKNOWN_SET_TABLES = [NO_STATE, 0, 0] * TABLE_BINDINGS


def bound_area(regions: Sequence[int], tables_of: Callable[[int], Sequence[int]]) -> list[int]:
    """The bound-sets area for sets bound at the given ``regions`` (NO_STATE: none), whose
    action tables ``tables_of(region)`` gives (``set_tables``)."""
    words = list(regions[:MAX_TRACKED_SETS])
    words += [NO_STATE] * (MAX_TRACKED_SETS - len(words))
    for set_index in range(TABLE_SETS):
        region = words[set_index]
        words += UNKNOWN_SET_TABLES if region == NO_STATE else tables_of(region)
    words += [0] * (BOUND_AREA_WORDS - VERDICT_WORD)  # no verdict yet: the checks run
    return words


def range_word(range_bytes: int) -> int:
    """The descriptor word of a buffer descriptor bound to ``range_bytes`` bytes (never 0 or
    ACCESSIBLE); a range of 4 GiB or more is as good as unbounded."""
    return RANGE_BASE + min(max(range_bytes, 0), RANGE_UNKNOWN - RANGE_BASE)


def range_from_word(word: int) -> int | None:
    """The bytes a buffer descriptor's word says are bound; None when it says nothing."""
    return word - RANGE_BASE if RANGE_BASE <= word < RANGE_UNKNOWN else None


def region_words(binding_sizes: dict[int, int]) -> list[int]:
    """A region for bindings of the given sizes, every descriptor marked accessible."""
    count = max(binding_sizes, default=-1) + 1
    words = [count] + [0] * (2 * count)
    for binding in range(count):
        size = binding_sizes.get(binding, 0)
        words[binding_table_word(binding)] = len(words)
        words[binding_size_word(binding)] = size
        words.extend([1] * size)
    return words


@dataclass(frozen=True)
class PushConstantAddress:
    """The context address is a uint64 push constant at ``offset`` bytes."""

    offset: int


@dataclass(frozen=True)
class SpecializationAddress:
    """The context address is split over two uint specialization constants."""

    low_constant_id: int
    high_constant_id: int


ContextAddressSource = PushConstantAddress | SpecializationAddress
