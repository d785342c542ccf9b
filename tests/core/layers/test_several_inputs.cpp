// Graphs with several Input nodes reading a table's columns apart: the `columns` and `standardize`
// parameters, their shapes and messages, the compiled selection, the run's standardisation
// (category indices keep their units), and a model that needs both branches trained end to end from
// a CSV file.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "data/csv.h"
#include "graph/inputs.h"
#include "graph/project.h"
#include "graph/registry.h"
#include "graph/validate.h"
#include "layers/compiler.h"
#include "ops/ops.h"
#include "session/data_pipeline.h"
#include "session/run.h"
#include "support/check.h"
#include "support/graph_fixture.h"
#include "support/suite_dir.h"
#include "support/test_support.h"
#include "tensor/generator.h"

using namespace plexus;
using namespace plexus::graph;
using namespace plexus::layers;
using namespace plexus::testing;

namespace {

using P = std::map<std::string, ParamValue>;
using Names = std::vector<std::string>;
const DatasetInfo kTable{{5}, {}, 3, 0, {"a", "b", "c", "d", "kind"}};

std::string problems_of(const Graph& g, const std::string& node_id, const DatasetInfo* info = &kTable) {
  std::string out;
  for (const Problem& p : validate(g, info).problems)
    if (p.node == node_id && p.severity == Severity::Error) out += to_string(p) + "\n";
  return out;
}

}  // namespace

// Each Input's x is its columns, [k]; both Inputs carry the labels y.
TEST(anInputReadingColumnsHasTheirShape) {
  const Graph g = measurements_and_kind();
  const Validation v = validate(g, &kTable);
  VERIFY2(v.ok(), problems_of(g, "").c_str());
  COMPARE(v.shapes.outputs.at("num").at(0), (Shape{4}));
  COMPARE(v.shapes.outputs.at("kind").at(0), (Shape{1}));
  COMPARE(v.shapes.outputs.at("emb").at(0), (Shape{1, 4}));
  // Without a dataset the columns still give the shape.
  const Validation unbound = validate(g, nullptr);
  COMPARE(unbound.shapes.outputs.at("num").at(0), (Shape{4}));
}

TEST(badColumnsAreNamedOnTheNode) {
  Graph g = measurements_and_kind();
  g.find("num")->params["columns"] = Names{"a", "weight"};
  std::string m = problems_of(g, "num");
  VERIFY2(contains(m,
                   "reads column 'weight', which is not among the dataset's "
                   "feature columns (a, b, c, d, kind)"),
          m.c_str());

  g.find("num")->params["columns"] = Names{"a", "a"};
  m = problems_of(g, "num");
  VERIFY2(contains(m, "'a' twice"), m.c_str());

  g.find("num")->params["columns"] = Names{"a", ""};
  m = problems_of(g, "num");
  VERIFY2(contains(m, "empty name"), m.c_str());

  // Pictures have no columns.
  g = measurements_and_kind();
  const DatasetInfo images{{1, 4, 4}, {}, 3};
  m = problems_of(g, "num", &images);
  VERIFY2(contains(m, "only a table's (CSV) columns can be chosen"), m.c_str());

  // A fixed shape that disagrees with the columns.
  g = measurements_and_kind();
  g.find("num")->params["shape"] = std::vector<int64_t>{3};
  m = problems_of(g, "num");
  VERIFY2(contains(m, "is set to shape [N, 3] but reads 4 columns: [N, 4]"), m.c_str());
}

// The examples are standardised once, per column, before the graph: one column cannot be both.
TEST(aColumnIsStandardisedForAllItsReadersOrNone) {
  Graph g = measurements_and_kind();
  g.nodes.push_back(node("raw", "Input", P{{"columns", Names{"b", "kind"}}}));  // kind standardised here
  g.nodes.push_back(node("fc2", "Linear", P{{"out_features", 2L}}));
  g.nodes.push_back(node("mse", "MSE", P{{"loss_weight", 0.0}}));
  g.edges.push_back(edge("raw", "x", "fc2"));
  g.edges.push_back(edge("fc2", "output", "mse"));
  g.edges.push_back(edge("raw", "x", "mse", "target"));
  const std::string m = problems_of(g, "raw");
  VERIFY2(contains(m,
                   "Input 'raw' standardises column 'kind', which Input "
                   "'kind' reads as it is"),
          m.c_str());
  COMPARE(standardized_columns(g, kTable.feature_names).conflict.has_value(), true);

  g.find("raw")->params["columns"] = Names{"b", "d"};  // no longer shared with 'kind'
  VERIFY2(problems_of(g, "raw").empty(), problems_of(g, "raw").c_str());
  const Standardized s = standardized_columns(g, kTable.feature_names);
  COMPARE(s.columns, (std::vector<bool>{true, true, true, true, false}));
}

