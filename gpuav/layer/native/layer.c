/* The plain-C part of the native front end: the way down the chain that never needs Python.
 *
 * Every entry point we hand out is a C wrapper (generated, see prototypes.c_wrappers) that
 * enters Python only while the Python side is ready; before Python has started, after it
 * failed to start, while the interpreter finalizes and after it has gone, the wrapper calls
 * the next layer through the dispatch tables kept here. vkGetInstanceProcAddr and
 * vkGetDeviceProcAddr are answered here too, from flags the Python side sets per instance
 * and device, so that looking up a function never enters Python.
 *
 * Python is started once, from the first vkCreateInstance, under our own control: in a host
 * that already runs Python on a version before 3.12, cffi's start-up spins on
 * PyCapsule_Type.tp_version_tag, which any attribute lookup on a capsule sets; we reset it
 * with PyType_Modified while holding the GIL, so the spin lock is free when cffi takes it.
 *
 * The library is linked with -z nodelete: once loaded it stays, so the interpreter's
 * references into it outlive the loader's dlclose after the last instance is destroyed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#if !defined(_WIN32)
#include <dlfcn.h>
#endif

#if defined(__GNUC__)
#define GPUAV_EXPORT __attribute__((visibility("default")))
#else
#define GPUAV_EXPORT
#endif

/* The loader's link-chain structures (vk_layer.h): VkLayerInstanceLink, VkLayerDeviceLink and
 * the common head of VkLayerInstanceCreateInfo / VkLayerDeviceCreateInfo (whose union starts
 * with pLayerInfo; the device variant is exactly this size). */
struct gpuav_layer_instance_link {
    struct gpuav_layer_instance_link *pNext;
    uintptr_t pfnNextGetInstanceProcAddr;
    uintptr_t pfnNextGetPhysicalDeviceProcAddr;
};
struct gpuav_layer_device_link {
    struct gpuav_layer_device_link *pNext;
    uintptr_t pfnNextGetInstanceProcAddr;
    uintptr_t pfnNextGetDeviceProcAddr;
};
struct gpuav_layer_create_info {
    int32_t sType;
    const void *pNext;
    int32_t function;
    void *pLayerInfo;
};
struct gpuav_base_structure {
    int32_t sType;
    struct gpuav_base_structure *pNext;
};
typedef uintptr_t (*gpuav_PFN_GetProcAddr)(uintptr_t, const char *);

/* VkNegotiateLayerInterface of the loader-layer interface (vk_layer.h). */
struct gpuav_negotiate_layer_interface {
    int32_t sType; /* LAYER_NEGOTIATE_INTERFACE_STRUCT = 1 */
    void *pNext;
    uint32_t loaderLayerInterfaceVersion;
    void *pfnGetInstanceProcAddr;
    void *pfnGetDeviceProcAddr;
    void *pfnGetPhysicalDeviceProcAddr;
};

#define GPUAV_LAYER_INTERFACE_VERSION 2u
#define GPUAV_VK_SUCCESS 0
#define GPUAV_VK_ERROR_INITIALIZATION_FAILED (-3)
#define GPUAV_LOADER_INSTANCE_CREATE_INFO 47
#define GPUAV_LOADER_DEVICE_CREATE_INFO 48
#define GPUAV_LAYER_LINK_INFO 0

/* Per-table flags, set by the Python side (gpuav_register_table). */
#define GPUAV_TABLE_ENABLED 1
#define GPUAV_TABLE_RESERVE_BINDING_SLOT 2

/* Per-command kinds of the generated name table. */
#define GPUAV_HOOK_INSTANCE 1
#define GPUAV_HOOK_DEVICE 2
#define GPUAV_HOOK_RESERVE_ONLY 4
#define GPUAV_HOOK_ALWAYS 8

/* Defined by cffi from the embedding API (implemented in Python): runs the init code once,
 * then answers 1 when the Python side is attached. */
int gpuav_python_attach(void);

/* @GPUAV_SLOTS@ */

static uintptr_t gpuav_dispatch_key(uintptr_t handle) {
    return handle == 0 ? 0 : *(const uintptr_t *)handle;
}

/* -- dispatch tables ------------------------------------------------------------------------ */

