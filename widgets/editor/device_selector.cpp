#include "editor/device_selector.h"

#include <QAbstractItemView>
#include <QStandardItem>
#include <QStandardItemModel>

#include "cuda/cuda.h"
#include "util/threads.h"

namespace plexus::widgets {

std::vector<DeviceEntry> DeviceSelector::detected(QString* unavailable_reason) {
  std::vector<DeviceEntry> out{{Device::cpu(), QStringLiteral("CPU — %1 threads").arg(num_threads())}};
  for (int i = 0; i < cuda::device_count(); ++i) {
    const cuda::DeviceProperties p = cuda::properties(i);
    out.push_back({Device::cuda(i), QStringLiteral("cuda:%1 — %2, %3 GiB")
                                        .arg(i)
                                        .arg(QString::fromStdString(p.name))
                                        .arg(double(p.total_memory) / double(int64_t(1) << 30), 0, 'f', 1)});
  }
  if (unavailable_reason) *unavailable_reason = QString::fromStdString(cuda::status());
  return out;
}

DeviceSelector::DeviceSelector(QWidget* parent) : QComboBox(parent) {
  QString why;
  entries_ = detected(&why);
  populate(why);
}

DeviceSelector::DeviceSelector(const std::vector<DeviceEntry>& entries, const QString& unavailable_reason,
                               QWidget* parent)
    : QComboBox(parent), entries_(entries) {
  populate(unavailable_reason);
}

void DeviceSelector::populate(const QString& unavailable_reason) {
  setToolTip(tr("Where training runs. The model, the graph and the numbers stay the same."));
  // Narrow enough for the settings dock to leave the canvas its room ("cpu, 2 threads" and
  // most GPU names fit whole); the open list is as wide as its longest line.
  setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  setMinimumContentsLength(22);
  bool any_gpu = false;
  for (const DeviceEntry& e : entries_) {
    addItem(e.label, QString::fromStdString(e.device.str()));
    any_gpu = any_gpu || e.device.is_cuda();
  }
  if (!any_gpu) {
    addItem(tr("CUDA: %1").arg(unavailable_reason));
    // Shown, not selectable: the user sees why there is no GPU to choose.
    if (auto* m = qobject_cast<QStandardItemModel*>(model())) m->item(count() - 1)->setEnabled(false);
  }
  view()->setMinimumWidth(view()->sizeHintForColumn(0) + 2 * view()->frameWidth());
  connect(this, &QComboBox::currentIndexChanged, this, [this](int) { emit deviceChanged(currentDevice()); });
}

Device DeviceSelector::currentDevice() const {
  const int i = currentIndex();
  return i >= 0 && i < int(entries_.size()) ? entries_[size_t(i)].device : Device::cpu();
}

bool DeviceSelector::setCurrentDevice(Device device) {
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].device == device) {
      setCurrentIndex(int(i));
      return true;
    }
  return false;
}

}  // namespace plexus::widgets
