# Sourced (from the repository root) by a command run on the lent GPU machine, which is bare:
# no Vulkan loader, no Khronos layer, no glslang, no cffi/vulkan packages, no network.
# What it needs travels with the call in three ignored folders (see benchmarks/RESULTS_H100.md):
#   .gl/      Debian bookworm's libvulkan1 (+ glvnd), unpacked into / as the device notes say
#   .vkdebs/  glslang-tools (and, where carried, bookworm's vulkan-validationlayers 1.3.239,
#             vulkan-tools + vulkaninfo's X libraries), unpacked into a prefix of their own
#   .whl/     cp312 wheels: cffi, pycparser, vulkan==1.3.275.1
#   .vkdebs/trixie/  Debian 13's libc6, libgcc-s1, libstdc++6 and vulkan-validationlayers
#             1.4.309 (from $NK_ROOT/debs of /work/shared/tools/newer-khronos.sh), unpacked
#             into $NK_ROOT laid out as that script lays it out (layer/ holds the manifest,
#             root/ the libraries), for bench_shader_time.py --khronos-root "$NK_ROOT"
#   .vkdebs/dev/  Debian bookworm's libvulkan-dev, for the C apps (bench_action_checks.py)
# Usage: source benchmarks/device_setup.sh && <run the benchmarks with python3>

GPUAV_VK_PREFIX=/opt/gpuav-vk

for deb in .gl/*.deb; do dpkg -x "$deb" /; done
ldconfig

mkdir -p "$GPUAV_VK_PREFIX"
for deb in .vkdebs/*.deb; do dpkg -x "$deb" "$GPUAV_VK_PREFIX"; done
gpuav_vk_libs="$GPUAV_VK_PREFIX/usr/lib/x86_64-linux-gnu"

# The Khronos manifest names its library by bare file name; make it absolute so that no
# LD_LIBRARY_PATH is needed. The benchmark strips VK_LAYER_PATH / VK_ADD_LAYER_PATH from the
# app's environment, so the manifest is found through XDG_DATA_DIRS (a standard search place).
gpuav_vk_manifest="$GPUAV_VK_PREFIX/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json"
if [ -f "$gpuav_vk_manifest" ]; then
    sed -i "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$gpuav_vk_libs/libVkLayer_khronos_validation.so\"#" \
        "$gpuav_vk_manifest"
fi
export XDG_DATA_DIRS="$GPUAV_VK_PREFIX/usr/share:${XDG_DATA_DIRS:-/usr/local/share:/usr/share}"
export PATH="$GPUAV_VK_PREFIX/usr/bin:$PATH"

# The C apps' build (tests/apps_common/build.py) wants /usr/include/vulkan and the linker's
# libvulkan.so: where the machine has no headers, libvulkan-dev goes into / (headers, the
# registry files and the libvulkan.so -> libvulkan.so.1 link only; no library of its own).
if [ ! -f /usr/include/vulkan/vulkan.h ] && ls .vkdebs/dev/libvulkan-dev_*.deb >/dev/null 2>&1; then
    dpkg -x .vkdebs/dev/libvulkan-dev_*.deb /
fi
if [ ! -e /usr/lib/x86_64-linux-gnu/libvulkan.so ] && [ -e /usr/lib/x86_64-linux-gnu/libvulkan.so.1 ]; then
    ln -s libvulkan.so.1 /usr/lib/x86_64-linux-gnu/libvulkan.so
fi

# The Khronos layer 1.4.309 (needs glibc 2.38): its manifest names the library absolutely.
if ls .vkdebs/trixie/*.deb >/dev/null 2>&1; then
    export NK_ROOT=/opt/gpuav-nk
    mkdir -p "$NK_ROOT/root" "$NK_ROOT/layer"
    for deb in .vkdebs/trixie/*.deb; do dpkg -x "$deb" "$NK_ROOT/root"; done
    sed "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$NK_ROOT/root/usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so\"#" \
        "$NK_ROOT/root/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json" \
        >"$NK_ROOT/layer/VkLayer_khronos_validation.json"
fi

# The NVIDIA ICD: use the standard places if they hold one, else the driver's own folder.
if ! ls /usr/share/vulkan/icd.d/nvidia_icd*.json /etc/vulkan/icd.d/nvidia_icd*.json >/dev/null 2>&1; then
    for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/icd.d/nvidia_icd.json; do
        if [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd"; break; fi
    done
fi
if [ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ]; then
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi

# Python packages go into the interpreter's own site-packages: the benchmark sets PYTHONPATH
# for its app processes, so a --target folder on PYTHONPATH would be lost there. pip writes
# their bytecode, as a user's install does: the lent machine sets PYTHONDONTWRITEBYTECODE=1, so
# without it every process compiled the vulkan package from source (~230 ms at vkCreateDevice).
python3 -m pip install -q --no-index --no-deps --no-cache-dir .whl/*.whl \
    2>&1 | grep -v -i 'warning' || true

# cffi's embedding links with -lpython3.X; where only the runtime libpython3.X.so.1.0 exists
# (no -dev package), give the linker a libpython3.X.so next to it in a folder of our own.
gpuav_pylib=$(python3 -c 'import sysconfig as s; print(s.get_config_var("LIBDIR") or "")')
gpuav_pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ ! -e "$gpuav_pylib/libpython$gpuav_pyver.so" ]; then
    gpuav_so=$(ls "$gpuav_pylib/libpython$gpuav_pyver.so.1.0" /usr/lib/x86_64-linux-gnu/libpython$gpuav_pyver.so.1.0 2>/dev/null | head -1)
    if [ -n "$gpuav_so" ]; then
        mkdir -p /opt/gpuav-pylink
        ln -sf "$gpuav_so" "/opt/gpuav-pylink/libpython$gpuav_pyver.so"
        export LIBRARY_PATH="/opt/gpuav-pylink${LIBRARY_PATH:+:$LIBRARY_PATH}"
    fi
fi

# vulkaninfo needs X/wayland client libraries the machine may lack; only it gets the prefix.
gpuav_vulkaninfo() { LD_LIBRARY_PATH="$gpuav_vk_libs" vulkaninfo "$@"; }
