#!/bin/bash
# bench_shader_time.py on the lent GPU machine, from the repository root of the call's copy:
#   bash benchmarks/device_shader_time.sh TREE [bench_shader_time options...]
# TREE: the tree to measure (a `git archive` snapshot carried in .vkdebs/snap, so that other
# engineers' uncommitted edits are not measured). Sets the machine up (device_setup.sh), writes
# the machine's facts, then runs the benchmark with the Khronos layer 1.4.309 under Debian 13's
# dynamic loader, or natively where that fails and the system's glibc is new enough. Output
# and every dispatch time land in $OUT.
set -o pipefail
tree=$1
shift
source benchmarks/device_setup.sh
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu \
        --format=csv
    ldd --version | head -1
    python3 --version
    command -v python3
} 2>&1 | tee "$OUT/machine.txt"
cd "$tree" || exit 1
probe() {
    python3 -m benchmarks.bench_shader_time --runs 1 --dispatches 3 --kernel ssbo_loops \
        --khronos-root "$NK_ROOT" "$@"
}
mode=()
if ! probe 2>&1 | tee "$OUT/probe.txt"; then
    echo "Khronos under Debian 13's loader failed; trying the system's glibc" | tee -a "$OUT/probe.txt"
    mode=(--khronos-native)
    probe "${mode[@]}" 2>&1 | tee -a "$OUT/probe.txt" || exit 1
fi
PYTHONUNBUFFERED=1 python3 -m benchmarks.bench_shader_time --khronos-root "$NK_ROOT" "${mode[@]}" \
    --json "$OUT/dispatches.json" "$@" 2>&1 | tee "$OUT/bench.txt"
