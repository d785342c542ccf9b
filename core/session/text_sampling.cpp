#include "session/text_sampling.h"

#include <algorithm>
#include <cmath>

#include "autograd/grad_mode.h"
#include "data/sampling.h"
#include "tensor/generator.h"
#include "util/error.h"

namespace plexus::session {
namespace {

// Puts the model back into the mode it had, however sampling ends.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(nn::Module& m) : model_(m), was_training_(m.is_training()) { m.eval(); }
  ~EvalModeGuard() { model_.train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  nn::Module& model_;
  bool was_training_;
};

void check(const SampleOptions& o) {
  if (o.count < 1 || o.count > 10000) throw ValueError("sample: count must be between 1 and 10000, got " + std::to_string(o.count));
  if (!std::isfinite(o.temperature) || o.temperature < 0)
    throw ValueError("sample: temperature must be 0 (greedy) or more, got " + std::to_string(o.temperature));
  if (o.max_length < 1 || o.max_length > 100000)
    throw ValueError("sample: max_length must be between 1 and 100000, got " + std::to_string(o.max_length));
  if (o.context < 0) throw ValueError("sample: context must be 0 (all) or more, got " + std::to_string(o.context));
}

// The next id from one row of logits: the most likely at temperature 0, else a draw from
// softmax(logits / temperature).
int64_t draw(const float* logits, int64_t v, double temperature, Generator& gen, std::vector<double>& p) {
  const int64_t best = std::max_element(logits, logits + v) - logits;
  if (temperature == 0) return best;
  double total = 0;
  for (int64_t i = 0; i < v; ++i) total += p[size_t(i)] = std::exp((double(logits[i]) - logits[best]) / temperature);
  double u = double(gen.uniform()) * total;
  for (int64_t i = 0; i < v; ++i)
    if ((u -= p[size_t(i)]) < 0) return i;
  return best;  // u landed on the rounding at the very end
}

}  // namespace

std::vector<std::string> sample_text(nn::Module& model, const data::Vocabulary& vocabulary, const SampleOptions& options) {
  check(options);
  const int64_t v = vocabulary.size(), n = options.count;
  if (v == 0) throw ValueError("sample: the vocabulary is empty");
  const std::optional<int64_t> newline = vocabulary.id(U'\n');
  const bool stop = options.stop_at_newline.value_or(newline.has_value()) && newline;
  Generator gen(options.seed);

  // Every row starts from the same prime: ids[row] is that row's whole text so far.
  std::vector<int64_t> start;
  size_t kept_from = 0;  // where the returned text starts: after a default newline prime
  if (!options.prime.empty()) {
    try {
      start = vocabulary.encode(std::string_view(options.prime));
    } catch (const Error& e) {
      throw ValueError(std::string("sample: prime: ") + e.what());
    }
  } else if (newline) {
    start = {*newline};
    kept_from = 1;
  }
  std::vector<std::vector<int64_t>> ids(size_t(n), start);
  if (start.empty())
    for (auto& row : ids) row.push_back(int64_t(data::uniform_index(gen, uint64_t(v))));
  // A row's text ends at ends[r]; past it (a newline drawn) the row only keeps the batch
  // rectangular, and its further draws are thrown away.
  std::vector<size_t> ends(size_t(n), 0);

  const EvalModeGuard eval(model);
  const NoGradGuard no_grad;
  model.reset_state();
  const auto params = model.parameters();
  const Device device = params.empty() ? Device::cpu() : params.front().device();
  std::vector<float> batch;
  std::vector<double> p(static_cast<size_t>(v));  // draw()'s scratch
  int64_t open = n;
  for (int64_t step = 0; step < options.max_length && open > 0; ++step) {
    const int64_t total = int64_t(ids[0].size());
    const int64_t t = options.context > 0 ? std::min(total, options.context) : total;
    batch.clear();
    for (const auto& row : ids)
      for (int64_t k = total - t; k < total; ++k) batch.push_back(float(row[size_t(k)]));
    const Tensor logits = model(from_vector(batch, {n, t}).to(device)).to(Device::cpu()).contiguous();
    if (logits.shape() != Shape{n, t, v})
      throw ShapeError("sample: the model should map ids [" + std::to_string(n) + ", " + std::to_string(t) +
                       "] to logits [" + std::to_string(n) + ", " + std::to_string(t) + ", " + std::to_string(v) +
                       "] over the vocabulary's " + std::to_string(v) + " symbols, got " + plexus::to_string(logits.shape()));
    for (int64_t r = 0; r < n; ++r) {
      const int64_t next = draw(logits.data() + (r * t + t - 1) * v, v, options.temperature, gen, p);
      ids[size_t(r)].push_back(next);
      if (ends[size_t(r)] == 0 && stop && next == *newline) {
        ends[size_t(r)] = size_t(total);
        --open;
      }
    }
  }

  std::vector<std::string> out;
  for (int64_t r = 0; r < n; ++r) {
    const auto& row = ids[size_t(r)];
    const size_t end = ends[size_t(r)] ? ends[size_t(r)] : row.size();
    out.push_back(vocabulary.decode(std::vector<int64_t>(row.begin() + std::ptrdiff_t(kept_from), row.begin() + std::ptrdiff_t(end))));
  }
  return out;
}

bool is_text_project(const graph::Graph& project) { return project.dataset.kind == "text"; }

void check_text_project(const graph::Graph& project, const std::string& where) {
  if (!is_text_project(project))
    throw ValueError(where + " is a model of a '" + project.dataset.kind +
                     "' project; generating text needs a model trained on a text dataset (kind \"text\")");
}

data::Vocabulary text_vocabulary(const TrainedModel& model, const std::string& where) {
  check_text_project(model.project, where);
  if (model.class_names.empty())
    throw ValueError(where + " holds no vocabulary (its \"class_names\" metadata) and its text file was not found");
  return data::Vocabulary(model.class_names);
}

std::vector<std::string> sample_text(const TrainedModel& model, SampleOptions options, const std::string& where) {
  const data::Vocabulary vocabulary = text_vocabulary(model, where);
  if (options.context == 0 && model.info.input_shape.size() == 1) options.context = model.info.input_shape[0];
  return sample_text(*model.compiled.model, vocabulary, options);
}

}  // namespace plexus::session
