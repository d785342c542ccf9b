#pragma once
// Core speaks std::string (UTF-8), Qt speaks QString: the one conversion the GUI uses.
#include <QString>
#include <string>

namespace plexus::widgets {

inline QString qstr(const std::string& s) { return QString::fromStdString(s); }

}  // namespace plexus::widgets
