// Runs every file in the given folders through a fuzz target once, without libFuzzer, so the
// ordinary and sanitizer builds (GCC) replay the seed corpora and the saved findings as ctest
// entries: a finding, once fixed, stays fixed. Besides the target's own checks, the replay
// checks what each seed is meant for (the target says what it made of it: fuzz_support.h):
//
//   replay_<target> (--corpus DIR | --either DIR | --accepted DIR SUFFIX)...
//     --corpus DIR         a seed corpus: a file named bad_* is meant to be refused, every other
//                          one to be accepted
//     --either DIR         saved findings and the like: accepted or refused, as long as the
//                          target's checks hold; a missing folder is skipped (no finding yet)
//     --accepted DIR SUFFIX  the files of DIR ending in SUFFIX must be accepted (the example
//                          projects), its other files may go either way
//
// Every failure names the file. Finding no file at all fails too: a wrong folder is not a pass.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;
using plexus::fuzz::Outcome;

enum class Expect { Either, Accepted, Rejected };

const char* name_of(Outcome o) {
  switch (o) {
    case Outcome::Accepted: return "accepted";
    case Outcome::Rejected: return "refused";
    case Outcome::NotRead: break;
  }
  return "not read";
}

struct Folder {
  fs::path path;
  enum { Corpus, Either, Accepted } kind;
  std::string suffix;  // Accepted's
};

Expect expectation(const Folder& folder, const fs::path& file) {
  const std::string name = file.filename().string();
  switch (folder.kind) {
    case Folder::Corpus: return name.starts_with("bad_") ? Expect::Rejected : Expect::Accepted;
    case Folder::Accepted: return name.ends_with(folder.suffix) ? Expect::Accepted : Expect::Either;
    case Folder::Either: break;
  }
  return Expect::Either;
}

int usage() {
  std::fprintf(stderr, "usage: replay (--corpus DIR | --either DIR | --accepted DIR SUFFIX)...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Folder> folders;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--corpus" && i + 1 < argc) {
      folders.push_back({argv[++i], Folder::Corpus, {}});
    } else if (flag == "--either" && i + 1 < argc) {
      folders.push_back({argv[++i], Folder::Either, {}});
    } else if (flag == "--accepted" && i + 2 < argc) {
      folders.push_back({argv[i + 1], Folder::Accepted, argv[i + 2]});
      i += 2;
    } else {
      return usage();
    }
  }

  size_t replayed = 0, wrong = 0;
  for (const Folder& folder : folders) {
    if (!fs::exists(folder.path)) {
      if (folder.kind == Folder::Either) continue;  // a target without saved findings yet
      std::printf("FAIL %s: no such folder\n", folder.path.c_str());
      ++wrong;
      continue;
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(folder.path))
      if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      std::ifstream in(file, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::printf("%s", file.c_str());
      std::fflush(stdout);  // the last name printed is the input that crashed
      plexus::fuzz::outcome = Outcome::NotRead;
      plexus::fuzz::rejection.clear();
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
      const Outcome got = plexus::fuzz::outcome;
      std::printf(": %s\n", name_of(got));
      const Expect want = expectation(folder, file);
      if (want == Expect::Accepted && got != Outcome::Accepted) {
        std::printf("FAIL %s: meant to be accepted, but %s%s%s\n", file.c_str(), name_of(got),
                    got == Outcome::Rejected ? ": " : "", plexus::fuzz::rejection.c_str());
        ++wrong;
      } else if (want == Expect::Rejected && got != Outcome::Rejected) {
        std::printf("FAIL %s: meant to be refused (its name starts with bad_), but %s\n", file.c_str(), name_of(got));
        ++wrong;
      }
    }
  }
  std::printf("%zu inputs replayed, %zu not as meant\n", replayed, wrong);
  if (replayed == 0) return 1;  // nothing found means a wrong folder, not a pass
  return wrong == 0 ? 0 : 1;
}
