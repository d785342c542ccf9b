// Text datasets (data/text_dataset.h) and their vocabulary (data/vocabulary.h): UTF-8 decoding with the
// byte offset of what is wrong, windows and their shifted targets, the split by position, the
// stream order of stateful training (data::stream_batches, DataLoaderOptions::streams), every
// kind of bad file with its message; then kind "text" through a project: the dataset's
// description, a run (no standardisation, no test split, streams, the Trainer's carry_state
// hook) and a checkpoint that keeps the vocabulary.
#include "support/check.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/dataloader.h"
#include "data/sampling.h"
#include "data/text_dataset.h"
#include "data/vocabulary.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "nn/module.h"
#include "ops/ops.h"
#include "optim/sgd.h"
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

void write(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f << bytes;
  VERIFY(f.good());
}

std::vector<float> floats(std::initializer_list<float> v) { return v; }

// The ids of `text` as floats, as a batch row holds them.
std::vector<float> ids_of(const Vocabulary& v, const std::string& text) {
  std::vector<float> out;
  for (int64_t id : v.encode(text)) out.push_back(float(id));
  return out;
}

std::string text_error(const std::string& bytes, TextOptions o = {}) {
  return message_of<DataError>([&] { TextDataset(bytes, "t.txt", o); });
}

// Counts what the Trainer asks of a stateful model, and the first input of every batch it sees.
class Recorder final : public nn::Module {
 public:
  Recorder() { w_ = register_parameter("w", ones({1})); }
  Tensor forward(const Tensor& x) override {
    if (is_training()) {
      seen.push_back(x.contiguous().to_vector()[0]);
      calls.push_back('f');
    } else {
      calls.push_back('e');
    }
    return x * w_;
  }
  std::string type_name() const override { return "Recorder"; }
  std::vector<float> seen;
  std::string calls;  // 'c' carry on, 'r' reset, 'f' training forward, 'e' evaluation forward
  bool carrying = false;

 protected:
  void on_carry_state(bool on) override {
    carrying = on;
    calls.push_back('c');
  }
  void on_reset_state() override { calls.push_back('r'); }

 private:
  Tensor w_;
};

// A text project: ids [T] -> Embedding -> Flatten -> Linear(T) against the next ids with MSE
// (a loss that exists for [T] targets whatever cross-entropy learns later).
std::string text_project(const std::string& path, int64_t vocab, int64_t seq_len, bool carry) {
  const std::string n = std::to_string(seq_len);
  return R"({"format": 1, "nodes": [
    {"id": "in", "type": "Input", "params": {}},
    {"id": "emb", "type": "Embedding", "params": {"num_embeddings": )" + std::to_string(vocab) +
         R"(, "embedding_dim": 3}},
    {"id": "flat", "type": "Flatten", "params": {}},
    {"id": "fc", "type": "Linear", "params": {"out_features": )" + n + R"(}},
    {"id": "loss", "type": "MSE", "params": {}}],
  "edges": [
    {"from": ["in", "x"], "to": ["emb", "input"]}, {"from": ["emb", "output"], "to": ["flat", "input"]},
    {"from": ["flat", "output"], "to": ["fc", "input"]}, {"from": ["fc", "output"], "to": ["loss", "input"]},
    {"from": ["in", "y"], "to": ["loss", "target"]}],
  "dataset": {"kind": "text", "path": ")" + path + R"(", "seq_len": )" + n + R"(},
  "training": {"optimizer": "sgd", "lr": 0.01, "batch_size": 4, "epochs": 2, "validation_fraction": 0.25,
               "carry_state": )" + (carry ? "true" : "false") + "}}";
}

}  // namespace

// ---- vocabulary.cpp ---------------------------------------------------------------------

TEST(utf8DecodesEveryLength) {
  const std::string s = "a\n\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // a, newline, é, €, 😀
  COMPARE(decode_utf8(s, "s"), (std::u32string{U'a', U'\n', U'é', U'€', U'\U0001F600'}));
  std::string back;
  for (char32_t c : decode_utf8(s, "s")) back += encode_utf8(c);
  COMPARE(back, s);
  VERIFY_THROWS(ValueError, encode_utf8(0xD800));
}

