#include "ops/replica_sum.h"

namespace plexus {
namespace {
thread_local ReplicaSum g_sum;
}

const ReplicaSum* replica_sum() { return g_sum ? &g_sum : nullptr; }

ReplicaSumGuard::ReplicaSumGuard(ReplicaSum sum) : previous_(std::move(g_sum)) { g_sum = std::move(sum); }
ReplicaSumGuard::~ReplicaSumGuard() { g_sum = std::move(previous_); }

}  // namespace plexus
