"""wgpu-py (wgpu-native) forced onto Vulkan: a compute shader over a storage buffer, then an
offscreen render of a coloured triangle read back as raw RGBA pixels.

usage: wgpu_app.py OUTPUT_FOLDER
"""

from __future__ import annotations

import os

os.environ["WGPU_BACKEND_TYPE"] = "Vulkan"  # read when wgpu-native creates its instance

import numpy as np
import wgpu
from results import save

COUNT = 1024
SIZE = 64
COMPUTE = """
@group(0) @binding(0) var<storage, read> inputs: array<f32>;
@group(0) @binding(1) var<storage, read_write> outputs: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    outputs[i] = inputs[i] * inputs[i] + sqrt(f32(i));
}
"""
RENDER = """
struct Varyings { @builtin(position) position: vec4<f32>, @location(0) color: vec3<f32> };
@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> Varyings {
    var positions = array<vec2<f32>, 3>(vec2(0.0, 0.8), vec2(-0.7, -0.6), vec2(0.8, -0.4));
    var colors = array<vec3<f32>, 3>(vec3(1.0, 0.2, 0.1), vec3(0.1, 0.9, 0.3), vec3(0.2, 0.3, 1.0));
    return Varyings(vec4(positions[index], 0.0, 1.0), colors[index]);
}
@fragment
fn fs_main(in: Varyings) -> @location(0) vec4<f32> {
    return vec4(in.color, 1.0);
}
"""


def run_compute(device: wgpu.GPUDevice) -> bytes:
    inputs = np.linspace(-4.0, 4.0, COUNT, dtype=np.float32)
    source = device.create_buffer_with_data(data=inputs, usage=wgpu.BufferUsage.STORAGE)
    target = device.create_buffer(
        size=inputs.nbytes, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    )
    pipeline = device.create_compute_pipeline(
        layout="auto",
        compute={"module": device.create_shader_module(code=COMPUTE), "entry_point": "main"},
    )
    bind_group = device.create_bind_group(
        layout=pipeline.get_bind_group_layout(0),
        entries=[
            {"binding": 0, "resource": {"buffer": source}},
            {"binding": 1, "resource": {"buffer": target}},
        ],
    )
    encoder = device.create_command_encoder()
    compute_pass = encoder.begin_compute_pass()
    compute_pass.set_pipeline(pipeline)
    compute_pass.set_bind_group(0, bind_group)
    compute_pass.dispatch_workgroups(COUNT // 64)
    compute_pass.end()
    device.queue.submit([encoder.finish()])
    return bytes(device.queue.read_buffer(target))


def run_render(device: wgpu.GPUDevice) -> bytes:
    texture_format = wgpu.TextureFormat.rgba8unorm
    texture = device.create_texture(
        size=(SIZE, SIZE, 1),
        format=texture_format,
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
    )
    module = device.create_shader_module(code=RENDER)
    pipeline = device.create_render_pipeline(
        layout="auto",
        vertex={"module": module, "entry_point": "vs_main"},
        fragment={
            "module": module,
            "entry_point": "fs_main",
            "targets": [{"format": texture_format}],
        },
        primitive={"topology": wgpu.PrimitiveTopology.triangle_list},
    )
    encoder = device.create_command_encoder()
    render_pass = encoder.begin_render_pass(
        color_attachments=[
            {
                "view": texture.create_view(),
                "clear_value": (0.05, 0.05, 0.1, 1.0),
                "load_op": wgpu.LoadOp.clear,
                "store_op": wgpu.StoreOp.store,
            }
        ]
    )
    render_pass.set_pipeline(pipeline)
    render_pass.draw(3)
    render_pass.end()
    device.queue.submit([encoder.finish()])
    pixels = device.queue.read_texture(
        {"texture": texture}, {"bytes_per_row": SIZE * 4, "rows_per_image": SIZE}, (SIZE, SIZE, 1)
    )
    return bytes(pixels)


def main() -> None:
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    assert adapter.info["backend_type"] == "Vulkan", adapter.info
    device = adapter.request_device_sync()
    save("compute", run_compute(device))
    pixels = run_render(device)
    assert len(set(np.frombuffer(pixels, np.uint32).tolist())) > 3, "nothing was drawn"
    save("render", pixels)


main()
