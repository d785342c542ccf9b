#include "dashboard/run_comparison.h"

#include <QDateTime>
#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "common/panel_style.h"
#include "common/qt_text.h"
#include "common/theme.h"
#include "dashboard/training_plots.h"
#include "editor/graph_diff_canvas.h"

namespace plexus::widgets {
namespace {

// "2025-06-01 14:03", from the run log's ISO 8601 start; "" when it has none.
QString startedText(const session::RunRecord& r) {
  const QDateTime t = QDateTime::fromString(qstr(r.header.started), Qt::ISODateWithMs);
  return t.isValid() ? t.toString(QStringLiteral("yyyy-MM-dd HH:mm")) : QString();
}

// Its curves in the plots, as the dashboard shows a past run.
void plotRun(TrainingPlots* plots, const QString& name, const session::RunRecord& r) {
  const int id = plots->beginRun(name, QString());
  plots->addBatches(id, r.batches);
  for (const train::EpochEnd& e : r.epochs) plots->addEpoch(id, e);
  plots->finishRun(id, qstr(session::status_text(r)));
  plots->setRunOrigin(id, {qstr(r.folder.string()), {}, true, false, {}});
}

}  // namespace

RunComparison::RunComparison(QWidget* parent) : QWidget(parent) {
  plots_ = new TrainingPlots(this);
  plots_->setObjectName(QStringLiteral("comparisonPlots"));
  canvas_ = new GraphDiffCanvas(this);
  settings_ = new QTableWidget(0, 3, this);
  settings_->setObjectName(QStringLiteral("settingsDiff"));
  settings_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  settings_->setSelectionBehavior(QAbstractItemView::SelectRows);
  settings_->setAlternatingRowColors(true);
  settings_->verticalHeader()->hide();
  settings_->horizontalHeader()->setStretchLastSection(true);
  settings_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  title_ = new QLabel(this);
  title_->setObjectName(QStringLiteral("comparisonTitle"));
  title_->setTextFormat(Qt::RichText);
  title_->setWordWrap(true);  // long run names wrap rather than widen the window
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("diffSummary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont bold = summary_->font();
  bold.setBold(true);
  summary_->setFont(bold);
  same_settings_ = new QLabel(tr("The dataset and training settings are the same."), this);
  same_settings_->hide();
  auto* close = new QPushButton(tr("Close Comparison"), this);
  close->setObjectName(QStringLiteral("closeComparison"));
  connect(close, &QPushButton::clicked, this, &RunComparison::closeRequested);

  auto* header = new QHBoxLayout;
  header->addWidget(title_, 1);
  header->addWidget(close);

  auto* graphs = new QWidget(this);
  auto* graphs_layout = new QVBoxLayout(graphs);
  graphs_layout->setContentsMargins(0, 0, 0, 0);
  graphs_layout->setSpacing(2);
  graphs_layout->addWidget(sectionLabel(tr("Graph: run B against run A"), graphs));
  graphs_layout->addWidget(summary_);
  graphs_layout->addWidget(canvas_, 1);
  auto* settings = new QWidget(this);
  auto* settings_layout = new QVBoxLayout(settings);
  settings_layout->setContentsMargins(0, 0, 0, 0);
  settings_layout->setSpacing(2);
  settings_layout->addWidget(sectionLabel(tr("Settings that differ"), settings));
  settings_layout->addWidget(same_settings_);
  settings_layout->addWidget(settings_, 1);
  auto* right = new QSplitter(Qt::Vertical, this);
  right->addWidget(graphs);
  right->addWidget(settings);
  right->setSizes({5000, 2000});
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(plots_);
  split->addWidget(right);
  // The graphs, laid out wide, need the room more than the curves.
  split->setSizes({4000, 7000});
  // As on the dashboard: the parts' own minimums add up to more than a laptop screen.
  split->setMinimumSize(320, 240);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(header);
  layout->addWidget(split, 1);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &RunComparison::showTitle);  // the swatches
}

void RunComparison::compare(const ComparedRun& a, const ComparedRun& b) {
  side_a_ = tr("A: %1").arg(a.name);
  side_b_ = tr("B: %1").arg(b.name);
  started_a_ = startedText(a.record);
  started_b_ = startedText(b.record);
  plots_->clear();
  plotRun(plots_, side_a_, a.record);
  plotRun(plots_, side_b_, b.record);
  plots_->fit();
  title_->setToolTip(QStringLiteral("%1: %2\n%3: %4")
                         .arg(side_a_, QDir::toNativeSeparators(qstr(a.record.folder.string())), side_b_,
                              QDir::toNativeSeparators(qstr(b.record.folder.string()))));
  showTitle();

  diff_ = graph::diff(a.graph, b.graph);
  summary_->setText(qstr(graph::summary(diff_)));
  canvas_->showDiff(a.graph, b.graph, diff_);
  showSettings();
}

QString RunComparison::titleText() const { return title_->text(); }
QString RunComparison::summaryText() const { return summary_->text(); }

void RunComparison::showTitle() {
  const Theme& theme = ThemeManager::instance().theme();
  const std::vector<int> ids = plots_->runIds();
  if (ids.size() != 2) return;
  const auto side = [&](int id, const QString& name, const QString& started) {
    QString text = QStringLiteral("<span style='color:%1'>■</span> <b>%2</b>")
                       .arg(plots_->runInfo(id).colour.name(), name.toHtmlEscaped());
    if (!started.isEmpty())
      text += QStringLiteral(" <span style='color:%1'>%2</span>").arg(theme.mutedText.name(), started.toHtmlEscaped());
    return text;
  };
  title_->setText(tr("Comparing %1 &nbsp;with&nbsp; %2")
                      .arg(side(ids[0], side_a_, started_a_), side(ids[1], side_b_, started_b_)));
}

void RunComparison::showSettings() {
  settings_->setHorizontalHeaderLabels({tr("Setting"), side_a_, side_b_});
  settings_->setRowCount(int(diff_.settings.size()));
  int row = 0;
  for (const graph::ParamChange& s : diff_.settings) {
    settings_->setItem(row, 0, new QTableWidgetItem(qstr(s.name)));
    settings_->setItem(row, 1, new QTableWidgetItem(qstr(s.before)));
    settings_->setItem(row, 2, new QTableWidgetItem(qstr(s.after)));
    ++row;
  }
  settings_->resizeColumnsToContents();
  settings_->setVisible(!diff_.settings.empty());
  same_settings_->setVisible(diff_.settings.empty());
}

}  // namespace plexus::widgets
