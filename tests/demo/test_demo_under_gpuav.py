"""The README's first command: the demo under ``gpuav run`` reports both bugs, exactly."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

HANDLE = re.compile(r"0x[0-9a-f]+")

NON_UNIFORM_WARNING = (
    "vkCreateShaderModule: a shader module (instruction 93): this descriptor-array index comes "
    "from a shader input that can differ between invocations; unless it is the same for the "
    "whole draw or dispatch, the access must be decorated NonUniform (nonuniformEXT in GLSL)"
)

PARTICLE_MESSAGE = """\
Index of 6 used to index descriptor array of length 6. At shade_particles.comp line 12.
  12: color_of[particle] = textureLod(materials[material], vec2(0.5), 0.0);
  Descriptor: materials, set 0, binding 0.
  Command buffer (ParticleCommands)(0x_). Dispatch Index 0 (vkCmdDispatch).
  Recorded at app.py:183 in Demo.shade_particles.record().
  Pipeline (ShadeParticles)(0x_). Shader Module (shade_particles.comp)(0x_).
  Shader Instruction Index = 95.
  Stage = Compute. Global invocation ID (x, y, z) = (11, 0, 0)."""

FACE_MESSAGE = """\
Index of 6 used to index descriptor array of length 6. At textured_face.frag line 11.
  11: uFragColor = light * texture(tex[tex_ind], texcoord.xy);
  Descriptor: tex, set 0, binding 0.
  Command buffer (CubeDrawCommandBuf)(0x_). Draw Index 0 (vkCmdDraw).
  Recorded at app.py:251 in Demo.draw_face.record().
  Pipeline (CubeFace)(0x_). Shader Module (textured_face.frag)(0x_).
  Shader Instruction Index = 65.
  Stage = Fragment. Fragment coord (x,y) = (1.5, 0.5).
  (and 122 more invocations with this error)"""


def test_demo_under_gpuav_reports_both_bugs_with_their_source_lines(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "gpuav.cli", "run", "--json", str(report), "--"]
    result = subprocess.run(
        [*command, sys.executable, "-m", "gpuav.demo"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    # Without gpuav these reads crash or return garbage; under it they are skipped (null).
    assert "particle 11 -> (0.0, 0.0, 0.0, 0.0)" in result.stdout
    messages = json.loads(report.read_text())["messages"]
    found = [(m["id"], HANDLE.sub("0x_", m["text"])) for m in messages]
    assert [m["severity"] for m in messages] == ["warning", "error", "error", "warning"]
    assert found == [
        # The particle shader also indexes its samplers with a per-particle value and no
        # nonuniformEXT: the static validator's warning at vkCreateShaderModule says so.
        ("VUID-RuntimeSpirv-NonUniform-06274", NON_UNIFORM_WARNING),
        ("GPUAV-descriptor-index-out-of-bounds", PARTICLE_MESSAGE),
        ("GPUAV-descriptor-index-out-of-bounds", FACE_MESSAGE),
        (
            "GPUAV-output-block-full",
            "Output block of vkCmdDraw #0 in command buffer 0x_: about 694 more error records "
            "did not fit after the 123 read; the messages are a sample of the errors.",
        ),
    ]
