#include "cli/command.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "cli/project_files.h"
#include "data/csv.h"
#include "data/image_file.h"
#include "data/text_classes.h"
#include "io/atomic_file.h"
#include "ops/ops.h"
#include "session/data_pipeline.h"
#include "session/trained_model.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::cli {
namespace {

constexpr const char* kPredictHelp = R"(  Runs the trained model on each INPUT and prints, per example, the K most likely classes
  with their probabilities (softmax), or the regression output. FILE (a first argument
  ending in .plexus) and CKPT are as for eval. For an image dataset the INPUTs are PNG,
  JPEG or BMP images of any size: converted to the model's channels (gray: ITU-R BT.601 luma)
  and size (shrunk by area averaging, enlarged bilinearly), scaled to [0, 1] as the training
  images were, then normalised as in training. For a CSV dataset the INPUTs are CSV files
  of raw rows as in the data file, their columns found by name in any order (a target
  column is ignored), prepared as the training rows were: missing cells filled, categories
  encoded (one not seen in training as "other"), dates split (the checkpoint's preparation;
  without one, every column but the target is taken in order, as numbers).
  For labelled texts the inputs are typed texts, given with --text instead of INPUTs: each
  is lowercased when the training lowercased its examples and cut to the model's length,
  as the training examples were; a character the model was not trained on is an error.
  --text TEXT          a text to classify; repeatable, one prediction each
  --top K              classes shown per example                          [3]
  --json               one JSON object per example: {"input", ("row",) "classes":
                       [{"class", "name", "probability"}...]} or {"input", ("row",) "value"};
                       {"text", "classes"} for a --text
  --prepared-csv F     for a CSV dataset: write the rows as the model takes them to F, one
                       line per example in output order under a header of the input names
                       (TablePreparation::input_names: a number, NAME=CATEGORY one-hot,
                       NAME:year ... of a date, NAME=(missing) indicators): prepared, not yet
                       standardised, which is what the model exported by `export --onnx`
                       takes as its input
  --batch-size N       examples per forward pass                          [100]
  --threads N          CPU threads for the math                  [all hardware threads]
)";

// The examples predict reads from its INPUTs, in raw units, with what identifies each in the output.
struct PredictInputs {
  std::vector<float> values;         // example after example
  std::vector<nlohmann::json> ids;   // {"input": FILE} or {"input": FILE, "row": R}
  std::vector<std::string> names;    // CSV rows: the name of each value of an example
};

// Pictures prepared as the project's training pictures were (session::picture_input).
void read_images(const std::vector<std::string>& files, const graph::DatasetBinding& binding, const Shape& chw,
                 PredictInputs& in) {
  for (const std::string& f : files) {
    const data::Image image = data::read_image(f);
    Tensor x;
    try {
      x = session::picture_input(image, binding, chw);
    } catch (const ShapeError& e) {
      throw ShapeError(f + ": " + e.what());
    }
    const std::vector<float> v = x.to_vector();
    in.values.insert(in.values.end(), v.begin(), v.end());
    in.ids.push_back({{"input", f}});
  }
}

// CSV rows, raw as in the data file: prepared as the model's training prepared them (the
// checkpoint's preparation, else one fitted again on the project's data file; columns found by
// name), else every column of the input but the target taken in order as numbers (a warning
// says so: columns in another order than in training would go unnoticed).
void read_rows(const std::vector<std::string>& files, const ProjectSource& p, const session::TrainedModel& model,
               int64_t features, PredictInputs& in) {
  const std::string& target = p.graph.dataset.target;
  auto without_target = [&](std::vector<std::string> names) {
    names.erase(std::remove(names.begin(), names.end(), target), names.end());
    return names;
  };
  if (!model.preparation)
    std::fprintf(stderr, "plexus-cli: warning: the checkpoint does not name the feature columns and the project's "
                 "data file '%s' is not at hand, so they cannot be matched by name: every column but the target '%s' "
                 "is taken, in order\n",
                 p.graph.dataset.path.c_str(), target.c_str());
  for (const std::string& f : files) {
    char head[8] = {};
    std::ifstream(f, std::ios::binary).read(head, sizeof head);
    if (data::is_image_data(reinterpret_cast<const uint8_t*>(head), sizeof head))
      throw DataError(f + ": an image, but the model takes rows of a CSV file (its dataset is a CSV file)");
    const data::TablePreparation preparation =
        model.preparation ? *model.preparation
                          : data::TablePreparation::numbers(without_target(data::read_csv_header(f)));
    if (preparation.width() != features)
      throw ShapeError(f + ": " + std::to_string(preparation.width()) + " feature columns (" +
                       join(preparation.input_names(), ", ") + ") besides the target '" + target +
                       "', but the model takes " + std::to_string(features));
    const Tensor x = data::read_csv_features(f, preparation);
    if (in.names.empty()) in.names = preparation.input_names();
    const std::vector<float> v = x.to_vector();
    in.values.insert(in.values.end(), v.begin(), v.end());
    for (int64_t r = 1; r <= x.size(0); ++r) in.ids.push_back({{"input", f}, {"row", r}});
  }
}