// An Embedding fed a standardised table column would get no whole numbers: refused on the node.
TEST(anEmbeddingOfAStandardisedColumnIsRefused) {
  Graph g = measurements_and_kind();
  g.find("kind")->params.erase("standardize");
  const std::string m = problems_of(g, "emb");
  VERIFY2(contains(m, "Input 'kind'") && contains(m, "standardize"), m.c_str());
}

// The refusal follows the registry's flag on the port, not a type's name: of every layer type's
// input ports fed a standardised column, exactly those that take indices refuse it.
TEST(aStandardisedColumnIsRefusedByEveryPortTakingIndices) {
  for (const LayerType& t : Registry::instance().types())
    for (const PortSpec& port : t.inputs) {
      Graph g;
      g.nodes = {node("col", "Input", P{{"columns", Names{"kind"}}}), node("layer", t.name)};
      g.edges = {edge("col", "x", "layer", port.name)};
      const bool refused = contains(problems_of(g, "layer"), "looks up indices");
      VERIFY2(refused == port.indices,
              (t.name + " " + port.name + (port.indices ? ": takes indices, not refused" : ": refused")).c_str());
    }
  VERIFY(Registry::instance().find("Embedding")->input("input")->indices);
}

// The validator reads the Inputs of graphs it refuses: a value of the wrong kind is reported on
// its node and reads as the parameter's default, leaving the others as they are.
TEST(anInputsValueOfTheWrongKindReadsAsItsDefault) {
  Graph g = measurements_and_kind();
  g.find("kind")->params["standardize"] = int64_t(0);
  g.find("num")->params["columns"] = std::vector<int64_t>{1, 2};
  const InputRead kind = input_read(*g.find("kind"));
  COMPARE(kind.standardize, true);
  COMPARE(kind.columns, Names{"kind"});
  COMPARE(input_read(*g.find("num")).columns, Names{});
  const std::string m = problems_of(g, "kind");
  VERIFY2(contains(m, "Input 'kind': standardize must be"), m.c_str());
  VERIFY2(contains(problems_of(g, "emb"), "looks up indices"), problems_of(g, "emb").c_str());
}

// The compiled model reads each Input's columns of the whole example, in the Input's order:
// consecutive columns as a view, others gathered.
TEST(theModelSelectsEachInputsColumns) {
  for (const Names& columns : {Names{"b", "c"}, Names{"kind", "a"}}) {
    Graph g;
    g.nodes = {node("in", "Input", P{{"columns", columns}}), node("fc", "Linear", P{{"out_features", 2L}}),
               node("mse", "MSE")};
    g.edges = {edge("in", "x", "fc"), edge("fc", "output", "mse"), edge("in", "x", "mse", "target")};
    CompiledGraph c = compile(g, kTable, 3);
    Generator gen(5);
    const Tensor x = uniform({4, 5}, -1.f, 1.f, &gen);
    const Tensor prediction = c.model->forward(x);
    // The reconstruction's target is the Input's own columns, not the whole example.
    std::vector<float> picked;
    const std::vector<float> all = x.to_vector();
    for (int64_t row = 0; row < 4; ++row)
      for (const std::string& name : columns)
        picked.push_back(
            all[size_t(row * 5 + (std::find(kTable.feature_names.begin(), kTable.feature_names.end(), name) -
                                  kTable.feature_names.begin()))]);
    const Tensor want_target = from_vector(picked, {4, 2});
    Tensor fc_weight, fc_bias;
    for (const auto& [name, t] : c.model->state()) {
      if (name == "fc.weight") fc_weight = t;
      if (name == "fc.bias") fc_bias = t;
    }
    const Tensor want_prediction = matmul(want_target, fc_weight.t()) + fc_bias;
    COMPARE(prediction.to_vector(), want_prediction.to_vector());
    const float loss = c.loss(prediction, Tensor()).item();
    const float want_loss = mean((want_prediction - want_target) * (want_prediction - want_target)).item();
    VERIFY2(std::abs(loss - want_loss) <= 1e-6f * std::max(1.f, want_loss),
            (std::to_string(loss) + " vs " + std::to_string(want_loss)).c_str());
  }
}

// A table whose class depends on a category in a way no line through its index can draw (kind 0, 3
// → class 0; 1, 4 → 1; 2, 5 → 2) plus a measurement. The category column keeps its units (mean 0,
// std 1 in the run's standardisation), the others are standardised, and the model with an Embedding
// for the category learns the classes.
namespace {

// 600 rows: four measurements of noise, the category `kind` (i mod 6, written after `prefix`) and
// the class "c" + kind mod 3.
std::string category_table(const std::string& name, const std::string& prefix) {
  const std::filesystem::path path = suite_subdir("several_inputs") / name;
  std::ofstream csv(path);
  csv << "a,b,c,d,kind,label\n";
  Generator gen(9);
  const std::vector<float> noise = uniform({600, 4}, 0.f, 10.f, &gen).to_vector();
  for (int i = 0; i < 600; ++i)
    csv << noise[size_t(i * 4)] << ',' << noise[size_t(i * 4 + 1)] << ',' << noise[size_t(i * 4 + 2)] << ','
        << noise[size_t(i * 4 + 3)] << ',' << prefix << i % 6 << ",c" << i % 3 << '\n';
  return path.string();
}

}  // namespace

