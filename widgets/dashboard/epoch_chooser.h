#pragma once
// The epoch whose figures a dashboard view shows (generated samples, reconstructions): the
// newest first, followed as epochs arrive unless the user went back to an earlier one.
#include <QComboBox>

class QLabel;

namespace plexus::widgets {

class EpochChooser : public QComboBox {
  Q_OBJECT
 public:
  EpochChooser(const QString& object_name, const QString& tip, QWidget* parent);

  // Puts `epoch` on top; true when the view should show it (the user follows the newest).
  bool add(int epoch);
  void select(int epoch);
  int shown() const;  // 0 when there is none

 signals:
  void chosen(int epoch);  // by the user
};

// Such a view's layout: its title and the chooser in a row above the body, which takes the rest.
void layOutEpochView(QWidget* view, QLabel* title, EpochChooser* chooser, QWidget* body);

}  // namespace plexus::widgets
