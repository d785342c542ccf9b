#pragma once
// Copy and paste in the node editor, and ids for new nodes. A fragment is a Graph holding some
// nodes and the edges among them (dataset and training left default, no view), so it travels
// through the clipboard as project text.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace plexus::graph {

// Nodes and blocks share one namespace of ids: the functions below avoid both.
// A fresh node id for a new node of `type`: the type name lower-cased ("Conv2d" -> "conv2d")
// plus the smallest n >= 1 making it unused in `graph` ("linear1", "linear2", ...). Always
// valid_node_id() ("node<n>" for a type name that is not a valid id).
std::string new_node_id(const Graph& graph, const std::string& type);

// `wanted` if it is a valid id unused in `graph` and not in `also_taken`; else wanted's stem
// (trailing digits removed; "node" if that leaves nothing valid) plus the smallest unused n >= 1.
std::string unique_node_id(const Graph& graph, const std::string& wanted, const std::set<std::string>& also_taken = {});

// The selected nodes (in graph order), the edges with both ends among them and the blocks all
// of whose members come along (so a copied block stays a block); dataset and training left
// default, view "". Unknown ids are ignored.
Graph extract_fragment(const Graph& graph, const std::vector<std::string>& node_ids);

// The fragment of one block: the nodes inside it (through nested blocks), the edges among them,
// the block and the blocks inside it; the block itself collapsed, as an inserted copy shows.
// Empty for an unknown id.
Graph extract_block(const Graph& graph, const std::string& block_id);

// What pasting `fragment` into `target` adds: its nodes with ids made unique in target
// (unique_node_id, also unique among each other), positions shifted by `offset`, and its edges
// remapped to the new ids; edges whose ends are not both in the fragment are dropped. A name
// that was the node's id follows the new id (a pasted "fc1" is not called "fc1" twice); other
// names are kept. Where the fragment repeats an id, edges follow its first node. Its blocks
// come too, with fresh ids (unique among the target's and the pasted nodes' ids) and members
// renamed to match: a pasted block is an independent copy.
struct Pasted {
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<Block> blocks;
};
Pasted paste_fragment(const Graph& target, const Graph& fragment, Position offset);

// Clipboard text of a fragment (project text, serialize_project: throws ValueError for an
// invalid or repeated id) and back (parse_project: throws ProjectError for bad text).
std::string fragment_to_text(const Graph& fragment);
Graph fragment_from_text(std::string_view text);

}  // namespace plexus::graph
