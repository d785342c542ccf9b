#pragma once
// The layer reference, written from the registry: every layer type with its category, display
// name, description, ports and parameters (type, default, range or choices, doc). Plain text
// for `plexus-cli layers`, Markdown for docs/layers.md (`plexus-cli layers --markdown`, via
// scripts/gen-layers-doc; a test fails when the committed file is out of date).
#include <string>

#include "graph/registry.h"

namespace plexus::graph {

// "0 .. 0.99", "≥ 1", "entries ≥ 1", "true, false", "a, b" — the allowed values of a parameter.
std::string allowed_values(const ParamSpec& p);

std::string layers_text(const Registry& registry = Registry::instance());
std::string layers_markdown(const Registry& registry = Registry::instance());

}  // namespace plexus::graph
