"""Which Python frame is an action's recording site: the app's, past bindings, installed
libraries, the standard library and gpuav's layer (``gpuav.layer.recording_site``)."""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from pathlib import Path

from gpuav.layer import recording_site
from gpuav.layer.recording_site import capture, classify, site_of


def load(path: Path, source: str) -> types.ModuleType:
    """A module from ``path`` (its code objects carry that file name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"fake_{path.parent.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_files_are_classified_by_where_they_lie(tmp_path: Path) -> None:
    installed = tmp_path / "lib" / "python3.11" / "site-packages"
    assert classify(str(installed / "vulkan" / "_vulkan.py")) == recording_site._PASS
    assert classify(str(installed / "cffi" / "api.py")) == recording_site._PASS
    assert classify(str(installed / "wgpu" / "backends" / "x.py")) == recording_site._PASS
    assert classify(str(installed / "taichi" / "lang" / "kernel.py")) == recording_site._INSTALLED
    assert classify("/usr/lib/python3/dist-packages/numpy/core.py") == recording_site._INSTALLED
    assert classify(recording_site.__file__) == recording_site._PASS
    assert classify(threading.__file__) == recording_site._PASS
    assert classify("<frozen runpy>") == recording_site._PASS
    assert classify("<string>") == recording_site._APP
    assert classify(str(tmp_path / "train.py")) == recording_site._APP
    assert classify(__file__) == recording_site._APP


def test_the_site_is_the_app_line_past_the_binding_and_libraries(tmp_path: Path) -> None:
    installed = tmp_path / "site-packages"
    binding = load(installed / "vulkan" / "binding.py", "def call(hook):\n    return hook()\n")
    library = load(
        installed / "somelib" / "library.py",
        "def launch(binding, hook):\n    return binding.call(hook)\n",
    )
    line = sys._getframe().f_lineno + 1
    recorded = library.launch(binding, capture)
    site = site_of(recorded)
    assert site is not None
    assert (site.file, site.line) == (__file__, line)
    assert site.function == "test_the_site_is_the_app_line_past_the_binding_and_libraries"
    assert site.describe() == f"test_recording_site.py:{line} in {site.function}()"


def test_without_an_app_frame_the_innermost_library_frame_stands_in(tmp_path: Path) -> None:
    installed = tmp_path / "site-packages"
    binding = load(installed / "vulkan" / "binding.py", "def call(hook):\n    return hook()\n")
    library = load(
        installed / "somelib" / "library.py",
        "def launch(binding, hook, out):\n    out.append(binding.call(hook))\n",
    )
    found: list[recording_site.RecordedAt | None] = []
    # A thread started on a library function: the stack holds only it and threading's frames.
    thread = threading.Thread(target=library.launch, args=(binding, capture, found))
    thread.start()
    thread.join()
    site = site_of(found[0])
    assert site is not None
    assert (Path(site.file).name, site.line, site.function) == ("library.py", 2, "launch")


def test_nested_functions_are_named_without_locals() -> None:
    def record() -> recording_site.RecordedAt | None:
        return capture()

    site = site_of(record())
    assert site is not None
    assert site.function == "test_nested_functions_are_named_without_locals.record"
