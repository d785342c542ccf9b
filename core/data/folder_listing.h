#pragma once
// Listing a dataset's folders the one way every folder kind does: hidden entries (".git",
// ".DS_Store") left out, names in bytewise order, so that class indices do not depend on the
// file system's order.
#include <filesystem>
#include <vector>

namespace plexus::data {

// The entries of `dir` not hidden, sorted bytewise by name. DataError naming the folder when it
// cannot be listed.
std::vector<std::filesystem::directory_entry> visible_entries(const std::filesystem::path& dir);

// Through symbolic links; a dangling link is neither.
bool is_folder(const std::filesystem::directory_entry& e);
bool is_file(const std::filesystem::directory_entry& e);

}  // namespace plexus::data