// A CSV field: quoted when it holds the delimiter, a quote or a line break.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string s = "\"";
  for (char c : text) s += c == '"' ? std::string("\"\"") : std::string(1, c);
  return s + "\"";
}

// --prepared-csv F: the model's input rows, under a header of their names.
void write_prepared_rows(const std::string& path, const PredictInputs& in) {
  const size_t width = in.names.size();
  io::write_file_atomically(path, [&](std::ostream& out) {
    for (size_t j = 0; j < width; ++j) out << (j ? "," : "") << csv_field(in.names[j]);
    out << '\n';
    for (size_t i = 0; i < in.ids.size(); ++i) {
      for (size_t j = 0; j < width; ++j) out << (j ? "," : "") << shortest_float_text(in.values[i * width + j]);
      out << '\n';
    }
  });
}

// Typed texts, encoded as the model's training encoded its examples (data::encode_typed_text).
void read_texts(const std::vector<std::string>& texts, const session::TrainedModel& model, PredictInputs& in) {
  const std::optional<data::TextEncoding> encoding = session::text_encoding(model);
  for (const std::string& text : texts) {
    const std::vector<float> v = data::encode_typed_text(*encoding, text).to_vector();
    in.values.insert(in.values.end(), v.begin(), v.end());
    in.ids.push_back({{"text", text}});
  }
}

// One example's line for people: "digit.png: 7 (98.12%), 2 (1.10%)", "rows.csv row 2: 3.967" or
// "\"Maria\": female (97.20%), male (2.80%)".
std::string prediction_text(const nlohmann::json& id, const nlohmann::json& result) {
  std::string s = id.contains("text") ? id["text"].dump() : id["input"].get<std::string>();
  if (id.contains("row")) s += " row " + std::to_string(id["row"].get<int64_t>());
  s += ":";
  char buf[64];
  if (result.contains("classes")) {
    for (const auto& c : result["classes"]) {
      std::snprintf(buf, sizeof buf, " (%.2f%%),", 100 * c["probability"].get<double>());
      (s += ' ') += c["name"].get<std::string>();  // in steps: GCC 12 warns of "a + b + buf" here
      s += buf;
    }
    s.pop_back();
  } else {
    for (const auto& v : result["value"].is_array() ? result["value"] : nlohmann::json::array({result["value"]})) {
      std::snprintf(buf, sizeof buf, " %.6g", v.get<double>());
      s += buf;
    }
  }
  return s;
}

// One example's result: its `top` classes, ranked by score as eval's argmax counts them (ties keep
// the lower class first), with their probabilities; or a regression's `k` output values.
void add_prediction(nlohmann::json& result, const session::TrainedModel& m, const float* scores, const float* probs,
                    size_t k, size_t top) {
  if (!m.classification()) {
    result["value"] = k == 1 ? nlohmann::json(scores[0]) : nlohmann::json(std::vector<float>(scores, scores + k));
    return;
  }
  std::vector<size_t> order(k);
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  nlohmann::json classes = nlohmann::json::array();
  for (size_t c : std::span(order).first(std::min(k, top)))
    classes.push_back({{"class", c}, {"name", m.class_names[c]}, {"probability", probs[c]}});
  result["classes"] = std::move(classes);
}

