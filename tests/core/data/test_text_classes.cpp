// Labelled texts (data/text_classes.h, dataset kind "text_classes"): the folder layouts and
// their union, lines and example files, the vocabulary with id 0 for padding, truncation at the
// end, lowercasing, sequence_lengths, every kind of bad input with its message, the seeded split;
// then the kind through a project: the form's settings, describe and open agreeing, and a run
// of Embedding -> GRU -> Mean -> Linear -> CrossEntropy that learns and whose checkpoint keeps
// the vocabulary beside the class names.
#include "support/check.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "data/sampling.h"
#include "data/text_classes.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "session/data_pipeline.h"
#include "session/run.h"
#include "session/run_folder.h"
#include "session/trained_model.h"
#include "support/suite_dir.h"
#include "support/test_support.h"
#include "train/trainer.h"
#include "util/error.h"

using namespace plexus;
using namespace plexus::data;
using plexus::testing::contains;
using plexus::testing::message_of;
namespace fs = std::filesystem;

namespace {

// A new, empty folder `name` in the suite's temporary folder.
fs::path temp_dir(const std::string& name) {
  const fs::path d = plexus::testing::suite_subdir(name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary);
  f << bytes;
  VERIFY(f.good());
}

std::u32string u32(const std::string& utf8) { return decode_utf8(utf8, "test"); }

std::vector<TextClass> two_classes() {
  return {{"a", {U"ab", U"b"}, "a.txt"}, {"b", {U"ca", U"abcab"}, "b.txt"}};
}

std::string read_error(const fs::path& dir, const TextClassOptions& o = {}) {
  return message_of<DataError>([&] { read_text_class_dataset(dir.string(), o); });
}

// Class "long" of many-letter words from a-e, class "short" of f-j, 2 to 7 characters: learnable
// from the characters alone.
void write_two_kinds(const fs::path& dir, int per_class) {
  Generator gen(5);
  for (const auto& [name, first] : {std::pair{"long", 'a'}, std::pair{"short", 'f'}}) {
    std::string lines;
    for (int i = 0; i < per_class; ++i) {
      const uint64_t n = 2 + uniform_index(gen, 6);
      for (uint64_t k = 0; k < n; ++k) lines += char(first + int(uniform_index(gen, 5)));
      lines += '\n';
    }
    write(dir / (std::string(name) + ".txt"), lines);
  }
}

// Ids [T] -> Embedding -> GRU -> the mean over time -> Linear -> CrossEntropy.
std::string classifier_project(const std::string& path, int64_t rows) {
  return R"({"format": 1, "nodes": [
    {"id": "in", "type": "Input", "params": {}},
    {"id": "emb", "type": "Embedding", "params": {"num_embeddings": )" + std::to_string(rows) +
         R"(, "embedding_dim": 8}},
    {"id": "gru", "type": "GRU", "params": {"hidden_size": 16}},
    {"id": "pool", "type": "Mean", "params": {"dim": [1]}},
    {"id": "fc", "type": "Linear", "params": {"out_features": 2}},
    {"id": "loss", "type": "CrossEntropy", "params": {}}],
  "edges": [
    {"from": ["in", "x"], "to": ["emb", "input"]}, {"from": ["emb", "output"], "to": ["gru", "input"]},
    {"from": ["gru", "output"], "to": ["pool", "input"]}, {"from": ["pool", "output"], "to": ["fc", "input"]},
    {"from": ["fc", "output"], "to": ["loss", "input"]}, {"from": ["in", "y"], "to": ["loss", "target"]}],
  "dataset": {"kind": "text_classes", "path": ")" + path + R"(", "lowercase": true},
  "training": {"optimizer": "adam", "lr": 0.02, "batch_size": 16, "epochs": 6, "validation_fraction": 0.2}})";
}

}  // namespace

// ---- reading --------------------------------------------------------------------------------

