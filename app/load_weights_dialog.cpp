#include "load_weights_dialog.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <exception>

#include "common/qt_text.h"
#include "session/weights_import.h"

namespace plexus::app {
using widgets::qstr;

LoadWeightsDialog::LoadWeightsDialog(const graph::Graph& project, const QString& project_dir, const QString& weights,
                                     QWidget* parent)
    : QDialog(parent),
      import_(std::make_unique<session::ProjectImport>(
          session::plan_import(project, project_dir.toStdString(), weights.toStdString(), project.training.seed))),
      weights_(weights) {
  setWindowTitle(tr("Load Weights — %1").arg(QFileInfo(weights).fileName()));
  const session::WeightsImportPlan& plan = import_->plan;
  using session::ImportStatus;
  const auto n = [&](ImportStatus s) { return int(plan.count(s)); };
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  const int optional =
      int(std::count_if(plan.rows.begin(), plan.rows.end(), [](const session::ImportRow& r) { return r.optional; }));
  QString text = tr("%1 matched, %2 shape-mismatched, %3 left out (in the file, unused), %4 missing (not in the file)")
                     .arg(n(ImportStatus::Matched))
                     .arg(n(ImportStatus::ShapeMismatch))
                     .arg(n(ImportStatus::LeftOut))
                     .arg(n(ImportStatus::Missing));
  if (optional > 0) text += tr(", %1 of them batch counters, which stay as initialised").arg(optional);
  text += QLatin1Char('.');
  text +=
      QLatin1Char(' ') +
      (plan.complete() ? tr("Load takes every weight of the project from the file; the next training starts from them "
                            "and Try It uses them.")
                       : tr("Load takes the matched tensors; the project's other tensors keep their initialisation."));
  summary_->setText(text);

  table_ = new QTableWidget(int(plan.rows.size()), 7, this);
  table_->setHorizontalHeaderLabels({tr("Status"), tr("Matched by"), tr("File tensor"), tr("File shape"),
                                     tr("Project tensor"), tr("Project shape"), tr("Note")});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->setVisible(false);
  table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
  const QTableWidgetItem* first_problem = nullptr;
  for (int r = 0; r < int(plan.rows.size()); ++r) {
    const session::ImportRow& row = plan.rows[size_t(r)];
    const bool has_project = row.status != ImportStatus::LeftOut, has_file = row.status != ImportStatus::Missing;
    const QStringList cells{qstr(session::to_text(row.status)),
                            qstr(session::to_text(row.by)),
                            qstr(row.file_tensor),
                            has_file ? qstr(plexus::to_string(row.got)) : QString(),
                            qstr(row.project_tensor),
                            has_project ? qstr(plexus::to_string(row.expected)) : QString(),
                            qstr(row.note)};
    for (int c = 0; c < cells.size(); ++c) table_->setItem(r, c, new QTableWidgetItem(cells[c]));
    table_->item(r, 6)->setToolTip(cells[6]);  // the note column is cut to the dialog's width
    // What leaves a project tensor without the file's weights stands out, and is scrolled to.
    if (row.status == ImportStatus::ShapeMismatch || (row.status == ImportStatus::Missing && !row.optional)) {
      table_->item(r, 0)->setForeground(QColor(0xd0, 0x40, 0x40));
      if (!first_problem) first_problem = table_->item(r, 0);
    }
  }
  for (int c = 0; c < 6; ++c) table_->resizeColumnToContents(c);
  table_->horizontalHeader()->setStretchLastSection(true);
  if (first_problem) table_->scrollToItem(first_problem, QAbstractItemView::PositionAtCenter);

  buttons_ = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
  QPushButton* load = buttons_->addButton(tr("Load"), QDialogButtonBox::AcceptRole);
  load->setEnabled(matched() > 0);
  load->setDefault(true);
  connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(table_, 1);
  layout->addWidget(buttons_);
  resize(1200, 640);
}

LoadWeightsDialog::~LoadWeightsDialog() = default;

int LoadWeightsDialog::matched() const { return int(import_->plan.count(session::ImportStatus::Matched)); }

bool LoadWeightsDialog::complete() const { return import_->plan.complete(); }

QString LoadWeightsDialog::save(const QString& out) {
  try {
    session::save_imported(*import_, weights_.toStdString(), out.toStdString());
    return {};
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
}

}  // namespace plexus::app
