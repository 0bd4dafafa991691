#!/bin/bash
# bench_action_checks.py on the lent GPU machine, from the repository root of the call's copy:
#   bash benchmarks/device_action_checks.sh TREE [bench_action_checks options...]
# TREE: the tree to measure (a `git archive` snapshot carried in .vkdebs/snap, so that other
# engineers' uncommitted edits are not measured). Writes the machine's facts (whether it had
# the Vulkan headers and a C compiler before device_setup.sh), sets it up, probes one draw kind
# with the Khronos layer 1.4.309 under Debian 13's dynamic loader (natively where that fails
# and the system's glibc is new enough), then runs the benchmark one draw kind at a time.
# Output lands in $OUT.
set -o pipefail
tree=$1
shift
{
    date -u
    echo "before setup: C compiler $(command -v gcc cc | tr '\n' ' ')"
    ls -d /usr/include/vulkan /usr/lib/x86_64-linux-gnu/libvulkan.so* 2>&1
} 2>&1 | tee "$OUT/machine.txt"
source benchmarks/device_setup.sh
{
    nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu \
        --format=csv
    grep -m1 'model name' /proc/cpuinfo
    echo "cores: $(nproc)"
    ldd --version | head -1
    gcc --version | head -1
    grep -m1 VK_HEADER_VERSION /usr/include/vulkan/vulkan_core.h
    python3 --version
    command -v python3
} 2>&1 | tee -a "$OUT/machine.txt"
cd "$tree" || exit 1
probe() {
    python3 -m benchmarks.bench_action_checks --runs 1 --frames 3 \
        --draw vkCmdDrawIndexedIndirect --khronos-root "$NK_ROOT" "$@"
}
mode=()
if ! probe 2>&1 | tee "$OUT/probe.txt"; then
    echo "Khronos under Debian 13's loader failed; trying the system's glibc" | tee -a "$OUT/probe.txt"
    mode=(--khronos-native)
    probe "${mode[@]}" 2>&1 | tee -a "$OUT/probe.txt" || exit 1
fi
# One draw kind at a time, so that a call stopped at its limit still brings back the kinds done.
for draw in vkCmdDraw vkCmdDrawIndexed vkCmdDrawIndirect vkCmdDrawIndexedIndirect; do
    python3 -m benchmarks.bench_action_checks --khronos-root "$NK_ROOT" "${mode[@]}" \
        --draw "$draw" "$@" 2>&1 | tee -a "$OUT/bench.txt"
done
