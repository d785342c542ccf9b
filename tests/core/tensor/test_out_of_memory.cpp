// CPU memory refused (util/out_of_memory.h): a tensor or a scratch buffer the system will not give
// is an OutOfMemoryError naming the size and what it was for, not an abort. The refusals are
// made three ways: the allocator's test hook (exact, and safe under the sanitizers), a request
// larger than any address space, and a real `ulimit -v` (RLIMIT_AS) in a forked child.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "plexus.h"
#include "support/check.h"
#include "support/sanitizers.h"
#include "support/test_support.h"
#include "util/out_of_memory.h"

using namespace plexus;
using testing::contains;
using testing::message_of;

// ASan reports a request above its largest allocation (1 TiB) as a fatal error unless told to
// return null, as the system's allocator does; this suite is about that null. The variable
// ASAN_OPTIONS (scripts/test-sanitizers) adds to these defaults.
#if defined(__SANITIZE_ADDRESS__)
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif
#endif

namespace {

// Turns the hook off when a test ends, whatever it checked.
struct HookOff {
  ~HookOff() { refuse_allocations_from(0); }
};

}  // namespace

TEST(aRefusedTensorSaysItsSizeShapeAndTheMemoryLeft) {
  const HookOff off;
  refuse_allocations_from(1 << 20);
  uint64_t bytes = 0;
  std::string message;
  try {
    (void)empty({512, 1024});
  } catch (const OutOfMemoryError& e) {
    bytes = e.bytes();
    message = e.what();
  }
  COMPARE(bytes, uint64_t(512 * 1024 * 4));
  VERIFY_CONTAINS(message, "cannot allocate 2.0 MiB for a tensor of shape [512, 1024] float32 (the machine has ");
  VERIFY_CONTAINS(message, " free");
  // One refusal: the same request is served now, and smaller ones were all along.
  COMPARE(empty({512, 1024}).numel(), int64_t(512 * 1024));
  refuse_allocations_from(1 << 20);
  COMPARE(empty({16, 16}).numel(), int64_t(256));
}

TEST(aRefusedScratchBufferSaysWhatItWasFor) {
  const HookOff off;
  std::vector<float> buffer(10, 1.f);
  refuse_allocations_from(4096);
  const std::string message = message_of<OutOfMemoryError>([&] { grow_scratch(buffer, 1 << 20, "a test's buffer"); });
  VERIFY_CONTAINS(message, "cannot allocate 4.0 MiB for a test's buffer (");
  COMPARE(buffer.size(), size_t(10));          // left as it was
  grow_scratch(buffer, 5, "a test's buffer");  // never shrinks
  COMPARE(buffer.size(), size_t(10));
  grow_scratch(buffer, 1 << 20, "a test's buffer");  // the hook refused once
  COMPARE(buffer.size(), size_t(1 << 20));
  COMPARE(buffer[9], 1.f);
}

TEST(aTensorLargerThanAnyAddressSpaceIsRefusedNotAborted) {
  // 2^50 floats: 4 PiB, more than x86-64's 128 TiB of user address space, so the system refuses
  // it whatever its overcommit setting.
  const std::string message = message_of<OutOfMemoryError>([] { (void)empty({1 << 20, 1 << 20, 1 << 10}); });
  VERIFY_CONTAINS(message, "cannot allocate 4.0 PiB for a tensor of shape [1048576, 1048576, 1024] float32 (");
  COMPARE(empty({3, 3}).numel(), int64_t(9));  // and the allocator goes on serving
}

TEST(underAUlimitATensorAboveTheLimitIsRefusedWithTheLimitNamed) {
  if (testing::kSanitizerAllocator) SKIP("a sanitizer's allocator cannot run under a ulimit -v (support/sanitizers.h)");
  // A child process sets RLIMIT_AS to what it has mapped plus 256 MiB and asks for a 3 GiB tensor;
  // it writes the message to a pipe and exits 0 for an OutOfMemoryError, 1 for anything else.
  int fds[2];
  VERIFY(pipe(fds) == 0);
  const pid_t pid = fork();
  VERIFY(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    uint64_t mapped = 0;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmSize:", 0) == 0) mapped = std::stoull(line.substr(7)) * 1024;
    const rlimit limit{rlim_t(mapped + (256u << 20)), rlim_t(mapped + (256u << 20))};
    std::string text = "no exception";
    int code = 1;
    if (setrlimit(RLIMIT_AS, &limit) != 0) {
      text = "setrlimit failed";
    } else {
      try {
        (void)empty({65536, 12288});
      } catch (const OutOfMemoryError& e) {
        text = e.what();
        code = 0;
      } catch (const std::exception& e) {
        text = std::string("another exception: ") + e.what();
      }
    }
    (void)!write(fds[1], text.data(), text.size());
    _exit(code);
  }
  close(fds[1]);
  std::string message;
  char chunk[512];
  for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) > 0;) message.append(chunk, size_t(n));
  close(fds[0]);
  int status = 0;
  VERIFY(waitpid(pid, &status, 0) == pid);
  VERIFY2(WIFEXITED(status), "the child ended by signal " + std::to_string(WTERMSIG(status)) + ": " + message);
  COMPARE(WEXITSTATUS(status), 0);
  VERIFY_CONTAINS(message, "cannot allocate 3.0 GiB for a tensor of shape [65536, 12288] float32 (");
  VERIFY_CONTAINS(message, "this process is limited to ");
  VERIFY_CONTAINS(message, " of address space (ulimit -v), ");
}
