#version 450
// Models of ssbo_loops.comp, not instrumented by anyone: checks written by hand the way the
// physical limit of a range check would have them (one compare and one branch per access
// against the bound range, which is the buffer's length; a failure reported by an atomic on
// a buffer of its own, as gpuav's records go to its own output buffer),
// and variants that tell what the driver's compiler does with the plain loop. One variant per
// compilation (glslangValidator -DVARIANT); every variant computes the plain kernel's result.
//   CHECKED           both checks in the loop (a pass that hoists only the range)
//   HOISTED           the store's check (its operands do not change in the loop) before it
//   VERSIONED         one check of the mask's span before the loop; the loop runs unchecked
//                     when it passes, checked otherwise
//   VERSIONED_QUIET   VERSIONED with nothing reported on failure (no atomic in the shader)
//   SUNK              no check; the store after the loop (what the compiler may do itself)
//   ATOMIC_ELSEWHERE  no check; an atomic on the result buffer that never runs, before the loop
//   GUARDED_LOAD      only the load checked in the loop
//   GUARDED_STORE     only the store checked in the loop
//   GUARDED_QUIET     both accesses under their check in the loop, nothing reported on failure
//   SELECTED          no branch around an access: the load's index is clamped and its value
//                     selected, the store (its check made before the loop) always runs, to an
//                     index selected before the loop (for a pointer selected by a pass)
//   SELECTED_QUIET    SELECTED with nothing reported
//   DEFERRED          SELECTED with no report in the loop: failures gathered in a register,
//                     reported once after it
//   ATOMIC_IN_LOOP    no check; an atomic on the report buffer under a branch in the loop
//                     that never runs
//   PLAIN             no check: ssbo_loops.comp itself
// and with any of them UNROLL or DONT_UNROLL: the loops carry that hint for the driver.
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Result { uint v[]; } result;
layout(set = 0, binding = 2) buffer Report { uint v[]; } report;
const uint MASK = (1u << 20) - 1u;

#if defined(CHECKED) || defined(GUARDED_LOAD) || defined(VERSIONED) || defined(HOISTED) \
    || defined(SELECTED)
#define REPORT_LOAD atomicOr(report.v[0], 1u)
#else
#define REPORT_LOAD
#endif
#if defined(CHECKED) || defined(GUARDED_STORE) || defined(VERSIONED) || defined(HOISTED) \
    || defined(SELECTED)
#define REPORT_STORE atomicOr(report.v[0], 2u)
#else
#define REPORT_STORE
#endif

#if defined(UNROLL)
#define LOOP [[unroll]] for
#elif defined(DONT_UNROLL)
#define LOOP [[dont_unroll]] for
#else
#define LOOP for
#endif

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint n = uint(data.v.length());
    bool store_ok = i < uint(result.v.length());
    uint acc = 0u;
#if defined(SUNK)
    LOOP (uint k = 0u; k < 64u; ++k) acc += data.v[(i * 2654435761u + k) & MASK];
    result.v[i] = acc;
#elif defined(SELECTED) || defined(SELECTED_QUIET)
    if (!store_ok) REPORT_STORE;
    uint to = store_ok ? i : 0u;
    LOOP (uint k = 0u; k < 64u; ++k) {
        uint at = (i * 2654435761u + k) & MASK;
        bool ok = at < n;
        if (!ok) REPORT_LOAD;
        uint value = data.v[ok ? at : 0u];
        acc += ok ? value : 0u;
        result.v[to] = acc;
    }
#elif defined(DEFERRED)
    bool bad = !store_ok;
    uint to = store_ok ? i : 0u;
    LOOP (uint k = 0u; k < 64u; ++k) {
        uint at = (i * 2654435761u + k) & MASK;
        bool ok = at < n;
        bad = bad || !ok;
        uint value = data.v[ok ? at : 0u];
        acc += ok ? value : 0u;
        result.v[to] = acc;
    }
    if (bad) atomicOr(report.v[0], 1u);
#elif defined(ATOMIC_IN_LOOP)
    LOOP (uint k = 0u; k < 64u; ++k) {
        acc += data.v[(i * 2654435761u + k) & MASK];
        if (acc == 0xFFFFFFFFu) atomicOr(report.v[0], 4u);
        result.v[i] = acc;
    }
#elif defined(PLAIN)
    LOOP (uint k = 0u; k < 64u; ++k) {
        acc += data.v[(i * 2654435761u + k) & MASK];
        result.v[i] = acc;
    }
#elif defined(ATOMIC_ELSEWHERE)
    if (n == 0u) atomicOr(result.v[0], 1u);
    LOOP (uint k = 0u; k < 64u; ++k) {
        acc += data.v[(i * 2654435761u + k) & MASK];
        result.v[i] = acc;
    }
#elif defined(GUARDED_LOAD)
    LOOP (uint k = 0u; k < 64u; ++k) {
        uint at = (i * 2654435761u + k) & MASK;
        if (at < n) acc += data.v[at]; else REPORT_LOAD;
        result.v[i] = acc;
    }
#elif defined(GUARDED_STORE)
    LOOP (uint k = 0u; k < 64u; ++k) {
        acc += data.v[(i * 2654435761u + k) & MASK];
        if (store_ok) result.v[i] = acc; else REPORT_STORE;
    }
#elif defined(CHECKED) || defined(GUARDED_QUIET)
    LOOP (uint k = 0u; k < 64u; ++k) {
        uint at = (i * 2654435761u + k) & MASK;
        if (at < n) acc += data.v[at]; else REPORT_LOAD;
        if (store_ok) result.v[i] = acc; else REPORT_STORE;
    }
#elif defined(HOISTED)
    if (!store_ok) REPORT_STORE;
    LOOP (uint k = 0u; k < 64u; ++k) {
        uint at = (i * 2654435761u + k) & MASK;
        if (at < n) acc += data.v[at]; else REPORT_LOAD;
        if (store_ok) result.v[i] = acc;
    }
#elif defined(VERSIONED) || defined(VERSIONED_QUIET)
    if (MASK < n && store_ok) {
        LOOP (uint k = 0u; k < 64u; ++k) {
            acc += data.v[(i * 2654435761u + k) & MASK];
            result.v[i] = acc;
        }
    } else {
        if (!store_ok) REPORT_STORE;
        LOOP (uint k = 0u; k < 64u; ++k) {
            uint at = (i * 2654435761u + k) & MASK;
            if (at < n) acc += data.v[at]; else REPORT_LOAD;
            if (store_ok) result.v[i] = acc;
        }
    }
#else
#error "choose a variant with -D"
#endif
}
