// RunFollower on a metrics.jsonl this test writes itself, a piece at a time: whole lines give
// exactly their events, in order, with the signals a run of the TrainingController has; a line
// split across two writes waits for its end; the end line ends following (with the final
// checkpoint first); a log truncated, replaced or malformed stops it with why; a quiet log is
// reported as such; processes that end without an end line end the run as stopped or failed;
// a long log is caught up over several polls.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <string>
#include <vector>

#include "run_follower.h"
#include "train/event_json.h"
#include "training_controller.h"

using namespace plexus;
using plexus::app::RunFollower;
using plexus::app::RunInfo;

namespace {

// A header as RunLog writes it: 3 epochs, started 90 s before `now`.
std::string header_line(const QDateTime& now = QDateTime::currentDateTime()) {
  return R"({"event":"run","format":1,"started":")" + now.addSecs(-90).toString(Qt::ISODateWithMs).toStdString() +
         R"(","project":"/p/mlp.plexus","device":"cpu, 2 threads","classification":true,"first_epoch":1,)"
         R"("train_subset":0,"settings":{"epochs":3},"continued_from":null})"
         "\n";
}

std::string line(const train::Event& e) { return train::to_json(e, true).dump() + "\n"; }

train::BatchEnd batch(int epoch, int64_t index, double loss) {
  train::BatchEnd b;
  b.epoch = epoch;
  b.batch = index;
  b.batches = 2;
  b.loss = loss;
  b.eta_seconds = 12;
  b.lr = 0.1;
  return b;
}

train::EpochEnd epoch(int number) {
  train::EpochEnd e;
  e.epoch = number;
  e.train_loss = 1.0 / number;
  e.has_eval = true;
  e.eval_loss = 1.5 / number;
  e.eval_accuracy = 0.5;
  e.eval_top5 = 1;
  e.per_class_accuracy = {0.5, 0.5};
  e.classes = 2;
  e.confusion = {1, 1, 1, 1};
  return e;
}

// Everything the follower says, one entry per signal, in order.
struct Heard {
  QStringList said;
  std::vector<train::BatchEnd> batches;
  RunInfo info;
  explicit Heard(RunFollower& f) {
    QObject::connect(&f, &RunFollower::started, [this](const RunInfo& i) {
      info = i;
      said << QStringLiteral("started");
    });
    QObject::connect(&f, &RunFollower::batches, [this](const std::vector<train::BatchEnd>& b) {
      batches.insert(batches.end(), b.begin(), b.end());
      said << QStringLiteral("batches %1").arg(b.size());
    });
    QObject::connect(&f, &RunFollower::epochEnded,
                     [this](const train::EpochEnd& e) { said << QStringLiteral("epoch %1 of %2").arg(e.epoch).arg(e.epochs); });
    QObject::connect(&f, &RunFollower::tested, [this] { said << QStringLiteral("tested"); });
    QObject::connect(&f, &RunFollower::notice, [this](const QString& t) { said << QStringLiteral("notice ") + t; });
    QObject::connect(&f, &RunFollower::checkpointSaved, [this](const QString& path, const QString& kind) {
      said << QStringLiteral("checkpoint %1 %2").arg(kind, QFileInfo(path).fileName());
    });
    QObject::connect(&f, &RunFollower::finished, [this](const train::Finished& r) {
      said << QStringLiteral("finished%1 after %2").arg(r.cancelled ? QStringLiteral(" (stopped)") : QString()).arg(r.epochs_completed);
    });
    QObject::connect(&f, &RunFollower::failed, [this](const QString& m) { said << QStringLiteral("failed: ") + m; });
    QObject::connect(&f, &RunFollower::lost, [this](const QString& why) { said << QStringLiteral("lost: ") + why; });
  }
  QStringList take() { return std::exchange(said, {}); }
};

// A run folder whose log the test appends to.
struct Folder {
  QTemporaryDir dir;
  QString path() const { return dir.path(); }
  QString log() const { return dir.filePath(QStringLiteral("metrics.jsonl")); }
  void append(const std::string& text) const {
    QFile f(log());
    QVERIFY(f.open(QIODevice::Append));
    QCOMPARE(f.write(text.data(), qint64(text.size())), qint64(text.size()));
  }
  void put(const QString& name, const QByteArray& bytes) const {
    QFile f(dir.filePath(name));
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes);
  }
};

}  // namespace

