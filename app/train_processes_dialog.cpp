#include "train_processes_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>

namespace plexus::app {

namespace {

const QString kExtraKey = QStringLiteral("processes/mpirunArguments");

// An argument as a shell would need it: quoted when it has spaces or quotes.
QString shellWord(const QString& word) {
  if (!word.isEmpty() && !word.contains(QRegularExpression(QStringLiteral("[\\s'\"\\\\$`]")))) return word;
  return QLatin1Char('\'') + QString(word).replace(QLatin1Char('\''), QStringLiteral("'\\''")) + QLatin1Char('\'');
}

}  // namespace

TrainProcessesDialog::TrainProcessesDialog(const ProcessPlan& plan, QWidget* parent) : QDialog(parent), plan_(plan) {
  setObjectName(QStringLiteral("trainProcessesDialog"));
  setWindowTitle(tr("Train with N Processes"));
  processes_ = new QSpinBox(this);
  processes_->setObjectName(QStringLiteral("processes"));
  processes_->setRange(1, 64);
  processes_->setValue(2);
  threads_ = new QSpinBox(this);
  threads_->setObjectName(QStringLiteral("threads"));
  threads_->setRange(1, 1024);
  threads_->setValue(ProcessRun::defaultThreads(processes_->value()));
  threads_->setToolTip(tr("The threads each process trains with (plexus-cli --threads)"));
  extra_ = new QLineEdit(QSettings().value(kExtraKey).toString(), this);
  extra_->setObjectName(QStringLiteral("mpirunArguments"));
  extra_->setPlaceholderText(tr("e.g. --hostfile hosts"));
  extra_->setToolTip(tr("More arguments for mpirun, before the program; remembered"));
  command_ = new QPlainTextEdit(this);
  command_->setObjectName(QStringLiteral("command"));
  command_->setReadOnly(true);
  command_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  command_->setFixedHeight(5 * command_->fontMetrics().lineSpacing());
  auto* note = new QLabel(tr("Each process trains one share of every batch; the first writes the run folder, which "
                             "the dashboard follows live. Stop asks mpirun to stop the job."),
                          this);
  note->setWordWrap(true);
  buttons_ = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  buttons_->addButton(tr("Train"), QDialogButtonBox::AcceptRole)->setObjectName(QStringLiteral("trainButton"));
  connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);

  // The numbers keep their size; the arguments get the width.
  for (QSpinBox* box : {processes_, threads_}) box->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
  auto* threads_row = new QHBoxLayout;
  threads_row->addWidget(threads_);
  threads_row->addWidget(new QLabel(tr("(this machine has %1 cores)").arg(QThread::idealThreadCount()), this));
  threads_row->addStretch(1);
  auto* form = new QFormLayout;
  form->addRow(tr("&Processes:"), processes_);
  auto* threads_label = new QLabel(tr("&Threads per process:"), this);
  threads_label->setBuddy(threads_);
  form->addRow(threads_label, threads_row);
  form->addRow(tr("&mpirun arguments:"), extra_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(new QLabel(tr("Command:"), this));
  layout->addWidget(command_);
  layout->addWidget(note);
  layout->addWidget(buttons_);
  resize(640, sizeHint().height());

  // The processes share the cores: each one's threads follow their number.
  connect(processes_, &QSpinBox::valueChanged, this, [this](int n) { threads_->setValue(ProcessRun::defaultThreads(n)); });
  connect(processes_, &QSpinBox::valueChanged, this, &TrainProcessesDialog::showCommand);
  connect(threads_, &QSpinBox::valueChanged, this, &TrainProcessesDialog::showCommand);
  connect(extra_, &QLineEdit::textChanged, this, &TrainProcessesDialog::showCommand);
  showCommand();
}

ProcessPlan TrainProcessesDialog::plan() const {
  ProcessPlan p = plan_;
  p.processes = processes_->value();
  p.threads = threads_->value();
  p.extra = extra_->text().trimmed();
  return p;
}

QString TrainProcessesDialog::commandText() const { return command_->toPlainText(); }

void TrainProcessesDialog::showCommand() {
  QStringList words;
  for (const QString& word : ProcessRun::command(plan())) words << shellWord(QDir::toNativeSeparators(word));
  command_->setPlainText(words.join(QLatin1Char(' ')));
}

void TrainProcessesDialog::accept() {
  QSettings().setValue(kExtraKey, extra_->text().trimmed());
  QDialog::accept();
}

}  // namespace plexus::app
