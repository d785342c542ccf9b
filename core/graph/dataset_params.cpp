#include "graph/dataset_params.h"

#include <algorithm>

#include "data/text_classes.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::graph {
namespace {

using B = DatasetBinding;

bool folder_only(const B& b) { return b.kind == "image_folder"; }
bool images_only(const B& b) { return is_image_dataset(b.kind); }
bool text_only(const B& b) { return b.kind == "text"; }
bool texts_only(const B& b) { return b.kind == "text_classes"; }
bool any_text(const B& b) { return text_only(b) || texts_only(b); }
bool csv_only(const B& b) { return b.kind == "csv"; }

// A row under `section` of the form; `group` is the object its key sits in within the file.
template <class T>
DatasetSetting row(const char* section, T B::*member, ParamSpec spec, bool (*applies)(const B&),
                   std::string group = {}) {
  return {std::move(spec), member, applies, true, std::move(group), false, section, false};
}

}  // namespace

const std::vector<std::string>& dataset_kinds() {
  static const std::vector<std::string> kinds{"mnist", "fashion-mnist", "image_folder", "csv", "text", "text_classes"};
  return kinds;
}

bool is_idx_dataset(const std::string& kind) { return kind == "mnist" || kind == "fashion-mnist"; }
bool is_image_dataset(const std::string& kind) { return is_idx_dataset(kind) || kind == "image_folder"; }

const std::vector<DatasetSetting>& dataset_settings() {
  static const std::vector<DatasetSetting> table = [] {
    const B d;
    return std::vector<DatasetSetting>{
        row("Images", &B::height,
            whole_spec("height", "Height", d.height, 1, 4096,
                       "Height of the model's input: every picture is resized to it."),
            folder_only),
        row("Images", &B::width, whole_spec("width", "Width", d.width, 1, 4096, "Width of the model's input."),
            folder_only),
        row("Images", &B::color,
            choice_spec("color", "Colour", d.color, {"gray", "rgb"}, "One gray channel or three colour channels."),
            folder_only),
        row("Images", &B::fit,
            choice_spec("fit", "Fit", d.fit, {"crop", "pad", "stretch"},
                        "How a picture of another shape fits: scaled to cover and centre-cropped, scaled to fit and "
                        "padded with black, or stretched."),
            folder_only),
        row("Images", &B::bad_files,
            choice_spec("bad_files", "Unreadable files", d.bad_files, {"strict", "skip"},
                        "A corrupt, empty or unreadable file stops the run (strict) or is left out and listed (skip)."),
            folder_only),
        row("Images", &B::cache_mb,
            whole_spec("cache_mb", "Cache (MB)", d.cache_mb, 0, 1 << 20,
                       "Memory for decoded pictures, in MB; pictures beyond it are decoded again when needed.",
                       "a quarter of the memory"),
            folder_only),
        row("Images", &B::loader_threads,
            whole_spec("loader_threads", "Loader threads", d.loader_threads, 1, 64,
                       "Threads decoding pictures ahead of the trainer."),
            folder_only),
        row("Images", &B::stats_sample,
            whole_spec("stats_sample", "Standardisation sample", d.stats_sample, 1, 1 << 24,
                       "Training pictures (a seeded sample) the input standardisation is computed on."),
            folder_only),
        row("Table", &B::delimiter,
            choice_spec("delimiter", "Delimiter", d.delimiter, data::csv_format::delimiter_choices(),
                        "What separates a row's cells: detected from the file (auto), or a comma, a semicolon or a "
                        "tab."),
            csv_only),
        row("Table", &B::missing_values,
            choice_spec("missing_values", "Missing values", d.missing_values, {},
                        "Cells that mean \"no value\", comma-separated and compared without case; an empty cell is "
                        "always missing."),
            csv_only),
        row("Text", &B::seq_len,
            whole_spec("seq_len", "Sequence length", d.seq_len, 2, 4096,
                       "Characters per example: the model reads this many and predicts each next one."),
            text_only),
        row("Text", &B::max_vocab,
            whole_spec("max_vocab", "Largest vocabulary", d.max_vocab, 2, 65536,
                       "The most distinct characters the text may hold; more stops the run (a binary or wrong file)."),
            any_text),
        row("Text", &B::max_length,
            whole_spec("max_length", "Longest example", d.max_length, 0, 4096,
                       "Characters per example: longer ones are cut at their end, shorter ones padded.",
                       "the longest example's length, at most " + std::to_string(data::kTextClassesLengthCap)),
            texts_only),
        row("Text", &B::lowercase,
            flag_spec("lowercase", "Lowercase", d.lowercase,
                      "Reads every example in small letters (A-Z and the Latin-1 capitals)."),
            texts_only),
        row("Augmentation", &B::augment_shift,
            whole_spec("shift", "Shift (pixels)", d.augment_shift, 0, 64,
                       "Shifts each training picture by up to this many pixels each way."),
            images_only, "augment"),
        row("Augmentation", &B::augment_flip,
            flag_spec("flip", "Horizontal flip", d.augment_flip,
                      "Mirrors half of the training pictures left to right."),
            images_only, "augment"),
        row("Augmentation", &B::augment_rotation,
            real_spec("rotation", "Rotation (degrees)", d.augment_rotation, 0, 180,
                      "Rotates each training picture by up to this many degrees."),
            images_only, "augment"),
        row("Augmentation", &B::augment_brightness,
            real_spec("brightness", "Brightness", d.augment_brightness, 0, 0.99,
                      "Scales each training picture's brightness by up to this share either way."),
            images_only, "augment"),
        row("Augmentation", &B::augment_contrast,
            real_spec("contrast", "Contrast", d.augment_contrast, 0, 0.99,
                      "Scales each training picture's contrast by up to this share."),
            images_only, "augment"),
        row("Augmentation", &B::augment_seed,
            whole_spec("seed", "Augmentation seed", int64_t(d.augment_seed), 0, 9007199254740992.0,
                       "Seeds the augmentation's random draws (with the training seed and the batch)."),
            images_only, "augment"),
    };
  }();
  return table;
}

