#pragma once
// CPU memory the system refused. Linux usually promises memory it may not have (overcommit), so
// a request is refused only when it cannot even be promised: larger than the address space left
// under a `ulimit -v` (RLIMIT_AS) or at all, or past a strict overcommit setting (a cgroup's limit
// is enforced by killing, which the validator's estimate guards against). Such a refusal
// must end the operation with a message a user can act on, never abort the process: tensor
// storage (tensor/allocator.cpp) and the kernels' scratch buffers (grow_scratch) throw an
// OutOfMemoryError naming the size and what it was for, and the code it unwinds through adds
// where it happened (the graph node whose forward pass ran, the gradient being computed), which
// the trainer reports with the epoch and batch. CUDA device memory running out is a DeviceError
// (cuda/allocator.cu).
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "util/error.h"

namespace plexus {

class OutOfMemoryError : public Error {
 public:
  OutOfMemoryError(const std::string& message, uint64_t bytes) : Error(message), bytes_(bytes) {}
  uint64_t bytes() const { return bytes_; }  // the request refused

  // Filled in as the error unwinds, innermost first; empty when not known.
  std::string node;  // the graph node whose forward pass asked (layers/compiler.cpp)
  std::string op;    // the op whose gradient was being computed (autograd/engine.cpp)

 private:
  uint64_t bytes_;
};

// Throws an OutOfMemoryError: "cannot allocate 3.0 GiB <what_for> (<memory_situation()>)", e.g.
// what_for "for a tensor of shape [65536, 12288] float32".
[[noreturn]] void throw_out_of_memory(uint64_t bytes, const std::string& what_for);

// What limits this process's memory now, for messages: "the machine has 7.9 GiB of 23.4 GiB free",
// in a cgroup with a lower limit "; this process's cgroup is limited to 8.0 GiB", and under a
// `ulimit -v` "; this process is limited to 2.0 GiB of address space (ulimit -v), 1.1 GiB of it
// in use".
std::string memory_situation();

// Test hook: the next request of at least `bytes` for CPU memory (tensor storage, even one the
// allocator's cache could serve, and scratch buffers) is refused; later ones are served again. 0
// turns the hook off. Like io::fail_next_write_step: refusals that real memory limits make
// machine-dependent (and sanitizers' allocators turn into aborts) made exact.
void refuse_allocations_from(uint64_t bytes);
// True when the hook refuses a request of `bytes` (allocators ask before they allocate); the
// OutOfMemoryError thrown for it turns the hook off.
bool allocation_refused_by_hook(uint64_t bytes);

// Grows `buffer` to at least `count` elements (never shrinks it), throwing an OutOfMemoryError
// "for <what>" when the memory is refused, instead of the bare std::bad_alloc that would say
// neither how much nor what for.
template <class T>
void grow_scratch(std::vector<T>& buffer, size_t count, const char* what) {
  if (buffer.size() >= count) return;
  const uint64_t bytes = uint64_t(count) * sizeof(T);
  if (allocation_refused_by_hook(bytes)) throw_out_of_memory(bytes, std::string("for ") + what);
  try {
    buffer.resize(count);
  } catch (const std::bad_alloc&) {
    throw_out_of_memory(bytes, std::string("for ") + what);
  }
}

}  // namespace plexus