struct gpuav_table;
static void gpuav_resolve_table(struct gpuav_table *table);

#define GPUAV_MAX_TABLES 256

struct gpuav_table {
    uintptr_t key;
    uintptr_t handle;
    gpuav_PFN_GetProcAddr get_proc_addr;
    int is_device;
    int flags;
    uintptr_t next[GPUAV_HOOKED_COUNT];
};

static struct gpuav_table *gpuav_tables[GPUAV_MAX_TABLES];
static int gpuav_tables_end; /* one past the highest slot ever used */
static pthread_mutex_t gpuav_tables_lock = PTHREAD_MUTEX_INITIALIZER;

static struct gpuav_table *gpuav_find_table_locked(uintptr_t key) {
    for (int i = 0; i < gpuav_tables_end; i++) {
        if (gpuav_tables[i] != NULL && gpuav_tables[i]->key == key) {
            return gpuav_tables[i];
        }
    }
    return NULL;
}

/* A copy of the table of a handle's instance or device (found by its dispatch key); 0 when
 * there is none. Copies, so that a concurrent destroy cannot free what a caller reads. */
static int gpuav_copy_table(uintptr_t handle, struct gpuav_table *out) {
    uintptr_t key = gpuav_dispatch_key(handle);
    int found = 0;
    if (key == 0) {
        return 0;
    }
    pthread_mutex_lock(&gpuav_tables_lock);
    struct gpuav_table *table = gpuav_find_table_locked(key);
    if (table != NULL) {
        *out = *table;
        found = 1;
    }
    pthread_mutex_unlock(&gpuav_tables_lock);
    return found;
}

/* The next layer's function in one slot of a handle's table, and whether GPU-AV is on for
 * the handle (0 when it has no table). */
static uintptr_t gpuav_next_function(uintptr_t handle, int slot, int *enabled) {
    uintptr_t key = gpuav_dispatch_key(handle);
    uintptr_t function = 0;
    *enabled = 0;
    if (key == 0) {
        return 0;
    }
    pthread_mutex_lock(&gpuav_tables_lock);
    struct gpuav_table *table = gpuav_find_table_locked(key);
    if (table != NULL) {
        function = table->next[slot];
        *enabled = (table->flags & GPUAV_TABLE_ENABLED) != 0;
    }
    pthread_mutex_unlock(&gpuav_tables_lock);
    return function;
}

/* Whether GPU-AV is on for a handle's instance or device. */
static int gpuav_enabled_for(uintptr_t handle) {
    int enabled;
    gpuav_next_function(handle, 0, &enabled);
    return enabled;
}

/* Remember the next layer of an instance (is_device 0) or device; returns 0 when the table
 * is full or out of memory (the handle then has no C fallback, and no hooks: see GPA). */
int gpuav_register_table(uintptr_t handle, uintptr_t get_proc_addr, int is_device, int flags) {
    struct gpuav_table *table = calloc(1, sizeof(*table));
    if (table == NULL) {
        return 0;
    }
    table->key = gpuav_dispatch_key(handle);
    table->handle = handle;
    table->get_proc_addr = (gpuav_PFN_GetProcAddr)get_proc_addr;
    table->is_device = is_device;
    table->flags = flags;
    gpuav_resolve_table(table);
    int stored = 0;
    pthread_mutex_lock(&gpuav_tables_lock);
    struct gpuav_table *old = gpuav_find_table_locked(table->key);
    for (int i = 0; i < GPUAV_MAX_TABLES && !stored; i++) {
        if (gpuav_tables[i] == old && old != NULL) {
            gpuav_tables[i] = table;
            stored = 1;
        }
    }
    for (int i = 0; i < GPUAV_MAX_TABLES && !stored; i++) {
        if (gpuav_tables[i] == NULL) {
            gpuav_tables[i] = table;
            stored = 1;
            if (i >= gpuav_tables_end) {
                gpuav_tables_end = i + 1;
            }
        }
    }
    pthread_mutex_unlock(&gpuav_tables_lock);
    free(old);
    if (!stored) {
        free(table);
    }
    return stored;
}

