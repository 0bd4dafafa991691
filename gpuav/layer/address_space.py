"""Whether the process can still map more memory, asked before gpuav grows its own.

Under an address-space limit (RLIMIT_AS, a 32-bit-sized budget, an exhausted heap) lavapipe
maps device memory and one page per descriptor set with mmap and uses the result unchecked:
gpuav's growth then crashed inside the driver, where the app alone gets a clean error. A
PROT_NONE probe of what the growth needs plus a reserve is refused by the kernel in the same
way, costs no memory, and is unmapped at once; the growth is skipped (and gpuav degrades)
while the app keeps the reserve for itself.
"""

from __future__ import annotations

import mmap

# Left to the app (and the interpreter the layer runs in) when gpuav would grow into it.
APP_RESERVE_BYTES = 64 << 20


def room_for(size: int) -> bool:
    """Whether ``size`` bytes plus the app's reserve can still be mapped."""
    try:
        probe = mmap.mmap(-1, size + APP_RESERVE_BYTES, flags=mmap.MAP_PRIVATE, prot=0)
    except (OSError, ValueError, OverflowError):
        return False
    probe.close()
    return True
