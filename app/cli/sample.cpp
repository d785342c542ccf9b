#include "cli/command.h"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "cli/project_files.h"
#include "session/text_sampling.h"
#include "session/trained_model.h"
#include "util/error.h"

namespace plexus::cli {
namespace {

constexpr const char* kSampleHelp = R"(  Generates text with a model trained on a text dataset (kind "text"), one sample a line.
  FILE and CKPT are as for eval; the vocabulary is the one CKPT stores, so the text file is
  not needed. Each sample grows one character at a time, drawn from the model's softmax over
  the vocabulary at temperature T; the model sees at most the dataset's seq_len last
  characters. Without --prime a sample starts after a newline when the vocabulary has one
  (whole lines: names of a one-name-per-line corpus) and ends at the next newline.
  --count N            samples                                            [20]
  --temperature T      lower: likelier characters, higher: more varied;    [0.8]
                       0: always the likeliest (the same text every time)
  --prime TEXT         text every sample starts with and continues
  --max-length N       characters generated per sample, after the prime   [200]
  --seed S             the same seed gives the same samples               [1]
  --json               one JSON object per sample: {"sample", "text"}
  --threads N          CPU threads for the math                  [all hardware threads]
)";

int cmd_sample(const Args& args) {
  std::optional<std::string> file;
  if (!args.positional().empty()) file = args.positional()[0];
  if (!args.has("--checkpoint")) throw UsageError{"sample needs --checkpoint FILE"};
  apply_threads_option(args);
  session::SampleOptions o;
  o.count = args.integer("--count", o.count, 1);
  o.temperature = args.number("--temperature", o.temperature);
  o.prime = args.str("--prime", "");
  o.max_length = args.integer("--max-length", o.max_length, 1);
  o.seed = uint64_t(args.integer("--seed", int64_t(o.seed), 0));
  const std::string checkpoint = args.str("--checkpoint", "");
  const std::optional<ProjectSource> p = find_project(file, checkpoint);
  if (!p)
    throw IoError(checkpoint + " holds no project: pass the project FILE it belongs to, as in: plexus-cli sample "
                  "FILE --checkpoint " + checkpoint);
  session::check_text_project(p->graph, checkpoint);  // before loading: another kind may need its data
  const session::TrainedModel m = session::load_trained_model(p->graph, checkpoint, {p->dir});
  const std::vector<std::string> samples = session::sample_text(m, o, checkpoint);
  for (size_t i = 0; i < samples.size(); ++i) {
    if (args.has("--json")) std::printf("%s\n", nlohmann::json{{"sample", i + 1}, {"text", samples[i]}}.dump().c_str());
    else std::printf("%s\n", samples[i].c_str());
  }
  return 0;
}

}  // namespace

Command sample_command() {
  return {"sample", "sample [FILE] --checkpoint CKPT [--count N] [--temperature T] [--prime TEXT]\n       [--max-length N] [--seed S] [--json] [--threads N]",
          "generate text with a trained text model",
          [] { return std::string(kSampleHelp); }, {{"--json"},
           {{"--checkpoint", Takes::Path}, {"--count"}, {"--temperature"}, {"--prime"}, {"--max-length"}, {"--seed"},
            kThreadsOption},
           1}, cmd_sample};
}

}  // namespace plexus::cli