TEST(malformedUtf8NamesTheByteOffset) {
  const auto error = [](const std::string& bytes) { return message_of<DataError>([&] { decode_utf8(bytes, "f.txt"); }); };
  COMPARE(error(std::string("ab\0c", 4)),
           std::string("f.txt: byte offset 2: a NUL byte: this looks like a binary file, not UTF-8 text"));
  COMPARE(error("abc\xFF"), std::string("f.txt: byte offset 3: not UTF-8 text (a byte that cannot start a character)"));
  COMPARE(error("a\x80"), std::string("f.txt: byte offset 1: not UTF-8 text (a byte that cannot start a character)"));
  COMPARE(error("ab\xC3"), std::string("f.txt: byte offset 2: not UTF-8 text (a character cut off by the end of the file)"));
  COMPARE(error("ab\xE2\x28\xA1"), std::string("f.txt: byte offset 3: not UTF-8 text (a missing continuation byte)"));
  COMPARE(error("x\xC0\xAF"), std::string("f.txt: byte offset 1: not UTF-8 text (an overlong encoding)"));
  COMPARE(error("xy\xED\xA0\x80"), std::string("f.txt: byte offset 2: not UTF-8 text (not a Unicode character)"));
  COMPARE(error("\xF4\x90\x80\x80"), std::string("f.txt: byte offset 0: not UTF-8 text (not a Unicode character)"));
}

TEST(vocabularyIsSortedAndRoundTrips) {
  const Vocabulary v = Vocabulary::of(decode_utf8("hé\nhe€", "s"));
  COMPARE(v.symbols(), (std::vector<std::string>{"\n", "e", "h", "\xC3\xA9", "\xE2\x82\xAC"}));
  COMPARE(v.encode(std::string("hé\n")), (std::vector<int64_t>{2, 3, 0}));
  COMPARE(v.decode({4, 0, 1}), std::string("€\ne"));
  COMPARE(*v.id(U'€'), int64_t(4));
  VERIFY(!v.id(U'z'));
  COMPARE(Vocabulary(v.symbols()), v);
  VERIFY_CONTAINS(message_of<ValueError>([&] { (void)v.encode(std::string("hez")); }), "'z'");
  VERIFY_THROWS(IndexError, v.decode({5}));
  VERIFY_THROWS(IndexError, v.decode({-1}));
  VERIFY_THROWS(ValueError, Vocabulary({"a", "a"}));
  VERIFY_THROWS(ValueError, Vocabulary({"ab"}));
  COMPARE(describe_symbol("\n"), std::string("'\\n'"));
  COMPARE(describe_symbol("a"), std::string("'a'"));
  COMPARE(describe_symbol("\xC2\xA0"), std::string("U+00A0"));
}

// ---- text.cpp -----------------------------------------------------------------------------

TEST(windowsAndTheirShiftedTargets) {
  const TextDataset d("hello world", "t.txt", {.seq_len = 4});
  COMPARE(d.size(), int64_t(2));  // (11 - 1) / 4: "hell"->"ello", "o wo"->" wor"; "rld" unused
  COMPARE(d.characters(), int64_t(11));
  COMPARE(d.class_names(), (std::vector<std::string>{" ", "d", "e", "h", "l", "o", "r", "w"}));
  const Example e = d.get(1);
  COMPARE(e.input.shape(), (Shape{4}));
  COMPARE(e.input.to_vector(), ids_of(d.vocabulary(), "o wo"));
  COMPARE(e.target.to_vector(), ids_of(d.vocabulary(), " wor"));
  const Example b = d.get_batch({1, 0, 1});
  COMPARE(b.input.shape(), (Shape{3, 4}));
  COMPARE(b.target.shape(), (Shape{3, 4}));
  const std::vector<float> targets = b.target.to_vector();
  COMPARE(std::vector<float>(targets.begin() + 4, targets.begin() + 8), ids_of(d.vocabulary(), "ello"));
  COMPARE(d.target_batch({1, 0, 1}).to_vector(), b.target.to_vector());
  COMPARE(d.window_text(0), (std::pair<std::string, std::string>{"hell", "ello"}));
  VERIFY_THROWS(IndexError, d.get(2));
  // Exactly seq_len + 1 characters: one window.
  COMPARE(TextDataset("abcde", "t.txt", {.seq_len = 4}).size(), int64_t(1));
}