void gpuav_unregister_table(uintptr_t handle) {
    uintptr_t key = gpuav_dispatch_key(handle);
    struct gpuav_table *gone = NULL;
    pthread_mutex_lock(&gpuav_tables_lock);
    for (int i = 0; i < gpuav_tables_end; i++) {
        if (gpuav_tables[i] != NULL && gpuav_tables[i]->key == key) {
            gone = gpuav_tables[i];
            gpuav_tables[i] = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&gpuav_tables_lock);
    free(gone);
}

/* -- the Python side's life ----------------------------------------------------------------- */

enum { GPUAV_PY_UNSTARTED, GPUAV_PY_READY, GPUAV_PY_FAILED, GPUAV_PY_GONE };
static int gpuav_py_state = GPUAV_PY_UNSTARTED;
static pthread_mutex_t gpuav_py_lock = PTHREAD_MUTEX_INITIALIZER;

static int gpuav_interpreter_finalizing(void) {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

/* Whether an entry point may enter Python now. Never starts it. */
static int gpuav_python_usable(void) {
    return __atomic_load_n(&gpuav_py_state, __ATOMIC_ACQUIRE) == GPUAV_PY_READY &&
           !gpuav_interpreter_finalizing();
}

/* The Python side has flushed its reports and is not entered again (see gpuav_python_retire). */
static void gpuav_python_gone(void) {
    __atomic_store_n(&gpuav_py_state, GPUAV_PY_GONE, __ATOMIC_RELEASE);
}

static void gpuav_py_retire(void); /* extern "Python", generated by cffi */

/* The Python side reads back and reports what is pending, leaves gpuav's spill blocks safe to
 * bind without it, and is not entered again: at the exit of a C host (whose embedded
 * interpreter is never finalized); a Python host's atexit handler does the same. */
void gpuav_python_retire(void) {
    if (gpuav_python_usable() && Py_IsInitialized()) {
        gpuav_py_retire();
    }
    gpuav_python_gone();
}

/* The folders the build found gpuav, cffi and vulkan in, and its site-packages, one per line
 * (defined by build._build from build_inputs' "python_paths"). */
#ifndef GPUAV_PYTHON_PATHS
#define GPUAV_PYTHON_PATHS ""
#endif

/* Appended to sys.path, after the standard library, as they are; no .pth file is run. */
static void gpuav_add_build_paths(void) {
    PyObject *path = PySys_GetObject("path"); /* borrowed */
    const char *folder = GPUAV_PYTHON_PATHS;
    while (path != NULL && PyList_Check(path) && *folder != '\0') {
        const char *end = strchr(folder, '\n');
        size_t length = end != NULL ? (size_t)(end - folder) : strlen(folder);
        PyObject *name = PyUnicode_DecodeFSDefaultAndSize(folder, (Py_ssize_t)length);
        if (name != NULL && PySequence_Contains(path, name) == 0) {
            PyList_Append(path, name);
        }
        Py_XDECREF(name);
        PyErr_Clear();
        folder += length + (end != NULL);
    }
}

/* A C host's interpreter, as Py_InitializeEx(0) makes it (no signal handlers, C stdio and the
 * locale left as they are) but without `site`: importing it runs every .pth file of the
 * environment's site-packages, whatever they import (the lent H100's Python: 63 ms, most of
 * the layer's start). gpuav needs only the build's folders, added here; GPUAV_PYTHON_SITE=1
 * runs `site` as before, for a host that starts its own Python later and relies on it.
 * Returns with the GIL held, or 0 where the interpreter could not be made. */
static int gpuav_initialize_python(void) {
    PyPreConfig preconfig;
    PyPreConfig_InitPythonConfig(&preconfig);
    preconfig.parse_argv = 0;
    preconfig.utf8_mode = 0;
    preconfig.coerce_c_locale = 0;
    preconfig.coerce_c_locale_warn = 0;
    if (PyStatus_Exception(Py_PreInitialize(&preconfig))) {
        return 0;
    }
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.parse_argv = 0;
    config.configure_c_stdio = 0;
    config.install_signal_handlers = 0;
    const char *site = getenv("GPUAV_PYTHON_SITE");
    config.site_import = site != NULL && strcmp(site, "1") == 0;
    PyStatus status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
        return 0;
    }
    gpuav_add_build_paths();
    return 1;
}

/* Whether the interpreter is the layer's own (a C host), not the app's: then no frame of the
 * app's is ever on a hook's stack. */
static int gpuav_python_is_the_layers_own;

int gpuav_python_is_the_layers(void) {
    return gpuav_python_is_the_layers_own;
}

static void gpuav_start_python_locked(void) {
    if (Py_IsInitialized()) {
        if (gpuav_interpreter_finalizing()) {
            return; /* stays UNSTARTED: this instance is passed through */
        }
    } else {
        if (!gpuav_initialize_python()) {
            gpuav_py_state = GPUAV_PY_FAILED;
            return;
        }
        gpuav_python_is_the_layers_own = 1;
        PyEval_SaveThread();
    }
    gpuav_py_state = GPUAV_PY_FAILED;
    PyGILState_STATE gil = PyGILState_Ensure();
#if PY_VERSION_HEX < 0x030C0000
    /* cffi's start-up lock before Python 3.12 (see the top of this file). */
    PyType_Modified(&PyCapsule_Type);
#endif
    int attached = gpuav_python_attach();
    PyGILState_Release(gil);
    if (attached == 1) {
        atexit(gpuav_python_retire);
        __atomic_store_n(&gpuav_py_state, GPUAV_PY_READY, __ATOMIC_RELEASE);
    }
}

/* Start the Python side if it never was; whether it is usable now. */
static int gpuav_start_python(void) {
    if (__atomic_load_n(&gpuav_py_state, __ATOMIC_ACQUIRE) == GPUAV_PY_UNSTARTED) {
        pthread_mutex_lock(&gpuav_py_lock);
        if (gpuav_py_state == GPUAV_PY_UNSTARTED) {
            gpuav_start_python_locked();
        }
        pthread_mutex_unlock(&gpuav_py_lock);
    }
    return gpuav_python_usable();
}

/* -- pass-through creation and destruction, for when Python is not usable ------------------- */

static void *gpuav_take_link(const void *create_info, int32_t structure_type) {
    const struct gpuav_base_structure *node = ((const struct gpuav_base_structure *)create_info)->pNext;
    for (; node != NULL; node = node->pNext) {
        if (node->sType == structure_type) {
            struct gpuav_layer_create_info *head = (struct gpuav_layer_create_info *)node;
            if (head->function == GPUAV_LAYER_LINK_INFO && head->pLayerInfo != NULL) {
                void *link = head->pLayerInfo;
                /* Both link structures start with pNext. */
                head->pLayerInfo = *(void **)link;
                return link;
            }
        }
    }
    return NULL;
}

typedef int32_t (*gpuav_PFN_CreateInstance)(uintptr_t, uintptr_t, uintptr_t);
typedef int32_t (*gpuav_PFN_CreateDevice)(uintptr_t, uintptr_t, uintptr_t, uintptr_t);
typedef void (*gpuav_PFN_Destroy)(uintptr_t, uintptr_t);

static int32_t gpuav_fallback_vkCreateInstance(uintptr_t create_info, uintptr_t allocator,
                                               uintptr_t instance_out) {
    struct gpuav_layer_instance_link *link =
        gpuav_take_link((const void *)create_info, GPUAV_LOADER_INSTANCE_CREATE_INFO);
    if (link == NULL) {
        return GPUAV_VK_ERROR_INITIALIZATION_FAILED;
    }
    gpuav_PFN_GetProcAddr gpa = (gpuav_PFN_GetProcAddr)link->pfnNextGetInstanceProcAddr;
    gpuav_PFN_CreateInstance create = (gpuav_PFN_CreateInstance)gpa(0, "vkCreateInstance");
    if (create == NULL) {
        return GPUAV_VK_ERROR_INITIALIZATION_FAILED;
    }
    int32_t result = create(create_info, allocator, instance_out);
    if (result == GPUAV_VK_SUCCESS) {
        gpuav_register_table(*(uintptr_t *)instance_out, (uintptr_t)gpa, 0, 0);
    }
    return result;
}

static int32_t gpuav_fallback_vkCreateDevice(uintptr_t physical_device, uintptr_t create_info,
                                             uintptr_t allocator, uintptr_t device_out) {
    struct gpuav_layer_device_link *link =
        gpuav_take_link((const void *)create_info, GPUAV_LOADER_DEVICE_CREATE_INFO);
    if (link == NULL) {
        return GPUAV_VK_ERROR_INITIALIZATION_FAILED;
    }
    struct gpuav_table instance;
    uintptr_t instance_handle = gpuav_copy_table(physical_device, &instance) ? instance.handle : 0;
    gpuav_PFN_GetProcAddr instance_gpa = (gpuav_PFN_GetProcAddr)link->pfnNextGetInstanceProcAddr;
    gpuav_PFN_CreateDevice create =
        (gpuav_PFN_CreateDevice)instance_gpa(instance_handle, "vkCreateDevice");
    if (create == NULL) {
        return GPUAV_VK_ERROR_INITIALIZATION_FAILED;
    }
    int32_t result = create(physical_device, create_info, allocator, device_out);
    if (result == GPUAV_VK_SUCCESS) {
        gpuav_register_table(*(uintptr_t *)device_out, link->pfnNextGetDeviceProcAddr, 1, 0);
    }
    return result;
}

void gpuav_forget_pipeline(uintptr_t device, uintptr_t pipeline);
void gpuav_fetch_bindings_forget_device(uintptr_t device);

static void gpuav_fallback_destroy(uintptr_t handle, uintptr_t allocator, int slot) {
    int enabled;
    gpuav_PFN_Destroy destroy = (gpuav_PFN_Destroy)gpuav_next_function(handle, slot, &enabled);
    gpuav_forget_pipeline(handle, 0); /* a device's (an instance has none) */
    gpuav_fetch_bindings_forget_device(handle);
    gpuav_unregister_table(handle);
    if (destroy != NULL) {
        destroy(handle, allocator);
    }
}

/* -- the generated part: slots, wrappers, the name table ------------------------------------ */

/* -- instrumented pipelines, bound safely without Python ----------------------------------- */

/* An instrumented pipeline and the binding of gpuav's spill block that keeps its shaders from
 * running with gpuav's set unbound when Python cannot bind a block (it has gone: C++
 * destructors, atexit handlers that record new work). */
struct gpuav_pipeline_binding {
    uintptr_t device_key;
    uintptr_t pipeline;
    uintptr_t layout;
    uint32_t set_index;
    uintptr_t descriptor_set;
};

static struct gpuav_pipeline_binding *gpuav_pipeline_bindings;
static size_t gpuav_pipeline_binding_count;
static size_t gpuav_pipeline_binding_capacity;
static pthread_mutex_t gpuav_pipelines_lock = PTHREAD_MUTEX_INITIALIZER;

/* Returns 0 when out of memory (the pipeline then has no safe binding). */
int gpuav_remember_pipeline(uintptr_t device, uintptr_t pipeline, uintptr_t layout,
                            uint32_t set_index, uintptr_t descriptor_set) {
    int stored = 0;
    pthread_mutex_lock(&gpuav_pipelines_lock);
    if (gpuav_pipeline_binding_count == gpuav_pipeline_binding_capacity) {
        size_t capacity = gpuav_pipeline_binding_capacity ? 2 * gpuav_pipeline_binding_capacity : 64;
        void *grown = realloc(gpuav_pipeline_bindings, capacity * sizeof(*gpuav_pipeline_bindings));
        if (grown != NULL) {
            gpuav_pipeline_bindings = grown;
            gpuav_pipeline_binding_capacity = capacity;
        }
    }
    if (gpuav_pipeline_binding_count < gpuav_pipeline_binding_capacity) {
        struct gpuav_pipeline_binding binding = {gpuav_dispatch_key(device), pipeline, layout,
                                                 set_index, descriptor_set};
        gpuav_pipeline_bindings[gpuav_pipeline_binding_count++] = binding;
        stored = 1;
    }
    pthread_mutex_unlock(&gpuav_pipelines_lock);
    return stored;
}

/* Forget one pipeline of a device (pipeline 0: every pipeline of the device). */
void gpuav_forget_pipeline(uintptr_t device, uintptr_t pipeline) {
    uintptr_t key = gpuav_dispatch_key(device);
    pthread_mutex_lock(&gpuav_pipelines_lock);
    for (size_t i = 0; i < gpuav_pipeline_binding_count;) {
        struct gpuav_pipeline_binding *binding = &gpuav_pipeline_bindings[i];
        if (binding->device_key == key && (pipeline == 0 || binding->pipeline == pipeline)) {
            *binding = gpuav_pipeline_bindings[--gpuav_pipeline_binding_count];
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&gpuav_pipelines_lock);
}

static void gpuav_bind_spill_block(uintptr_t command_buffer, int32_t bind_point,
                                   uintptr_t pipeline);
static void gpuav_bind_output_before(uintptr_t command_buffer);

/* -- vertex and index buffers bound (fetch_bindings.c) -------------------------------------- */

/* @GPUAV_FETCH_BINDINGS@ */

struct gpuav_hook_name {
    const char *name;
    int slot;
    int kinds;
};

/* @GPUAV_WRAPPERS@ */

static void gpuav_bind_spill_block(uintptr_t command_buffer, int32_t bind_point,
                                   uintptr_t pipeline) {
    uintptr_t key = gpuav_dispatch_key(command_buffer);
    struct gpuav_pipeline_binding found = {0};
    pthread_mutex_lock(&gpuav_pipelines_lock);
    for (size_t i = 0; i < gpuav_pipeline_binding_count; i++) {
        if (gpuav_pipeline_bindings[i].device_key == key &&
            gpuav_pipeline_bindings[i].pipeline == pipeline) {
            found = gpuav_pipeline_bindings[i];
            break;
        }
    }
    pthread_mutex_unlock(&gpuav_pipelines_lock);
    if (found.pipeline == 0) {
        return;
    }
    int enabled;
    gpuav_PFN_vkCmdBindDescriptorSets bind = (gpuav_PFN_vkCmdBindDescriptorSets)gpuav_next_function(
        command_buffer, GPUAV_SLOT_vkCmdBindDescriptorSets, &enabled);
    if (bind != NULL) {
        bind(command_buffer, bind_point, found.layout, found.set_index, 1,
             (uintptr_t)&found.descriptor_set, 0, 0);
    }
}

/* The output block the Python side recorded for the action about to go down (or the pipeline
 * just bound), bound now: a call down through cffi costs Python more than the draw's own work. */
static void gpuav_bind_output_before(uintptr_t command_buffer) {
    struct gpuav_fetch_entry *entry = gpuav_fetch_entry(command_buffer);
    if (entry == NULL || entry->output_bind[3] == 0) {
        return;
    }
    uint64_t descriptor_set = entry->output_bind[3];
    entry->output_bind[3] = 0;
    int enabled;
    gpuav_PFN_vkCmdBindDescriptorSets bind = (gpuav_PFN_vkCmdBindDescriptorSets)gpuav_next_function(
        command_buffer, GPUAV_SLOT_vkCmdBindDescriptorSets, &enabled);
    if (bind != NULL) {
        bind(command_buffer, (int32_t)entry->output_bind[0], (uintptr_t)entry->output_bind[1],
             (uint32_t)entry->output_bind[2], 1, (uintptr_t)&descriptor_set, 0, 0);
    }
}

/* -- GetProcAddr ---------------------------------------------------------------------------- */

static int gpuav_compare_hook_names(const void *key, const void *element) {
    return strcmp((const char *)key, ((const struct gpuav_hook_name *)element)->name);
}

static const struct gpuav_hook_name *gpuav_hook_named(const char *name) {
    return bsearch(name, gpuav_hook_names, sizeof(gpuav_hook_names) / sizeof(gpuav_hook_names[0]),
                   sizeof(gpuav_hook_names[0]), gpuav_compare_hook_names);
}

static void gpuav_resolve_table(struct gpuav_table *table) {
    size_t count = sizeof(gpuav_hook_names) / sizeof(gpuav_hook_names[0]);
    int wanted = table->is_device ? GPUAV_HOOK_DEVICE : GPUAV_HOOK_INSTANCE;
    /* Names are sorted, so a core command comes before its KHR/EXT/AMD alias: the first one
     * the next layer has fills the slot. */
    for (size_t i = 0; i < count; i++) {
        const struct gpuav_hook_name *hook = &gpuav_hook_names[i];
        if ((hook->kinds & wanted) && table->next[hook->slot] == 0) {
            table->next[hook->slot] = table->get_proc_addr(table->handle, hook->name);
        }
    }
}

GPUAV_EXPORT uintptr_t vkGetDeviceProcAddr(uintptr_t device, const char *name);

/* GPUAV_TEST_UNHOOKED=vkCmdX stands in for an action command of a newer extension that gpuav
 * does not know: the app gets the next layer's function for it (tests of the spill block). */
static int gpuav_left_unhooked(const char *name) {
    const char *unhooked = getenv("GPUAV_TEST_UNHOOKED");
    return unhooked != NULL && strcmp(unhooked, name) == 0;
}

GPUAV_EXPORT uintptr_t vkGetInstanceProcAddr(uintptr_t instance, const char *name) {
    if (name == NULL) {
        return 0;
    }
    if (strcmp(name, "vkGetInstanceProcAddr") == 0) {
        return (uintptr_t)&vkGetInstanceProcAddr;
    }
    if (strcmp(name, "vkGetDeviceProcAddr") == 0) {
        return (uintptr_t)&vkGetDeviceProcAddr;
    }
    const struct gpuav_hook_name *hook = gpuav_hook_named(name);
    if (hook != NULL && (hook->kinds & GPUAV_HOOK_ALWAYS) && (hook->kinds & GPUAV_HOOK_INSTANCE)) {
        return gpuav_wrappers[hook->slot];
    }
    struct gpuav_table table;
    if (!gpuav_copy_table(instance, &table)) {
        return 0;
    }
    uintptr_t following = table.get_proc_addr(instance, name);
    if (following == 0 || hook == NULL || !(table.flags & GPUAV_TABLE_ENABLED)) {
        return following;
    }
    if ((hook->kinds & GPUAV_HOOK_RESERVE_ONLY) &&
        !(table.flags & GPUAV_TABLE_RESERVE_BINDING_SLOT)) {
        return following;
    }
    return gpuav_wrappers[hook->slot];
}

GPUAV_EXPORT uintptr_t vkGetDeviceProcAddr(uintptr_t device, const char *name) {
    if (name == NULL) {
        return 0;
    }
    if (strcmp(name, "vkGetDeviceProcAddr") == 0) {
        return (uintptr_t)&vkGetDeviceProcAddr;
    }
    struct gpuav_table table;
    if (!gpuav_copy_table(device, &table)) {
        return 0;
    }
    uintptr_t following = table.get_proc_addr(device, name);
    const struct gpuav_hook_name *hook = gpuav_hook_named(name);
    if (following == 0 || hook == NULL || !(hook->kinds & GPUAV_HOOK_DEVICE) ||
        gpuav_left_unhooked(name)) {
        return following;
    }
    if ((hook->kinds & GPUAV_HOOK_ALWAYS) || (table.flags & GPUAV_TABLE_ENABLED)) {
        return gpuav_wrappers[hook->slot];
    }
    return following;
}

GPUAV_EXPORT int32_t vkNegotiateLoaderLayerInterfaceVersion(
    struct gpuav_negotiate_layer_interface *version) {
    if (version == NULL || version->sType != 1) {
        return GPUAV_VK_ERROR_INITIALIZATION_FAILED;
    }
    if (version->loaderLayerInterfaceVersion >= 2u) {
        version->pfnGetInstanceProcAddr = (void *)&vkGetInstanceProcAddr;
        version->pfnGetDeviceProcAddr = (void *)&vkGetDeviceProcAddr;
        version->pfnGetPhysicalDeviceProcAddr = NULL;
    }
    if (version->loaderLayerInterfaceVersion > GPUAV_LAYER_INTERFACE_VERSION) {
        version->loaderLayerInterfaceVersion = GPUAV_LAYER_INTERFACE_VERSION;
    }
    return GPUAV_VK_SUCCESS;
}

/* The loader opens layers with RTLD_LOCAL, which would hide libpython's symbols from the
 * extension modules (such as _cffi_backend) that the interpreter loads later. Promote the
 * already-loaded libpython to global scope before anything starts Python. */
#if !defined(_WIN32) && defined(GPUAV_LIBPYTHON)
__attribute__((constructor)) static void gpuav_promote_libpython(void) {
    dlopen(GPUAV_LIBPYTHON, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}
#endif