TEST(linesAreExamplesBlankOnesLeftOut) {
  COMPARE(examples_per_line("Anna\r\n\n  \t\nBo b\nZoë", "f.txt"), (std::vector<std::u32string>{U"Anna", U"Bo b", U"Zoë"}));
  COMPARE(examples_per_line("\xEF\xBB\xBFx\n", "f.txt"), (std::vector<std::u32string>{U"x"}));  // no BOM
  VERIFY(examples_per_line("", "f.txt").empty());
  COMPARE(example_of_file("two\nlines\r\n\n", "e.txt"), std::u32string(U"two\nlines"));
  COMPARE(message_of<DataError>([] { example_of_file("", "e.txt"); }),
          std::string("e.txt: the file holds no text (0 bytes); each file of a class folder is one example"));
  VERIFY_CONTAINS(message_of<DataError>([] { example_of_file(" \n\r\n", "e.txt"); }), "e.txt: the file holds no text;");
}

TEST(malformedUtf8NamesTheFileAndByteOffset) {
  const fs::path dir = temp_dir("utf8");
  write(dir / "a.txt", "ok\n");
  write(dir / "b.txt", "fine\nab\xFF\n");
  COMPARE(read_error(dir), (dir / "b.txt").string() + ": byte offset 7: not UTF-8 text (a byte that cannot start a character)");
  // Offsets count from the file's first byte, a byte-order mark included.
  write(dir / "b.txt", std::string("\xEF\xBB\xBFok\0", 6));
  COMPARE(read_error(dir), (dir / "b.txt").string() + ": byte offset 5: a NUL byte: this looks like a binary file, not UTF-8 text");
  fs::remove(dir / "b.txt");
  write(dir / "b" / "1.txt", "x\xC3");
  COMPARE(read_error(dir),
          (dir / "b" / "1.txt").string() + ": byte offset 1: not UTF-8 text (a character cut off by the end of the file)");
}

TEST(classFilesFoldersAndTheirUnion) {
  const fs::path dir = temp_dir("layouts");
  write(dir / "zeta.txt", "z1\nz2\n");
  write(dir / "alpha" / "2.txt", "a-two\n");
  write(dir / "alpha" / "1.TXT", "a-one");
  write(dir / "alpha" / "notes.md", "not an example");
  write(dir / "alpha.txt", "a-line\n");
  write(dir / "README.md", "left out");
  write(dir / ".hidden.txt", "left out");
  write(dir / ".git" / "x.txt", "left out");
  const std::vector<TextClass> classes = read_text_classes(dir.string());
  COMPARE(classes.size(), size_t(2));
  COMPARE(classes[0].name, std::string("alpha"));
  // The file's lines first, then the folder's files by name.
  COMPARE(classes[0].examples, (std::vector<std::u32string>{U"a-line", U"a-one", U"a-two"}));
  COMPARE(classes[0].source, (dir / "alpha.txt").string() + " and " + (dir / "alpha").string());
  COMPARE(classes[1].name, std::string("zeta"));
  COMPARE(classes[1].examples, (std::vector<std::u32string>{U"z1", U"z2"}));

  const TextClassDataset d = read_text_class_dataset(dir.string(), {});
  COMPARE(d.size(), int64_t(5));
  COMPARE(d.class_names(), (std::vector<std::string>{"alpha", "zeta"}));
  COMPARE(d.text(2), std::string("a-two"));
  COMPARE(d.label(2), int64_t(0));
  COMPARE(d.label(3), int64_t(1));
}

