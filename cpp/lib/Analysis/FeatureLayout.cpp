//===- FeatureLayout.cpp --------------------------------------------------===//
#include "mlir-rl/Analysis/FeatureLayout.h"

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
  // v2: op kinds through the linalg interfaces; the vectorization limits
  // moved to the legality config.
  os << "mlir-rl-features-v2;N=" << maxLoops << ";M=" << numTileSizes
     << ";D=" << maxRank << ";L=" << maxOperands << ";tau=" << historyLength
     << ";kinds=" << kNumOpKinds << ";actions=";
  for (const ActionKindInfo &k : kActionKinds)
    os << k.mnemonic << ",";
  os << ";arith=" << kNumArithCounts << ";tiles=";
  for (int64_t t : tileCandidates)
    os << t << ",";
  return os.str();
}

std::string getStableHash(const std::string &text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)h);
  return buf;
}

std::string FeatureLayout::getHash() const {
  return getStableHash(getDescription());
}

} // namespace mlir::rl
