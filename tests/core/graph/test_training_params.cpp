// Training settings described as parameters: defaults match TrainingSettings{}, every setting
// reads and writes its own field, and out-of-range values are refused with the reason.
#include "support/check.h"

#include "graph/dataset_params.h"
#include "graph/training_params.h"
#include "optim/factory.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::graph;

TEST(defaultsAreTheSettingsDefaults) {
  const TrainingSettings d;
  COMPARE(training_param_specs().size(), size_t(38));
  for (const ParamSpec& s : training_param_specs()) {
    COMPARE(training_value(d, s.name), std::optional<ParamValue>(s.default_value));
    VERIFY2(check_param_value(s, s.default_value).empty(), s.name.c_str());
  }
  COMPARE(training_param_specs().front().choices, optim::optimizer_names());
}

TEST(everySettingWritesItsOwnField) {
  for (const ParamSpec& s : training_param_specs()) {
    TrainingSettings t;
    ParamValue v;
    switch (s.type) {
      case ParamType::Float: v = s.max; break;
      case ParamType::Int: v = int64_t(s.max); break;
      case ParamType::Bool: v = !std::get<bool>(s.default_value); break;
      case ParamType::Choice: v = s.choices.back(); break;
      case ParamType::IntList:
      case ParamType::FloatList:
      case ParamType::IntPair:
      case ParamType::Names: FAIL("no list or pair settings"); break;
    }
    set_training_value(t, s.name, v);
    COMPARE(*training_value(t, s.name), v);
    // Every other setting kept its default.
    for (const ParamSpec& other : training_param_specs())
      if (other.name != s.name) COMPARE(*training_value(t, other.name), other.default_value);
  }
}

TEST(badValuesAreRefusedWithTheReason) {
  TrainingSettings t;
  const TrainingSettings before = t;
  const auto refused = [&](const std::string& name, const ParamValue& v, const char* expect) {
    try {
      set_training_value(t, name, v);
    } catch (const ValueError& e) {
      VERIFY2(std::string(e.what()).find(expect) != std::string::npos, e.what());
      return;
    }
    FAIL("accepted " + name);
  };
  refused("lr", 0.0, "must be between");
  refused("epochs", int64_t(0), "must be between 1");
  refused("optimizer", std::string("lbfgs"), "must be one of");
  refused("precision", std::string("fp16"), "must be one of");
  refused("batch_size", 3.5, "whole number");
  refused("nope", int64_t(1), "unknown setting");
  COMPARE(t, before);
  set_training_value(t, "lr", int64_t(2));  // a whole number is a real number too
  COMPARE(t.lr, 2.0);
  VERIFY(!training_value(t, "nope"));
  // A file may name any precision; the run's checks refuse an unknown one by name.
  TrainingSettings f;
  f.precision = "fp16";
  try {
    check_training_values(f);
    FAIL("precision fp16 accepted");
  } catch (const ValueError& e) {
    VERIFY2(std::string(e.what()).find("precision 'fp16'") != std::string::npos, e.what());
  }
}

// A choice without a list is free text: the CSV missing values and a column's fill constant take
// any text, where a choice with a list takes only its own.
TEST(freeTextSettingsTakeAnyText) {
  DatasetBinding b;
  set_dataset_value(b, "missing_values", std::string("NA, -"));
  COMPARE(b.missing_values, std::string("NA, -"));
  ColumnSetting c{.name = "colour"};
  set_setting(column_settings(), "column", c, "fill", std::string("grey"));
  COMPARE(c.fill, std::string("grey"));
  VERIFY(!check_param_value(column_settings()[1].spec, std::string("average")).empty());  // missing: a list
}

TEST(settingsApplyOnlyWhereTheyMatter) {
  TrainingSettings t;
  t.optimizer = "adam";
  VERIFY(!training_value_applies(t, "momentum"));
  VERIFY(!training_value_applies(t, "nesterov"));
  t.optimizer = "rmsprop";
  VERIFY(training_value_applies(t, "momentum"));
  VERIFY(!training_value_applies(t, "gamma"));
  t.schedule = "step";
  VERIFY(training_value_applies(t, "gamma") && training_value_applies(t, "step_size"));
  VERIFY(training_value_applies(t, "lr"));
  // The warm-up's start only with a warm-up, which is off by default; an out-of-range start
  // is then not checked either.
  VERIFY(training_value_applies(t, "warmup_steps"));
  VERIFY(!training_value_applies(t, "warmup_start_factor"));
  t.warmup_start_factor = 2;
  check_training_values(t);
  t.warmup_steps = 100;
  VERIFY(training_value_applies(t, "warmup_start_factor"));
  try {
    check_training_values(t);
    FAIL("warmup_start_factor 2 accepted");
  } catch (const ValueError& e) {
    COMPARE(std::string(e.what()), std::string("training: warmup_start_factor must be between 0 and 1, got 2"));
  }
}


TEST(scheduleStoppingAndClippingSettingsApplyWhereTheyMatter) {
  TrainingSettings t;
  for (const char* name : {"pct_start", "end_factor", "plateau_patience", "monitor", "early_stopping_min_delta"})
    VERIFY2(!training_value_applies(t, name), name);
  VERIFY(training_value_applies(t, "clip_norm") && training_value_applies(t, "clip_value"));
  VERIFY(training_value_applies(t, "early_stopping_patience"));
  t.schedule = "onecycle";
  VERIFY(training_value_applies(t, "pct_start") && training_value_applies(t, "div_factor"));
  t.schedule = "exponential";
  VERIFY(training_value_applies(t, "gamma") && !training_value_applies(t, "step_size"));
  t.schedule = "plateau";  // the plateau schedule watches the monitor too
  VERIFY(training_value_applies(t, "plateau_factor") && training_value_applies(t, "monitor"));
  t.schedule = "none";
  t.early_stopping_patience = 5;
  VERIFY(training_value_applies(t, "monitor") && training_value_applies(t, "early_stopping_min_delta"));
  // Bad values are refused naming the setting.
  const auto refusal = [](TrainingSettings s) {
    try {
      check_training_values(s);
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  TrainingSettings bad = t;
  bad.monitor = "f1";
  COMPARE(refusal(bad), std::string("training: unknown monitor 'f1' (known: val_loss, val_accuracy, train_loss, "
                                    "train_accuracy)"));
  bad = t;
  bad.clip_norm = -1;
  COMPARE(refusal(bad), std::string("training: clip_norm must be between 0 and 1e+09, got -1"));
  bad = t;
  bad.schedule = "plateau";
  bad.plateau_factor = 1;
  COMPARE(refusal(bad), std::string("training: plateau_factor must be between 1e-06 and 0.999999, got 1"));
  bad = t;
  bad.early_stopping_patience = -2;
  COMPARE(refusal(bad), std::string("training: early_stopping_patience must be between 0 and 1000000, got -2"));
}