TEST(idsArePaddedWithZerosAfterTheExample) {
  const TextClassDataset d(two_classes(), {}, "dir");
  COMPARE(d.vocabulary().symbols(), (std::vector<std::string>{"a", "b", "c"}));
  COMPARE(d.max_length(), int64_t(5));  // the longest example
  const Example e = d.get(0);
  COMPARE(e.input.shape(), (Shape{5}));
  COMPARE(e.target.shape(), Shape{});
  COMPARE(e.input.to_vector(), (std::vector<float>{1, 2, 0, 0, 0}));  // "ab": ids 0 and 1, shifted past padding
  COMPARE(e.target.item(), 0.f);
  const Example b = d.get_batch({3, 1, 3});
  COMPARE(b.input.shape(), (Shape{3, 5}));
  COMPARE(b.input.to_vector(), (std::vector<float>{1, 2, 3, 1, 2, 2, 0, 0, 0, 0, 1, 2, 3, 1, 2}));
  COMPARE(b.target.to_vector(), (std::vector<float>{1, 0, 1}));
  COMPARE(d.target_batch({2, 0}).to_vector(), (std::vector<float>{1, 0}));
  VERIFY_THROWS(IndexError, d.get(4));
  VERIFY_THROWS(ValueError, d.get_batch({}));
  COMPARE(padded_ids(d.vocabulary(), U"cab", 4), (std::vector<float>{3, 1, 2, 0}));
  VERIFY_CONTAINS(message_of<ValueError>([&] { padded_ids(d.vocabulary(), U"abz", 4); }),
                  "character 2 of the text, 'z', is not in the model's vocabulary");
}

TEST(longExamplesAreCutAtTheirEnd) {
  TextClassOptions o;
  o.max_length = 3;
  const TextClassDataset d(two_classes(), o, "dir");
  COMPARE(d.get(3).input.to_vector(), (std::vector<float>{1, 2, 3}));  // "abcab" -> "abc"
  COMPARE(d.text(3), std::string("abcab"));                             // as read
  // Without max_length: the longest example, at most the cap.
  const std::u32string long_one(size_t(kTextClassesLengthCap + 40), U'x');
  const TextClassDataset capped({{"a", {long_one}, "a"}, {"b", {U"y"}, "b"}}, {}, "dir");
  COMPARE(capped.max_length(), kTextClassesLengthCap);
  COMPARE(sequence_lengths(capped.get_batch({0, 1}).input).to_vector(), (std::vector<float>{float(kTextClassesLengthCap), 1}));
}

TEST(sequenceLengthsCountTheNonZeroIds) {
  const TextClassDataset d(two_classes(), {}, "dir");
  const Tensor lengths = sequence_lengths(d.get_batch({0, 1, 2, 3}).input);
  COMPARE(lengths.shape(), (Shape{4}));
  COMPARE(lengths.to_vector(), (std::vector<float>{2, 1, 2, 5}));
  COMPARE(message_of<ShapeError>([&] { sequence_lengths(d.get(0).input); }),
          std::string("sequence_lengths: expected padded ids [B, T], got shape [5]"));
}

TEST(lowercasingMergesCapitals) {
  COMPARE(lowercase_text(U"ÀÉÞ×ZaQ1ß"), std::u32string(U"àéþ×zaq1ß"));
  TextClassOptions o;
  o.lowercase = true;
  const TextClassDataset d({{"a", {U"Ab"}, "a"}, {"b", {U"aB", U"ÉÉ"}, "b"}}, o, "dir");
  COMPARE(d.vocabulary().symbols(), (std::vector<std::string>{"a", "b", "é"}));
  COMPARE(d.text(2), std::string("éé"));
  VERIFY(d.lowercase());
}

// ---- bad input ------------------------------------------------------------------------------

