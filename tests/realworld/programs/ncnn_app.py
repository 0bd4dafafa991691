"""ncnn with Vulkan compute: a small network (convolution, ReLU, pooling, inner product,
softmax) written by the program as a param text and a weight file, run on a fixed input.

usage: ncnn_app.py OUTPUT_FOLDER. ncnn releases its Vulkan device at process exit, after the
interpreter has finalized; that exit is part of what is tested.
"""

from __future__ import annotations

import ncnn
import numpy as np
from results import output_folder, save

PARAM = """7767517
6 6
Input        data   0 1 data 0=12 1=12 2=3
Convolution  conv1  1 1 data conv1 0=8 1=3 4=1 5=1 6=216
ReLU         relu1  1 1 conv1 relu1
Pooling      pool1  1 1 relu1 pool1 0=0 1=2 2=2
InnerProduct fc1    1 1 pool1 fc1 0=10 1=1 2=2880
Softmax      prob   1 1 fc1 prob 0=0
"""
RAW_FLOAT32 = np.zeros(1, np.uint32).tobytes()  # a weight blob's tag: plain float32 follows


def write_model() -> tuple[str, str]:
    rng = np.random.default_rng(1234)
    conv_weights = (rng.standard_normal(216) * 0.3).astype(np.float32)
    conv_bias = (rng.standard_normal(8) * 0.1).astype(np.float32)
    fc_weights = (rng.standard_normal(2880) * 0.05).astype(np.float32)
    fc_bias = (rng.standard_normal(10) * 0.1).astype(np.float32)
    folder = output_folder()
    param, weights = folder / "net.param", folder / "net.weights"
    param.write_text(PARAM)
    weights.write_bytes(
        RAW_FLOAT32 + conv_weights.tobytes() + conv_bias.tobytes()
        + RAW_FLOAT32 + fc_weights.tobytes() + fc_bias.tobytes()
    )  # fmt: skip
    return str(param), str(weights)


def main() -> None:
    assert ncnn.get_gpu_count() >= 1, "ncnn finds no Vulkan device"
    param, weights = write_model()
    net = ncnn.Net()
    net.opt.use_vulkan_compute = True
    assert net.load_param(param) == 0 and net.load_model(weights) == 0
    image = np.random.default_rng(99).standard_normal((3, 12, 12)).astype(np.float32)
    extractor = net.create_extractor()
    extractor.input("data", ncnn.Mat(image))
    for blob in ("pool1", "prob"):
        status, result = extractor.extract(blob)
        assert status == 0, f"extract {blob}: {status}"
        save(blob, np.array(result).tobytes())
    status, probabilities = extractor.extract("prob")
    assert abs(float(np.array(probabilities).sum()) - 1.0) < 1e-2


main()
