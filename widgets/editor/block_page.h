#pragma once
// The property panel's page for one selected block: its name (editable, one undo step), what it
// holds (its members, nested blocks with how many layers) and how to open, close or ungroup it.
#include <QString>
#include <QWidget>

class QLabel;
class QLineEdit;

namespace plexus::widgets {

class GraphDocument;

class BlockPage : public QWidget {
  Q_OBJECT

 public:
  BlockPage(GraphDocument* document, const QString& id, QWidget* parent = nullptr);

  const QString& id() const { return id_; }
  void refresh();  // re-reads the block; nothing to do once it is gone

 private:
  GraphDocument* document_;
  const QString id_;
  QLineEdit* name_;
  QLabel* members_;
};

}  // namespace plexus::widgets