TEST(typedTextIsEncodedAsTrainingEncoded) {
  TextClassOptions o;
  o.lowercase = true;
  o.max_length = 4;
  const TextClassDataset d({{"a", {U"Ab", U"é-"}, "a"}, {"b", {U"aBc", U"É"}, "b"}}, o, "dir");
  const TextEncoding e{d.vocabulary(), d.max_length(), d.lowercase()};  // "-", "a", "b", "c", "é"
  // The very ids training gives its examples.
  COMPARE(encode_typed_text(e, "aBc").to_vector(), d.get(2).input.to_vector());
  COMPARE(encode_typed_text(e, "É").to_vector(), d.get(3).input.to_vector());
  const Tensor x = encode_typed_text(e, "CAB");
  COMPARE(x.shape(), (Shape{4}));
  COMPARE(x.to_vector(), (std::vector<float>{4, 2, 3, 0}));  // lowercased, padded after
  // Cut to T: what lies past it is not read, so it need not be known.
  COMPARE(encode_typed_text(e, "abcabZ?").to_vector(), (std::vector<float>{2, 3, 4, 2}));
  // Without lowercasing a capital is a character of its own.
  COMPARE(message_of<ValueError>([&] { encode_typed_text({d.vocabulary(), 4, false}, "aB"); }),
          std::string("'B', character 2 of \"aB\", is not one of the 5 characters the model was trained on: '-', "
                      "'a'–'c', 'é'"));
  // Named as typed, invisible ones by their description.
  VERIFY_CONTAINS(message_of<ValueError>([&] { encode_typed_text(e, "ab Z"); }), "' ' (space), character 3 of \"ab Z\"");
  VERIFY_CONTAINS(message_of<ValueError>([&] { encode_typed_text(e, "Ü"); }), "'Ü', character 1 of");
  // A long vocabulary is listed in part: its first 40 entries.
  std::vector<std::string> spaced;
  for (char32_t c = U'Ā'; spaced.size() < 50; c += 2) spaced.push_back(encode_utf8(c));
  const std::string listed = message_of<ValueError>([&] { encode_typed_text({Vocabulary(spaced), 4, false}, "a"); });
  VERIFY2(listed.ends_with("'" + spaced[39] + "', …"), listed.c_str());
  VERIFY_CONTAINS(message_of<ValueError>([&] { encode_typed_text(e, ""); }), "no text to classify");
  VERIFY_CONTAINS(message_of<DataError>([&] { encode_typed_text(e, "a\xff"); }), "the typed text");
}

TEST(badFoldersSayWhatIsWrong) {
  const fs::path dir = temp_dir("bad");
  const std::string layout =
      "a labelled-text folder holds a <class>.txt file (one example a line) or a <class>/ folder of .txt files "
      "(one example a file) for each class";
  COMPARE(read_error(dir / "missing"), (dir / "missing").string() + ": no such folder; " + layout);
  write(dir / "file.txt", "x");
  COMPARE(read_error(dir / "file.txt"), (dir / "file.txt").string() + ": not a folder; " + layout);

  const fs::path none = temp_dir("none");
  write(none / "notes.md", "no classes here");
  COMPARE(read_error(none), none.string() + ": no classes found; " + layout);

  const fs::path one = temp_dir("one");
  write(one / "only.txt", "a\nb\n");
  COMPARE(read_error(one), one.string() + ": needs at least 2 classes, found 1: 'only'");

  const fs::path empty_file = temp_dir("empty_class_file");
  write(empty_file / "a.txt", "x\n");
  write(empty_file / "b.txt", "\n \n");
  COMPARE(read_error(empty_file), (empty_file / "b.txt").string() + ": class 'b' has no examples");

  const fs::path empty_folder = temp_dir("empty_class_folder");
  write(empty_folder / "a.txt", "x\n");
  write(empty_folder / "b" / "readme.md", "no .txt here");
  COMPARE(read_error(empty_folder), (empty_folder / "b").string() + ": class 'b' has no examples");

  const fs::path empty_example = temp_dir("empty_example");
  write(empty_example / "a.txt", "x\n");
  write(empty_example / "b" / "1.txt", "y");
  write(empty_example / "b" / "2.txt", "");
  COMPARE(read_error(empty_example),
          (empty_example / "b" / "2.txt").string() + ": the file holds no text (0 bytes); each file of a class folder is one example");

  const fs::path wide = temp_dir("wide");
  write(wide / "a.txt", "abcdef\n");
  write(wide / "b.txt", "abq\n");
  TextClassOptions o;
  o.max_vocab = 5;
  COMPARE(read_error(wide, o), wide.string() + ": 7 distinct characters, more than max_vocab 5 allows; the rarest: 'c' (1 time), "
                                               "'d' (1 time), 'e' (1 time), 'f' (1 time), 'q' (1 time). Raise max_vocab, or "
                                               "is this not the text it should be?");
  o.max_length = -1;
  VERIFY_THROWS(ValueError, TextClassDataset(two_classes(), o, "dir"));
}

