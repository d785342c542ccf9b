#pragma once
// A table of settings of a plain struct S (TrainingSettings, DatasetBinding): each row is a
// ParamSpec (key, label, type, default, range or choices, doc), the member it describes and
// where a form shows it (its section, whether it is advanced). The
// project reader and writer, the editor's forms and the checks all walk one such table, so a
// setting is described once. graph/training_params.h and graph/dataset_params.h hold the tables.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "graph/registry.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::graph {

template <class S>
struct SettingRow {
  using Field = std::variant<std::string S::*, double S::*, bool S::*, int64_t S::*, uint64_t S::*>;
  ParamSpec spec;  // spec.name is the key in the project file (within its group)
  Field field;
  // Whether the setting matters for these settings (momentum only for SGD and RMSprop, an image
  // size only for an image folder, ...), so a form can hide or disable it and the checks pass
  // over it; null: always.
  bool (*applies)(const S&) = nullptr;
  // In the editor's form (the device is chosen elsewhere).
  bool in_form = true;
  // The object the key sits in within the struct's own object ("" = directly; "augment").
  std::string group;
  // Written to the project file only when it differs from its default: settings added after
  // projects were saved, so that those files keep their bytes when saved again.
  bool omit_default = false;
  // The form's heading the row sits under ("Optimizer", "Images"); the table's sections list
  // gives their order.
  std::string section;
  // Rarely changed: a form keeps it in a collapsed "Advanced" part.
  bool advanced = false;

  // "augment.shift", or the key alone outside a group: the name forms and messages use.
  std::string name() const { return group.empty() ? spec.name : group + "." + spec.name; }
};

// A row's value as a ParamValue. Unsigned members (seeds) read as whole numbers.
template <class S>
ParamValue setting_value(const S& s, const typename SettingRow<S>::Field& field) {
  return std::visit(
      [&](auto member) -> ParamValue {
        if constexpr (std::is_same_v<std::decay_t<decltype(s.*member)>, uint64_t>) return int64_t(s.*member);
        else return s.*member;
      },
      field);
}

template <class S>
void put_setting_value(S& s, const typename SettingRow<S>::Field& field, const ParamValue& v) {
  std::visit(
      [&](auto member) {
        using T = std::decay_t<decltype(s.*member)>;
        if constexpr (std::is_same_v<T, uint64_t>) s.*member = uint64_t(std::get<int64_t>(v));
        else s.*member = std::get<T>(v);
      },
      field);
}

// The form row called `name` (SettingRow::name()), or null.
template <class S>
const SettingRow<S>* find_setting(const std::vector<SettingRow<S>>& table, const std::string& name) {
  for (const SettingRow<S>& row : table)
    if (row.in_form && row.name() == name) return &row;
  return nullptr;
}

// Sets one form setting; ValueError "<what>: unknown setting 'x'" or "<what>: lr must be ...".
template <class S>
void set_setting(const std::vector<SettingRow<S>>& table, const char* what, S& s, const std::string& name,
                 const ParamValue& value) {
  const SettingRow<S>* row = find_setting(table, name);
  if (!row) throw ValueError(std::string(what) + ": unknown setting '" + name + "'");
  ParamValue v = value;
  if (row->spec.type == ParamType::Float && std::holds_alternative<int64_t>(v)) v = double(std::get<int64_t>(v));
  if (const std::string reason = check_param_value(row->spec, v); !reason.empty())
    throw ValueError(std::string(what) + ": " + name + " " + reason + ", got " + to_string(value));
  put_setting_value(s, row->field, v);
}

// Every applicable value against its row: numbers within range, named choices known ones.
// Unsigned members (seeds) take any value. ValueError in the form's wording
// ("training: batch_size must be between 1 and 1048576, got 0", "dataset: unknown fit 'zoom'
// (known: crop, pad, stretch)").
template <class S>
void check_setting_values(const std::vector<SettingRow<S>>& table, const char* what, const S& s) {
  for (const SettingRow<S>& row : table) {
    if (row.applies && !row.applies(s)) continue;
    const ParamSpec& spec = row.spec;
    if (spec.type == ParamType::Choice) {
      const std::string& value = s.*std::get<std::string S::*>(row.field);
      if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end())
        throw ValueError(std::string(what) + ": unknown " + row.name() + " '" + value + "' (known: " +
                         join(spec.choices) + ")");
      continue;
    }
    if ((spec.type != ParamType::Int && spec.type != ParamType::Float) ||
        std::holds_alternative<uint64_t S::*>(row.field))
      continue;
    const ParamValue value = setting_value(s, row.field);
    if (const std::string reason = check_param_value(spec, value); !reason.empty())
      throw ValueError(std::string(what) + ": " + row.name() + " " + reason + ", got " + to_string(value));
  }
}

// Row constructors for the tables: key, label, default, range or choices, doc.
inline ParamSpec real_spec(std::string name, std::string label, double value, double min, double max,
                           std::string doc) {
  return {std::move(name), std::move(label), ParamType::Float, value, min, max, {}, std::move(doc), {}};
}
inline ParamSpec whole_spec(std::string name, std::string label, int64_t value, double min, double max,
                            std::string doc, std::string default_means = {}) {
  return {std::move(name), std::move(label), ParamType::Int, value, min, max, {}, std::move(doc),
          std::move(default_means)};
}
inline ParamSpec choice_spec(std::string name, std::string label, std::string value, std::vector<std::string> choices,
                             std::string doc) {
  return {std::move(name), std::move(label), ParamType::Choice, std::move(value), 0, 0, std::move(choices),
          std::move(doc), {}};
}
inline ParamSpec flag_spec(std::string name, std::string label, bool value, std::string doc) {
  return {std::move(name), std::move(label), ParamType::Bool, value, 0, 0, {}, std::move(doc), {}};
}

}  // namespace plexus::graph
