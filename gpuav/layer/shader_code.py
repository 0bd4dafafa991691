"""One decode and one hash of each module's words on the layer's path.

The native layer takes a module's code from the app as bytes, one copy, and hands the same
``ShaderCode`` to static validation, then to instrumentation (at vkCreateShaderModule; for
inline stage code, all stages of the call are validated before any is instrumented).
``ShaderCode`` makes the words, digest and Module of that code at most once each; a module
found in the cache needs only the digest, so its words are never turned into Python ints
there. The validator only reads a Module, so once it has finished with one, the Module is
handed on (by the digest of its words) to the instrumentation that follows on the same
thread; the pass changes it in place, so it is taken at most once.

Handed-on modules are kept per thread (threads may create modules at once) and only the
last few (a pipeline's stages): one that nobody takes (a degraded device, a layout that did
not take gpuav's set) is dropped when the thread reads others.
"""

from __future__ import annotations

import hashlib
import struct
from _thread import _local  # threading.local, without importing threading
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuav.errors import GpuavError

if TYPE_CHECKING:
    from gpuav.spirv.module import Module

KEPT_PER_THREAD = 6  # the graphics stages of one pipeline

_HANDED_ON = _local()


class ShaderCode:
    """A module's words, and what is made from them, each made at most once."""

    __slots__ = ("_data", "_digest", "_error", "_module", "_words")

    @classmethod
    def of(cls, words: Sequence[int] | ShaderCode) -> ShaderCode:
        """The code of these words: ``words`` itself when it is one already, else the code
        this thread made last when it was made of these very words (the same object), so that
        validation and the module cache, handed one read of a module, hash it once."""
        if isinstance(words, ShaderCode):
            return words
        last: ShaderCode | None = getattr(_HANDED_ON, "last", None)
        if last is not None and last._words is words:
            return last
        code = _HANDED_ON.last = cls(words)
        return code

    @classmethod
    def from_bytes(cls, data: bytes) -> ShaderCode:
        """The code of 32-bit words in the machine's byte order, as the app handed them."""
        code = cls(None)
        code._data = data
        return code

    def __init__(self, words: Sequence[int] | None) -> None:
        self._words = words
        self._data: bytes | None = None
        self._digest: bytes | None = None
        self._module: Module | None = None
        self._error: GpuavError | None = None

    @property
    def words(self) -> Sequence[int]:
        """The words (a tuple when the code came as bytes)."""
        if self._words is None:
            data = self.data
            self._words = struct.unpack(f"={len(data) // 4}I", data)
        return self._words

    @property
    def data(self) -> bytes:
        """The words as bytes; raises OverflowError for a word beyond 32 bits."""
        if self._data is None:
            self._data = array("I", self.words).tobytes()
        return self._data

    @property
    def digest(self) -> bytes:
        """SHA-256 of the bytes (the CPU's SHA instructions make it the cheapest safe hash)."""
        if self._digest is None:
            self._digest = hashlib.sha256(self.data).digest()
        return self._digest

    def module(self) -> Module:
        """The module read from the words, for reading only (it may be handed on to the pass);
        raises the reader's ``DecodeError`` each time asked when the words do not read."""
        if self._error is not None:
            raise self._error
        if self._module is None:
            from gpuav.spirv.reader import read  # a module found in the cache is never read

            try:
                self._module = read(self.words)
            except GpuavError as error:
                self._error = error
                raise
        return self._module

    def hand_on(self) -> None:
        """Keep the module read here for the instrumentation that follows on this thread;
        the caller must have finished reading it."""
        if self._module is None:
            return
        kept = _kept_modules()
        kept.pop(self.digest, None)
        if len(kept) >= KEPT_PER_THREAD:
            del kept[next(iter(kept))]
        kept[self.digest] = self._module
        self._module = None

    def take_module(self) -> Module:
        """The module for a pass to change: the one read here, or handed on by this thread for
        the same words, or read now. Whoever takes it owns it: nothing else refers to it."""
        module = self._module
        self._module = None
        kept = _kept_modules()
        if module is None and kept:  # nothing is handed on with validation off: no digest
            module = kept.pop(self.digest, None)
        if module is None:
            if self._error is not None:
                raise self._error
            from gpuav.spirv.reader import read

            module = read(self.words)
        return module


def _kept_modules() -> dict[bytes, Module]:
    kept: dict[bytes, Module] | None = getattr(_HANDED_ON, "modules", None)
    if kept is None:
        kept = _HANDED_ON.modules = {}
    return kept
