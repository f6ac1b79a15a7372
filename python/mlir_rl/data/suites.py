"""Named suites of kernels: the operator suite of the benchmarks and the
unseen kernels of the policy check."""
from __future__ import annotations

import random

from mlir_rl.data.dataset import lqcd_contraction
from mlir_rl.data.kernels import (add, batch_matmul, conv2d_nchw, conv2d_nhwc,
                                  depthwise_conv2d_nhwc, matmul, matmul_bias_relu,
                                  maxpool_nchw, relu, softmax_rows)


def operator_suite() -> dict[str, str]:
    """Single ops with shapes from real models (BERT, ResNet-18), plus a chain."""
    return {
        "matmul_bert_384x768x768": matmul(384, 768, 768),
        "batch_matmul_bert_12x384x64x384": batch_matmul(12, 384, 384, 64),
        "conv2d_nchw_resnet_64x56x56": conv2d_nchw(1, 64, 58, 58, 64, 3, 3),
        "conv2d_nhwc_resnet_128x28x28": conv2d_nhwc(1, 30, 30, 128, 3, 3, 128),
        "maxpool_nchw_resnet_64x112x112": maxpool_nchw(1, 64, 112, 112, 3, 2),
        "add_resnet_64x56x56": add([1, 64, 56, 56]),
        "relu_resnet_64x56x56": relu([1, 64, 56, 56]),
        "matmul_bias_relu_256x512x512": matmul_bias_relu(256, 512, 512),
    }


def unseen_suite() -> dict[str, str]:
    """Kernels from real models whose shapes are not in the training data
    (``mlir_rl.data.dataset``): the policy-quality check of the README."""
    lq = lqcd_contraction(random.Random(1234), 0).text
    return {
        "bert_matmul_256x768x768": matmul(256, 768, 768),
        "bert_ffn_matmul_256x3072x768": matmul(256, 3072, 768),
        "bert_attention_bmm_12x256x256x64": batch_matmul(12, 256, 256, 64),
        "resnet_conv_nchw_128x28x28": conv2d_nchw(1, 128, 30, 30, 128, 3, 3),
        "resnet_conv_nhwc_64x56x56": conv2d_nhwc(1, 58, 58, 64, 3, 3, 64),
        "resnet_maxpool_nchw_64x112": maxpool_nchw(1, 64, 113, 113, 3, 2),
        "mobilenet_depthwise_nhwc_144x56": depthwise_conv2d_nhwc(1, 58, 58, 144, 3, 3),
        "elementwise_add_1x128x56x56": add([1, 128, 56, 56]),
        "elementwise_relu_1x256x28x28": relu([1, 256, 28, 28]),
        "softmax_256x512": softmax_rows(256, 512),
        "lqcd_contraction_9_loops": lq,
    }