const std::vector<ColumnSettingRow>& column_settings() {
  static const std::vector<ColumnSettingRow> table = [] {
    const ColumnSetting d;
    const auto column = [](auto member, ParamSpec spec) {
      return ColumnSettingRow{std::move(spec), member, nullptr, true, {}, false, "Column", false};
    };
    return std::vector<ColumnSettingRow>{
        column(&ColumnSetting::type,
               choice_spec("type", "Type", d.type, {"auto", "numeric", "categorical", "date", "text"},
                           "What the column holds: detected from its cells (auto), or numbers, categories, dates or "
                           "free text (never an input).")),
        column(&ColumnSetting::missing,
               choice_spec("missing", "Missing cells", d.missing,
                           {"auto", "drop", "mean", "median", "most_frequent", "constant", "error"},
                           "What a missing cell becomes: the training split's mean (numbers, dates) or most frequent "
                           "value (categories) by default (auto); the row left out (drop); a constant; or an error.")),
        column(&ColumnSetting::fill,
               choice_spec("fill", "Fill constant", d.fill, {}, "The value missing cells take under 'constant'.")),
        column(&ColumnSetting::indicator,
               flag_spec("indicator", "Was-missing input", d.indicator,
                         "Adds an input that is 1 where a cell was filled (when the training split has any).")),
        column(&ColumnSetting::encoding,
               choice_spec("encoding", "Categories as", d.encoding, {"one_hot", "index"},
                           "One input per category seen in training plus one for any other (one_hot), or one input "
                           "holding the category's id, 0 for an unseen one, for an Embedding layer (index).")),
    };
  }();
  return table;
}

void check_column_settings(const ColumnSetting& column) {
  if (column.name.empty()) throw ValueError("dataset: a column setting without a column name");
  check_setting_values(column_settings(), ("dataset: column '" + column.name + "'").c_str(), column);
  if (column.missing == "constant" && column.fill.empty())
    throw ValueError("dataset: column '" + column.name + "': missing 'constant' needs a fill value");
}

data::ColumnPolicy column_policy(const ColumnSetting& c) {
  data::ColumnPolicy p;
  p.name = c.name;
  if (c.type != "auto") p.type = data::parse_column_type(c.type);
  if (c.missing != "auto") p.missing = data::parse_missing_policy(c.missing);
  p.fill = c.fill;
  p.indicator = c.indicator;
  p.encoding = data::parse_category_encoding(c.encoding).value_or(data::CategoryEncoding::OneHot);
  return p;
}

data::CsvOptions csv_options(const DatasetBinding& b) {
  if (b.task != "classification" && b.task != "regression")
    throw ValueError("dataset: task must be 'classification' or 'regression' for a CSV file, got '" + b.task + "'");
  data::CsvOptions o;
  o.target = b.target;
  o.task = b.task == "classification" ? data::CsvTask::Classification : data::CsvTask::Regression;
  o.features = b.features;
  o.delimiter = data::csv_format::delimiter_of(b.delimiter);
  o.missing_values = b.missing_values;
  for (const ColumnSetting& c : b.columns) {
    check_column_settings(c);
    o.columns.push_back(column_policy(c));
  }
  return o;
}

std::optional<ParamValue> dataset_value(const DatasetBinding& binding, const std::string& name) {
  const DatasetSetting* s = find_setting(dataset_settings(), name);
  if (!s) return std::nullopt;
  return setting_value(binding, s->field);
}

void set_dataset_value(DatasetBinding& binding, const std::string& name, const ParamValue& value) {
  set_setting(dataset_settings(), "dataset", binding, name, value);
}

bool dataset_value_applies(const DatasetBinding& binding, const std::string& name) {
  const DatasetSetting* s = find_setting(dataset_settings(), name);
  return !s || !s->applies || s->applies(binding);
}

void check_dataset_values(const DatasetBinding& binding) {
  const auto& kinds = dataset_kinds();
  if (std::find(kinds.begin(), kinds.end(), binding.kind) == kinds.end())
    throw ValueError("dataset: unknown kind '" + binding.kind + "' (known: " + join(kinds) + ")");
  check_setting_values(dataset_settings(), "dataset", binding);
  for (const ColumnSetting& c : binding.columns) check_column_settings(c);
}

DatasetBinding for_kind(DatasetBinding binding, const std::string& kind) {
  binding.kind = kind;
  const DatasetBinding defaults;
  for (const DatasetSetting& s : dataset_settings())
    if (s.applies && !s.applies(binding))
      std::visit([&](auto member) { binding.*member = defaults.*member; }, s.field);
  if (kind != "csv") {
    binding.target.clear();
    binding.task.clear();
    binding.features.clear();
    binding.columns.clear();
  } else if (binding.task.empty()) {
    binding.task = "classification";
  }
  return binding;
}

}  // namespace plexus::graph
