#include "dist/replicas.h"

#include <cstdio>

#include "autograd/grad_mode.h"

namespace plexus::dist {
namespace {

void broadcast_all(Communicator& comm, const std::vector<Tensor>& tensors) {
  NoGradGuard no_grad;
  for (Tensor t : tensors) {
    if (t.is_contiguous()) {
      comm.broadcast(t, 0);
    } else {
      Tensor c = t.contiguous();
      comm.broadcast(c, 0);
      t.copy_(c);
    }
  }
}

uint64_t fnv1a(const void* data, size_t size, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

std::string hex(uint64_t h) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

}  // namespace

std::string fingerprint(const void* data, size_t size) { return hex(fnv1a(data, size)); }
std::string fingerprint(const std::string& bytes) { return fingerprint(bytes.data(), bytes.size()); }

void broadcast_state(Communicator& comm, nn::Module& model) {
  broadcast_all(comm, model.parameters());
  broadcast_all(comm, model.buffers());
}

void sync_replicas(Communicator& comm, nn::Module& model, const std::string& when) {
  broadcast_all(comm, model.buffers());
  uint64_t h = 0xcbf29ce484222325ull;
  for (const Tensor& p : model.parameters()) {
    const std::vector<float> v = p.to_vector();
    h = fnv1a(v.data(), v.size() * sizeof(float), h);
  }
  const std::vector<std::string> all = comm.all_gather(hex(h));
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw RankMismatch(when + " the ranks' parameters differ: rank " + std::to_string(r) + "'s checksum " + all[r] +
                      ", rank 0's " + all[0] + " (the replicas drifted apart; the run cannot go on)");
}

void check_same(Communicator& comm, const std::vector<std::pair<std::string, std::string>>& facts) {
  std::string mine;
  for (const auto& [name, value] : facts) mine += fingerprint(value) + "\n";
  const std::vector<std::string> all = comm.all_gather(mine);
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] == all[0]) continue;
    if (all[r].size() != all[0].size())
      throw RankMismatch("rank " + std::to_string(r) + " checks other facts than rank 0: it runs another build of plexus-cli");
    for (size_t k = 0; k < facts.size(); ++k) {
      const std::string theirs = all[r].substr(k * 17, 16), first = all[0].substr(k * 17, 16);
      if (theirs != first)
        throw RankMismatch("rank " + std::to_string(r) + "'s " + facts[k].first + " differs from rank 0's (" + theirs +
                        " vs " + first + "): every rank must train the same " + facts[k].first);
    }
    throw RankMismatch("rank " + std::to_string(r) + " was started differently from rank 0");
  }
}

}  // namespace plexus::dist
