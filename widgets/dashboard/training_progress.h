#pragma once
// TrainingProgress: where a run is: epoch and batch progress bars, its speed (samples per
// second, the GFLOP/s its counted products need and their share of the machine's measured
// peak), elapsed time, the estimated time left and the device it runs on. Fed by the dashboard with the
// run's events; it only shows them.
#include <QElapsedTimer>
#include <QString>
#include <QWidget>

#include "train/events.h"

class QLabel;
class QProgressBar;

namespace plexus::widgets {

class TrainingProgress : public QWidget {
  Q_OBJECT

 public:
  explicit TrainingProgress(QWidget* parent = nullptr);

  // `peak_measured`: the day the device's peak (the events' peak_gflops) was measured, "" when
  // not known yet. `elapsed`: seconds the run has gone on already (one followed from its folder).
  void begin(int epochs, int64_t batches_per_epoch, const QString& device, const QString& peak_measured,
             double elapsed = 0);
  // What the share of peak is of (train::describe of the run's MachinePeak), the speed's
  // tooltip; begin() clears it.
  void setPeakDescription(const QString& text);
  void update(const train::BatchEnd& batch);
  void epochDone(const train::EpochEnd& epoch);
  // "Completed", "Stopped", "Failed: …"; a completed run shows both bars full.
  void finish(const QString& status, bool completed);
  // What the run is doing now, while it goes on: "Training", "No update for 3 min 05 s" (a
  // followed run whose log has gone quiet: its estimate of the time left is not shown then).
  void setStatus(const QString& status, bool showEta);

  QProgressBar* epochBar() const { return epoch_bar_; }
  QProgressBar* batchBar() const { return batch_bar_; }
  QString statusText() const;
  QString speedText() const;

  // "41,200 samples/s · 98.4 GFLOP/s · 43 % of this machine's peak (228 GFLOP/s, measured
  // 2026-11-25)": the figures that are known (0 = not; "" for a peak measured elsewhere, by a
  // run followed from its folder: "43 % of its machine's peak (228 GFLOP/s)").
  static QString speed(double samples_per_second, double gflops, double peak_gflops, const QString& peak_measured);

  // "42 s", "3 min 05 s", "1 h 02 min".
  static QString duration(double seconds);

 private:
  void showTimes(double eta_seconds);
  double elapsed() const;

  QProgressBar* epoch_bar_;
  QProgressBar* batch_bar_;
  QLabel* speed_;
  QLabel* elapsed_;
  QLabel* eta_;
  QLabel* device_;
  QLabel* status_;
  QElapsedTimer clock_;
  double elapsed_before_ = 0;  // seconds the run had gone on when begin() came
  double eta_seconds_ = -1;    // the last batch's estimate
  QString peak_measured_;
};

}  // namespace plexus::widgets
