#pragma once
// A dataset file's whole content, read once: the text readers parse it in memory (CSV files are
// mapped instead, data/mapped_file.h).
#include <string>

namespace plexus::data {

// DataError "PATH: cannot open: <reason>" or "PATH: read error at byte offset B".
std::string read_file_bytes(const std::string& path);

}  // namespace plexus::data
