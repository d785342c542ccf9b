// Blocks (graph/blocks.h): an annotation over the flat graph. They round-trip through the
// project file (nested ones too), the reader names the block and what is wrong with a malformed
// one, the helpers answer the editor's questions (membership, open ports, what hides a node),
// copy and paste carry whole blocks, and a grouped graph trains and exports exactly as the same
// graph ungrouped: same parameter names, same outputs, the same ONNX bytes.
#include "support/check.h"

#include "autograd/grad_mode.h"
#include "export/onnx.h"
#include "graph/blocks.h"
#include "graph/fragment.h"
#include "graph/project.h"
#include "support/onnx_support.h"
#include "support/temp_dir.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::testing;
namespace fs = std::filesystem;

namespace {

// in -> flat -> fc1 -> act -> fc2 -> loss (CrossEntropy, target in.y).
graph::Graph mlp() {
  graph::Graph g = chain({node("flat", "Flatten"), node("fc1", "Linear", {{"out_features", int64_t(16)}}),
                          node("act", "ReLU"), node("fc2", "Linear", {{"out_features", int64_t(10)}})},
                         "CrossEntropy");
  for (size_t i = 0; i < g.nodes.size(); ++i) g.nodes[i].position = {double(i) * 200, 40};
  return g;
}

// mlp() with "inner" = {fc1, act} inside "outer" = {inner, fc2}.
graph::Graph grouped() {
  graph::Graph g = mlp();
  g.blocks.push_back({"inner", "hidden layer", {"fc1", "act"}, {400, 40}, true});
  g.blocks.push_back({"outer", "head", {"fc2", "inner"}, {400, 20}, false});
  return g;
}

std::string load_error(const std::string& text) {
  return message_of<ProjectError>([&] { graph::parse_project(text, "p.plexus"); });
}

// A project text of two Linear nodes "a" and "b" and the given blocks array.
std::string with_blocks(const std::string& blocks) {
  return R"({"format": 2, "nodes": [{"id": "a", "type": "Linear"}, {"id": "b", "type": "Linear"}], "edges": [],
"blocks": )" + blocks + "}";
}

std::vector<std::string> ids(const std::vector<graph::PortRef>& ports) {
  std::vector<std::string> out;
  for (const graph::PortRef& p : ports) out.push_back(p.node + "." + p.port);
  return out;
}

const graph::DatasetInfo kDigits{{1, 4, 4}, {}, 10, 0};

// A blocks array and the error reading it gives.
struct MalformedRow {
  std::string name;
  std::string blocks;
  std::string error;
};
std::vector<MalformedRow> malformed_blocks() {
  return {
      {"unknown member", R"([{"id": "blk", "members": ["a", "ghost"]}])",
       R"(p.plexus: blocks[0].members[1]: block "blk" has an unknown member "ghost": no node or block has that id (line 2, column 43))"},
      {"member of two blocks", R"([{"id": "b1", "members": ["a"]}, {"id": "b2", "members": ["b", "a"]}])",
       R"(p.plexus: blocks[1].members[1]: block "b2" lists "a", already a member of block "b1" (a member is in one block at most) (line 2, column 74))"},
      {"listed twice", R"([{"id": "b1", "members": ["a", "a"]}])",
       R"(p.plexus: blocks[0].members[1]: block "b1" lists "a" twice (line 2, column 42))"},
      {"cycle", R"([{"id": "b1", "members": ["b2"]}, {"id": "b2", "members": ["b1"]}])",
       R"(p.plexus: blocks[0].id: block "b1" is inside itself: b1 contains b2 contains b1 (line 2, column 19))"},
      {"itself", R"([{"id": "b1", "members": ["b1"]}])",
       R"(p.plexus: blocks[0].members[0]: block "b1" lists itself as a member (line 2, column 37))"},
      {"duplicate block id", R"([{"id": "b1", "members": ["a"]}, {"id": "b1", "members": ["b"]}])",
       R"(p.plexus: blocks[1].id: duplicate block id "b1", also used by blocks[0] (line 2, column 51))"},
      {"a node's id", R"([{"id": "a", "members": ["b"]}])",
       R"(p.plexus: blocks[0].id: block id "a" is also a node's id (line 2, column 19))"},
      {"bad id", R"([{"id": "2 words", "members": ["a"]}])",
       R"(p.plexus: blocks[0].id: "2 words" is not a valid block id; ids use letters, digits, '_' and '-', start with a letter or '_' and have at most 128 characters (line 2, column 19))"},
      {"no members", R"([{"id": "b1"}])",
       R"(p.plexus: blocks[0]: missing "members" (the ids of its nodes and blocks) (line 2, column 12))"},
      {"unknown key", R"([{"id": "b1", "members": [], "open": true}])",
       R"(p.plexus: blocks[0]: unknown key "open"; a block has id, name, members, position and collapsed (line 2, column 40))"},
  };
}

}  // namespace

