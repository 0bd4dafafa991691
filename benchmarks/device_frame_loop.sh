#!/bin/bash
# bench_frame_loop.py on the lent GPU machine, from the repository root of the call's copy:
#   bash benchmarks/device_frame_loop.sh TREE [bench_frame_loop options...]
# TREE: the tree to measure (a `git archive` snapshot carried in .vkdebs/snap, so that other
# engineers' uncommitted edits are not measured). Sets the machine up (device_setup.sh), writes
# its facts, probes the Khronos layer 1.4.309 under Debian 13's dynamic loader (natively where
# that fails), then runs the benchmark one size at a time (SIZES: WIDTHxHEIGHT[:FRAMES] each,
# default "256x256:1000 1920x1080:60"; a frame of 1920x1080 takes the GPU about 20 ms without a
# layer), so that a call stopped at its limit still brings back the sizes done. Output lands in
# $OUT.
set -o pipefail
tree=$1
shift
source benchmarks/device_setup.sh
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.mem,temperature.gpu \
        --format=csv
    grep -m1 'model name' /proc/cpuinfo
    echo "cores: $(nproc)"
    gcc --version | head -1
    python3 --version
} 2>&1 | tee "$OUT/machine.txt"
cd "$tree" || exit 1
probe() {
    python3 -m benchmarks.bench_frame_loop --runs 1 --frames 30 --warmup 5 --size 64x64 \
        --khronos-root "$NK_ROOT" "$@"
}
mode=()
if ! probe 2>&1 | tee "$OUT/probe.txt"; then
    echo "Khronos under Debian 13's loader failed; trying the system's glibc" | tee -a "$OUT/probe.txt"
    mode=(--khronos-native)
    probe "${mode[@]}" 2>&1 | tee -a "$OUT/probe.txt" || exit 1
fi
for entry in ${SIZES:-256x256:1000 1920x1080:60}; do
    size=${entry%%:*}
    frames=()
    [ "$entry" != "$size" ] && frames=(--frames "${entry#*:}" --warmup 10)
    PYTHONUNBUFFERED=1 python3 -m benchmarks.bench_frame_loop --khronos-root "$NK_ROOT" \
        "${mode[@]}" --size "$size" --json "$OUT/frames-$size.json" "$@" "${frames[@]}" 2>&1 |
        tee -a "$OUT/bench.txt"
done
