// A missing or broken model is an error that names the file and the reason;
// nothing crashes.
// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{model=%t.missing.onnx})' 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: linalg-rl-schedule: policy model '{{.*}}.missing.onnx' does not exist

// RUN: %PYTHON -c "open('%t.junk.onnx', 'w').write('not onnx')"
// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{model=%t.junk.onnx})' 2>&1 | FileCheck %s --check-prefix=JUNK
// JUNK: error: linalg-rl-schedule: policy model '{{.*}}.junk.onnx': cannot load it as an ONNX model:

// RUN: not %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{ort-lib=/nonexistent/libonnxruntime.so})' 2>&1 | FileCheck %s --check-prefix=ORT
// ORT: error: linalg-rl-schedule: cannot load the ONNX Runtime library '/nonexistent/libonnxruntime.so'

// policy=false: no model needed, the IR is left as it is.
// RUN: %mlir_opt %s --load-pass-plugin=%mlir_rl_libs/libMlirRL%shlibext \
// RUN:   -p 'builtin.module(linalg-rl-schedule{policy=false model=%t.missing.onnx})' | FileCheck %s --check-prefix=OFF
// OFF: linalg.add
func.func @add(%X: tensor<64x256xf32>, %Y: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %e = tensor.empty() : tensor<64x256xf32>
  %r = linalg.add ins(%X, %Y : tensor<64x256xf32>, tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
