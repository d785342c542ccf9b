#include "dashboard/training_progress.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>

#include <cmath>

namespace plexus::widgets {

TrainingProgress::TrainingProgress(QWidget* parent) : QWidget(parent) {
  epoch_bar_ = new QProgressBar(this);
  batch_bar_ = new QProgressBar(this);
  epoch_bar_->setObjectName(QStringLiteral("epochProgress"));
  batch_bar_->setObjectName(QStringLiteral("batchProgress"));
  for (QProgressBar* bar : {epoch_bar_, batch_bar_}) {
    bar->setRange(0, 1);
    bar->setValue(0);
    bar->setTextVisible(true);
  }
  speed_ = new QLabel(this);
  elapsed_ = new QLabel(this);
  eta_ = new QLabel(this);
  device_ = new QLabel(this);
  status_ = new QLabel(tr("Not started"), this);
  QFont bold = status_->font();
  bold.setBold(true);
  status_->setFont(bold);

  // Text that changes ten times a second must not change the labels' size: a new size
  // re-lays out and repaints the whole dashboard around them.
  const QFontMetrics metrics(font());
  // The speed's row takes the bars' width whatever its text (a narrow window clips its end).
  speed_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
  speed_->setMinimumWidth(metrics.horizontalAdvance(tr("%L1 samples/s").arg(99999999)));
  speed_->setObjectName(QStringLiteral("trainingSpeed"));
  elapsed_->setFixedWidth(metrics.horizontalAdvance(tr("elapsed %1").arg(duration(359999))));
  eta_->setFixedWidth(metrics.horizontalAdvance(tr("ETA %1").arg(duration(359999))));
  status_->setMinimumWidth(QFontMetrics(bold).horizontalAdvance(tr("Stopped after 999 epochs")));

  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(6, 4, 6, 4);
  // Rows, so the strip fits a narrow window: the bars, the times under them, then the speed.
  auto* figures = new QHBoxLayout;
  for (QLabel* label : {elapsed_, eta_, device_}) figures->addWidget(label);
  figures->addStretch();
  grid->addWidget(status_, 0, 0);
  grid->addWidget(epoch_bar_, 0, 1);
  grid->addWidget(batch_bar_, 0, 2);
  grid->addLayout(figures, 1, 1, 1, 2);
  grid->addWidget(speed_, 2, 1, 1, 2);
  grid->setColumnStretch(1, 1);
  grid->setColumnStretch(2, 1);
}

QString TrainingProgress::duration(double seconds) {
  const auto s = int64_t(std::llround(std::max(0.0, seconds)));
  if (s < 60) return tr("%1 s").arg(s);
  if (s < 3600) return tr("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
  return tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QLatin1Char('0'));
}

QString TrainingProgress::speed(double samples_per_second, double gflops, double peak_gflops,
                                const QString& peak_measured) {
  QString text = tr("%L1 samples/s").arg(samples_per_second, 0, 'f', 0);
  if (gflops <= 0) return text;
  text += tr(" · %L1 GFLOP/s").arg(gflops, 0, 'f', gflops < 100 ? 1 : 0);
  const double share = train::share_of_peak(gflops, peak_gflops);
  if (share <= 0) return text;
  const QString percent = QString::number(100 * share, 'f', train::percent_decimals(100 * share));
  // A run followed from its folder says its machine's peak, not when it was measured.
  if (peak_measured.isEmpty())
    return text + tr(" · %1 % of its machine's peak (%L2 GFLOP/s)").arg(percent).arg(peak_gflops, 0, 'f', 0);
  return text + tr(" · %1 % of this machine's peak (%L2 GFLOP/s, measured %3)")
                    .arg(percent)
                    .arg(peak_gflops, 0, 'f', 0)
                    .arg(peak_measured);
}

void TrainingProgress::setPeakDescription(const QString& text) {
  speed_->setToolTip(text.isEmpty() ? QString() : tr("The share of peak is of %1").arg(text));
}

void TrainingProgress::begin(int epochs, int64_t batches_per_epoch, const QString& device, const QString& peak_measured,
                             double elapsed) {
  peak_measured_ = peak_measured;
  elapsed_before_ = elapsed;
  epoch_bar_->setRange(0, epochs);
  epoch_bar_->setValue(0);
  epoch_bar_->setFormat(tr("Epoch %v of %m"));
  // QProgressBar counts in int; batches per epoch fit.
  batch_bar_->setRange(0, int(std::max<int64_t>(1, batches_per_epoch)));
  batch_bar_->setValue(0);
  batch_bar_->setFormat(tr("Batch %v of %m"));
  device_->setText(tr("on %1").arg(device));
  status_->setText(tr("Training"));
  speed_->clear();
  speed_->setToolTip({});
  eta_->clear();
  eta_seconds_ = -1;
  clock_.start();
  showTimes(-1);
}

void TrainingProgress::update(const train::BatchEnd& batch) {
  epoch_bar_->setValue(batch.epoch - 1);
  epoch_bar_->setFormat(tr("Epoch %1 of %2").arg(batch.epoch).arg(batch.epochs));
  batch_bar_->setMaximum(int(batch.batches));
  batch_bar_->setValue(int(batch.batch));
  if (batch.samples_per_second > 0)
    speed_->setText(speed(batch.samples_per_second, batch.gflops, batch.peak_gflops, peak_measured_));
  eta_seconds_ = batch.eta_seconds;
  showTimes(eta_seconds_);
}

void TrainingProgress::epochDone(const train::EpochEnd& epoch) {
  epoch_bar_->setValue(epoch.epoch);
  epoch_bar_->setFormat(tr("Epoch %1 of %2").arg(epoch.epoch).arg(epoch.epochs));
}

void TrainingProgress::finish(const QString& status, bool completed) {
  if (completed) {
    epoch_bar_->setValue(epoch_bar_->maximum());
    batch_bar_->setValue(batch_bar_->maximum());
  }
  status_->setText(status);
  eta_->clear();
  if (clock_.isValid()) elapsed_->setText(tr("elapsed %1").arg(duration(elapsed())));
}

void TrainingProgress::setStatus(const QString& status, bool showEta) {
  status_->setText(status);
  showTimes(showEta ? eta_seconds_ : -1);
}

double TrainingProgress::elapsed() const { return elapsed_before_ + clock_.elapsed() / 1000.0; }

QString TrainingProgress::statusText() const { return status_->text(); }

QString TrainingProgress::speedText() const { return speed_->text(); }

void TrainingProgress::showTimes(double eta_seconds) {
  elapsed_->setText(tr("elapsed %1").arg(duration(elapsed())));
  eta_->setText(eta_seconds >= 0 ? tr("ETA %1").arg(duration(eta_seconds)) : QString());
}

}  // namespace plexus::widgets
