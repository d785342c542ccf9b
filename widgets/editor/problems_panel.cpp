#include "editor/problems_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "common/icons.h"
#include "common/qt_text.h"
#include "common/theme.h"
#include "editor/model/graph_document.h"

namespace plexus::widgets {
namespace {

constexpr int kNodeRole = Qt::UserRole;  // the problem's node id on each row


// "Linear 'fc2' · input", "Graph" for a graph-wide problem.
QString whereText(const GraphDocument& document, const graph::Problem& p) {
  if (p.node.empty()) return QObject::tr("Graph");
  const graph::Node* node = document.node(qstr(p.node));
  const QString where = node ? qstr(node->label()) : qstr(p.node);
  return p.port.empty() ? where : where + QStringLiteral(" · ") + qstr(p.port);
}


}  // namespace

QString problemSummary(const std::vector<graph::Problem>& problems) {
  const auto errors = std::count_if(problems.begin(), problems.end(),
                                    [](const graph::Problem& p) { return p.severity == graph::Severity::Error; });
  const auto warnings = qsizetype(problems.size()) - errors;
  // Spelled out: "%n error(s)" reads as such without a translation loaded.
  QStringList parts;
  if (errors == 1) parts << QObject::tr("1 error");
  if (errors > 1) parts << QObject::tr("%1 errors").arg(errors);
  if (warnings == 1) parts << QObject::tr("1 warning");
  if (warnings > 1) parts << QObject::tr("%1 warnings").arg(warnings);
  return parts.isEmpty() ? QObject::tr("No problems") : parts.join(QStringLiteral(", "));
}

QIcon severityIcon(graph::Severity severity) {
  const Theme& theme = ThemeManager::instance().theme();
  // Severity reads better in its own colour than in the text colour.
  return severity == graph::Severity::Error ? icon(QStringLiteral("error"), theme.error)
                                            : icon(QStringLiteral("warning"), theme.warning);
}

ProblemsPanel::ProblemsPanel(GraphDocument* document, QWidget* parent)
    : QWidget(parent), document_(document), header_(new QLabel(this)), list_(new QTreeWidget(this)) {
  QFont bold = header_->font();
  bold.setBold(true);
  header_->setFont(bold);
  header_->setObjectName(QStringLiteral("problemsHeader"));

  list_->setColumnCount(2);
  list_->setHeaderLabels({tr("Problem"), tr("Where")});
  list_->setRootIsDecorated(false);
  list_->setUniformRowHeights(true);
  list_->setAllColumnsShowFocus(true);
  list_->setAlternatingRowColors(true);
  list_->header()->setStretchLastSection(false);
  list_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  list_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->setSpacing(4);
  layout->addWidget(header_);
  layout->addWidget(list_, 1);

  // A click selects and shows the node; where the style activates on a single click, that
  // click also arrives as activation, so it is taken from there alone.
  connect(list_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
    if (!style()->styleHint(QStyle::SH_ItemView_ActivateItemOnSingleClick, nullptr, list_)) activate(item);
  });
  connect(list_, &QTreeWidget::itemActivated, this, &ProblemsPanel::activate);
  connect(document_, &GraphDocument::validated, this, &ProblemsPanel::refresh);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &ProblemsPanel::refresh);
  refresh();
}

int ProblemsPanel::count() const { return list_->topLevelItemCount(); }

QString ProblemsPanel::headerText() const { return header_->text(); }

void ProblemsPanel::refresh() {
  std::vector<graph::Problem> problems = document_->validation().problems;
  std::stable_partition(problems.begin(), problems.end(),
                        [](const graph::Problem& p) { return p.severity == graph::Severity::Error; });
  header_->setText(problemSummary(problems));

  const QIcon error = severityIcon(graph::Severity::Error), warning = severityIcon(graph::Severity::Warning);
  list_->clear();
  for (const graph::Problem& p : problems) {
    auto* item = new QTreeWidgetItem(list_);
    const QString message = qstr(p.message);
    item->setIcon(0, p.severity == graph::Severity::Error ? error : warning);
    item->setText(0, message);
    item->setToolTip(0, message);  // long messages are elided in the column
    item->setText(1, whereText(*document_, p));
    item->setData(0, kNodeRole, qstr(p.node));
  }
}

void ProblemsPanel::activate(QTreeWidgetItem* item) {
  const QString id = item ? item->data(0, kNodeRole).toString() : QString();
  if (!id.isEmpty()) emit nodeActivated(id);
}

}  // namespace plexus::widgets
