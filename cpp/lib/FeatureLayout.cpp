//===- FeatureLayout.cpp --------------------------------------------------===//
#include "mlir-rl/FeatureLayout.h"

#include <cstdio>
#include <sstream>

namespace mlir::rl {

const char *getOpKindName(OpKind kind) {
  switch (kind) {
  case OpKind::Matmul:
    return "matmul";
  case OpKind::BatchMatmul:
    return "batch_matmul";
  case OpKind::Conv2D:
    return "conv_2d";
  case OpKind::DepthwiseConv2D:
    return "depthwise_conv_2d";
  case OpKind::Pooling:
    return "pooling";
  case OpKind::Add:
    return "add";
  case OpKind::Fill:
    return "fill";
  case OpKind::Generic:
    return "generic";
  case OpKind::Unknown:
    return "unknown";
  }
  return "unknown";
}

const char *getActionMnemonic(ActionKind kind) {
  switch (kind) {
  case ActionKind::Tiling:
    return "T";
  case ActionKind::TiledParallelization:
    return "TP";
  case ActionKind::TiledFusion:
    return "TF";
  case ActionKind::Interchange:
    return "I";
  case ActionKind::Vectorization:
    return "V";
  case ActionKind::NoTransformation:
    return "NT";
  }
  return "NT";
}

const char *getActionName(ActionKind kind) {
  switch (kind) {
  case ActionKind::Tiling:
    return "tiling";
  case ActionKind::TiledParallelization:
    return "tiled_parallelization";
  case ActionKind::TiledFusion:
    return "tiled_fusion";
  case ActionKind::Interchange:
    return "interchange";
  case ActionKind::Vectorization:
    return "vectorization";
  case ActionKind::NoTransformation:
    return "no_transformation";
  }
  return "no_transformation";
}

const FeatureLayout &FeatureLayout::getDefault() {
  static const FeatureLayout layout;
  return layout;
}

int FeatureLayout::getTileIndex(int64_t size) const {
  for (size_t i = 0; i < tileCandidates.size(); ++i)
    if (tileCandidates[i] == size)
      return static_cast<int>(i);
  return -1;
}

std::string FeatureLayout::getDescription() const {
  std::ostringstream os;
  // Bump the version whenever the meaning of a feature group changes.
  os << "mlir-rl-features-v1;N=" << maxLoops << ";M=" << numTileSizes
     << ";D=" << maxRank << ";L=" << maxOperands << ";tau=" << historyLength
     << ";kinds=" << kNumOpKinds << ";actions=" << kNumActionKinds
     << ";arith=" << kNumArithCounts << ";vecmax=" << maxVectorInnermost
     << ";vecelts=" << maxVectorElements << ";vecrows=" << maxVectorRows
     << ";tiles=";
  for (int64_t t : tileCandidates)
    os << t << ",";
  return os.str();
}

std::string FeatureLayout::getHash() const {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : getDescription()) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)h);
  return buf;
}

} // namespace mlir::rl
