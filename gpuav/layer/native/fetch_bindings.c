/* The vertex and index buffers each command buffer has bound, kept in C; and the output block
 * its next action binds (struct gpuav_fetch_entry's output_bind).
 *
 * A renderer binds its buffers before nearly every draw, and entering Python for each bind
 * cost more than the draw's own check. The bind commands' wrappers (prototypes.NATIVE_ONLY)
 * therefore call down the chain and note the binding here, without Python; the draw hooks
 * read a command buffer's bindings (gpuav_fetch_bindings) only when the process-wide count
 * of changes moved, and take them over when their own count did (fetch_bindings.py).
 *
 * A command buffer's entry is made at its first bind, emptied when it begins recording and
 * removed when it is freed (here, in vkFreeCommandBuffers' wrapper) or its pool or device is
 * destroyed (the Python side calls gpuav_fetch_bindings_forget*; layer.c's fallback, where
 * Python is gone, forgets a device's). The app synchronizes the recording of a command
 * buffer externally, so an entry is written and read by one thread at a time; the lock
 * guards the buckets only.
 */

#define GPUAV_VERTEX_BINDING_SLOTS 64
#define GPUAV_PUSH_BYTES 256
#define GPUAV_WHOLE_SIZE (~(uint64_t)0)
#define GPUAV_FETCH_BUCKETS 1024

/* struct gpuav_vertex_binding and struct gpuav_fetch_bindings: build.FETCH_BINDINGS_STRUCTS,
 * inserted above this file, so that layer.c and the Python side read one layout. */
_Static_assert(sizeof(((struct gpuav_fetch_bindings *)0)->vertex) /
                       sizeof(struct gpuav_vertex_binding) ==
                   GPUAV_VERTEX_BINDING_SLOTS,
               "the vertex slots of build.FETCH_BINDINGS_STRUCTS");

struct gpuav_fetch_entry {
    struct gpuav_fetch_entry *next;
    uintptr_t command_buffer;
    uintptr_t device_key;
    /* gpuav's output block to bind just before the action being recorded goes down: bind
     * point, pipeline layout, set index and descriptor set (0: none). The Python side writes it
     * (gpuav_output_bind) instead of calling down itself; the action's wrapper binds and
     * clears it (gpuav_bind_output_before). Kept across recordings, unlike the bindings. */
    uint64_t output_bind[4];
    struct gpuav_fetch_bindings bindings;
};

static struct gpuav_fetch_entry *gpuav_fetch_buckets[GPUAV_FETCH_BUCKETS];
static pthread_mutex_t gpuav_fetch_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t gpuav_fetch_changes; /* every change anywhere, read by the draw hooks */
static const struct gpuav_fetch_bindings gpuav_nothing_bound;

static size_t gpuav_fetch_bucket(uintptr_t command_buffer) {
    return (size_t)((command_buffer >> 4) ^ (command_buffer >> 14)) % GPUAV_FETCH_BUCKETS;
}

static struct gpuav_fetch_entry *gpuav_fetch_entry_locked(uintptr_t command_buffer) {
    struct gpuav_fetch_entry *entry = gpuav_fetch_buckets[gpuav_fetch_bucket(command_buffer)];
    while (entry != NULL && entry->command_buffer != command_buffer) {
        entry = entry->next;
    }
    return entry;
}

/* The command buffer's entry, made at its first use; NULL when out of memory. */
static struct gpuav_fetch_entry *gpuav_fetch_entry_made(uintptr_t command_buffer) {
    pthread_mutex_lock(&gpuav_fetch_lock);
    struct gpuav_fetch_entry *entry = gpuav_fetch_entry_locked(command_buffer);
    if (entry == NULL) {
        entry = calloc(1, sizeof(*entry));
        if (entry != NULL) {
            size_t bucket = gpuav_fetch_bucket(command_buffer);
            entry->command_buffer = command_buffer;
            entry->device_key = gpuav_dispatch_key(command_buffer);
            entry->next = gpuav_fetch_buckets[bucket];
            gpuav_fetch_buckets[bucket] = entry;
        }
    }
    pthread_mutex_unlock(&gpuav_fetch_lock);
    return entry;
}

/* The command buffer's bindings to write, made at its first bind; NULL when out of memory
 * (its draws then read as having nothing bound, and go unchecked). */
