#pragma once
// An ONNX file read back with libonnx's own classes, for the suites that link it (test_onnx_*).
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <stdexcept>

#include "support/test_support.h"

namespace plexus::testing {

inline onnx::ModelProto read_model(const std::filesystem::path& file) {
  onnx::ModelProto m;
  if (!m.ParseFromString(read_all(file))) throw std::runtime_error(file.string() + " does not parse as an ONNX model");
  return m;
}

}  // namespace plexus::testing
