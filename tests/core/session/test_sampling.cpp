// Text generation (session/text_sampling.h) with hand-built models whose logits are known: greedy
// output exactly predictable, temperature's effect on the distribution counted over a fixed
// seed, determinism per seed, the prime, the newline stop, the context window and the errors.
#include "support/check.h"

#include <cmath>
#include <map>
#include <sstream>

#include "autograd/grad_mode.h"
#include "session/text_sampling.h"
#include "support/test_support.h"
#include "util/error.h"

using namespace plexus;
using plexus::testing::contains;
using plexus::testing::message_of;

namespace {

// Logits for the next symbol from the current one alone: row `id` of `table` at every
// position, so [N, T] ids give [N, T, V] logits. Remembers what it saw.
class Bigram : public nn::Module {
 public:
  explicit Bigram(std::vector<std::vector<float>> table, int64_t extra = 0) : table_(std::move(table)), extra_(extra) {}
  std::string type_name() const override { return "Bigram"; }
  Tensor forward(const Tensor& x) override {
    const int64_t n = x.shape()[0], t = x.shape()[1], v = int64_t(table_.size()) + extra_;
    widest = std::max(widest, t);
    saw_training = saw_training || is_training();
    saw_grad = saw_grad || GradMode::enabled();
    const Tensor ids = x.contiguous();
    std::vector<float> out;
    for (int64_t i = 0; i < n * t; ++i) {
      const auto& row = table_.at(size_t(ids.data()[i]));
      out.insert(out.end(), row.begin(), row.end());
      out.resize(out.size() + size_t(extra_), 0.f);
    }
    return from_vector(out, {n, t, v});
  }
  int64_t widest = 0;
  bool saw_training = false, saw_grad = false;

 private:
  std::vector<std::vector<float>> table_;
  int64_t extra_;
};

// '\n' a b c: each symbol strongly predicts the next in the cycle \n -> a -> b -> c -> \n.
const data::Vocabulary kCycle({"\n", "a", "b", "c"});
std::vector<std::vector<float>> cycle_table() {
  return {{0, 5, 0, 0}, {0, 0, 5, 0}, {0, 0, 0, 5}, {5, 0, 0, 0}};
}

session::SampleOptions greedy(int64_t count = 3) {
  session::SampleOptions o;
  o.count = count;
  o.temperature = 0;
  return o;
}

}  // namespace

TEST(greedy_output_follows_the_logits_and_stops_at_the_newline) {
  Bigram model(cycle_table());
  model.train();
  const auto samples = session::sample_text(model, kCycle, greedy());
  COMPARE(samples, (std::vector<std::string>{"abc", "abc", "abc"}));  // after the default '\n', up to the next
  VERIFY(!model.saw_training);   // eval mode while generating
  VERIFY(!model.saw_grad);       // no autograd
  VERIFY(model.is_training());   // and its own mode back afterwards
}

TEST(without_the_stop_samples_run_to_max_length) {
  Bigram model(cycle_table());
  session::SampleOptions o = greedy(1);
  o.stop_at_newline = false;
  o.max_length = 6;
  COMPARE(session::sample_text(model, kCycle, o), std::vector<std::string>{"abc\nab"});
}

TEST(the_prime_starts_every_sample) {
  Bigram model(cycle_table());
  session::SampleOptions o = greedy(2);
  o.prime = "bc\na";
  COMPARE(session::sample_text(model, kCycle, o), (std::vector<std::string>{"bc\nabc", "bc\nabc"}));
  session::SampleOptions one = greedy(2);
  one.prime = "b";
  one.max_length = 1;
  COMPARE(session::sample_text(model, kCycle, one), (std::vector<std::string>{"bc", "bc"}));
}

TEST(without_a_newline_the_first_symbol_is_drawn) {
  const data::Vocabulary abc({"a", "b", "c"});
  Bigram model({{0, 5, 0}, {0, 0, 5}, {5, 0, 0}});
  session::SampleOptions o = greedy(30);
  o.max_length = 2;
  std::map<char, int> firsts;
  for (const std::string& s : session::sample_text(model, abc, o)) {
    COMPARE(int(s.size()), 3);  // the drawn start is part of the sample
    const std::string cycle = "abcab";
    COMPARE(s, cycle.substr(cycle.find(s[0]), 3));
    ++firsts[s[0]];
  }
  COMPARE(int(firsts.size()), 3);
}

