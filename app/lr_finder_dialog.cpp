#include "lr_finder_dialog.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "common/qt_text.h"
#include "dashboard/lr_finder_plot.h"
#include "editor/model/graph_document.h"
#include "lr_finder_job.h"

namespace plexus::app {
using widgets::qstr;

namespace {

// A learning rate typed as text ("1e-7"): spin boxes cannot span eight decades.
std::optional<double> rate_of(const QLineEdit* field) {
  bool ok = false;
  const double v = field->text().trimmed().toDouble(&ok);
  return ok && v > 0 ? std::optional<double>(v) : std::nullopt;
}

}  // namespace

LrFinderDialog::LrFinderDialog(widgets::GraphDocument* document, const QString& project_dir, const QString& weights,
                               QWidget* parent)
    : QDialog(parent), document_(document), project_dir_(project_dir), weights_(weights), job_(new LrFinderJob(this)) {
  setWindowTitle(tr("Find Learning Rate"));
  const session::LrFinderOptions defaults;
  start_ = new QLineEdit(QString::number(defaults.start_lr), this);
  end_ = new QLineEdit(QString::number(defaults.end_lr), this);
  steps_ = new QSpinBox(this);
  steps_->setRange(int(session::kMinSteps), 10000);
  steps_->setValue(int(defaults.steps));
  steps_->setToolTip(tr("One step per batch, at most one pass of the training split"));
  auto* range = new QHBoxLayout;
  range->addWidget(new QLabel(tr("From"), this));
  range->addWidget(start_);
  range->addWidget(new QLabel(tr("to"), this));
  range->addWidget(end_);
  range->addWidget(new QLabel(tr("in"), this));
  range->addWidget(steps_);
  range->addWidget(new QLabel(tr("steps"), this));
  range->addStretch(1);

  plot_ = new widgets::LrFinderPlot(this);
  plot_->setMinimumSize(520, 320);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, int(defaults.steps));
  progress_->setValue(0);
  status_ = new QLabel(weights.isEmpty() ? tr("Trains a fresh copy of the model while the learning rate grows step by "
                                               "step; the project's model and runs are left as they are.")
                                          : tr("Trains a copy of the model, from the weights in %1, while the learning "
                                               "rate grows step by step; the weights file, the model and runs are left "
                                               "as they are.")
                                                .arg(QFileInfo(weights).fileName()),
                       this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* buttons = new QDialogButtonBox(this);
  find_ = buttons->addButton(tr("Find"), QDialogButtonBox::ActionRole);
  cancel_ = buttons->addButton(tr("Cancel"), QDialogButtonBox::ActionRole);
  use_ = buttons->addButton(tr("Use This Rate"), QDialogButtonBox::ApplyRole);
  QPushButton* close = buttons->addButton(QDialogButtonBox::Close);
  use_->setEnabled(false);
  find_->setDefault(true);
  connect(find_, &QPushButton::clicked, this, &LrFinderDialog::find);
  connect(cancel_, &QPushButton::clicked, this, &LrFinderDialog::cancel);
  connect(use_, &QPushButton::clicked, this, &LrFinderDialog::useRate);
  connect(close, &QPushButton::clicked, this, &QDialog::reject);

  connect(job_, &LrFinderJob::pointAdded, this, [this](const session::LrPoint& p, qint64 step, qint64 steps) {
    plot_->addPoint(p);
    progress_->setRange(0, int(steps));
    progress_->setValue(int(step));
  });
  connect(job_, &LrFinderJob::finished, this, [this](const session::LrFinderResult& r) {
    if (r.cancelled) return ended(tr("Cancelled after %1 steps.").arg(r.points.size()));
    progress_->setValue(progress_->maximum());  // a diverged ramp is done too
    const QString how = r.diverged ? tr("The loss diverged at lr %1 after %2 of %3 steps.")
                                         .arg(r.points.back().lr, 0, 'g', 3)
                                         .arg(r.points.size())
                                         .arg(r.planned_steps)
                                   : tr("%1 steps.").arg(r.points.size());
    if (!r.suggestion.lr) return ended(how + QLatin1Char(' ') + tr("No suggestion: %1.").arg(qstr(r.suggestion.note)));
    suggestion_ = r.suggestion.lr;
    plot_->setSuggestion(r.suggestion.index);
    ended(how + QLatin1Char(' ') +
          tr("Suggested lr %1, where the smoothed loss falls fastest (the project's is %2).")
              .arg(*suggestion_, 0, 'g', 3)
              .arg(document_->graph().training.lr, 0, 'g', 3));
  });
  connect(job_, &LrFinderJob::failed, this, [this](const QString& error) { ended(tr("Failed: %1").arg(error)); });

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(range);
  layout->addWidget(plot_, 1);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(buttons);
  setRunning(false);
  resize(720, 520);
}

bool LrFinderDialog::isRunning() const { return job_->isRunning(); }

void LrFinderDialog::find() {
  if (isRunning()) return;
  session::LrFinderOptions o;
  const std::optional<double> start = rate_of(start_), end = rate_of(end_);
  if (!start || !end || *end <= *start) {
    status_->setText(tr("The range needs two learning rates > 0, the second larger (e.g. 1e-7 to 10)."));
    return;
  }
  o.start_lr = *start;
  o.end_lr = *end;
  o.steps = steps_->value();
  o.init_from = weights_.toStdString();
  suggestion_.reset();
  plot_->clear();
  progress_->setRange(0, int(o.steps));
  progress_->setValue(0);
  status_->setText(tr("Finding…"));
  job_->start(document_->graph(), project_dir_, o);
  setRunning(true);
}

void LrFinderDialog::cancel() {
  job_->cancel();
  status_->setText(tr("Cancelling…"));
}

void LrFinderDialog::useRate() {
  if (!suggestion_ || isRunning()) return;
  graph::TrainingSettings t = document_->graph().training;
  t.lr = QString::number(*suggestion_, 'g', 3).toDouble();  // as shown: the curve is not finer than that
  document_->setTraining(t);                                // one undo step
  status_->setText(tr("The project's lr is now %1 (Edit ▸ Undo restores it).").arg(t.lr));
}

void LrFinderDialog::ended(const QString& message) {
  status_->setText(message);
  setRunning(false);
}

void LrFinderDialog::setRunning(bool running) {
  find_->setEnabled(!running);
  cancel_->setEnabled(running);
  use_->setEnabled(!running && suggestion_.has_value());
  for (QWidget* w : std::initializer_list<QWidget*>{start_, end_, steps_}) w->setEnabled(!running);
}

}  // namespace plexus::app