TEST(projectRoundTripKeepsNestedBlocks) {
  const graph::Graph g = grouped();
  const std::string text = graph::serialize_project(g);
  VERIFY(contains(text, "\"format\": 2,"));
  VERIFY(contains(text, R"(      "members": ["fc2", "inner"],)"));
  const graph::Graph back = graph::parse_project(text, "p.plexus");
  VERIFY(back == g);
  COMPARE(graph::serialize_project(back), text);  // canonical: byte for byte
  // Without blocks a project stays format 1, readable by earlier versions.
  VERIFY(contains(graph::serialize_project(mlp()), "\"format\": 1,"));
  VERIFY(!contains(graph::serialize_project(mlp()), "blocks"));
}

TEST_ROWS(malformedBlocksAreRefusedNamingTheBlock, malformed_blocks()) {
  COMPARE(load_error(with_blocks(row.blocks)), row.error);
}

// What could not be read back is not written.
TEST(savingMalformedBlocksIsRefused) {
  graph::Graph g = mlp();
  g.blocks.push_back({"b1", "", {"fc1", "nothere"}, {}, true});
  COMPARE(message_of<ValueError>([&] { graph::serialize_project(g); }),
          std::string(R"(cannot save the project: blocks[0].members[1]: block "b1" has an unknown member "nothere": no node or block has that id)"));
}

TEST(helpersAnswerTheEditorsQuestions) {
  graph::Graph g = grouped();
  COMPARE(graph::parent_block(g, "fc1")->id, std::string("inner"));
  COMPARE(graph::parent_block(g, "inner")->id, std::string("outer"));
  VERIFY(!graph::parent_block(g, "outer"));
  VERIFY(!graph::parent_block(g, "flat"));
  COMPARE(graph::block_nodes(g, g.blocks[1]), (std::vector<std::string>{"fc1", "act", "fc2"}));
  COMPARE(graph::block_descendants(g, g.blocks[1]), std::vector<std::string>{"inner"});
  VERIFY(graph::block_contains(g, g.blocks[1], "act"));
  VERIFY(!graph::block_contains(g, g.blocks[0], "fc2"));

  // The open outer block shows the collapsed inner one, which hides its nodes.
  COMPARE(graph::hiding_block(g, "fc1")->id, std::string("inner"));
  VERIFY(!graph::hiding_block(g, "fc2"));
  VERIFY(!graph::hiding_block(g, "inner"));
  g.blocks[1].collapsed = true;  // now the outermost collapsed one hides everything
  COMPARE(graph::hiding_block(g, "fc1")->id, std::string("outer"));
  COMPARE(graph::hiding_block(g, "inner")->id, std::string("outer"));
  g.blocks[0].collapsed = g.blocks[1].collapsed = false;
  VERIFY(!graph::hiding_block(g, "fc1"));

  // Open ports: fed from or feeding the outside, or not wired at all; in member order.
  const graph::BlockPorts inner = graph::open_ports(g, g.blocks[0]);
  COMPARE(ids(inner.inputs), std::vector<std::string>{"fc1.input"});
  COMPARE(ids(inner.outputs), std::vector<std::string>{"act.output"});
  g.edges.erase(std::remove_if(g.edges.begin(), g.edges.end(), [](const graph::Edge& e) { return e.to.node == "fc2"; }),
                g.edges.end());
  const graph::BlockPorts outer = graph::open_ports(g, g.blocks[1]);
  COMPARE(ids(outer.inputs), (std::vector<std::string>{"fc1.input", "fc2.input"}));  // fc2's is unwired now
  COMPARE(ids(outer.outputs), (std::vector<std::string>{"act.output", "fc2.output"}));

  COMPARE(graph::canonical_members(g, {"inner", "fc2", "nothere"}), (std::vector<std::string>{"fc2", "inner"}));
  VERIFY(!graph::check_blocks(g));
}

// An optional input left unwired (attention's key, value, lengths) is no opening of its block;
// wired from outside, it is one.
TEST(blocksOpenOptionalInputsOnlyWhenWired) {
  graph::Graph g = chain({node("emb", "Embedding", {{"num_embeddings", int64_t(10)}, {"embedding_dim", int64_t(4)}}),
                          node("attn", "MultiheadAttention", {{"num_heads", int64_t(2)}})});
  g.blocks.push_back({"block", "attention", {"attn"}, {0, 0}, true});
  COMPARE(ids(graph::open_ports(g, g.blocks[0]).inputs), std::vector<std::string>{"attn.input"});
  g.edges.push_back(edge("emb", "output", "attn", "key"));
  COMPARE(ids(graph::open_ports(g, g.blocks[0]).inputs), (std::vector<std::string>{"attn.input", "attn.key"}));
}

