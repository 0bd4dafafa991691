"""pygfx rendering a lit, rotated box (with a background and a points cloud) offscreen through
rendercanvas, on wgpu's Vulkan backend; the frame is saved as raw RGBA pixels.

usage: pygfx_app.py OUTPUT_FOLDER
"""

from __future__ import annotations

import os

os.environ["WGPU_BACKEND_TYPE"] = "Vulkan"

import numpy as np
import pygfx as gfx
from rendercanvas.offscreen import RenderCanvas
from results import save

WIDTH, HEIGHT = 96, 64


def build_scene() -> tuple[gfx.Scene, gfx.PerspectiveCamera]:
    scene = gfx.Scene()
    scene.add(gfx.Background.from_color("#203040", "#605040"))
    box = gfx.Mesh(gfx.box_geometry(1, 1, 1), gfx.MeshPhongMaterial(color="#c04030"))
    box.local.rotation = (0.3, 0.4, 0.1, 0.86)
    scene.add(box)
    positions = np.random.default_rng(5).uniform(-1.2, 1.2, (200, 3)).astype(np.float32)
    points = gfx.Points(
        gfx.Geometry(positions=positions), gfx.PointsMaterial(size=3, color="#e0e060")
    )
    scene.add(points)
    scene.add(gfx.AmbientLight(), gfx.DirectionalLight())
    camera = gfx.PerspectiveCamera(60, WIDTH / HEIGHT)
    camera.show_object(box)
    return scene, camera


def main() -> None:
    canvas = RenderCanvas(size=(WIDTH, HEIGHT), pixel_ratio=1)
    renderer = gfx.renderers.WgpuRenderer(canvas)
    scene, camera = build_scene()
    canvas.request_draw(lambda: renderer.render(scene, camera))
    image = np.asarray(canvas.draw())
    assert image.shape == (HEIGHT, WIDTH, 4), image.shape
    assert len(np.unique(image.reshape(-1, 4), axis=0)) > 10, "nothing was drawn"
    save("frame", image.tobytes())


main()
