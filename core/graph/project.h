#pragma once
// The Plexus project file (.plexus): a graph, its dataset binding, its training settings and
// the editor's view state, as JSON. docs/project-format.md describes the format.
//
// Loading is strict about syntax and types and lenient about meaning: a file with a missing
// comma, a string where a number belongs, an unknown key or a duplicate node id is refused
// with a ProjectError naming the file, the place (line and column, and the JSON path such as
// "nodes[3].params.out_features") and what was expected; a file whose graph is merely wrong
// (edges to missing nodes, cycles, unknown layer types, out-of-range parameters) loads, and
// the validator reports the problems, so the editor can open a half-finished project.
//
// Saving is canonical: fixed key order, 2-space indentation, parameters sorted by name, real
// numbers in the shortest form that reads back exactly (always with a '.' or an exponent), a
// trailing newline. Loading a file Plexus wrote and saving it again reproduces it byte for byte.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "graph/graph.h"

namespace plexus::graph {

// The newest format version, which this build writes for a graph with blocks; it reads every
// version up to this one. Format 2 is format 1 with "blocks"; a graph without blocks is still
// written as format 1, so that older versions of Plexus read it.
inline constexpr int64_t kProjectFormat = 2;
inline constexpr int64_t kProjectFormatWithoutBlocks = 1;
// Deepest nesting of arrays and objects accepted anywhere in a project file (the top-level
// object is level 1). Deeper input is refused before it can exhaust the stack.
inline constexpr int kProjectMaxDepth = 64;
// load_project refuses larger files (a project is a few kilobytes; this catches a dataset
// opened by mistake before it is read into memory).
inline constexpr uint64_t kProjectMaxFileSize = uint64_t(256) << 20;

// Reads a project file. Throws IoError when the file cannot be read, ProjectError (an IoError)
// when its content is not a valid project; never returns a partial graph.
Graph load_project(const std::filesystem::path& path);

// Same, from text; `source_name` starts every error message (usually the file path).
// A leading UTF-8 byte order mark is skipped.
Graph parse_project(std::string_view text, const std::string& source_name);

// The canonical file text. Throws ValueError (and writes nothing) for a graph that could not
// be read back: an invalid or duplicate node id, text that is not valid UTF-8, a non-finite
// real number, or a `view` that is not a JSON object (nesting at most kProjectMaxDepth - 1).
std::string serialize_project(const Graph& graph);

// serialize_project, then an atomic replacement of `path` (io/atomic_file.h): on any failure
// the previous file is left as it was.
void save_project(const std::filesystem::path& path, const Graph& graph);

}  // namespace plexus::graph
