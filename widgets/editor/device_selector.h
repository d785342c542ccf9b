#pragma once
// DeviceSelector: the one control that chooses where training runs. It lists the CPU and
// every CUDA device found at start-up ("cuda:0 — NVIDIA H100 80GB HBM3, 79.1 GiB"); without a
// GPU it shows a disabled "CUDA: <why>" entry, so the user sees why there is no choice.
#include <QComboBox>
#include <QString>
#include <vector>

#include "tensor/device.h"

namespace plexus::widgets {

struct DeviceEntry {
  Device device;
  QString label;  // shown in the list
};

class DeviceSelector : public QComboBox {
  Q_OBJECT

 public:
  // The CPU and the CUDA devices of this machine (plexus::cuda), and why there are none.
  static std::vector<DeviceEntry> detected(QString* unavailable_reason);

  // `unavailable_reason` is shown as a disabled entry when `entries` holds no CUDA device.
  explicit DeviceSelector(QWidget* parent = nullptr);
  DeviceSelector(const std::vector<DeviceEntry>& entries, const QString& unavailable_reason, QWidget* parent = nullptr);

  Device currentDevice() const;
  // Selects `device` if it is listed; otherwise keeps the selection and returns false.
  bool setCurrentDevice(Device device);

 signals:
  void deviceChanged(plexus::Device device);

 private:
  void populate(const QString& unavailable_reason);

  std::vector<DeviceEntry> entries_;
};

}  // namespace plexus::widgets