// ---- splits ---------------------------------------------------------------------------------

TEST(splitsAreSeededAndKeepTheirType) {
  const TextClassDataset d(two_classes(), {}, "dir");
  const auto [a, b] = d.split(0.5, 7);
  COMPARE(a.size() + b.size(), d.size());
  const auto [a2, b2] = d.split(0.5, 7);
  std::set<std::string> seen;
  for (int64_t i = 0; i < a.size(); ++i) {
    COMPARE(a.text(i), a2.text(i));
    COMPARE(a.get(i).input.to_vector(), a2.get(i).input.to_vector());
    seen.insert(a.text(i));
  }
  for (int64_t i = 0; i < b.size(); ++i) seen.insert(b.text(i));
  COMPARE(seen.size(), size_t(4));  // every example in one part
  // A subset of a subset names rows of its own.
  const TextClassDataset last = b.subset({1});
  COMPARE(last.text(0), b.text(1));
  COMPARE(last.vocabulary(), d.vocabulary());
  COMPARE(last.class_names(), d.class_names());
  VERIFY_THROWS(IndexError, b.subset({2}));
}

// ---- as a project's dataset -----------------------------------------------------------------

TEST(theKindAndItsSettings) {
  const auto& kinds = graph::dataset_kinds();
  VERIFY(std::find(kinds.begin(), kinds.end(), "text_classes") != kinds.end());
  graph::DatasetBinding b{.kind = "text_classes", .path = "names"};
  for (const char* applies : {"max_length", "max_vocab", "lowercase"}) VERIFY(graph::dataset_value_applies(b, applies));
  for (const char* not_here : {"seq_len", "height", "augment.shift"}) VERIFY(!graph::dataset_value_applies(b, not_here));
  b.max_length = 12;
  b.lowercase = true;
  b.seq_len = 9;
  const graph::DatasetBinding text = graph::for_kind(b, "text");
  COMPARE(text.max_length, int64_t(0));  // back at its default
  VERIFY(!text.lowercase);
  COMPARE(text.seq_len, int64_t(9));
  graph::set_dataset_value(b, "max_length", graph::ParamValue(int64_t(40)));
  COMPARE(b.max_length, int64_t(40));
  b.max_length = 5000;
  VERIFY_CONTAINS(message_of<ValueError>([&] { graph::check_dataset_values(b); }), "dataset: max_length must be between 0 and 4096");
}

