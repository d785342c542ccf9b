#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/project_files.h"
#include "explain/features.h"
#include "explain/projection.h"
#include "io/atomic_file.h"
#include "session/trained_model.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::cli {
namespace {

constexpr const char* kEmbedHelp = R"(  Maps a node's outputs over a split of the project's dataset to 2-D, for plotting (the GUI's
  embedding projector computes the same). The model runs on each example of the split (a seeded
  sample of --examples of them), node NODE's output is flattened, and the points are projected
  with PCA (the first two principal components of the centred outputs) or t-SNE (Barnes-Hut,
  after PCA to 50 dimensions; see docs/projector.md). FILE and CKPT are as for eval.
  Writes a CSV file with the header index,label,predicted,x,y and, for a classifier, the
  columns label_name,predicted_name: index is the example's position in the split, label its
  true class and predicted the model's top class (-1 where there are none: regression).
  --node NODE          whose outputs to map (required), e.g. fc1
  --out F              the CSV file to write (required)
  --method M           pca or tsne                                                [tsne]
  --examples N         a seeded sample of this many examples of the split; 0: all  [5000]
  --split S            validation (the test split where there is none) or test  [validation]
  --perplexity P       t-SNE's perplexity                                           [30]
  --iterations N       t-SNE's iterations                                          [750]
  --seed S             the sample's and t-SNE's seed                                 [0]
  --data PATH          use this dataset folder or file instead of the project's
  --threads N          CPU threads for the math                  [all hardware threads]
)";

std::string csv_text(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string s = "\"";
  for (char c : text) s += c == '"' ? std::string("\"\"") : std::string(1, c);
  return s + "\"";
}

int cmd_embed(const Args& args) {
  std::optional<std::string> file;
  if (!args.positional().empty()) file = args.positional()[0];
  args.require("embed", {"--checkpoint", "--out"});
  if (!args.has("--node")) throw UsageError{"embed needs --node NODE: the node whose outputs to map, e.g. fc1"};
  const std::string method = args.str("--method", "tsne"), split_name = args.str("--split", "validation");
  if (method != "pca" && method != "tsne") throw UsageError{"--method is pca or tsne, got '" + method + "'"};
  if (split_name != "validation" && split_name != "test")
    throw UsageError{"--split is validation or test, got '" + split_name + "'"};
  explain::FeatureOptions fo;
  fo.node = args.str("--node", "");
  fo.split = split_name == "test" ? explain::Split::Test : explain::Split::Validation;
  fo.max_examples = args.integer("--examples", 5000, 0);
  fo.seed = uint64_t(args.integer("--seed", 0, 0));
  explain::TsneOptions to;
  to.perplexity = args.number("--perplexity", 30);
  to.iterations = args.integer("--iterations", to.iterations, 1);
  to.seed = fo.seed;

  const std::string checkpoint = args.str("--checkpoint", "");
  std::optional<ProjectSource> p = find_project(file, checkpoint);
  if (!p)
    throw IoError(checkpoint + " holds no project: pass the project FILE it belongs to, as in: plexus-cli embed "
                  "FILE --checkpoint " + checkpoint + " --node NODE --out points.csv");
  apply_machine_options(args, p->graph);
  const session::TrainedModel m = session::load_trained_model(p->graph, checkpoint, {p->dir});
  if (!m.project.find(fo.node)) {
    std::vector<std::string> ids;
    for (const graph::Node& n : m.project.nodes) ids.push_back(n.id);
    throw UsageError{"the project has no node '" + fo.node + "' (its nodes: " + join(ids, ", ") + ")"};
  }

  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const explain::FeatureSet features = explain::collect_features(m, {p->dir}, fo);
  const auto t1 = Clock::now();
  const Tensor map = method == "pca" ? explain::pca(features.features, 2).points : explain::tsne(features.features, to);
  const auto t2 = Clock::now();
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  std::fprintf(stderr, "%s: %lld examples of %lld values; outputs %.2f s, %s %.2f s\n", fo.node.c_str(),
               static_cast<long long>(features.features.size(0)), static_cast<long long>(features.features.size(1)),
               seconds(t1 - t0), method.c_str(), seconds(t2 - t1));

  const std::vector<float> xy = map.to_vector();
  const bool named = !features.class_names.empty() && m.classification();
  auto name_of = [&](int64_t c) {
    return c >= 0 && c < int64_t(features.class_names.size()) ? csv_text(features.class_names[size_t(c)]) : "";
  };
  io::write_file_atomically(args.str("--out", ""), [&](std::ostream& out) {
    out << "index,label,predicted,x,y" << (named ? ",label_name,predicted_name" : "") << '\n';
    for (size_t i = 0; i < features.indices.size(); ++i) {
      out << features.indices[i] << ',' << features.labels[i] << ',' << features.predicted[i] << ','
          << shortest_float_text(xy[2 * i]) << ',' << shortest_float_text(xy[2 * i + 1]);
      if (named) out << ',' << name_of(features.labels[i]) << ',' << name_of(features.predicted[i]);
      out << '\n';
    }
  });
  return 0;
}

}  // namespace

Command embed_command() {
  return {"embed",
          "embed [FILE] --checkpoint CKPT --node NODE --out F [--method pca|tsne] [--examples N]\n"
          "      [--split validation|test] [--perplexity P] [--iterations N] [--seed S] [--data PATH] [--threads N]",
          "map a node's outputs over a split to 2-D (PCA or t-SNE) as a CSV file of points",
          [] { return std::string(kEmbedHelp); },
          {{},
           {{"--checkpoint", Takes::Path},
            {"--node"},
            {"--out", Takes::Path},
            {"--method", Takes::Text, {"pca", "tsne"}},
            {"--examples"},
            {"--split", Takes::Text, {"validation", "test"}},
            {"--perplexity"},
            {"--iterations"},
            {"--seed"},
            {"--data", Takes::Path},
            kThreadsOption},
           1},
          cmd_embed};
}

}  // namespace plexus::cli
