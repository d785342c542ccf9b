#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/project_files.h"
#include "data/image_file.h"
#include "explain/attribution.h"
#include "explain/heat_image.h"
#include "explain/probe.h"
#include "io/safetensors.h"
#include "session/data_pipeline.h"
#include "session/trained_model.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::cli {
namespace {

constexpr const char* kExplainHelp =
    R"(  Explains one prediction of the trained model: which parts of the input made it give a class
  its score (docs/explaining.md). FILE and CKPT are as for predict. The input is one of: an
  image file INPUT (PNG, JPEG, BMP), prepared as predict prepares it; --text TEXT for a model
  of texts (labelled texts as predict encodes them; a text file's model reads the text's last
  sequence-length characters and explains its prediction of the next one); --example I, the
  I-th example (from 0) of the project's test split. The class explained is the top-scoring one
  unless --class says another. The methods, on the class's score (its logit), in raw input units:
    saliency              d score / d input
    gradient-x-input      d score / d input times the input
    smoothgrad            the saliency averaged over --samples noisy copies of the input
    integrated-gradients  the gradient averaged along the path from a zero input, times the
                          input (--steps points, trapezoid rule): they sum to the score's
                          difference between the input and the zero input
    gradcam               Grad-CAM over the feature maps of --node (a node whose output is
                          [K, h, w]; default the last such node)
    attention             the attention weights of MultiheadAttention node --node, per head
  For a text the gradients are taken at the model's first Embedding output, one value per
  character. --out writes the heat map, |attribution| normalised to its largest value in the
  magma colour map, blended over the input picture and enlarged to at least 224 pixels (a row
  of cells for a text or a table row; for attention the heads' mean, queries down, keys across).
  --checkpoint FILE    the checkpoint or weights file (required)
  --method M           saliency, gradient-x-input, smoothgrad, integrated-gradients,
                       gradcam or attention                                    [saliency]
  --out F              the heat map, a PNG (required)
  --node N             gradcam's node; attention's node (required for attention)
  --class K            the class (or output) to explain                  [the top one]
  --samples S          smoothgrad's noisy copies                                   [50]
  --noise X            smoothgrad's noise std, a fraction of the input's range   [0.15]
  --steps S            integrated gradients' path points                          [64]
  --seed S             smoothgrad's noise                                           [0]
  --values F           write the numbers as safetensors: "input" (raw), "values" (signed),
                       "heat"; for attention "weights" [heads, queries, keys] and the
                       node's inputs "query" and "key"
  --json               print the result as one JSON object
  --threads N          CPU threads for the math                  [all hardware threads]
)";

// The one example explained, raw, from INPUT, --text or --example.
Tensor explained_input(const Args& args, const std::vector<std::string>& inputs, const ProjectSource& p,
                       const session::TrainedModel& m) {
  const int given = int(!inputs.empty()) + int(args.has("--text")) + int(args.has("--example"));
  if (given != 1 || inputs.size() > 1)
    throw UsageError{"explain needs one input: an image file INPUT, --text TEXT or --example I"};
  if (args.has("--text")) return explain::text_input(m, args.str("--text", ""));
  if (args.has("--example")) {
    const int64_t index = args.integer("--example", 0, 0);
    const graph::DatasetSplits splits =
        graph::open_dataset(graph::resolve_dataset(p.graph.dataset, p.dir), p.graph.training.seed,
                            p.graph.training.validation_fraction, m.preparation);
    if (!splits.test) throw ValueError("--example: a '" + p.graph.dataset.kind + "' dataset has no test split");
    if (index >= splits.test->size())
      throw ValueError("--example " + std::to_string(index) + " is out of range: the test split has " +
                       std::to_string(splits.test->size()) + " examples (0 to " +
                       std::to_string(splits.test->size() - 1) + ")");
    return splits.test->get(index).input;
  }
  const std::string kind = p.graph.dataset.kind;
  if (kind == "csv" || kind == "text" || kind == "text_classes")
    throw UsageError{"an INPUT file is a picture, but this project's dataset is '" + kind + "': use " +
                     (kind == "csv" ? "--example I" : "--text TEXT or --example I")};
  try {
    return session::picture_input(data::read_image(inputs[0]), p.graph.dataset, m.info.input_shape);
  } catch (const ShapeError& e) {
    throw ShapeError(inputs[0] + ": " + e.what());
  }
}

// The picture --out shows: a picture input's heat blended over it, else a row or grid of cells.
data::Image heat_picture(const Tensor& input, const Tensor& heat) {
  if (heat.dim() == 2 && input.dim() == 3 && (input.shape()[0] == 1 || input.shape()[0] == 3))
    return explain::heat_over_picture(input, heat);
  return heat.dim() == 1 ? explain::heat_strip(heat) : explain::heat_grid(heat.reshape({-1, heat.shape().back()}));
}

int cmd_explain(const Args& args) {
  std::vector<std::string> inputs = args.positional();
  std::optional<std::string> file;
  if (!inputs.empty() && inputs[0].ends_with(".plexus")) {
    file = inputs[0];
    inputs.erase(inputs.begin());
  }
  args.require("explain", {"--checkpoint", "--out"});
  const std::string method_text = args.str("--method", "saliency");
  const bool attention = method_text == "attention";
  const std::optional<explain::AttributionMethod> method = explain::parse_method(method_text);
  if (!method && !attention)
    throw UsageError{
        "--method must be saliency, gradient-x-input, smoothgrad, integrated-gradients, gradcam or "
        "attention, got '" +
        method_text + "'"};
  if (attention && !args.has("--node")) throw UsageError{"--method attention needs --node, a MultiheadAttention node"};
  apply_threads_option(args);
  const std::string checkpoint = args.str("--checkpoint", "");
  const std::optional<ProjectSource> p = find_project(file, checkpoint);
  if (!p)
    throw IoError(checkpoint +
                  " holds no project: pass the project FILE it belongs to, as in: plexus-cli explain "
                  "FILE --checkpoint " +
                  checkpoint + " INPUT --out heat.png");
  const session::TrainedModel m = session::load_trained_model(p->graph, checkpoint, {p->dir});
  const Tensor input = explained_input(args, inputs, *p, m);

  nlohmann::json result = {{"method", method_text}};
  io::NamedTensors values{{"input", input}};
  Tensor heat;
  if (attention) {
    const explain::AttentionMap map = explain::attention_map(m, input, args.str("--node", ""));
    heat = map.weights.mean({0});
    values.push_back({"weights", map.weights});
    values.push_back({"query", map.query});
    values.push_back({"key", map.key});
    result["node"] = args.str("--node", "");
    result["heads"] = map.weights.shape()[0];
    result["tokens"] = map.tokens;
  } else {
    explain::AttributionOptions options;
    options.method = *method;
    options.target = args.integer("--class", -1, 0);
    options.node = args.str("--node", "");
    options.samples = args.integer("--samples", options.samples, 1);
    options.noise = args.number("--noise", options.noise);
    options.steps = args.integer("--steps", options.steps, 2);
    options.seed = uint64_t(args.integer("--seed", 0, 0));
    const explain::Attribution a = explain::attribute(m, input, options);
    heat = a.heat;
    values.push_back({"values", a.values});
    result["class"] = a.target;
    if (a.target < int64_t(m.class_names.size())) result["name"] = m.class_names[size_t(a.target)];
    result["score"] = a.score;
    if (*method == explain::AttributionMethod::IntegratedGradients) {
      result["baseline_score"] = a.baseline_score;
      result["sum"] = a.values.sum().item();
    }
    if (!a.node.empty()) result["node"] = a.node;
    if (*method == explain::AttributionMethod::GradCam) result["stretched"] = a.stretched;
  }
  values.push_back({"heat", heat});
  const std::string out = args.str("--out", "");
  data::write_png(out, heat_picture(input, heat));
  result["out"] = out;
  if (args.has("--values")) {
    io::save_safetensors(args.str("--values", ""), values);
    result["values"] = args.str("--values", "");
  }
  if (args.has("--json")) {
    std::printf("%s\n", result.dump().c_str());
    return 0;
  }
  std::string line = method_text;
  if (result.contains("node")) line += " of node " + result["node"].get<std::string>();
  if (result.contains("class")) {
    line += ", class " + std::to_string(result["class"].get<int64_t>());
    if (result.contains("name")) line += " (" + result["name"].get<std::string>() + ")";
    line += ", score " + shortest_float_text(result["score"].get<float>());
  }
  if (result.contains("baseline_score"))
    line += ", at the zero input " + shortest_float_text(result["baseline_score"].get<float>()) +
            ", attributions sum to " + shortest_float_text(result["sum"].get<float>());
  std::printf("%s: wrote %s\n", line.c_str(), out.c_str());
  return 0;
}

}  // namespace

Command explain_command() {
  return {"explain",
          "explain [FILE] --checkpoint CKPT (INPUT | --text TEXT | --example I) --out F [--method M] [--node N]\n"
          "        [--class K] [--samples S] [--noise X] [--steps S] [--seed S] [--values F] [--json] [--threads N]",
          "show which parts of an input made the model's prediction: saliency, Grad-CAM, attention, ...",
          [] { return std::string(kExplainHelp); },
          {{"--json"},
           {{"--checkpoint", Takes::Path},
            {"--out", Takes::Path},
            {"--method",
             Takes::Text,
             {"saliency", "gradient-x-input", "smoothgrad", "integrated-gradients", "gradcam", "attention"}},
            {"--text"},
            {"--example"},
            {"--node"},
            {"--class"},
            {"--samples"},
            {"--noise"},
            {"--steps"},
            {"--seed"},
            {"--values", Takes::Path},
            kThreadsOption},
           size_t(2)},
          cmd_explain};
}

}  // namespace plexus::cli