int cmd_predict(const Args& args) {
  std::vector<std::string> inputs = args.positional();
  std::optional<std::string> file;
  if (!inputs.empty() && inputs[0].ends_with(".plexus")) {
    file = inputs[0];
    inputs.erase(inputs.begin());
  }
  const std::vector<std::string> texts = args.all("--text");
  if (!args.has("--checkpoint")) throw UsageError{"predict needs --checkpoint FILE"};
  if (!texts.empty() && !inputs.empty())
    throw UsageError{"predict takes either INPUT files or --text, not both"};
  if (inputs.empty() && texts.empty())
    throw UsageError{"predict needs at least one INPUT: an image (PNG, JPEG, BMP) or a CSV file of rows; or a --text "
                     "TEXT for a labelled-texts model"};
  const int64_t top = args.integer("--top", 3, 1), batch_size = args.integer("--batch-size", 100, 1);
  apply_threads_option(args);
  const std::string checkpoint = args.str("--checkpoint", "");
  const std::optional<ProjectSource> p = find_project(file, checkpoint);
  if (!p)
    throw IoError(checkpoint + " holds no project: pass the project FILE it belongs to, as in: plexus-cli predict "
                  "FILE --checkpoint " + checkpoint + " INPUT...");
  const bool typed = p->graph.dataset.kind == "text_classes";
  if (typed != !texts.empty())
    throw UsageError{typed ? "this model classifies typed texts: give them with --text TEXT, not as INPUT files"
                           : "--text is for a model of labelled texts; this project's dataset is '" +
                                 p->graph.dataset.kind + "': give INPUT files"};
  const session::TrainedModel m = session::load_trained_model(p->graph, checkpoint, {p->dir});

  PredictInputs in;
  const Shape& shape = m.info.input_shape;
  if (typed) read_texts(texts, m, in);
  else if (p->graph.dataset.kind == "csv") read_rows(inputs, *p, m, shape.at(0), in);
  else read_images(inputs, p->graph.dataset, shape, in);
  if (args.has("--prepared-csv")) {
    if (p->graph.dataset.kind != "csv")
      throw UsageError{"--prepared-csv is for a model of a CSV dataset; this project's dataset is '" +
                       p->graph.dataset.kind + "'"};
    write_prepared_rows(args.str("--prepared-csv", ""), in);
  }
  Shape batch_shape{int64_t(in.ids.size())};
  batch_shape.insert(batch_shape.end(), shape.begin(), shape.end());
  const Tensor x = from_vector(in.values, batch_shape);

  for (int64_t start = 0; start < x.size(0); start += batch_size) {
    const int64_t n = std::min(batch_size, x.size(0) - start);
    const Tensor out = m.forward(x.narrow(0, start, n));
    const std::vector<float> scores = out.to_vector();
    const std::vector<float> probs = m.classification() ? softmax(out, 1).to_vector() : scores;
    const size_t k = scores.size() / size_t(n);
    for (int64_t i = 0; i < n; ++i) {
      const nlohmann::json& id = in.ids[size_t(start + i)];
      nlohmann::json result = id;
      add_prediction(result, m, scores.data() + size_t(i) * k, probs.data() + size_t(i) * k, k, size_t(top));
      std::printf("%s\n", args.has("--json") ? result.dump().c_str() : prediction_text(id, result).c_str());
    }
  }
  return 0;
}

}  // namespace

Command predict_command() {
  return {"predict",
          "predict [FILE] --checkpoint CKPT INPUT... [--top K] [--json] [--prepared-csv F] [--batch-size N]\n"
          "        [--threads N]\n"
          "predict [FILE] --checkpoint CKPT --text TEXT... [--top K] [--json] [--batch-size N] [--threads N]",
          "use a trained model on images (PNG, JPEG, BMP), rows of a CSV file or typed texts",
          [] { return std::string(kPredictHelp); },
          {{"--json"},
           {{"--checkpoint", Takes::Path}, {"--text"}, {"--top"}, {"--prepared-csv", Takes::Path}, {"--batch-size"},
            kThreadsOption},
           size_t(-1),
           {"--text"}},
          cmd_predict};
}

}  // namespace plexus::cli