TEST(multiByteCharactersAndNewlinesAreOneId) {
  const TextDataset d("Zoë\nÉmile\n", "names.txt", {.seq_len = 3});
  COMPARE(d.characters(), int64_t(10));
  COMPARE(d.vocabulary().size(), int64_t(9));  // \n Z e i l m o É ë
  COMPARE(d.class_names().front(), std::string("\n"));
  COMPARE(d.window_text(1), (std::pair<std::string, std::string>{"\nÉm", "Émi"}));
  // A byte-order mark is not a character of the text.
  const TextDataset bom("\xEF\xBB\xBFZoë\nÉmile\n", "names.txt", {.seq_len = 3});
  COMPARE(bom.class_names(), d.class_names());
  COMPARE(bom.get_batch({0, 1, 2}).input.to_vector(), d.get_batch({0, 1, 2}).input.to_vector());
}

TEST(splitByPositionKeepsWindowsInsideTheirPart) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += char('a' + i % 26);
  const TextDataset d(text, "t.txt", {.seq_len = 8});
  const auto [train, validation] = d.split(0.75);
  COMPARE(train.characters(), int64_t(75));
  COMPARE(validation.characters(), int64_t(25));
  COMPARE(train.size(), int64_t(9));       // (75 - 1) / 8
  COMPARE(validation.size(), int64_t(3));  // (25 - 1) / 8
  COMPARE(train.window_text(0).first, text.substr(0, 8));
  COMPARE(train.window_text(8).second, text.substr(65, 8));  // its last target ends at character 72 < 75
  COMPARE(validation.window_text(0).first, text.substr(75, 8));
  COMPARE(validation.window_text(2).second, text.substr(92, 8));
  COMPARE(validation.class_names(), d.class_names());  // the whole file's vocabulary
  COMPARE(d.split(1.0).second.size(), int64_t(0));
  VERIFY_THROWS(ValueError, d.split(1.5));
  VERIFY_THROWS(IndexError, d.part(10, 200));
}

TEST(badFilesSayWhatIsWrong) {
  COMPARE(text_error(""), std::string("t.txt: the file is empty; seq_len 64 needs at least 65 characters (one "
                                       "window and the character after it)"));
  COMPARE(text_error("short", {.seq_len = 8}),
           std::string("t.txt: the file holds 5 characters; seq_len 8 needs at least 9 characters (one window and "
                       "the character after it)"));
  // Characters, not bytes: 4 characters in 8 bytes are still too few for seq_len 4.
  VERIFY_CONTAINS(text_error("éééé", {.seq_len = 4}), "the file holds 4 characters");
  COMPARE(text_error(std::string("PK\x03\x04\0\0", 6)),
           std::string("t.txt: byte offset 4: a NUL byte: this looks like a binary file, not UTF-8 text"));
  COMPARE(text_error("caf\xE9 au lait"),  // Latin-1, not UTF-8: the byte after the 0xE9 is not a continuation
           std::string("t.txt: byte offset 4: not UTF-8 text (a missing continuation byte)"));
  std::string many = "aaaabbbccd\n";
  const std::string msg = text_error(many, {.seq_len = 2, .max_vocab = 4});
  COMPARE(msg, std::string("t.txt: 5 distinct characters, more than max_vocab 4 allows; the rarest: '\\n' (1 time), "
                            "'d' (1 time), 'c' (2 times), 'b' (3 times), 'a' (4 times). Raise max_vocab, or is this "
                            "not the text it should be?"));
  TextDataset("abcd\n", "t.txt", {.seq_len = 2, .max_vocab = 5});  // at the limit: fine
  const fs::path missing = plexus::testing::suite_subdir("bad") / "nope.txt";
  VERIFY_CONTAINS(message_of<DataError>([&] { read_text_dataset(missing.string(), {}); }),
                  missing.string() + ": cannot open");
}

