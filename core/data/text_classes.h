#pragma once
// Labelled texts for sequence classification (dataset kind "text_classes"): a folder whose
// classes are named by its files and folders, each example a short UTF-8 text.
//
//   names/female.txt       one example per line (blank lines are left out)
//   names/male.txt
//   reviews/good/001.txt   one example per file (its trailing line breaks left out)
//   reviews/bad/002.txt
//
// A class may have both a <class>.txt file and a <class>/ folder: its examples are then the
// lines of the file followed by the folder's files in name order. Class names are sorted
// bytewise; hidden entries, other files (README.md) and files in a class folder not ending in
// .txt are left out.
//
// Vocabulary. The distinct code points of all examples, sorted (data::Vocabulary), after the
// optional lowercasing. Id 0 is padding; a character of vocabulary id k is id k + 1, so an
// Embedding reading these inputs needs vocabulary().size() + 1 rows. The class names are the
// classes, so the vocabulary is carried on its own (a run stores it in its checkpoints as
// "vocabulary", see session/trained_model.h): padded_ids encodes typed text as training did.
//
// Tensors. Input [T] (T = max_length) of float ids, the example's characters then zeros; target
// the class, a scalar. Batches [B, T] and [B]. An example longer than T is cut at its end (its
// first T characters are kept, as PyTorch's and Keras' truncation at the end); padding is only
// ever trailing, so an example's length is its count of non-zero ids (sequence_lengths).
//
// Bad input is a DataError naming the file or folder: a missing folder, a folder with no class
// files, a class with no examples, a single class, an example file with no text, malformed
// UTF-8 or a NUL byte (with its byte offset, data::decode_utf8), more distinct characters than
// max_vocab (with the rarest).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "data/vocabulary.h"

namespace plexus::data {

// The longest examples max_length 0 gives: longer ones are cut to it.
inline constexpr int64_t kTextClassesLengthCap = 256;

struct TextClassOptions {
  int64_t max_length = 0;   // ids per example; 0: the longest example's length, at most kTextClassesLengthCap
  int64_t max_vocab = 256;  // more distinct characters than this is an error
  bool lowercase = false;   // A-Z and the Latin-1 capitals (À-Þ) to their small letters first
};

// One class as read: its name, its examples, and where they came from (for messages).
struct TextClass {
  std::string name;
  std::vector<std::u32string> examples;
  std::string source;  // the class file, the class folder, or "FILE and FOLDER"
};

// The examples of a <class>.txt file: one per line (a line break is "\n" or "\r\n"), lines
// empty or of spaces and tabs alone left out, the others kept as they are.
std::vector<std::u32string> examples_per_line(std::string_view bytes, const std::string& source);
// The example of one file of a <class>/ folder: its text without trailing line breaks.
// DataError when nothing but white space is left.
std::u32string example_of_file(std::string_view bytes, const std::string& source);
// The classes of `folder`, sorted by name, each with its examples (possibly none: the dataset
// refuses that). DataError for a folder that is missing or holds no class files.
std::vector<TextClass> read_text_classes(const std::string& folder);

// `codes` with A-Z and the Latin-1 capitals À-Þ (but ×) lowercased; other characters as they are.
std::u32string lowercase_text(std::u32string codes);

// An example as the model reads it: the ids of `codes`' first `length` characters (vocabulary
// id + 1), then 0s up to `length`. ValueError naming a character not in the vocabulary.
std::vector<float> padded_ids(const Vocabulary& vocabulary, const std::u32string& codes, int64_t length);

// How typed text becomes a trained model's input (the GUI's Try It, plexus-cli predict --text):
// the model's vocabulary, its input length T and whether its training lowercased examples.
struct TextEncoding {
  Vocabulary vocabulary;
  int64_t length = 0;
  bool lowercase = false;
};

// Typed UTF-8 text as the model's raw input [T], encoded as training encoded its examples:
// lowercased where training lowercased, cut to its first T characters, then padded_ids (the
// characters past T are not read, so they need not be known). ValueError for empty text and for
// a character the vocabulary lacks, naming it as typed, its position (from 1) and the characters
// the model knows; DataError for malformed UTF-8.
Tensor encode_typed_text(const TextEncoding& encoding, std::string_view utf8);

// The length of each example of a batch of padded ids [B, T]: its count of non-zero ids, [B]
// floats (padding is trailing and id 0 is nothing else). ShapeError for another rank.
Tensor sequence_lengths(const Tensor& ids);

class TextClassDataset : public Dataset {
 public:
  // `source` names the folder in messages. DataError for a single class, a class without
  // examples or too many distinct characters; ValueError for options out of range.
  TextClassDataset(const std::vector<TextClass>& classes, const TextClassOptions& options, const std::string& source);

  int64_t size() const override { return int64_t(rows_.size()); }
  Example get(int64_t index) const override;                              // [T], []
  Example get_batch(const std::vector<int64_t>& indices) const override;  // [B, T], [B]
  Tensor target_batch(const std::vector<int64_t>& indices) const override;
  std::vector<std::string> class_names() const override { return store_->class_names; }

  const Vocabulary& vocabulary() const { return store_->vocabulary; }
  bool lowercase() const { return store_->lowercase; }
  int64_t max_length() const { return store_->length; }
  int64_t label(int64_t index) const;
  // The example as read (lowercased where asked; before any cut to max_length).
  const std::string& text(int64_t index) const;

  // These examples of this dataset (checked), in this order, sharing its data.
  TextClassDataset subset(std::vector<int64_t> indices) const;
  // A seeded split of the examples: round(train_fraction * size()) for the first part and the
  // rest, each in this dataset's order (data::split_indices).
  std::pair<TextClassDataset, TextClassDataset> split(double train_fraction, uint64_t seed) const;

 private:
  struct Store {
    std::vector<std::string> class_names;
    Vocabulary vocabulary;
    bool lowercase = false;
    int64_t length = 0;
    std::vector<float> ids;  // [N, length]
    std::vector<int32_t> labels;
    std::vector<std::string> texts;
  };
  TextClassDataset() = default;
  void fill_targets(const std::vector<int64_t>& indices, float* out) const;

  std::shared_ptr<const Store> store_;
  std::vector<int64_t> rows_;  // this dataset's examples, as rows of the store
};

// The folder at `path` as a TextClassDataset (DataError when it cannot be read, see above).
TextClassDataset read_text_class_dataset(const std::string& path, const TextClassOptions& options);

}  // namespace plexus::data
