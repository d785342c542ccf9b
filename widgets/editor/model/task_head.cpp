#include "editor/model/task_head.h"

#include <algorithm>

namespace plexus::widgets {

namespace {

bool isRegressionLoss(const std::string& type) {
  return type == "MSE" || type == "L1" || type == "SmoothL1" || type == "Huber";
}

// The node wired into `port` of `node`, or null.
const graph::Node* feeding(const graph::Graph& g, const std::string& node, const std::string& port,
                           std::string* from_port = nullptr) {
  for (const graph::Edge& e : g.edges)
    if (e.to.node == node && e.to.port == port) {
      if (from_port) *from_port = e.from.port;
      return g.find(e.from.node);
    }
  return nullptr;
}

}  // namespace

std::vector<graph::Node> fittedHead(const graph::Graph& g, const std::string& task, int64_t classes) {
  const bool classify = task == "classification";
  if (classify && classes < 2) return {};
  std::vector<graph::Node> changed;
  for (const graph::Node& loss : g.nodes) {
    std::string label_port;
    const graph::Node* labels = feeding(g, loss.id, "target", &label_port);
    if (!labels || labels->type != "Input" || label_port != "y") continue;
    graph::Node head = loss;
    if (classify && isRegressionLoss(loss.type)) head = {loss.id, "CrossEntropy", loss.name, {}, loss.position};
    if (!classify && loss.type == "CrossEntropy") head = {loss.id, "MSE", loss.name, {}, loss.position};
    if (head.type != "CrossEntropy" && head.type != "MSE") continue;
    if (!(head == loss)) changed.push_back(head);
    const graph::Node* scores = feeding(g, loss.id, "input");
    if (!scores || scores->type != "Linear") continue;
    graph::Node linear = *scores;
    linear.params["out_features"] = classify ? classes : int64_t(1);
    if (!(linear == *scores)) changed.push_back(std::move(linear));
  }
  return changed;
}

}  // namespace plexus::widgets