TEST(aTableModelWithTwoInputsTrainsFromACsvFile) {
  Graph g = measurements_and_kind();
  g.dataset.kind = "csv";
  g.dataset.path = category_table("table.csv", "");
  g.dataset.target = "label";
  g.dataset.task = "classification";
  g.training.optimizer = "adam";
  g.training.lr = 0.02;
  g.training.batch_size = 32;
  g.training.epochs = 30;
  session::TrainingRun run = session::make_training_run(g);
  COMPARE(run.normalization.mean.size(), size_t(5));
  COMPARE(run.normalization.mean[4], 0.f);
  COMPARE(run.normalization.std[4], 1.f);
  VERIFY(std::abs(run.normalization.mean[0] - 5.f) < 1.f);  // a measurement: its own mean
  train::Trainer trainer(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(),
                         run.trainer_options);
  trainer.set_test_loader(run.test_loader.get());
  const train::RunResult r = trainer.run();
  VERIFY2(r.status == train::RunStatus::Completed, r.message.c_str());
  VERIFY2(r.test && r.test->eval_accuracy > 0.95,
          ("test accuracy " + std::to_string(r.test ? r.test->eval_accuracy : -1)).c_str());

  // Without the category's branch the same measurements cannot tell the classes apart.
  Graph blind = g;
  std::erase_if(blind.nodes, [](const graph::Node& n) { return n.id == "kind" || n.id == "emb" || n.id == "flat"; });
  std::erase_if(blind.edges, [](const graph::Edge& e) {
    return e.from.node == "kind" || e.from.node == "emb" || e.from.node == "flat";
  });
  session::TrainingRun blind_run = session::make_training_run(blind);
  train::Trainer blind_trainer(*blind_run.compiled.model, *blind_run.optimizer, *blind_run.train_loader,
                               blind_run.eval_loader.get(), blind_run.trainer_options);
  blind_trainer.set_test_loader(blind_run.test_loader.get());
  const train::RunResult b = blind_trainer.run();
  VERIFY2(b.test && b.test->eval_accuracy < 0.6,
          ("blind accuracy " + std::to_string(b.test ? b.test->eval_accuracy : -1)).c_str());
}

// The same table with its category as text ("k0".."k5"): given as ids (encoding "index": 1 + the
// category's place among the training split's, 0 for an unseen one), it feeds the Embedding.
TEST(aTextCategoryAsIdsFeedsAnEmbedding) {
  Graph g = measurements_and_kind();
  g.find("emb")->params["num_embeddings"] = int64_t(7);  // the ids 1..6 and 0 for an unseen kind
  g.dataset.kind = "csv";
  g.dataset.path = category_table("named.csv", "k");
  g.dataset.target = "label";
  g.dataset.task = "classification";
  graph::ColumnSetting kind;
  kind.name = "kind";
  kind.encoding = "index";
  g.dataset.columns = {kind};
  g.training.optimizer = "adam";
  g.training.lr = 0.02;
  g.training.batch_size = 32;
  g.training.epochs = 30;
  session::TrainingRun run = session::make_training_run(g);
  COMPARE(run.feature_names, (std::vector<std::string>{"a", "b", "c", "d", "kind"}));
  COMPARE(run.normalization.mean[4], 0.f);  // ids keep their units
  COMPARE(run.normalization.std[4], 1.f);
  std::vector<float> ids = dynamic_cast<const data::CsvDataset&>(*run.data.train).features().to_vector();
  std::set<float> seen;
  for (size_t i = 4; i < ids.size(); i += 5) seen.insert(ids[i]);
  COMPARE(seen, (std::set<float>{1, 2, 3, 4, 5, 6}));
  train::Trainer trainer(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(),
                         run.trainer_options);
  trainer.set_test_loader(run.test_loader.get());
  const train::RunResult r = trainer.run();
  VERIFY2(r.test && r.test->eval_accuracy > 0.95,
          ("test accuracy " + std::to_string(r.test ? r.test->eval_accuracy : -1)).c_str());
}

// The project file keeps the columns as a list of names.
TEST(columnsRoundTripThroughTheProjectFile) {
  Graph g = measurements_and_kind();
  const Graph back = parse_project(serialize_project(g), "test.plexus");
  COMPARE(back.find("kind")->params.at("columns"), ParamValue(Names{"kind"}));
  COMPARE(back.find("kind")->params.at("standardize"), ParamValue(false));
  VERIFY(contains(serialize_project(g), "\"columns\": [\"a\", \"b\", \"c\", \"d\"]"));
}
