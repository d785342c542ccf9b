#pragma once
// Which vector instruction sets this CPU has, read once: the elementwise kernels compiled in one
// copy per instruction set (gelu.cpp, attention.cpp, column_sums.cpp, rnn_cells.cpp) pick theirs
// by it at run time. One definition for all of them (a unity build puts several in one file).
// x86-64 with GCC or Clang only; elsewhere each runs its baseline copy.
namespace plexus::cpu {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PLEXUS_CPU_ISA_COPIES 1
inline const bool kAvx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
inline const bool kAvx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif

}  // namespace plexus::cpu