TEST(temperature_reshapes_the_distribution) {
  // Fixed logits 0, ln 2, ln 3: p = 1/6, 2/6, 3/6 at temperature 1 and 1/14, 4/14, 9/14 at 0.5.
  const data::Vocabulary xyz({"x", "y", "z"});
  const std::vector<float> logits{0.f, std::log(2.f), std::log(3.f)};
  Bigram model({logits, logits, logits});
  const int n = 6000;
  for (const auto& [temperature, expected] : std::vector<std::pair<double, std::vector<double>>>{
           {1.0, {1 / 6., 2 / 6., 3 / 6.}}, {0.5, {1 / 14., 4 / 14., 9 / 14.}}}) {
    session::SampleOptions o;
    o.count = n;
    o.temperature = temperature;
    o.prime = "x";
    o.max_length = 1;
    o.seed = 11;
    std::map<char, int> counts;
    for (const std::string& s : session::sample_text(model, xyz, o)) ++counts[s.at(1)];
    for (int k = 0; k < 3; ++k) {
      const double share = double(counts["xyz"[k]]) / n;
      std::ostringstream what;
      what << "temperature " << temperature << ", '" << "xyz"[k] << "': " << share << ", expected "
           << expected[size_t(k)];
      VERIFY2(std::abs(share - expected[size_t(k)]) < 0.02, what.str());
    }
  }
}

TEST(the_seed_decides_the_samples) {
  Bigram model({{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}});  // every symbol alike
  session::SampleOptions o;
  o.count = 5;
  o.max_length = 30;
  o.stop_at_newline = false;
  const auto first = session::sample_text(model, kCycle, o);
  COMPARE(session::sample_text(model, kCycle, o), first);
  o.seed = 2;
  VERIFY(session::sample_text(model, kCycle, o) != first);
}

TEST(the_model_sees_at_most_the_context) {
  Bigram model(cycle_table());
  session::SampleOptions o = greedy(2);
  o.stop_at_newline = false;
  o.max_length = 10;
  o.context = 3;
  COMPARE(session::sample_text(model, kCycle, o), (std::vector<std::string>{"abc\nabc\nab", "abc\nabc\nab"}));
  COMPARE(model.widest, int64_t(3));
  o.context = 0;  // everything: the prime and the 9 symbols before the last draw
  session::sample_text(model, kCycle, o);
  COMPARE(model.widest, int64_t(10));
}

TEST(bad_input_is_named) {
  Bigram model(cycle_table());
  session::SampleOptions o = greedy();
  o.prime = "abz";
  const std::string prime = message_of<ValueError>([&] { session::sample_text(model, kCycle, o); });
  VERIFY2(contains(prime, "prime") && contains(prime, "character 2") && contains(prime, "'z'"), prime.c_str());

  Bigram wide(cycle_table(), 1);  // V + 1 logits
  const std::string shape = message_of<ShapeError>([&] { session::sample_text(wide, kCycle, greedy(2)); });
  VERIFY2(contains(shape, "[2, 1, 4]") && contains(shape, "got [2, 1, 5]"), shape.c_str());

  o = greedy();
  o.temperature = -1;
  VERIFY(contains(message_of<ValueError>([&] { session::sample_text(model, kCycle, o); }), "temperature"));
  o = greedy();
  o.count = 0;
  VERIFY(contains(message_of<ValueError>([&] { session::sample_text(model, kCycle, o); }), "count"));

  session::TrainedModel csv;
  csv.project.dataset.kind = "csv";
  const std::string kind = message_of<ValueError>([&] { session::text_vocabulary(csv, "m.safetensors"); });
  VERIFY2(contains(kind, "m.safetensors") && contains(kind, "'csv'") && contains(kind, "text dataset"), kind.c_str());
}