static struct gpuav_fetch_bindings *gpuav_fetch_bindings_to_write(uintptr_t command_buffer) {
    struct gpuav_fetch_entry *entry = gpuav_fetch_entry_made(command_buffer);
    return entry == NULL ? NULL : &entry->bindings;
}

/* The command buffer's output bind (struct gpuav_fetch_entry), which holds while the command
 * buffer lives; NULL when out of memory (the Python side then binds at once). */
uint64_t *gpuav_output_bind(uintptr_t command_buffer) {
    struct gpuav_fetch_entry *entry = gpuav_fetch_entry_made(command_buffer);
    return entry == NULL ? NULL : entry->output_bind;
}

static void gpuav_fetch_bindings_changed(struct gpuav_fetch_bindings *bindings) {
    bindings->changes = __atomic_add_fetch(&gpuav_fetch_changes, 1, __ATOMIC_RELAXED);
}

static struct gpuav_fetch_entry *gpuav_fetch_entry(uintptr_t command_buffer) {
    pthread_mutex_lock(&gpuav_fetch_lock);
    struct gpuav_fetch_entry *entry = gpuav_fetch_entry_locked(command_buffer);
    pthread_mutex_unlock(&gpuav_fetch_lock);
    return entry;
}

const struct gpuav_fetch_bindings *gpuav_fetch_bindings(uintptr_t command_buffer) {
    struct gpuav_fetch_entry *entry = gpuav_fetch_entry(command_buffer);
    return entry == NULL ? &gpuav_nothing_bound : &entry->bindings;
}

/* The command buffer's entry, made now if it has none: its address holds until the command
 * buffer, its pool or its device goes, so the draw hooks keep it (its push constants). */
const struct gpuav_fetch_bindings *gpuav_fetch_bindings_kept(uintptr_t command_buffer) {
    const struct gpuav_fetch_bindings *bindings = gpuav_fetch_bindings_to_write(command_buffer);
    return bindings == NULL ? &gpuav_nothing_bound : bindings;
}

static void gpuav_note_vertex_buffers(uintptr_t command_buffer, uint32_t first, uint32_t count,
                                      uintptr_t buffers, uintptr_t offsets, uintptr_t sizes,
                                      uintptr_t strides) {
    struct gpuav_fetch_bindings *bindings = gpuav_fetch_bindings_to_write(command_buffer);
    if (bindings == NULL || count == 0 || buffers == 0 || offsets == 0) {
        return;
    }
    int changed = 0;
    for (uint32_t k = 0; k < count; k++) {
        uint64_t slot = (uint64_t)first + k;
        if (slot >= GPUAV_VERTEX_BINDING_SLOTS) {
            changed |= !bindings->unfollowed;
            bindings->unfollowed = 1;
            continue;
        }
        struct gpuav_vertex_binding binding = {
            ((const uintptr_t *)buffers)[k],
            ((const uint64_t *)offsets)[k],
            sizes ? ((const uint64_t *)sizes)[k] : GPUAV_WHOLE_SIZE,
            strides ? ((const uint64_t *)strides)[k] : 0,
        };
        uint64_t bit = (uint64_t)1 << slot;
        uint64_t strided = strides ? bit : 0;
        struct gpuav_vertex_binding *held = &bindings->vertex[slot];
        if (!(bindings->vertex_bound & bit) || (bindings->vertex_strided & bit) != strided ||
            memcmp(held, &binding, sizeof(binding)) != 0) {
            *held = binding;
            bindings->vertex_bound |= bit;
            bindings->vertex_strided = (bindings->vertex_strided & ~bit) | strided;
            changed = 1;
        }
    }
    if (changed) {
        gpuav_fetch_bindings_changed(bindings);
    }
}

static void gpuav_note_index_buffer(uintptr_t command_buffer, uintptr_t buffer, uint64_t offset,
                                    uint64_t size, int32_t index_type) {
    struct gpuav_fetch_bindings *bindings = gpuav_fetch_bindings_to_write(command_buffer);
    if (bindings == NULL) {
        return;
    }
    if (!bindings->index_bound || bindings->index_buffer != buffer ||
        bindings->index_offset != offset || bindings->index_size != size ||
        bindings->index_type != index_type) {
        bindings->index_bound = 1;
        bindings->index_buffer = buffer;
        bindings->index_offset = offset;
        bindings->index_size = size;
        bindings->index_type = index_type;
        gpuav_fetch_bindings_changed(bindings);
    }
}

