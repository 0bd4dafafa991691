"""Instance, device, dispatch, destroy everything, three times in one process: the loader
unloads the layer library after the last instance goes, and the next instance loads it
again (issue 13, item 2).

usage: recreate_app.py OUTPUT_FOLDER SHADER.spv
"""

from __future__ import annotations

import sys

from layer_app import compute_once
from results import save

for round_number in range(3):
    save(f"round{round_number}", compute_once(sys.argv[2]))
