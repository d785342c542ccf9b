// What a person reads of every parameter and setting: each ParamSpec of the layer registry and of
// the settings tables has a label and a doc whose first sentence stands alone as a tooltip line;
// the training settings sit in the table's sections; a layer's help names every parameter by
// label and key.
#include "support/check.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "graph/dataset_params.h"
#include "graph/layer_docs.h"
#include "graph/node_settings.h"
#include "graph/registry.h"
#include "graph/training_params.h"

using namespace plexus;
using namespace plexus::graph;

namespace {

// A label starts with a capital, so it is never the key itself; the doc is a sentence: a
// capital first, its first sentence ended by a full stop.
void check_readable(const ParamSpec& s, const std::string& where) {
  const std::string what = where + " " + s.name;
  VERIFY2(!s.label.empty(), (what + ": no label").c_str());
  VERIFY2(std::isupper(static_cast<unsigned char>(s.label[0])),
          (what + ": label '" + s.label + "' does not start with a capital").c_str());
  VERIFY2(!s.doc.empty(), (what + ": no doc").c_str());
  VERIFY2(std::isupper(static_cast<unsigned char>(s.doc[0])), (what + ": doc '" + s.doc + "' is no sentence").c_str());
  VERIFY2(s.doc.back() == '.', (what + ": doc '" + s.doc + "' does not end a sentence").c_str());
}

template <class S>
void check_table(const std::vector<SettingRow<S>>& table, const std::string& what) {
  std::set<std::string> labels;
  for (const SettingRow<S>& row : table) {
    check_readable(row.spec, what);
    VERIFY2(labels.insert(row.spec.label).second, (what + ": two settings labelled " + row.spec.label).c_str());
  }
}

}  // namespace

TEST(everyLayerParameterHasALabelAndADoc) {
  for (const LayerType& t : Registry::instance().types()) {
    std::set<std::string> labels;
    for (const ParamSpec& p : t.params) {
      check_readable(p, t.name);
      VERIFY2(labels.insert(p.label).second, (t.name + ": two parameters labelled " + p.label).c_str());
    }
  }
}

TEST(everySettingHasALabelAndADoc) {
  check_table(training_settings(), "training");
  check_table(dataset_settings(), "dataset");
  check_table(node_settings(), "node");
  COMPARE(std::find_if(training_settings().begin(), training_settings().end(),
                       [](const TrainingSetting& r) { return r.spec.name == "lr"; })
              ->spec.label,
          std::string("Learning rate"));
}

// Every row sits in a listed section, and every section shows something before "Advanced".
TEST(trainingSettingsSitInTheListedSections) {
  COMPARE(training_sections(),
          (std::vector<std::string>{"Optimizer", "Schedule", "Batches", "Stopping", "Monitoring", "Hardware"}));
  for (const std::string& section : training_sections()) {
    const auto everyday = std::count_if(training_settings().begin(), training_settings().end(),
                                        [&](const TrainingSetting& r) { return r.section == section && !r.advanced; });
    VERIFY2(everyday > 0, section.c_str());
  }
  for (const TrainingSetting& row : training_settings()) {
    const auto& sections = training_sections();
    VERIFY2(std::find(sections.begin(), sections.end(), row.section) != sections.end(), row.spec.name.c_str());
  }
  for (const DatasetSetting& row : dataset_settings()) VERIFY2(!row.section.empty(), row.name().c_str());
}

// The help of a layer type (and its part of docs/layers.md) names each parameter by label and key.
TEST(aLayersHelpNamesEveryParameter) {
  for (const LayerType& t : Registry::instance().types()) {
    const std::string text = layer_markdown(t, 2);
    VERIFY2(text.rfind("## " + t.name + "\n", 0) == 0, text.c_str());
    VERIFY2(text.find(t.description) != std::string::npos, t.name.c_str());
    for (const ParamSpec& p : t.params) {
      const std::string row = "| " + p.label + " | `" + p.name + "` |";
      VERIFY2(text.find(row) != std::string::npos, (t.name + " " + p.name).c_str());
      VERIFY2(text.find(p.doc) != std::string::npos, (t.name + " " + p.name).c_str());
    }
    VERIFY2(layers_markdown().find(layer_markdown(t, 3)) != std::string::npos, t.name.c_str());
  }
}