// A recurrent layer's state left unwired beside its wired output is no opening; of a layer
// feeding nothing, both outputs are.
TEST(blocksOpenUnwiredOutputsOfDeadEndsOnly) {
  graph::Graph g = chain({node("emb", "Embedding", {{"num_embeddings", int64_t(10)}, {"embedding_dim", int64_t(4)}}),
                          node("gru", "GRU", {{"hidden_size", int64_t(3)}}), node("norm", "LayerNorm")});
  g.blocks.push_back({"block", "recurrent", {"emb", "gru"}, {0, 0}, true});
  COMPARE(ids(graph::open_ports(g, g.blocks[0]).outputs), std::vector<std::string>{"gru.output"});
  std::erase_if(g.edges, [](const graph::Edge& e) { return e.from.node == "gru"; });
  COMPARE(ids(graph::open_ports(g, g.blocks[0]).outputs), (std::vector<std::string>{"gru.output", "gru.state"}));
}

// Copying a block's nodes copies the block; copying some of them does not.
TEST(fragmentsCarryWholeBlocks) {
  const graph::Graph g = grouped();
  const graph::Graph all = graph::extract_fragment(g, {"fc1", "act", "fc2"});
  COMPARE(all.blocks.size(), size_t(2));
  const graph::Graph part = graph::extract_fragment(g, {"fc1", "fc2"});
  VERIFY(part.blocks.empty());
  const graph::Graph inner = graph::extract_fragment(g, {"fc1", "act"});
  COMPARE(inner.blocks.size(), size_t(1));
  COMPARE(inner.blocks[0].id, std::string("inner"));
  VERIFY(graph::fragment_from_text(graph::fragment_to_text(all)) == all);

  // Pasted into the same graph: fresh ids for everything, members renamed to match.
  const graph::Pasted pasted = graph::paste_fragment(g, all, {10, 20});
  COMPARE(pasted.nodes[0].id, std::string("fc3"));
  COMPARE(pasted.blocks[0].id, std::string("inner1"));
  COMPARE(pasted.blocks[0].members, (std::vector<std::string>{"fc3", "act1"}));
  COMPARE(pasted.blocks[1].id, std::string("outer1"));
  COMPARE(pasted.blocks[1].members, (std::vector<std::string>{"fc4", "inner1"}));
  COMPARE(pasted.blocks[1].position, (graph::Position{410, 40}));
  graph::Graph both = g;
  both.nodes.insert(both.nodes.end(), pasted.nodes.begin(), pasted.nodes.end());
  both.edges.insert(both.edges.end(), pasted.edges.begin(), pasted.edges.end());
  both.blocks.insert(both.blocks.end(), pasted.blocks.begin(), pasted.blocks.end());
  VERIFY(!graph::check_blocks(both));
  // Node ids avoid block ids too.
  COMPARE(graph::unique_node_id(g, "inner"), std::string("inner1"));
}

// Grouping never changes what trains: the same parameters under the same names, initialised
// the same, computing the same outputs.
TEST(groupedGraphCompilesToTheSameModel) {
  const layers::CompiledGraph flat = layers::compile(mlp(), kDigits, 5);
  const layers::CompiledGraph blocks = layers::compile(grouped(), kDigits, 5);
  const auto a = flat.model->state(), b = blocks.model->state();  // in the same order, too
  COMPARE(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    COMPARE(b[i].first, a[i].first);
    COMPARE(b[i].second.shape(), a[i].second.shape());
    VERIFY(std::equal(a[i].second.data(), a[i].second.data() + a[i].second.numel(), b[i].second.data()));
  }
  COMPARE(a.front().first, std::string("fc1.weight"));
  NoGradGuard no_grad;
  Generator gen(3);
  const Tensor x = uniform({2, 1, 4, 4}, -1.f, 1.f, &gen);
  const Tensor y1 = flat.model->forward(x), y2 = blocks.model->forward(x);
  COMPARE(y1.shape(), y2.shape());
  VERIFY(std::equal(y1.data(), y1.data() + y1.numel(), y2.data()));
}

TEST(groupedGraphExportsTheSameOnnx) {
  const TempDir dir;
  const fs::path a = dir.file("flat.onnx");
  const fs::path b = dir.file("grouped.onnx");
  exporter::export_onnx(trained_model(mlp(), {1, 4, 4}, {}, 10), a);
  exporter::export_onnx(trained_model(grouped(), {1, 4, 4}, {}, 10), b);
  VERIFY(!read_all(a).empty());
  VERIFY(read_all(a) == read_all(b));
}

