"""Build the native layer library into a cache folder and write its loader manifest beside it.

The library is a cffi embedding of Python: its C entry points start (or join) an interpreter
and run ``gpuav.layer.native.entry``. It is built on first use into
``$XDG_CACHE_HOME/gpuav/layer-<key>/`` where the key hashes everything baked into the binary
(C source, declarations, init code, the Python that builds it), so a changed layer or Python
gets a fresh build while the engine's Python code is always imported live.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import site
import sys
import sysconfig
import tempfile
from importlib import resources
from pathlib import Path

from gpuav.errors import SetupError
from gpuav.layer.native import prototypes

LAYER_NAME = "VK_LAYER_GPUAV_gpu_assisted"
MODULE_NAME = "_gpuav_layer"
LIBRARY_STEM = "libVkLayer_gpuav_gpu_assisted"
MANIFEST_NAME = "VkLayer_gpuav_gpu_assisted.json"
LAYER_API_VERSION = "1.3.275"

EMBEDDING_API = """
uintptr_t vkGetInstanceProcAddr(uintptr_t instance, uintptr_t name);
uintptr_t vkGetDeviceProcAddr(uintptr_t device, uintptr_t name);
"""

HELPER_CDEF = """
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
static uintptr_t gpuav_dispatch_key(uintptr_t handle);
"""

# Runs once per process, inside the embedded (or the app's) interpreter. Nothing here may
# raise: if gpuav cannot be imported the pass-through fallback keeps the app working.
INIT_CODE_TEMPLATE = """
import site
import sys
for _path in {paths!r}:
    if _path not in sys.path:
        site.addsitedir(_path)
from {module} import ffi, lib
try:
    from gpuav.layer.native import entry as _entry
    _entry.attach(ffi, lib)
except BaseException as _error:
    sys.stderr.write("gpuav: layer disabled, cannot start its Python side: %r\\n" % (_error,))
    exec({fallback!r}, {{"ffi": ffi, "lib": lib}})
"""


def _python_paths() -> list[str]:
    """Where the embedded interpreter must find gpuav and its dependencies (C hosts, venvs).

    Only locations that do not depend on the working directory or PYTHONPATH, so that the
    same environment always gets the same build: the site-packages folders of the building
    interpreter and the folders holding the packages the layer imports.
    """
    import cffi
    import vulkan

    import gpuav

    paths: list[str] = []
    for module in (gpuav, vulkan, cffi):
        paths.append(str(Path(module.__file__ or "").resolve().parent.parent))
    paths += [*site.getsitepackages(), site.getusersitepackages()]
    return [path for path in dict.fromkeys(paths) if Path(path).is_dir()]


def _read_resource(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def build_inputs() -> dict[str, str]:
    """Everything that goes into the binary, as text."""
    init_code = INIT_CODE_TEMPLATE.format(
        paths=_python_paths(), module=MODULE_NAME, fallback=_read_resource("passthrough.py")
    )
    return {
        "c_source": _read_resource("layer.c"),
        "builder": _read_resource("build.py"),
        "cdef": prototypes.cdef() + HELPER_CDEF,
        "embedding_api": EMBEDDING_API,
        "init_code": init_code,
        "python": f"{sys.version} {sys.executable} {sysconfig.get_config_var('INSTSONAME')}",
    }


def build_key(inputs: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(inputs):
        digest.update(name.encode() + b"\0" + inputs[name].encode() + b"\0")
    return digest.hexdigest()[:16]


def cache_root() -> Path:
    explicit = os.environ.get("GPUAV_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gpuav"


def library_file_name() -> str:
    suffix = ".dll" if sys.platform == "win32" else ".dylib" if sys.platform == "darwin" else ".so"
    return LIBRARY_STEM + suffix


def manifest_text() -> str:
    manifest = {
        "file_format_version": "1.2.0",
        "layer": {
            "name": LAYER_NAME,
            "type": "GLOBAL",
            "library_path": "./" + library_file_name(),
            "api_version": LAYER_API_VERSION,
            "implementation_version": "1",
            "description": "gpuav: GPU-assisted validation (descriptor indexing checks)",
            "instance_extensions": [{"name": "VK_EXT_validation_features", "spec_version": "2"}],
        },
    }
    return json.dumps(manifest, indent=2) + "\n"


def layer_dir(build: bool = True) -> Path:
    """Folder holding the layer library and manifest, building it first if needed."""
    inputs = build_inputs()
    target = cache_root() / f"layer-{build_key(inputs)}"
    if (target / MANIFEST_NAME).is_file() and (target / library_file_name()).is_file():
        return target
    if not build:
        raise SetupError(f"gpuav layer not built yet (expected in {target})")
    _build(inputs, target)
    return target


def _build(inputs: dict[str, str], target: Path) -> None:
    import cffi  # build time only

    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        libdir = sysconfig.get_config_var("LIBDIR") or ""
        soname = sysconfig.get_config_var("INSTSONAME") or ""
        macros = [("GPUAV_LIBPYTHON", f'"{soname}"')] if soname.startswith("libpython") else []
        builder = cffi.FFI()
        builder.embedding_api(inputs["embedding_api"])
        builder.cdef(inputs["cdef"])
        builder.set_source(
            MODULE_NAME,
            inputs["c_source"],
            # -Bsymbolic: our own vkGetInstanceProcAddr must not resolve to the loader's
            # exported function of the same name in apps linked against libvulkan.
            extra_link_args=["-Wl,-Bsymbolic", *([f"-Wl,-rpath,{libdir}"] if libdir else [])],
            extra_compile_args=["-O2"],
            define_macros=macros,
        )
        builder.embedding_init_code(inputs["init_code"])
        try:
            built = builder.compile(tmpdir=str(work), target=LIBRARY_STEM + ".*", verbose=False)
        except Exception as error:  # compiler missing or failing
            raise SetupError(f"cannot build the gpuav layer library: {error}") from error
        shutil.move(built, work / library_file_name())
        (work / MANIFEST_NAME).write_text(manifest_text(), encoding="utf-8")
        for leftover in work.iterdir():
            if leftover.name not in (library_file_name(), MANIFEST_NAME):
                if leftover.is_dir():
                    shutil.rmtree(leftover)
                else:
                    leftover.unlink()
        try:
            work.rename(target)
        except OSError:
            # Another process finished the same build first; theirs is identical.
            if not (target / MANIFEST_NAME).is_file():
                raise
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
