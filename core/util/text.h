#pragma once
// Text helpers for messages and files, so every part writes numbers and lists the same way.
#include <string>
#include <vector>

namespace plexus {

// A real number as the shortest text that reads back as exactly the same double (std::to_chars):
// "0.1", "1e-05", "128" for 128.0, "nan", "inf". Project files, checkpoint metadata, optimizer
// state and the editors write numbers this way, so a value shown, saved and loaded stays the same.
std::string shortest_text(double v);
// The same for a float: the shortest text that reads back as the same float ("0.1" for 0.1f).
std::string shortest_float_text(float v);

// "a, b, c"; with `last` also given: "a, b and c".
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");
std::string join(const std::vector<std::string>& items, const std::string& separator, const std::string& last);

}  // namespace plexus
