#include "data/folder_listing.h"

#include <algorithm>
#include <system_error>

#include "util/error.h"

namespace plexus::data {

namespace fs = std::filesystem;

std::vector<fs::directory_entry> visible_entries(const fs::path& dir) {
  std::vector<fs::directory_entry> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!it->path().filename().string().starts_with('.')) out.push_back(*it);
  if (ec) throw DataError(dir.string() + ": cannot list the folder: " + ec.message());
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.path().filename().string() < b.path().filename().string(); });
  return out;
}

bool is_folder(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_directory(ec);
}

bool is_file(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_regular_file(ec);
}

}  // namespace plexus::data
