#include "data/text_classes.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "data/file_bytes.h"
#include "data/folder_listing.h"
#include "data/sampling.h"
#include "util/error.h"

namespace plexus::data {
namespace {

namespace fs = std::filesystem;

bool blank(std::u32string_view codes) {
  return std::all_of(codes.begin(), codes.end(), [](char32_t c) { return c == ' ' || c == '\t' || c == '\r'; });
}

bool is_txt(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return ext == ".txt";
}

// A vocabulary for people, short: runs of three or more consecutive code points as a range
// ("'-', 'a'–'z'"), the first 40 entries.
std::string known_characters(const Vocabulary& vocabulary) {
  const std::vector<std::string>& symbols = vocabulary.symbols();
  std::string out;
  size_t entries = 0;
  for (size_t k = 0; k < symbols.size(); ++entries) {
    if (entries == 40) return out + ", …";
    const char32_t first = decode_utf8(symbols[k], "symbol")[0];
    size_t end = k + 1;  // past the run that starts at k
    while (end < symbols.size() && decode_utf8(symbols[end], "symbol")[0] == first + char32_t(end - k)) ++end;
    out += (out.empty() ? "" : ", ") + describe_symbol(symbols[k]);
    if (end - k >= 3) {
      out += "–" + describe_symbol(symbols[end - 1]);
      k = end;
    } else {
      ++k;
    }
  }
  return out;
}

std::string quoted(const std::vector<TextClass>& classes) {
  std::string out;
  for (const TextClass& c : classes) out += (out.empty() ? "'" : ", '") + c.name + "'";
  return out;
}

}  // namespace

std::vector<std::u32string> examples_per_line(std::string_view bytes, const std::string& source) {
  const std::u32string codes = decode_text_file(bytes, source);
  std::vector<std::u32string> out;
  for (size_t begin = 0; begin < codes.size();) {
    size_t end = codes.find(U'\n', begin);
    if (end == std::u32string::npos) end = codes.size();
    std::u32string_view line(codes.data() + begin, end - begin);
    if (line.ends_with(U'\r')) line.remove_suffix(1);
    if (!blank(line)) out.emplace_back(line);
    begin = end + 1;
  }
  return out;
}

std::u32string example_of_file(std::string_view bytes, const std::string& source) {
  std::u32string codes = decode_text_file(bytes, source);
  while (!codes.empty() && (codes.back() == U'\n' || codes.back() == U'\r')) codes.pop_back();
  if (blank(codes))
    throw DataError(source + ": the file holds no text" + (bytes.empty() ? " (0 bytes)" : "") +
                    "; each file of a class folder is one example");
  return codes;
}

std::vector<TextClass> read_text_classes(const std::string& folder) {
  const std::string kLayout =
      "a labelled-text folder holds a <class>.txt file (one example a line) or a <class>/ folder of .txt files "
      "(one example a file) for each class";
  std::error_code ec;
  if (!fs::exists(folder, ec)) throw DataError(folder + ": no such folder; " + kLayout);
  if (!fs::is_directory(folder, ec)) throw DataError(folder + ": not a folder; " + kLayout);
  std::map<std::string, TextClass> classes;
  for (const fs::directory_entry& e : visible_entries(folder)) {
    const std::string path = e.path().string();
    if (is_folder(e)) {
      TextClass& c = classes[e.path().filename().string()];
      c.source = c.source.empty() ? path : c.source + " and " + path;
      for (const fs::directory_entry& f : visible_entries(e.path()))
        if (is_file(f) && is_txt(f.path()))
          c.examples.push_back(example_of_file(read_file_bytes(f.path().string()), f.path().string()));
    } else if (is_file(e) && is_txt(e.path())) {
      TextClass& c = classes[e.path().stem().string()];
      // The lines come first, whichever of the file and the folder is listed first.
      std::vector<std::u32string> lines = examples_per_line(read_file_bytes(path), path);
      c.examples.insert(c.examples.begin(), lines.begin(), lines.end());
      c.source = c.source.empty() ? path : path + " and " + c.source;
    }
  }
  if (classes.empty()) throw DataError(folder + ": no classes found; " + kLayout);
  std::vector<TextClass> out;
  for (auto& [name, c] : classes) {
    c.name = name;
    out.push_back(std::move(c));
  }
  return out;
}

std::u32string lowercase_text(std::u32string codes) {
  for (char32_t& c : codes)
    if ((c >= U'A' && c <= U'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7)) c += 0x20;
  return codes;
}

std::vector<float> padded_ids(const Vocabulary& vocabulary, const std::u32string& codes, int64_t length) {
  if (length < 1) throw ValueError("padded_ids: length must be at least 1, got " + std::to_string(length));
  const std::u32string kept = codes.substr(0, size_t(length));
  std::vector<float> out(size_t(length), 0.f);
  const std::vector<int64_t> ids = vocabulary.encode(kept);
  for (size_t i = 0; i < ids.size(); ++i) out[i] = float(ids[i] + 1);
  return out;
}

Tensor encode_typed_text(const TextEncoding& encoding, std::string_view utf8) {
  const std::u32string typed = decode_utf8(utf8, "the typed text");
  if (typed.empty()) throw ValueError("there is no text to classify: type some");
  const std::u32string codes = encoding.lowercase ? lowercase_text(typed) : typed;
  const size_t read = std::min(codes.size(), size_t(std::max<int64_t>(encoding.length, 0)));
  for (size_t i = 0; i < read; ++i) {
    if (encoding.vocabulary.id(codes[i])) continue;
    throw ValueError(describe_symbol(encode_utf8(typed[i])) + ", character " + std::to_string(i + 1) + " of \"" +
                     std::string(utf8) + "\", is not one of the " + std::to_string(encoding.vocabulary.size()) +
                     " characters the model was trained on: " + known_characters(encoding.vocabulary));
  }
  return from_vector(padded_ids(encoding.vocabulary, codes, encoding.length), {encoding.length});
}

Tensor sequence_lengths(const Tensor& ids) {
  if (ids.dim() != 2)
    throw ShapeError("sequence_lengths: expected padded ids [B, T], got shape " + plexus::to_string(ids.shape()));
  const int64_t b = ids.shape()[0], t = ids.shape()[1];
  const std::vector<float> values = ids.contiguous().to_vector();
  std::vector<float> lengths(size_t(b), 0.f);
  for (int64_t i = 0; i < b; ++i)
    lengths[size_t(i)] = float(std::count_if(values.begin() + i * t, values.begin() + (i + 1) * t,
                                             [](float v) { return v != 0.f; }));
  return from_vector(lengths, {b});
}

TextClassDataset::TextClassDataset(const std::vector<TextClass>& classes, const TextClassOptions& options,
                                   const std::string& source) {
  if (options.max_length < 0 || options.max_length > 1 << 20)
    throw ValueError("labelled texts: max_length must lie in [0, 1048576], got " + std::to_string(options.max_length));
  if (classes.size() < 2)
    throw DataError(source + ": needs at least 2 classes, found " + std::to_string(classes.size()) +
                    (classes.empty() ? "" : ": " + quoted(classes)));
  auto store = std::make_shared<Store>();
  store->lowercase = options.lowercase;
  std::vector<std::u32string> texts;
  std::u32string all;
  int64_t longest = 0;
  for (size_t k = 0; k < classes.size(); ++k) {
    const TextClass& c = classes[k];
    if (c.examples.empty()) throw DataError(c.source + ": class '" + c.name + "' has no examples");
    store->class_names.push_back(c.name);
    for (const std::u32string& example : c.examples) {
      texts.push_back(options.lowercase ? lowercase_text(example) : example);
      all += texts.back();
      longest = std::max(longest, int64_t(example.size()));
      store->labels.push_back(int32_t(k));
    }
  }
  store->vocabulary = Vocabulary::of_at_most(all, options.max_vocab, source);
  store->length = options.max_length > 0 ? options.max_length : std::min(longest, kTextClassesLengthCap);
  store->ids.reserve(texts.size() * size_t(store->length));
  store->texts.reserve(texts.size());
  for (const std::u32string& text : texts) {
    const std::vector<float> ids = padded_ids(store->vocabulary, text, store->length);
    store->ids.insert(store->ids.end(), ids.begin(), ids.end());
    std::string utf8;
    for (char32_t c : text) utf8 += encode_utf8(c);
    store->texts.push_back(std::move(utf8));
  }
  rows_.resize(texts.size());
  for (size_t i = 0; i < rows_.size(); ++i) rows_[i] = int64_t(i);
  store_ = std::move(store);
}

int64_t TextClassDataset::label(int64_t index) const {
  check_index(index, "TextClassDataset::label");
  return store_->labels[size_t(rows_[size_t(index)])];
}

const std::string& TextClassDataset::text(int64_t index) const {
  check_index(index, "TextClassDataset::text");
  return store_->texts[size_t(rows_[size_t(index)])];
}

void TextClassDataset::fill_targets(const std::vector<int64_t>& indices, float* out) const {
  for (int64_t i : indices) *out++ = float(label(i));
}

Example TextClassDataset::get(int64_t index) const {
  Example e = get_batch({index});
  return {e.input.reshape({max_length()}), e.target.reshape({})};
}

Example TextClassDataset::get_batch(const std::vector<int64_t>& indices) const {
  if (indices.empty()) throw ValueError("TextClassDataset::get_batch: no indices");
  const int64_t t = max_length();
  Example e{empty({int64_t(indices.size()), t}), target_batch(indices)};
  float* out = e.input.data();
  for (int64_t i : indices) {  // checked by target_batch
    const float* row = store_->ids.data() + rows_[size_t(i)] * t;
    out = std::copy(row, row + t, out);
  }
  return e;
}

Tensor TextClassDataset::target_batch(const std::vector<int64_t>& indices) const {
  if (indices.empty()) throw ValueError("TextClassDataset::target_batch: no indices");
  Tensor t = empty({int64_t(indices.size())});
  fill_targets(indices, t.data());
  return t;
}

TextClassDataset TextClassDataset::subset(std::vector<int64_t> indices) const {
  TextClassDataset out;
  out.store_ = store_;
  for (int64_t& i : indices) {
    check_index(i, "TextClassDataset::subset");
    i = rows_[size_t(i)];
  }
  out.rows_ = std::move(indices);
  return out;
}

std::pair<TextClassDataset, TextClassDataset> TextClassDataset::split(double train_fraction, uint64_t seed) const {
  auto [first, rest] = split_indices(size(), train_fraction, seed);
  return {subset(std::move(first)), subset(std::move(rest))};
}

TextClassDataset read_text_class_dataset(const std::string& path, const TextClassOptions& options) {
  return TextClassDataset(read_text_classes(path), options, path);
}

}  // namespace plexus::data
