#pragma once
// Keeping the replicas of a data-parallel run one model: every rank starts from rank 0's
// weights, and at every epoch's end the parameters are checked equal and the buffers (BatchNorm's
// running statistics, which each rank updates from its own part of the batches) taken from
// rank 0, so that evaluation and rank 0's checkpoints describe the same model on every rank.
#include <string>
#include <utility>
#include <vector>

#include "dist/communicator.h"
#include "nn/module.h"

namespace plexus::dist {

// The parameters and buffers of rank 0, on every rank.
void broadcast_state(Communicator& comm, nn::Module& model);

// Buffers from rank 0; then each rank's parameter checksum (hash of their bytes) compared with
// rank 0's. RankMismatch when they differ: "after epoch 3 the ranks' parameters differ: rank 1's
// checksum 9f..., rank 0's 4a...".
void sync_replicas(Communicator& comm, nn::Module& model, const std::string& when);

// Facts that must agree for the ranks to train one model (the project, the dataset, the
// build), as name and value: RankMismatch naming the first that differs from rank 0's, and the
// rank ("rank 1's project differs from rank 0's (a1b2c3... vs 0d9e8f...)"). Every rank throws
// the same error, so none is left waiting.
void check_same(Communicator& comm, const std::vector<std::pair<std::string, std::string>>& facts);

// A 64-bit FNV-1a hash of `bytes` as 16 hex digits: the fingerprints check_same compares.
std::string fingerprint(const std::string& bytes);
std::string fingerprint(const void* data, size_t size);

}  // namespace plexus::dist
