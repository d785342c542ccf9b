// plexus-cli behaves as a command-line tool is expected to: a usage error is one line on
// stderr and exit status 2; every command has its --help (stdout, exit 0); `export` needs only
// a run checkpoint, in an empty folder with the dataset gone; the bash completion and the man
// page the build writes (app/CMakeLists.txt, paths in PLEXUS_CLI_COMPLETION and PLEXUS_CLI_MAN)
// complete and describe every command of the table.
#include <algorithm>
#include <QtTest/QtTest>

#include <QRegularExpression>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/project.h"
#include "session/trained_model.h"
#include "support/cli_support.h"
#include "support/onnx_support.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/work_dir.h"

using namespace plexus;
namespace fs = std::filesystem;

namespace {

using Result = testing::CliResult;
using testing::at;
using testing::run_cli;

QString read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return QString::fromStdString(s.str());
}

// A file the build writes, named by the environment variable `variable`.
fs::path built_file(const char* variable) {
  const QString path = qEnvironmentVariable(variable);
  if (path.isEmpty()) qFatal("%s is not set: run the suite through ctest", variable);
  return path.toStdString();
}

// The commands `plexus-cli --help` lists: the words that open its lines indented by two.
QStringList listed_commands() {
  const Result help = run_cli({"--help"});
  if (help.code != 0) qFatal("plexus-cli --help failed: %s", qPrintable(help.err));
  QStringList names;
  const QString commands = help.out.section("Commands", 1);
  static const QRegularExpression line("^  ([a-z]+)( |$)", QRegularExpression::MultilineOption);
  for (auto it = line.globalMatch(commands); it.hasNext();) {
    const QString name = it.next().captured(1);
    if (!names.contains(name)) names << name;
  }
  return names;
}

// COMPREPLY of the completion script for the command line `words`, the last one being
// completed, in `dir`.
QStringList complete(const QStringList& words, const fs::path& dir) {
  QString array;
  for (const QString& w : words) array += " '" + w + "'";
  const std::string script = "source '" + built_file("PLEXUS_CLI_COMPLETION").string() + "'\n" +
                             "COMP_WORDS=(" + array.toStdString() + ")\nCOMP_CWORD=" +
                             std::to_string(words.size() - 1) + "\n_plexus_cli\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n";
  const fs::path file = dir / "complete.sh";
  std::ofstream(file) << script;
  QProcess p;
  p.setWorkingDirectory(at(dir));
  p.start("bash", {"--noprofile", "--norc", at(file)});
  if (!p.waitForFinished(60000) || p.exitCode() != 0)
    qFatal("bash failed: %s", p.readAllStandardError().constData());
  return QString::fromUtf8(p.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
}

// A project small enough to train in a moment: three classes of points in a CSV file, one
// Linear layer.
void write_points_project(const fs::path& dir) {
  std::ofstream csv(dir / "points.csv");
  csv << "a,b,c,kind\n";
  const char* kinds[] = {"red", "green", "blue"};
  for (int i = 0; i < 60; ++i)
    csv << (i % 3) * 2 + (i % 7) * 0.1 << ',' << (i % 5) * 0.2 << ',' << -(i % 3) * 2 + (i % 4) * 0.1 << ','
        << kinds[i % 3] << '\n';
  std::ofstream(dir / "points.plexus") << R"({
  "format": 1,
  "nodes": [
    {"id": "in", "type": "Input", "name": "in", "params": {}, "position": [0, 0]},
    {"id": "fc", "type": "Linear", "name": "fc", "params": {"out_features": 3}, "position": [200, 0]},
    {"id": "loss", "type": "CrossEntropy", "name": "loss", "params": {}, "position": [400, 0]}
  ],
  "edges": [
    {"from": ["in", "x"], "to": ["fc", "input"]},
    {"from": ["fc", "output"], "to": ["loss", "input"]},
    {"from": ["in", "y"], "to": ["loss", "target"]}
  ],
  "dataset": {"kind": "csv", "path": "points.csv", "target": "kind", "task": "classification"},
  "training": {"epochs": 2, "batch_size": 8}
})";
}

}  // namespace

class TestCliConventions : public QObject {
  Q_OBJECT

  testing::WorkDir work_;

 private slots:
  void initTestCase() { QVERIFY(work_.isValid()); }