TEST(readingIsDeterministic) {
  const fs::path f = plexus::testing::suite_subdir("det") / "t.txt";
  write(f, "the quick brown fox jumps over the lazy dog\n");
  const TextDataset a = read_text_dataset(f.string(), {.seq_len = 5}), b = read_text_dataset(f.string(), {.seq_len = 5});
  COMPARE(a.class_names(), b.class_names());
  std::vector<int64_t> all(size_t(a.size()));
  for (int64_t i = 0; i < a.size(); ++i) all[size_t(i)] = i;
  COMPARE(a.get_batch(all).input.to_vector(), b.get_batch(all).input.to_vector());
}

// ---- streams ------------------------------------------------------------------------------

TEST(streamsWalkParallelTextsForward) {
  // 10 windows, batches of 3: S = 3 steps, window 9 left over; row r walks r*3, r*3 + 1, r*3 + 2.
  COMPARE(stream_batches(10, 3),
           (std::vector<std::vector<int64_t>>{{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}));
  COMPARE(stream_batches(2, 5), (std::vector<std::vector<int64_t>>{{0, 1}}));  // fewer windows than rows
  VERIFY(stream_batches(0, 4).empty());
  VERIFY_THROWS(ValueError, stream_batches(4, 0));

  const TextDataset d("abcdefghijklmnopqrstuvwxyz", "t.txt", {.seq_len = 2});  // 12 windows
  DataLoader loader(d, {.batch_size = 4, .shuffle = true, .streams = true, .seed = 7});
  COMPARE(loader.size(), int64_t(3));
  COMPARE(loader.batch_indices(0), loader.batch_indices(5));  // no shuffle, whatever the epoch
  std::vector<std::string> rows(4);
  for (const Batch& b : loader) {
    COMPARE(b.inputs.shape(), (Shape{4, 2}));
    for (int64_t r = 0; r < 4; ++r) rows[size_t(r)] += d.window_text(b.indices[size_t(r)]).first;
  }
  // Each row reads one stretch of the text in order: what a carried state continues.
  COMPARE(rows, (std::vector<std::string>{"abcdef", "ghijkl", "mnopqr", "stuvwx"}));
}

TEST(trainerCarriesStateOnlyWithinAnEpoch) {
  // Inputs are the window index itself, so the model sees the order of the batches.
  std::vector<float> xs;
  for (int i = 0; i < 8; ++i) xs.push_back(float(i));
  const Tensor x = from_vector(xs, {8, 1});
  const TensorDataset data(x, x);
  DataLoader train(data, {.batch_size = 2, .streams = true, .prefetch = 0});
  DataLoader held(data, {.batch_size = 8, .prefetch = 0});
  Recorder model;
  optim::SGD sgd(model.parameters(), {.lr = 0.f});
  train::TrainerOptions o;
  o.epochs = 2;
  o.classification = false;
  o.loss = [](const Tensor& out, const Tensor& y) { return mse_loss(out, y); };
  o.carry_state = true;
  train::Trainer t(model, sgd, train, &held, o);
  COMPARE(int(t.run().status), int(train::RunStatus::Completed));
  COMPARE(model.calls, std::string("crffffcre" "crffffcre"));
  VERIFY(model.carrying);
  COMPARE(model.seen, floats({0, 1, 2, 3, 0, 1, 2, 3}));  // row 0 of each batch: stream 0 in order

  Recorder plain;
  optim::SGD sgd2(plain.parameters(), {.lr = 0.f});
  o.carry_state = false;
  train::Trainer u(plain, sgd2, train, &held, o);
  u.run();
  COMPARE(plain.calls, std::string("ffffeffffe"));  // no state asked for without the setting
}

// ---- through a project --------------------------------------------------------------------

TEST(describedAndOpenedAsAProject) {
  const fs::path dir = plexus::testing::suite_subdir("project");
  std::string text;
  for (int i = 0; i < 40; ++i) text += i % 5 == 4 ? "\n" : std::string(1, char('a' + i % 7));
  write(dir / "t.txt", text);
  graph::DatasetBinding b{.kind = "text", .path = (dir / "t.txt").string()};
  b.seq_len = 4;
  const graph::DatasetInfo info = graph::describe_dataset(b);
  COMPARE(info.input_shape, (Shape{4}));
  COMPARE(info.label_shape, (Shape{4}));
  COMPARE(info.classes, int64_t(8));  // a..g and '\n'
  COMPARE(info.examples, int64_t(9));
  const graph::DatasetSplits s = graph::open_dataset(b, 1, 0.25);
  VERIFY(!s.test);
  COMPARE(s.train->size(), int64_t(7));       // 30 characters
  COMPARE(s.validation->size(), int64_t(2));  // the last 10
  COMPARE(s.info.examples, int64_t(9));
  // The seed changes nothing: the split is by position.
  COMPARE(graph::open_dataset(b, 99, 0.25).train->get(0).input.to_vector(), s.train->get(0).input.to_vector());
  VERIFY(session::input_normalization(graph::Graph{}, b, *s.train, 1).empty());
  b.max_vocab = 3;
  VERIFY_CONTAINS(message_of<DataError>([&] { graph::describe_dataset(b); }), "8 distinct characters, more than max_vocab 3");
}

TEST(aRunTrainsStreamsAndItsCheckpointKeepsTheVocabulary) {
  const fs::path dir = plexus::testing::suite_subdir("run");
  std::string text;
  for (int i = 0; i < 200; ++i) text += i % 6 == 5 ? "\n" : (i % 3 ? "é" : "x");
  write(dir / "names.txt", text);
  const graph::Graph g = graph::parse_project(text_project("names.txt", 3, 4, true), "p.plexus");
  session::TrainingRun run = session::make_training_run(g, {.project_dir = dir});
  VERIFY(run.normalization.empty());
  VERIFY(!run.test_loader);
  VERIFY(run.train_loader->options().streams);
  VERIFY(run.trainer_options.carry_state);
  COMPARE(run.class_names, (std::vector<std::string>{"\n", "x", "é"}));
  COMPARE(run.train_loader->batch_indices(0).front(), (std::vector<int64_t>{0, 9, 18, 27}));  // 37 windows

  session::RunCheckpoints saves(dir / "run1", g, run);
  train::Trainer t(*run.compiled.model, *run.optimizer, *run.train_loader, run.eval_loader.get(), run.trainer_options);
  t.set_test_loader(run.test_loader.get());
  const train::RunResult r = t.run();
  VERIFY2(r.status == train::RunStatus::Completed, r.message.c_str());
  VERIFY(!r.test);
  const fs::path final_file = saves.finish(r);

  // The checkpoint alone: the text file gone, the vocabulary and "no standardisation" come back.
  fs::remove(dir / "names.txt");
  session::TrainedModel m = session::load_trained_model(g, final_file, {dir});
  COMPARE(m.class_names, run.class_names);
  VERIFY(m.normalization.empty());
  COMPARE(m.info.input_shape, (Shape{4}));
  const Tensor out = m.forward(from_vector({0, 1, 2, 1}, {1, 4}));
  COMPARE(out.shape(), (Shape{1, 4}));
  // No test split to evaluate on: said, not crashed.
  write(dir / "names.txt", text);
  VERIFY_CONTAINS(message_of<ValueError>([&] { session::evaluate_on_test(m, {dir}); }), "has no test split");

  // carry_state is for text alone.
  graph::Graph csv = g;
  csv.dataset = {.kind = "csv", .path = "names.txt", .target = "y", .task = "regression"};
  COMPARE(message_of<ValueError>([&] { session::make_training_run(csv, {.project_dir = dir}); }),
           std::string("training: carry_state needs a text dataset (consecutive windows of one text); this "
                       "project's dataset is 'csv'"));
}