/* vkCmdPushConstants: the bytes pushed, for the verdicts the draw hooks work out. A push past
 * the bytes kept (no device takes that many) leaves every word unknown. */
static void gpuav_note_push_constants(uintptr_t command_buffer, uint32_t offset, uint32_t size,
                                      uintptr_t values) {
    struct gpuav_fetch_bindings *bindings = gpuav_fetch_bindings_to_write(command_buffer);
    if (bindings == NULL) {
        return;
    }
    if (values == 0 || offset % 4 != 0 || size % 4 != 0 || offset > GPUAV_PUSH_BYTES ||
        size > GPUAV_PUSH_BYTES - offset) {
        bindings->pushed_words = 0;
    } else {
        memcpy(bindings->push + offset, (const void *)values, size);
        for (uint32_t word = offset / 4; word < (offset + size) / 4; word++) {
            bindings->pushed_words |= (uint64_t)1 << word;
        }
    }
}

/* vkCmdPushConstants2: the same from a VkPushConstantsInfo. */
struct gpuav_push_constants_info {
    int32_t structure_type;
    const void *next;
    uintptr_t layout;
    uint32_t stages;
    uint32_t offset;
    uint32_t size;
    const void *values;
};

_Static_assert(offsetof(struct gpuav_push_constants_info, offset) == 28 &&
                   offsetof(struct gpuav_push_constants_info, values) == 40,
               "VkPushConstantsInfo's layout on a 64-bit target");

static void gpuav_note_push_constants_info(uintptr_t command_buffer, uintptr_t info) {
    const struct gpuav_push_constants_info *given = (const struct gpuav_push_constants_info *)info;
    if (given != NULL) {
        gpuav_note_push_constants(command_buffer, given->offset, given->size,
                                  (uintptr_t)given->values);
    }
}

/* vkBeginCommandBuffer: a new recording starts with nothing bound or pushed. */
static void gpuav_fetch_bindings_clear(uintptr_t command_buffer) {
    struct gpuav_fetch_entry *entry = gpuav_fetch_entry(command_buffer);
    if (entry != NULL && (entry->bindings.changes != 0 || entry->bindings.pushed_words != 0)) {
        memset(&entry->bindings, 0, sizeof(entry->bindings));
        gpuav_fetch_bindings_changed(&entry->bindings);
    }
}

/* Removes the entries of one command buffer (device 0) or of every command buffer of a
 * device (command_buffer 0). */
static void gpuav_fetch_bindings_remove(uintptr_t command_buffer, uintptr_t device_key) {
    pthread_mutex_lock(&gpuav_fetch_lock);
    size_t first = command_buffer ? gpuav_fetch_bucket(command_buffer) : 0;
    size_t end = command_buffer ? first + 1 : GPUAV_FETCH_BUCKETS;
    for (size_t bucket = first; bucket < end; bucket++) {
        struct gpuav_fetch_entry **link = &gpuav_fetch_buckets[bucket];
        while (*link != NULL) {
            struct gpuav_fetch_entry *entry = *link;
            if (command_buffer ? entry->command_buffer == command_buffer
                               : entry->device_key == device_key) {
                *link = entry->next;
                free(entry);
            } else {
                link = &entry->next;
            }
        }
    }
    pthread_mutex_unlock(&gpuav_fetch_lock);
}

void gpuav_fetch_bindings_forget(uintptr_t command_buffer) {
    if (command_buffer != 0) {
        gpuav_fetch_bindings_remove(command_buffer, 0);
    }
}

static void gpuav_fetch_bindings_forget_each(uint32_t count, uintptr_t command_buffers) {
    for (uint32_t k = 0; command_buffers != 0 && k < count; k++) {
        gpuav_fetch_bindings_forget(((const uintptr_t *)command_buffers)[k]);
    }
}

void gpuav_fetch_bindings_forget_device(uintptr_t device) {
    uintptr_t key = gpuav_dispatch_key(device);
    if (key != 0) {
        gpuav_fetch_bindings_remove(0, key);
    }
}
