// Training settings described as parameters: defaults match TrainingSettings{}, every setting
// reads and writes its own field, and out-of-range values are refused with the reason.
#include <QTest>

#include "graph/training_params.h"
#include "optim/factory.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::graph;

class TestTrainingParams : public QObject {
  Q_OBJECT

 private slots:
  void defaultsAreTheSettingsDefaults() {
    const TrainingSettings d;
    QCOMPARE(training_param_specs().size(), size_t(20));
    for (const ParamSpec& s : training_param_specs()) {
      QCOMPARE(training_value(d, s.name), std::optional<ParamValue>(s.default_value));
      QVERIFY2(check_param_value(s, s.default_value).empty(), s.name.c_str());
    }
    QCOMPARE(training_param_specs().front().choices, optim::optimizer_names());
  }

  void everySettingWritesItsOwnField() {
    for (const ParamSpec& s : training_param_specs()) {
      TrainingSettings t;
      ParamValue v;
      switch (s.type) {
        case ParamType::Float: v = s.max; break;
        case ParamType::Int: v = int64_t(s.max); break;
        case ParamType::Bool: v = !std::get<bool>(s.default_value); break;
        case ParamType::Choice: v = s.choices.back(); break;
        case ParamType::IntList: QFAIL("no list settings"); break;
      }
      set_training_value(t, s.name, v);
      QCOMPARE(*training_value(t, s.name), v);
      // Every other setting kept its default.
      for (const ParamSpec& other : training_param_specs())
        if (other.name != s.name) QCOMPARE(*training_value(t, other.name), other.default_value);
    }
  }

  void badValuesAreRefusedWithTheReason() {
    TrainingSettings t;
    const TrainingSettings before = t;
    const auto refused = [&](const std::string& name, const ParamValue& v, const char* expect) {
      try {
        set_training_value(t, name, v);
      } catch (const ValueError& e) {
        QVERIFY2(std::string(e.what()).find(expect) != std::string::npos, e.what());
        return;
      }
      QFAIL(("accepted " + name).c_str());
    };
    refused("lr", 0.0, "must be between");
    refused("epochs", int64_t(0), "must be between 1");
    refused("optimizer", std::string("lbfgs"), "must be one of");
    refused("precision", std::string("fp16"), "must be one of");
    refused("batch_size", 3.5, "whole number");
    refused("nope", int64_t(1), "unknown setting");
    QCOMPARE(t, before);
    set_training_value(t, "lr", int64_t(2));  // a whole number is a real number too
    QCOMPARE(t.lr, 2.0);
    QVERIFY(!training_value(t, "nope"));
    // A file may name any precision; the run's checks refuse an unknown one by name.
    TrainingSettings f;
    f.precision = "fp16";
    try {
      check_training_values(f);
      QFAIL("precision fp16 accepted");
    } catch (const ValueError& e) {
      QVERIFY2(std::string(e.what()).find("precision 'fp16'") != std::string::npos, e.what());
    }
  }

  void settingsApplyOnlyWhereTheyMatter() {
    TrainingSettings t;
    t.optimizer = "adam";
    QVERIFY(!training_value_applies(t, "momentum"));
    QVERIFY(!training_value_applies(t, "nesterov"));
    t.optimizer = "rmsprop";
    QVERIFY(training_value_applies(t, "momentum"));
    QVERIFY(!training_value_applies(t, "gamma"));
    t.schedule = "step";
    QVERIFY(training_value_applies(t, "gamma") && training_value_applies(t, "step_size"));
    QVERIFY(training_value_applies(t, "lr"));
    // The warm-up's start only with a warm-up, which is off by default; an out-of-range start
    // is then not checked either.
    QVERIFY(training_value_applies(t, "warmup_steps"));
    QVERIFY(!training_value_applies(t, "warmup_start_factor"));
    t.warmup_start_factor = 2;
    check_training_values(t);
    t.warmup_steps = 100;
    QVERIFY(training_value_applies(t, "warmup_start_factor"));
    try {
      check_training_values(t);
      QFAIL("warmup_start_factor 2 accepted");
    } catch (const ValueError& e) {
      QCOMPARE(std::string(e.what()), std::string("training: warmup_start_factor must be between 0 and 1, got 2"));
    }
  }
};

QTEST_APPLESS_MAIN(TestTrainingParams)
#include "test_training_params.moc"
