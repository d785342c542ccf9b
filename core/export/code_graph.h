#pragma once
// What the code exporters (pytorch_code.h, cpp_code.h) share: the walk over a trained model's
// graph that hands every node the loss nodes' predictions need, in topological order, to its
// layer type's rule for the language (layers/code_rules.h), and the collector of what the
// rules write. Each exporter writes the file around it.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "layers/lowering.h"
#include "session/trained_model.h"

namespace plexus::exporter {

// What the rules wrote, for the file: the submodules, forward's lines and the helpers.
class CodeCollector : public layers::CodeEmitter {
 public:
  void helper(const std::string& name, const std::string& code) override;
  void line(const std::string& code) override { forward.push_back(code); }

  std::vector<std::string> members, forward, helpers;           // in the order the rules wrote them
  std::vector<std::pair<std::string, std::string>> submodules;  // node id, identifier
  std::string node_id, node_name;                               // the node being written, its identifier

 private:
  std::vector<std::string> helper_names_;
};

struct CodeLanguage {
  const char* name;  // "PyTorch", "C++": the errors' prefix
  layers::CodeRule layers::Lowering::*rule;
  const std::set<std::string>* reserved;  // what no node identifier may be
  std::string output_suffix;              // a single output's variable: the node's identifier + this
  std::string input;                      // the standardised input's variable
};

struct CodeGraph {
  std::string class_name;                // the project's name in CamelCase; Model when it has none
  std::vector<std::string> predictions;  // the variables of the loss nodes' predictions, in graph order
  std::vector<std::string> loss_nodes;   // those loss nodes' ids
};

// The summary of an exported file's `text`.
struct CodeSummary;
CodeSummary summarize(const std::string& text, const CodeGraph& graph, const CodeCollector& collector);

// What an example's raw input is, for a comment: "images: pixel / 255", ...
std::string raw_input_kind(const session::TrainedModel& model);

// Walks `model`'s graph through `language`'s rules into `out`. A node without a rule, or one its
// rule refuses (CodeUnsupported), throws ValueError naming the node and why.
CodeGraph walk_code_graph(const session::TrainedModel& model, const std::string& project_name,
                          const CodeLanguage& language, CodeCollector& out);

}  // namespace plexus::exporter
