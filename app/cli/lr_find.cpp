#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "cli/command.h"
#include "cli/evaluation_figures.h"
#include "cli/project_files.h"
#include "cli/setting_flags.h"
#include "graph/project.h"
#include "session/lr_finder.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::cli {
namespace {

constexpr const char* kLrFindHelp =
    R"(  The learning-rate finder: trains a fresh copy of the project's model (its seed, optimizer and
  batches; the project file is not changed) for one short ramp whose learning rate grows
  exponentially from --start to --end, one step per batch, and records the loss. The ramp
  stops early when the smoothed loss (a bias-corrected moving average, β 0.98) passes 4x its
  lowest. Suggested: the lr where the smoothed loss falls fastest against log(lr), leaving
  out the first tenth of the steps and the last 5 before the end (docs/training.md). Prints
  the suggestion and a table of some of the steps; exits 1 when there is none, saying why.
  --start X            the first step's learning rate                           [1e-7]
  --end X              the last step's learning rate                            [10]
  --steps N            steps of the ramp, at most one pass of the training split [100]
  --init-from C        start from the matching tensors of C, a checkpoint or weights file (as
                       train --init-from does), instead of the project's fresh weights; C is
                       not changed
  --csv FILE           write every step: step,lr,loss,smoothed
  --json FILE          write every step and the suggestion as JSON
  --data PATH          use this dataset folder or file instead of the project's
  --threads N          CPU threads for the math                  [all hardware threads]

Training settings, over the project's (--batch-size, --optimizer, ...; plexus-cli train --help
lists them): the ramp replaces the schedule, warm-up and lr.
)";

std::string lr_find_help() { return std::string(kLrFindHelp); }

// The rows the table shows: about a dozen spread over the ramp, the suggestion and the last.
std::set<size_t> finder_rows(const session::LrFinderResult& r) {
  std::set<size_t> rows;
  const size_t n = r.points.size();
  const size_t every = std::max<size_t>(1, n / 12);
  for (size_t i = 0; i < n; i += every) rows.insert(i);
  if (n > 0) rows.insert(n - 1);
  if (r.suggestion.lr) rows.insert(size_t(r.suggestion.index));
  return rows;
}

void write_curve_csv(const session::LrFinderResult& r, const std::string& path) {
  std::ofstream out(path);
  out << "step,lr,loss,smoothed\n";
  for (size_t i = 0; i < r.points.size(); ++i)
    out << i + 1 << ',' << shortest_text(r.points[i].lr) << ',' << shortest_text(r.points[i].loss) << ','
        << shortest_text(r.points[i].smoothed) << '\n';
  if (!out) throw IoError("lr-find --csv " + path + ": cannot write the file");
}

void write_curve_json(const session::LrFinderResult& r, const std::string& path) {
  nlohmann::json points = nlohmann::json::array();
  for (const session::LrPoint& p : r.points)
    points.push_back({{"lr", p.lr}, {"loss", json_number(p.loss)}, {"smoothed", json_number(p.smoothed)}});
  nlohmann::json doc{{"points", points},
                     {"planned_steps", r.planned_steps},
                     {"diverged", r.diverged},
                     {"suggested_lr", r.suggestion.lr ? nlohmann::json(*r.suggestion.lr) : nlohmann::json(nullptr)},
                     {"note", r.suggestion.note}};
  std::ofstream out(path);
  out << doc.dump(1) << '\n';
  if (!out) throw IoError("lr-find --json " + path + ": cannot write the file");
}

int cmd_lr_find(const Args& args) {
  if (args.positional().empty()) throw UsageError{"lr-find needs a project FILE"};
  const std::string file = args.positional()[0];
  graph::Graph g = graph::load_project(file);
  apply_setting_options(args, g.training);
  apply_machine_options(args, g);
  session::LrFinderOptions o;
  o.start_lr = args.number("--start", o.start_lr);
  o.end_lr = args.number("--end", o.end_lr);
  o.steps = args.integer("--steps", o.steps, session::kMinSteps);
  o.init_from = args.str("--init-from", "");
  const session::LrFinderResult r = session::find_learning_rate(g, o, {.project_dir = project_dir(file)});

  std::printf("lr finder on %s: %zu of %lld steps from lr %s to %s (%s, batch %lld)", file.c_str(), r.points.size(),
              static_cast<long long>(r.planned_steps), shortest_text(o.start_lr).c_str(),
              shortest_text(o.end_lr).c_str(), g.training.optimizer.c_str(),
              static_cast<long long>(g.training.batch_size));
  if (r.diverged) std::printf(", diverged at lr %.3g", r.points.back().lr);
  if (!r.initialised.empty()) std::printf("\n%s", r.initialised.c_str());
  std::printf("\n%6s  %-12s %-12s %s\n", "step", "lr", "loss", "smoothed");
  for (size_t i : finder_rows(r)) {
    const session::LrPoint& p = r.points[i];
    std::printf("%6zu  %-12.4g %-12.4g %.4g%s\n", i + 1, p.lr, p.loss, p.smoothed,
                r.suggestion.lr && i == size_t(r.suggestion.index) ? "  <- suggested" : "");
  }
  if (args.has("--csv")) write_curve_csv(r, args.str("--csv", ""));
  if (args.has("--json")) write_curve_json(r, args.str("--json", ""));
  if (!r.suggestion.lr) {
    std::fprintf(stderr, "plexus-cli: lr-find: no suggestion: %s\n", r.suggestion.note.c_str());
    return 1;
  }
  // As many digits as the curve can tell apart (--json has the exact step).
  std::printf("suggested lr: %.3g (the steepest fall of the smoothed loss)\n", *r.suggestion.lr);
  return 0;
}

}  // namespace

Command lr_find_command() {
  ArgsShape shape{{},
                  {{"--start"},
                   {"--end"},
                   {"--steps"},
                   {"--init-from", Takes::Path},
                   {"--csv", Takes::Path},
                   {"--json", Takes::Path},
                   {"--data", Takes::Path},
                   kThreadsOption},
                  1};
  shape.flags.insert(shape.flags.end(), setting_options().switches.begin(), setting_options().switches.end());
  shape.options.insert(shape.options.end(), setting_options().with_value.begin(), setting_options().with_value.end());
  return {"lr-find",
          "lr-find FILE [--start X] [--end X] [--steps N] [--init-from C] [--csv FILE] [--json FILE] [options]",
          "find a learning rate: the loss along an exponential lr ramp, and a suggested rate",
          lr_find_help,
          shape,
          cmd_lr_find};
}

}  // namespace plexus::cli