class TestAppRunFollower : public QObject {
  Q_OBJECT

 private slots:
  void wholeLinesGiveTheirEventsInOrderAndTheEndEndsFollowing() {
    Folder run;
    RunFollower follower;
    Heard heard(follower);
    QSignalSpy state(&follower, &RunFollower::stateChanged);
    follower.follow(run.path());  // before the log exists: it waits for it
    QVERIFY(follower.isFollowing());
    QCOMPARE(state.size(), 1);
    QVERIFY(heard.take().isEmpty());

    const std::string header = header_line();
    run.append(header.substr(0, 40));  // the header, in two writes
    follower.poll();
    QVERIFY(heard.take().isEmpty());
    run.append(header.substr(40) + line(batch(1, 1, 0.9)));
    follower.poll();
    QCOMPARE(heard.take(), QStringList({"started", "batches 1"}));
    QCOMPARE(heard.info.epochs, 3);
    QCOMPARE(heard.info.device, QStringLiteral("cpu, 2 threads"));
    QVERIFY(heard.info.classification);
    QVERIFY(!heard.info.trainSplit);  // a followed run hands over no samples
    QVERIFY2(heard.info.elapsed >= 80 && heard.info.elapsed < 3600, qPrintable(QString::number(heard.info.elapsed)));
    QCOMPARE(heard.batches.back().epochs, 3);        // from the header
    QCOMPARE(heard.batches.back().eta_seconds, 12.0);

    // A line split across two writes comes once its newline has.
    const std::string second = line(batch(1, 2, 0.8));
    run.append(second.substr(0, second.size() / 2));
    follower.poll();
    QVERIFY(heard.take().isEmpty());
    run.append(second.substr(second.size() / 2) + line(epoch(1)) + line(train::Notice{"a notice"}) +
               line(batch(2, 1, 0.7)) + line(batch(2, 2, 0.6)));
    follower.poll();
    QCOMPARE(heard.take(), QStringList({"batches 1", "epoch 1 of 3", "notice a notice", "batches 2"}));
    QCOMPARE(heard.batches.size(), size_t(4));
    for (size_t i = 0; i < heard.batches.size(); ++i) QCOMPARE(heard.batches[i].loss, 0.9 - 0.1 * double(i));

    // A best checkpoint is said once, when it changes.
    run.put(QStringLiteral("best.safetensors"), "x");
    follower.poll();
    follower.poll();
    QCOMPARE(heard.take(), QStringList({"checkpoint best best.safetensors"}));

    run.put(QStringLiteral("final.safetensors"), "x");
    run.append(line(epoch(2)) + line(train::TestEnd{epoch(2)}) + line(train::Finished{false, 2, 4.5}));
    follower.poll();
    QCOMPARE(heard.take(),
             QStringList({"epoch 2 of 3", "tested", "checkpoint final final.safetensors", "finished after 2"}));
    QVERIFY(!follower.isFollowing());
    QCOMPARE(state.size(), 2);
    follower.poll();  // nothing more, whatever comes
    run.append(line(batch(3, 1, 0.5)));
    follower.poll();
    QVERIFY(heard.take().isEmpty());
  }

  void aFailedRunEndsWithItsMessage() {
    Folder run;
    RunFollower follower;
    Heard heard(follower);
    run.append(header_line() + line(train::Failed{"the loss became NaN"}));
    follower.follow(run.path());
    QCOMPARE(heard.take(), QStringList({"started", "failed: the loss became NaN"}));
    QVERIFY(!follower.isFollowing());
  }

