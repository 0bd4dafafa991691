"""An attribute lookup on a capsule object before the first Vulkan call (taichi's import does
one), then a plain compute app. Under gpuav on Python 3.11 the first Vulkan call used to spin
forever in cffi's embedding start-up (issue 13, item 1).

usage: capsule_lookup_app.py OUTPUT_FOLDER SHADER.spv
"""

from __future__ import annotations

import datetime
import sys

from layer_app import compute_once
from results import save

getattr(datetime.datetime_CAPI, "x", None)  # type: ignore[attr-defined]
save("compute", compute_once(sys.argv[2]))
