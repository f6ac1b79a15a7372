"""Kernels and schedules shared by the tests: every action kind on every op kind."""
from mlir_rl.data import kernels as K

# A channels-last mean kept as a dimension of 1 (the reduction's result
# indexed (d0, d1, d2, 0)), as torch-mlir imports a layer norm over channels,
# and the op after it: upstream's tiling of a result tile refuses such maps.
_UNIT_DIM_MEAN = """
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#unit = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
func.func @main(%x: tensor<1x8x8x32xf32>) -> tensor<1x8x8x1xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x1xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x8x1xf32>) -> tensor<1x8x8x1xf32>
  %s = linalg.generic {indexing_maps = [#id, #unit], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x8x8x32xf32>) outs(%f : tensor<1x8x8x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<1x8x8x1xf32>
  %e2 = tensor.empty() : tensor<1x8x8x1xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x8x8x1xf32>) outs(%e2 : tensor<1x8x8x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 3.125e-02 : f32
    %t = arith.mulf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<1x8x8x1xf32>
  return %m : tensor<1x8x8x1xf32>
}
"""

# A per-channel parameter [C, 1, 1] over an NCHW tensor (batch norm's
# scale), read by tiles of several channels.
_CHANNEL_SCALE = """
func.func @main(%x: tensor<1x16x24x24xf32>, %s: tensor<16x1x1xf32>) -> tensor<1x16x24x24xf32> {
  %e = tensor.empty() : tensor<1x16x24x24xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : tensor<1x16x24x24xf32>, tensor<16x1x1xf32>) outs(%e : tensor<1x16x24x24xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x16x24x24xf32>
  return %r : tensor<1x16x24x24xf32>
}
"""

# name -> (module text, op id of the main op, {action kind: schedule})
KERNELS = {
    "matmul": (K.matmul(64, 128, 96), 1, {
        "T": "1: T(8,32,16)",
        "TP": "1: TP(16,32,0)",
        "TF": "1: TF(16,32,0)",
        "I": "1: I(1,0,2)",
        "V": "1: TP(16,32,0) T(8,32,1) V",
        "NT": "1: NT",
        "mix": "1: TF(32,64,0) I(0,2,1) T(8,16,4)",
    }),
    "batch_matmul": (K.batch_matmul(4, 32, 64, 48), 1, {
        "T": "1: T(1,8,16,8)",
        "TP": "1: TP(2,16,0,0)",
        "TF": "1: TF(1,16,32,0)",
        "I": "1: I(0,2,1,3)",
        "V": "1: TP(1,16,0,0) T(1,8,32,1) V",
        "NT": "1: NT",
    }),
    "conv2d_nchw": (K.conv2d_nchw(1, 16, 18, 18, 32, 3, 3), 1, {
        "T": "1: T(1,8,4,8,4,1,1)",
        "TP": "1: TP(1,8,4,0,0,0,0)",
        "TF": "1: TF(0,16,8,0,0,0,0)",
        "I": "1: I(0,1,4,2,3,5,6)",
        "V": "1: TP(1,8,1,0,0,0,0) T(0,0,0,8,0,1,0) V",
        "NT": "1: NT",
    }),
    "conv2d_nchw_s2": (K.conv2d_nchw(1, 8, 17, 17, 16, 3, 3, stride=2), 1, {
        "V": "1: TP(1,8,1,0,0,0,0) T(0,0,0,8,0,1,0) V",
        "T": "1: T(1,4,2,4,2,1,0)",
    }),
    "conv2d_nhwc": (K.conv2d_nhwc(1, 18, 18, 16, 3, 3, 32), 1, {
        "T": "1: T(1,4,8,16,1,1,8)",
        "TP": "1: TP(1,4,8,0,0,0,0)",
        "TF": "1: TF(1,8,0,16,0,0,0)",
        "I": "1: I(0,1,2,6,4,5,3)",
        "V": "1: TP(1,1,8,0,0,0,0) T(0,0,0,8,1,0,0) V",
        "NT": "1: NT",
    }),
    "conv2d_nhwc_s2": (K.conv2d_nhwc(1, 17, 17, 8, 3, 3, 16, stride=2), 1, {
        "V": "1: TP(1,1,4,0,0,0,0) T(0,0,0,0,1,0,0) V",
    }),
    "depthwise_nhwc": (K.depthwise_conv2d_nhwc(1, 18, 18, 32, 3, 3), 1, {
        "TP": "1: TP(1,4,0,16,0,0)",
        "V": "1: TP(1,1,8,0,0,0) T(0,0,0,0,1,0) V",
    }),
    "maxpool_nchw": (K.maxpool_nchw(1, 16, 32, 32, 2, 2), 1, {
        "T": "1: T(1,4,4,8,1,1)",
        "TP": "1: TP(1,8,4,0,0,0)",
        "TF": "1: TF(1,8,0,0,0,0)",
        "I": "1: I(0,2,3,1,4,5)",
        "V": "1: TP(1,8,1,0,0,0) T(0,0,0,0,1,0) V",
        "NT": "1: NT",
    }),
    "maxpool_nhwc": (K.maxpool_nhwc(1, 33, 33, 16, 3, 2), 1, {  # 16x16 outputs
        "T": "1: T(1,2,4,8,1,1)",
        "TP": "1: TP(1,4,0,8,0,0)",
        "V": "1: TP(1,1,0,8,0,0) T(0,0,0,0,1,0) V",
    }),
    "add": (K.add([64, 256]), 0, {
        "T": "0: T(8,64)",
        "TP": "0: TP(16,0)",
        "I": "0: I(1,0)",
        "V": "0: TP(16,0) T(4,64) V",
        "NT": "0: NT",
    }),
    "relu": (K.relu([32, 16, 64]), 0, {
        "T": "0: T(4,0,32)",
        "TP": "0: TP(8,16,0)",
        "I": "0: I(2,0,1)",
        "V": "0: TP(8,0,0) T(1,8,64) V",
        "NT": "0: NT",
    }),
    "chain": (K.matmul_bias_relu(64, 128, 96), 3, {
        "TF": "3: TF(16,64)",
        "V": "3: TF(16,64) V; 2: V; 1: TF(32,32,0) T(8,32,1) V; 0: NT",
        "T": "3: T(8,32); 2: T(16,16); 1: T(8,8,8)",
        "TP": "3: TP(32,0); 1: TP(16,0,0)",
        "I": "3: I(1,0); 1: I(2,0,1)",
        "NT": "3: NT; 2: NT; 1: NT; 0: NT",
    }),
    "channel_scale": (_CHANNEL_SCALE, 0, {
        "V": "0: TP(0,0,8,0) T(0,8,2,4) V",
        "T": "0: TP(0,4,0,0) T(0,0,4,8) V",
    }),
    "unit_dim_mean": (_UNIT_DIM_MEAN, 2, {
        "TF": "2: TF(1,4,1,0)",
        "V": "2: TF(1,4,1,0) V; 1: V; 0: V",
    }),
}

CASES = [(name, kind, sched) for name, (_, _, scheds) in KERNELS.items()
         for kind, sched in scheds.items()]
