#pragma once
// Whether this build's allocator is a sanitizer's (ASan, TSan). Theirs reserve terabytes of
// address space for shadow memory at start, so a process under a `ulimit -v` cannot run at all,
// and ASan aborts on an operator new it cannot serve whatever its options say: the tests that
// set a ulimit skip there, saying so.
namespace plexus::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerAllocator = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizerAllocator = true;
#else
inline constexpr bool kSanitizerAllocator = false;
#endif
#else
inline constexpr bool kSanitizerAllocator = false;
#endif

}  // namespace plexus::testing