  void aTruncatedReplacedOrMalformedLogStopsFollowingWithWhy() {
    {
      Folder run;
      RunFollower follower;
      Heard heard(follower);
      run.append(header_line() + line(batch(1, 1, 0.9)));
      follower.follow(run.path());
      QCOMPARE(heard.take(), QStringList({"started", "batches 1"}));
      run.put(QStringLiteral("metrics.jsonl"), QByteArray::fromStdString(header_line()));  // shorter
      follower.poll();
      QCOMPARE(heard.take(), QStringList({"lost: metrics.jsonl was truncated or replaced by another log: following stopped"}));
      QVERIFY(!follower.isFollowing());
    }
    {
      Folder run;
      RunFollower follower;
      Heard heard(follower);
      run.append(header_line() + line(batch(1, 1, 0.9)));
      follower.follow(run.path());
      heard.take();
      // Another run's log in its place, longer than what was read.
      run.put(QStringLiteral("metrics.jsonl"), QByteArray::fromStdString(header_line(QDateTime::currentDateTime().addDays(1)) +
                                                                        line(batch(1, 1, 0.9)) + line(batch(1, 2, 0.8))));
      follower.poll();
      QCOMPARE(heard.take(), QStringList({"lost: metrics.jsonl was truncated or replaced by another log: following stopped"}));
    }
    {
      Folder run;
      RunFollower follower;
      Heard heard(follower);
      run.append(header_line() + line(batch(1, 1, 0.9)) + "lunch at noon\n" + line(batch(1, 2, 0.8)));
      follower.follow(run.path());
      // The lines before the bad one come.
      QCOMPARE(heard.take(), QStringList({"started", "batches 1", "lost: " + run.log() + ":3: not a line of JSON"}));
      QVERIFY(!follower.isFollowing());
    }
  }

  void aQuietLogIsSaidToBeSoUntilLinesComeAgain() {
    Folder run;
    RunFollower follower;
    follower.setStaleAfter(300);
    QSignalSpy silent(&follower, &RunFollower::silent);
    run.append(header_line());
    follower.follow(run.path());
    QVERIFY(silent.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!silent.isEmpty(), 10000);  // the timer's polls find nothing new
    QVERIFY(silent.back().at(0).toDouble() >= 0.3);
    silent.clear();
    run.append(line(batch(1, 1, 0.9)));
    follower.poll();
    QVERIFY(!silent.isEmpty());
    QCOMPARE(silent.front().at(0).toDouble(), 0.0);  // lines again
  }

  void writersThatEndWithoutAnEndLineEndTheRun() {
    {
      Folder run;
      RunFollower follower;
      Heard heard(follower);
      run.append(header_line() + line(epoch(1)) + line(batch(2, 1, 0.5)));
      follower.follow(run.path());
      heard.take();
      run.append(line(epoch(2)));  // written just before they went
      follower.writerEnded({});    // asked to stop
      QCOMPARE(heard.take(), QStringList({"epoch 2 of 3", "finished (stopped) after 2"}));
      QVERIFY(!follower.isFollowing());
    }
    {
      Folder run;
      RunFollower follower;
      Heard heard(follower);
      follower.follow(run.path());
      follower.writerEnded(QStringLiteral("mpirun exited with status 1"));  // before writing anything
      QCOMPARE(heard.take(), QStringList({"failed: mpirun exited with status 1"}));
      QVERIFY(!follower.isFollowing());
    }
    {
      Folder run;
      RunFollower follower;
      Heard heard(follower);
      run.append(header_line() + line(train::Finished{false, 3, 1}));
      follower.follow(run.path());
      follower.writerEnded(QStringLiteral("too late"));  // the log said how it ended
      QCOMPARE(heard.take(), QStringList({"started", "finished after 3"}));
    }
  }

  void stopFollowingLeavesTheRunAlone() {
    Folder run;
    RunFollower follower;
    Heard heard(follower);
    run.append(header_line());
    follower.follow(run.path());
    follower.stop();
    QCOMPARE(heard.take(), QStringList({"started", "lost: Stopped following; the run goes on in " + run.path()}));
    QVERIFY(!follower.isFollowing());
  }

  // More than one poll reads: the rest comes over the next ones, each batch once, in order.
  void aLongLogIsCaughtUpOverSeveralPolls() {
    Folder run;
    std::string text = header_line();
    int64_t n = 0;
    while (text.size() < size_t(2 * RunFollower::kMaxRead + 1000)) {
      ++n;
      text += line(batch(1, n, double(n)));
    }
    text += line(train::Finished{false, 1, 1});
    run.append(text);
    RunFollower follower;
    Heard heard(follower);
    follower.follow(run.path());
    QVERIFY(follower.isFollowing());  // one poll read a part
    QVERIFY(!heard.batches.empty());
    QTRY_VERIFY_WITH_TIMEOUT(!follower.isFollowing(), 20000);
    QCOMPARE(int64_t(heard.batches.size()), n);
    for (int64_t i = 0; i < n; ++i) QCOMPARE(heard.batches[size_t(i)].batch, i + 1);
    QCOMPARE(heard.said.back(), QStringLiteral("finished after 1"));
  }
};

QTEST_MAIN(TestAppRunFollower)
#include "test_app_run_follower.moc"
