#include "dashboard/epoch_chooser.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace plexus::widgets {

EpochChooser::EpochChooser(const QString& object_name, const QString& tip, QWidget* parent) : QComboBox(parent) {
  setObjectName(object_name);
  setToolTip(tip);
  setSizeAdjustPolicy(QComboBox::AdjustToContents);
  connect(this, &QComboBox::activated, this, [this](int index) { emit chosen(itemData(index).toInt()); });
}

bool EpochChooser::add(int epoch) {
  const bool following = count() == 0 || currentIndex() == 0;
  insertItem(0, tr("Epoch %1").arg(epoch), epoch);
  if (following) setCurrentIndex(0);
  return following;
}

void EpochChooser::select(int epoch) { setCurrentIndex(findData(epoch)); }

int EpochChooser::shown() const { return count() ? currentData().toInt() : 0; }

void layOutEpochView(QWidget* view, QLabel* title, EpochChooser* chooser, QWidget* body) {
  auto* head = new QHBoxLayout;
  head->addWidget(title, 1);
  head->addWidget(chooser);
  auto* layout = new QVBoxLayout(view);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(head);
  layout->addWidget(body, 1);
}

}  // namespace plexus::widgets
