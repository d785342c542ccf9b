#include "cli/command.h"

#include <cstdio>
#include <filesystem>

#include "cli/project_files.h"
#include "layers/compiler.h"
#include "graph/project.h"
#include "io/safetensors.h"
#include "ops/ops.h"
#include "session/trained_model.h"
#include "train/checkpoint.h"
#include "util/error.h"

namespace plexus::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kGradHelp = R"(  Loads the weights (every tensor of the model must be there with its shape, nothing
  else), reads the batch from X: tensor "x" [N, input shape...] and tensor "y" (class
  indices as floats [N], or targets), and runs one forward and backward pass in training
  mode: batch normalization uses the batch's statistics, and dropout draws from the default
  generator seeded with the project's seed, so the result is reproducible. Writes "loss"
  (a 0-d tensor) and the gradient of every parameter under the parameter's name.
  A project without a dataset (plexus-cli import's) takes its shapes from W's metadata.
  --eval               evaluation mode instead (running statistics, no dropout); also
                       writes the prediction that feeds the loss as "output"
  --threads N          CPU threads for the math                  [all hardware threads]
)";

// Tensor `name` of the batch file, with `what` for the message when it is missing.
const Tensor& batch_tensor(const io::SafetensorsFile& f, const std::string& path, const char* name, const std::string& what) {
  const Tensor* t = f.find(name);
  if (!t) throw IoError("input " + path + ": tensor '" + name + "' is missing (" + what + ")");
  return *t;
}

int cmd_grad(const Args& args) {
  args.require("grad", {"--project", "--weights", "--input", "--out"});
  const std::string file = args.str("--project", ""), input = args.str("--input", "");
  apply_threads_option(args);
  const graph::Graph g = graph::load_project(file);
  // A project without a dataset (an imported model) is described by its weights file's metadata.
  graph::DatasetInfo info;
  layers::CompiledGraph c;
  if (g.dataset.kind.empty()) {
    session::TrainedModel m = session::load_trained_model(g, args.str("--weights", ""), {project_dir(file)});
    info = m.info;
    c = std::move(m.compiled);
  } else {
    info = describe_project_dataset(g, file);
    c = layers::compile(g, info, g.training.seed);
    train::load_weights(args.str("--weights", ""), *c.model);
  }

  const io::SafetensorsFile batch = io::load_safetensors(input);
  const Tensor& x = batch_tensor(batch, input, "x", "the inputs " + shape_text(info.input_shape));
  const Tensor& y = batch_tensor(batch, input, "y", "the labels " + shape_text(info.label_shape));
  auto check = [&](const Tensor& t, const Shape& example, const char* name) {  // t: [N, example...]
    const Shape& s = t.shape();
    if (s.empty() || s[0] < 1 || Shape(s.begin() + 1, s.end()) != example)
      throw ShapeError("input " + input + ": tensor '" + name + "' has shape " + to_string(s) +
                       ", the project expects " + shape_text(example));
  };
  check(x, info.input_shape, "x");
  check(y, info.label_shape, "y");
  if (x.shape()[0] != y.shape()[0])
    throw ShapeError("input " + input + ": 'x' holds " + std::to_string(x.shape()[0]) + " examples but 'y' holds " +
                     std::to_string(y.shape()[0]));

  // Training mode: batch statistics, and dropout drawing from the seeded default generator.
  manual_seed(g.training.seed);
  nn::Module& model = *c.model;
  const bool eval = args.has("--eval");
  if (eval) model.eval();
  else model.train();
  model.zero_grad();
  const Tensor prediction = model(x);
  const Tensor loss = c.loss(prediction, y);
  loss.backward();

  io::NamedTensors out{{"loss", loss.detach().reshape({})}};
  if (eval) out.emplace_back("output", prediction.detach());
  for (const auto& [name, p] : model.named_parameters())
    out.emplace_back(name, p.grad().defined() ? p.grad() : zeros(p.shape()));
  io::save_safetensors(args.str("--out", ""), out, {{"project", fs::path(file).filename().string()}});
  std::printf("loss %.6g; wrote the gradients of %zu parameters to %s\n", double(loss.item()), out.size() - 1,
              args.str("--out", "").c_str());
  return 0;
}

}  // namespace

Command grad_command() {
  return {"grad", "grad --project FILE --weights W.safetensors --input X.safetensors --out G.safetensors [--eval]",
          "one forward and backward pass of a project: loss and every gradient",
          [] { return std::string(kGradHelp); },
          {{"--eval"},
           {{"--project", Takes::Path}, {"--weights", Takes::Path}, {"--input", Takes::Path}, {"--out", Takes::Path},
            kThreadsOption}},
          cmd_grad};
}

}  // namespace plexus::cli
