#include "export/code_graph.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "export/pytorch_code.h"  // CodeSummary
#include "graph/inference.h"
#include "graph/inputs.h"
#include "graph/registry.h"
#include "util/error.h"

namespace plexus::exporter {
namespace {

using graph::Node;

// "Linear 'fc1'", and the node's id where its name is another.
std::string where(const Node& n) {
  return n.label() + (n.name.empty() || n.name == n.id ? "" : " (node " + n.id + ")");
}

// A valid identifier for a node id, unique among `taken` and not `reserved`: "conv-1" -> conv_1, "1x1" -> n1x1,
// "in" -> in_ (Python).
std::string identifier(const std::string& id, const std::set<std::string>& reserved, std::set<std::string>& taken) {
  std::string s;
  for (unsigned char ch : id) s += std::isalnum(ch) || ch == '_' ? char(ch) : '_';
  if (s.empty()) s = "node";
  if (std::isdigit((unsigned char)s[0])) s = "n" + s;
  std::string name = s;
  if (reserved.count(name)) name += "_";
  for (int i = 2; taken.count(name); ++i) name = s + "_" + std::to_string(i);
  taken.insert(name);
  return name;
}

// "mnist_mlp" -> MnistMlp: the class's name, from the project's.
std::string class_name(const std::string& project) {
  std::string out;
  bool upper = true;
  for (unsigned char ch : project) {
    if (!std::isalnum(ch)) {
      upper = true;
      continue;
    }
    out += upper ? char(std::toupper(ch)) : char(ch);
    upper = false;
  }
  if (out.empty() || std::isdigit((unsigned char)out[0])) out = "Model" + out;
  return out;
}

}  // namespace

void CodeCollector::helper(const std::string& name, const std::string& code) {
  if (std::find(helper_names_.begin(), helper_names_.end(), name) != helper_names_.end()) return;
  helper_names_.push_back(name);
  helpers.push_back(code);
}

CodeSummary summarize(const std::string& text, const CodeGraph& graph, const CodeCollector& collector) {
  CodeSummary s;
  s.class_name = graph.class_name;
  s.submodules = collector.submodules.size();
  s.lines = size_t(std::count(text.begin(), text.end(), '\n'));
  s.bytes = text.size();
  return s;
}

std::string raw_input_kind(const session::TrainedModel& m) {
  if (m.preparation)
    return "a table's rows prepared: missing cells filled, categories one-hot, as `plexus-cli predict --prepared-csv` "
           "writes them";
  return m.vocabulary.empty() ? "images: pixel / 255; a table's columns as in its file" : "character ids, 0 = padding";
}

CodeGraph walk_code_graph(const session::TrainedModel& m, const std::string& project_name, const CodeLanguage& language,
                          CodeCollector& out) {
  const auto fail = [&language](const std::string& message) {
    throw ValueError(std::string(language.name) + " export: " + message);
  };
  const graph::Graph& g = m.project;
  const graph::Registry& registry = graph::Registry::instance();
  const graph::GraphIndex index(g);
  const graph::InferenceResult shapes = graph::infer_shapes(index, &m.info);

  // Every loss's prediction, in graph order: the edge into its "input" port.
  std::vector<size_t> predictions, ends;
  for (const layers::LossTerm& term : m.compiled.terms) {
    const Node* loss = index.find(term.node);
    if (!loss) fail("the project has no loss node '" + term.node + "' (the compiled model's)");
    size_t prediction = graph::GraphIndex::npos;
    for (size_t e : index.edges_into(loss->id))
      if (g.edges[e].to.port == "input") prediction = e;
    if (prediction == graph::GraphIndex::npos || index.source[prediction] == graph::GraphIndex::npos)
      fail(where(*loss) + " has no prediction input");
    predictions.push_back(prediction);
    ends.push_back(index.source[prediction]);
  }
  const std::vector<char> needed = index.feeding(ends);

  // Names: each needed node's, then the variables of the output ports something reads.
  std::string cls = class_name(project_name);
  if (language.reserved->count(cls)) cls += "Model";  // a project named RMSNorm, like a helper class
  std::set<std::string> taken{cls};
  std::map<std::string, std::string> name_of;
  for (const std::string& id : shapes.order)
    if (needed[index.node.at(id)]) name_of[id] = identifier(id, *language.reserved, taken);
  std::set<std::pair<std::string, std::string>> read;  // (node, port)
  for (size_t e = 0; e < g.edges.size(); ++e)
    if (index.target[e] != graph::GraphIndex::npos && needed[index.target[e]])
      read.insert({g.edges[e].from.node, g.edges[e].from.port});
  for (size_t e : predictions) read.insert({g.edges[e].from.node, g.edges[e].from.port});

  std::map<std::pair<std::string, std::string>, std::string> variable;  // (node, port) -> its variable
  for (const std::string& id : shapes.order) {
    if (!needed[index.node.at(id)]) continue;
    const Node& node = *index.find(id);
    const graph::LayerType& type = *registry.find(node.type);
    const layers::CodeRule& rule = layers::lowering(type).*language.rule;
    if (!rule) fail(where(node) + ": layer type " + type.name + " has no " + language.name + " export rule");
    const std::string& name = name_of.at(id);
    std::vector<Shape> in_shapes;
    std::vector<std::string> in_names;
    std::vector<int64_t> columns;
    if (type.is_input()) {
      in_names.push_back(language.input);
      columns = layers::input_columns(graph::input_read(node), m.info);
    }
    for (const auto& [port, edges] : graph::input_edges(index, node, type))
      for (size_t e : edges) {
        in_names.push_back(variable.at({g.edges[e].from.node, g.edges[e].from.port}));
        in_shapes.push_back(*shapes.edge_shapes[e]);
      }
    const std::vector<graph::PortSpec> out_ports = type.outputs_of(node);
    std::vector<std::string> out_names;
    for (const graph::PortSpec& p : out_ports) {
      std::string v = "_";
      if (read.count({id, p.name}))
        v = type.is_input() && columns.empty() ? language.input
            : out_ports.size() == 1            ? name + language.output_suffix
                                               : name + "_" + p.name;
      out_names.push_back(v);
    }
    out.node_id = id;
    out.node_name = name;
    try {
      rule({node, in_shapes, shapes.outputs.at(id), in_names, out_names, name, columns, out});
    } catch (const layers::CodeUnsupported& u) {
      fail(where(node) + " cannot be exported: " + u.reason);
    }
    for (size_t i = 0; i < out_names.size(); ++i) variable[{id, out_ports[i].name}] = out_names[i];
  }

  CodeGraph result;
  result.class_name = cls;
  for (size_t e : predictions) result.predictions.push_back(variable.at({g.edges[e].from.node, g.edges[e].from.port}));
  for (const layers::LossTerm& term : m.compiled.terms) result.loss_nodes.push_back(term.node);
  return result;
}

}  // namespace plexus::exporter
