#pragma once
// The layer reference, written from the registry: every layer type with its category, display
// name, description, ports and parameters (label, key, type, default, range or choices, doc). Plain text
// for `plexus-cli layers`, Markdown for docs/layers.md (`plexus-cli layers --markdown`, via
// scripts/gen-layers-doc; a test fails when the committed file is out of date). The editor's
// layer help (F1) shows one type's part of the same Markdown.
#include <string>

#include "graph/registry.h"

namespace plexus::graph {

// "0 .. 0.99", "≥ 1", "entries ≥ 1", "true, false", "a, b" — the allowed values of a parameter.
std::string allowed_values(const ParamSpec& p);

// One layer type's section of docs/layers.md, its heading at `level` (3 there: "### Conv2d"):
// display name, description, ports, and a table of the parameters.
std::string layer_markdown(const LayerType& type, int level = 3);

std::string layers_text(const Registry& registry = Registry::instance());
std::string layers_markdown(const Registry& registry = Registry::instance());

}  // namespace plexus::graph