TEST(describedAsOpened) {
  const fs::path dir = temp_dir("described");
  write_two_kinds(dir, 30);
  graph::DatasetBinding b{.kind = "text_classes", .path = dir.string()};
  b.max_length = 6;
  const graph::DatasetInfo info = graph::describe_dataset(b);
  COMPARE(info.input_shape, (Shape{6}));
  COMPARE(info.label_shape, Shape{});
  COMPARE(info.classes, int64_t(2));
  COMPARE(info.examples, int64_t(60));

  const graph::DatasetSplits s = graph::open_dataset(b, 3, 0.25);
  COMPARE(s.info.input_shape, info.input_shape);
  COMPARE(s.info.classes, info.classes);
  COMPARE(s.info.examples, info.examples);
  COMPARE(s.test->size(), int64_t(12));        // 20 %
  COMPARE(s.validation->size(), int64_t(12));  // a quarter of the other 48
  COMPARE(s.train->size(), int64_t(36));
  COMPARE(s.train->class_names(), (std::vector<std::string>{"long", "short"}));
  for (const auto& split : {s.train, s.validation, s.test}) {
    VERIFY(dynamic_cast<const TextClassDataset*>(split.get()));
    COMPARE(split->get(0).input.shape(), (Shape{6}));
  }
  // The same seed the same splits; another seed others.
  const auto texts = [](const graph::DatasetSplits& splits) {
    const auto& t = dynamic_cast<const TextClassDataset&>(*splits.test);
    std::vector<std::string> out;
    for (int64_t i = 0; i < t.size(); ++i) out.push_back(t.text(i));
    return out;
  };
  COMPARE(texts(graph::open_dataset(b, 3, 0.25)), texts(s));
  VERIFY(texts(graph::open_dataset(b, 4, 0.25)) != texts(s));
  VERIFY(session::input_normalization(graph::Graph{}, b, *s.train, 3).empty());  // ids are not standardised
  COMPARE(session::input_vocabulary(*s.train), std::vector<std::string>({"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}));
  VERIFY(session::input_vocabulary(TensorDataset(zeros({2, 1}), zeros({2}))).empty());
}

TEST(aRunLearnsAndItsCheckpointKeepsTheVocabulary) {
  const fs::path dir = temp_dir("run");
  write_two_kinds(dir / "words", 80);
  const graph::Graph g = graph::parse_project(classifier_project("words", 11), "p.plexus");
  session::TrainingRun run = session::make_training_run(g, {.project_dir = dir});
  COMPARE(run.class_names, (std::vector<std::string>{"long", "short"}));
  COMPARE(run.vocabulary.size(), size_t(10));
  VERIFY(run.normalization.empty());
  VERIFY(run.test_loader);

  session::RunCheckpoints saves(dir / "run1", g, run);
  train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  t.set_test_loader(run.test_loader.get());
  const train::RunResult r = t.run();
  VERIFY2(r.status == train::RunStatus::Completed, r.message.c_str());
  VERIFY2(r.history.back().eval_accuracy > 0.9, std::to_string(r.history.back().eval_accuracy));
  VERIFY(r.test && r.test->eval_accuracy > 0.9);
  const fs::path final_file = saves.finish(r);

  // The checkpoint alone: the folder gone, the classes and the vocabulary come back apart.
  fs::remove_all(dir / "words");
  const session::TrainedModel m = session::load_trained_model(g, final_file, {dir});
  COMPARE(m.class_names, run.class_names);
  COMPARE(m.vocabulary, run.vocabulary);
  // Typed text, encoded as training encoded it, is classified by its characters.
  const Vocabulary vocabulary(m.vocabulary);
  const int64_t length = m.info.input_shape.at(0);
  std::vector<float> ids = padded_ids(vocabulary, lowercase_text(u32("ABBA")), length);
  const std::vector<float> shorts = padded_ids(vocabulary, u32("fghij"), length);
  ids.insert(ids.end(), shorts.begin(), shorts.end());
  const std::vector<float> logits = m.forward(from_vector(ids, {2, length})).to_vector();
  VERIFY(logits[0] > logits[1]);  // "abba": long
  VERIFY(logits[3] > logits[2]);  // "fghij": short
  // The same through the model's own encoding (its vocabulary, length and the project's lowercase).
  const std::optional<TextEncoding> encoding = session::text_encoding(m);
  VERIFY(encoding && encoding->lowercase);
  COMPARE(encoding->length, length);
  COMPARE(encoding->vocabulary, vocabulary);
  COMPARE(encode_typed_text(*encoding, "ABBA").to_vector(), std::vector<float>(ids.begin(), ids.begin() + length));
  session::TrainedModel images;
  images.project.dataset.kind = "mnist";
  VERIFY(!session::text_encoding(images));
}
