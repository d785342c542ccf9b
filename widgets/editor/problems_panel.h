#pragma once
// ProblemsPanel: every problem the validator finds in the open graph, errors first, each with
// its severity, its message and where it is (node and port). Clicking one (or Enter on it) asks
// the editor to show its node. It only reads GraphDocument and refreshes on validated().
#include <QIcon>
#include <QString>
#include <QWidget>
#include <vector>

#include "graph/problem.h"

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace plexus::widgets {

class GraphDocument;

// "2 errors, 1 warning", "1 warning", "No problems".
QString problemSummary(const std::vector<graph::Problem>& problems);

// The severity's icon in the theme's error or warning colour (the property panel uses it too).
QIcon severityIcon(graph::Severity severity);

class ProblemsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ProblemsPanel(GraphDocument* document, QWidget* parent = nullptr);

  int count() const;  // problems listed
  QTreeWidget* list() const { return list_; }
  QString headerText() const;

 signals:
  void nodeActivated(const QString& id);

 private:
  void refresh();
  void activate(QTreeWidgetItem* item);

  GraphDocument* document_;
  QLabel* header_;
  QTreeWidget* list_;
};

}  // namespace plexus::widgets
