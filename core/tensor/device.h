#pragma once
// Where a tensor's storage lives: the CPU or CUDA device N (see cuda/cuda.h for what exists).
#include <string>

namespace plexus {

enum class DeviceType { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  static Device cpu() { return {DeviceType::CPU, 0}; }
  static Device cuda(int index = 0) { return {DeviceType::CUDA, index}; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool operator==(const Device&) const = default;
  std::string str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
};

// "cpu", "cuda" (= cuda:0) or "cuda:N"; ValueError naming the text otherwise. Whether the
// device exists is cuda::check_available's question.
Device parse_device(const std::string& text);

}  // namespace plexus