  void usageErrorIsOneLine_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("line");
    QTest::newRow("unknown option") << QStringList{"train", "--bogus", "1"}
                                    << "plexus-cli: unknown option --bogus; see plexus-cli train --help\n";
    QTest::newRow("unknown command") << QStringList{"frobnicate"}
                                     << "plexus-cli: unknown command 'frobnicate'; see plexus-cli --help\n";
    QTest::newRow("no command") << QStringList{} << "plexus-cli: no command given; see plexus-cli --help\n";
    QTest::newRow("missing required option")
        << QStringList{"export", "--checkpoint", "c.safetensors"}
        << "plexus-cli: export needs --onnx FILE, --pytorch FILE or --cpp FILE; see plexus-cli export --help\n";
    QTest::newRow("missing FILE") << QStringList{"check"}
                                  << "plexus-cli: check needs a project FILE; see plexus-cli check --help\n";
    QTest::newRow("option without its value") << QStringList{"train", "--epochs"}
                                              << "plexus-cli: option --epochs needs a value; see plexus-cli train --help\n";
  }
  void usageErrorIsOneLine() {
    QFETCH(QStringList, args);
    QFETCH(QString, line);
    const Result r = run_cli(args);
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err, line);
    QCOMPARE(r.out, QString());
  }

  void everyCommandHasItsHelp() {
    const QStringList names = listed_commands();
    for (const char* name : {"check", "train", "eval", "predict", "export", "completion"})
      QVERIFY2(names.contains(name), qPrintable(names.join(' ')));
    for (const QString& name : names) {
      const Result r = run_cli({name, "--help"});
      QVERIFY2(r.code == 0, qPrintable(name + ": " + r.err));
      QVERIFY2(r.err.isEmpty(), qPrintable(name + ": " + r.err));
      QVERIFY2(r.out.startsWith(name), qPrintable(r.out));  // its synopsis
      // Besides the synopsis, text that says what the command does.
      QVERIFY2(r.out.section('\n', 1).simplified().size() > 60, qPrintable(name + ":\n" + r.out));
    }
    const Result all = run_cli({"--help"});
    QCOMPARE(all.code, 0);
    QVERIFY(all.out.startsWith("Usage: plexus-cli"));
  }

  void exportNeedsOnlyTheCheckpoint() {
    testing::TempDir empty, elsewhere;
    const fs::path checkpoint = empty.file("final.safetensors"), weights = elsewhere.file("w.safetensors");
    {
      testing::TempDir project;
      write_points_project(project.path());
      const Result trained = run_cli({"train", at(project.file("points.plexus")), "--run-dir",
                                      at(project.file("run")), "--quiet"});
      QVERIFY2(trained.code == 0, qPrintable(trained.err));
      fs::copy_file(project.file("run") / "final.safetensors", checkpoint);
      const Result init = run_cli({"init", "--project", at(project.file("points.plexus")), "--out", at(weights)});
      QVERIFY2(init.code == 0, qPrintable(init.err));
    }  // the project, its dataset and its run are gone
    QCOMPARE(std::distance(fs::directory_iterator(empty.path()), fs::directory_iterator()), 1);

    const Result r = run_cli({"export", "--checkpoint", "final.safetensors", "--onnx", "points.onnx"}, 60000,
                             at(empty.path()));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.startsWith("wrote points.onnx: ONNX opset 13"), qPrintable(r.out));
    QVERIFY(fs::file_size(empty.file("points.onnx")) > 0);

    // A weights file holds no project: the error says what to pass.
    const Result no_project = run_cli({"export", "--checkpoint", at(weights), "--onnx", "w.onnx"}, 60000,
                                      at(empty.path()));
    QCOMPARE(no_project.code, 1);
    QVERIFY2(no_project.err.contains(at(weights) + " holds no project: pass the project FILE it belongs to"),
             qPrintable(no_project.err));
    QVERIFY(!fs::exists(empty.file("w.onnx")));

    // The model ONNX Runtime runs is the one Plexus trained, normalisation included.
    if (const std::string why = testing::ort_unavailable(); !why.empty()) QSKIP(why.c_str());
    const std::optional<graph::Graph> g = session::project_in_checkpoint(checkpoint);
    QVERIFY(g);
    const session::TrainedModel model = session::load_trained_model(*g, checkpoint);
    QCOMPARE(model.class_names, (std::vector<std::string>{"blue", "green", "red"}));
    const Tensor x = testing::random_input({5, 3}, false);
    const std::vector<float> expected = model.forward(x).to_vector();
    const testing::OrtOutput got = testing::run_ort(empty.file("points.onnx"), x, empty.path());
    QCOMPARE(got.dims, (std::vector<int64_t>{5, 3}));
    for (size_t i = 0; i < expected.size(); ++i)
      QVERIFY2(std::abs(got.values[i] - expected[i]) < 1e-4,
               qPrintable(QString("logit %1: ONNX %2, Plexus %3").arg(i).arg(got.values[i]).arg(expected[i])));
  }

  void completionFollowsTheTable() {
    const fs::path script = built_file("PLEXUS_CLI_COMPLETION");
    QCOMPARE(read_text(script), run_cli({"completion", "bash"}).out);  // the build wrote what the command prints

    testing::TempDir dir;
    std::ofstream(dir.file("final.safetensors")) << "x";
    QCOMPARE(complete({"plexus-cli", "tr"}, dir.path()), QStringList{"train"});
    const QStringList all = complete({"plexus-cli", ""}, dir.path());
    for (const QString& name : listed_commands()) QVERIFY2(all.contains(name), qPrintable(name));
    const QStringList e = complete({"plexus-cli", "train", "--e"}, dir.path());
    QVERIFY2(e.contains("--epochs") && !e.contains("--checkpoint"), qPrintable(e.join(' ')));
    QCOMPARE(complete({"plexus-cli", "train", "--device", ""}, dir.path()), (QStringList{"cpu", "cuda"}));
    QCOMPARE(complete({"plexus-cli", "eval", "--device", "c"}, dir.path()), (QStringList{"cpu", "cuda"}));
    const QStringList optimizers = complete({"plexus-cli", "train", "--optimizer", ""}, dir.path());
    QVERIFY2(optimizers.contains("adam") && optimizers.contains("sgd"), qPrintable(optimizers.join(' ')));
    QCOMPARE(complete({"plexus-cli", "export", "--checkpoint", "fi"}, dir.path()), QStringList{"final.safetensors"});
    QCOMPARE(complete({"plexus-cli", "export", "fi"}, dir.path()), QStringList{"final.safetensors"});
    QCOMPARE(complete({"plexus-cli", "train", "--epochs", ""}, dir.path()), QStringList{});  // a number
    QCOMPARE(complete({"plexus-cli", "completion", ""}, dir.path()), QStringList{"bash"});
  }

  void manPageDescribesEveryCommand() {
    const QString page = read_text(built_file("PLEXUS_CLI_MAN"));
    QCOMPARE(page, run_cli({"--man"}).out);
    QVERIFY(page.startsWith(".TH PLEXUS\\-CLI 1 "));
    const QStringList lines = page.split('\n');
    for (const char* section : {".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS", ".SH \"EXIT STATUS\"",
                                ".SH \"SEE ALSO\""})
      QVERIFY2(lines.contains(section), section);
    for (const QString& name : listed_commands()) QVERIFY2(lines.contains(".SS " + name), qPrintable(name));
    // Escaped: a line opens with a request only where the page means one, no '-' is left bare
    // (roff reads it as a hyphen), and every backslash starts an escape roff knows.
    static const QRegularExpression request(R"(^\.(TH|SH|SS|nf|fi|PP|TP|I|BR) ?)");
    static const QRegularExpression bare_minus(R"((?<!\\)-)"), escape(R"(\\(?![-e&]|f[BIR]|\[u[0-9A-F]{4,5}\]))");
    // troff reads Latin-1: a character beyond ASCII (the help's "×") must be a \[uXXXX] escape.
    QVERIFY2(std::all_of(page.cbegin(), page.cend(), [](QChar c) { return c.unicode() < 0x80; }),
             "a character beyond ASCII in the man page");
    QVERIFY(page.contains("\\[u00D7]"));
    for (const QString& line : lines) {
      QVERIFY2(!line.startsWith('.') || request.match(line).hasMatch(), qPrintable(line));
      QVERIFY2(!line.startsWith('\''), qPrintable(line));
      QVERIFY2(!bare_minus.match(line).hasMatch(), qPrintable(line));
      QVERIFY2(!escape.match(line).hasMatch(), qPrintable(line));
    }
    QVERIFY(page.contains(
        "plexus\\-cli export [FILE] \\-\\-checkpoint CKPT (\\-\\-onnx OUT.onnx | \\-\\-pytorch OUT.py | \\-\\-cpp OUT.cpp)"));

    // Where man is installed, it reads the page without a warning.
    if (testing::find_executable("man").empty()) return;
    const testing::ProcessResult man = testing::run_process(
        "man", {"-l", "--warnings", built_file("PLEXUS_CLI_MAN").string()}, {{"MANWIDTH", "100"}, {"MANPAGER", "cat"}});
    QVERIFY2(man.ok(), man.err.c_str());
    QVERIFY2(man.err.empty(), man.err.c_str());
    QVERIFY2(man.out.find("EXIT STATUS") != std::string::npos && man.out.find("plexus-cli export") != std::string::npos,
             man.out.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCliConventions)
#include "test_cli_conventions.moc"
