// The device selector: lists what it is given, picks with real key presses, explains a
// missing GPU with a disabled entry.
#include <QSignalSpy>
#include <QTest>

#include "cuda/cuda.h"
#include "editor/device_selector.h"

using plexus::Device;
using plexus::widgets::DeviceEntry;
using plexus::widgets::DeviceSelector;

class TestDeviceSelector : public QObject {
  Q_OBJECT

 private slots:
  void listsCpuAndGpus() {
    DeviceSelector s({{Device::cpu(), "CPU"}, {Device::cuda(0), "cuda:0 — A"}, {Device::cuda(1), "cuda:1 — B"}}, "");
    QCOMPARE(s.count(), 3);
    QCOMPARE(s.itemText(2), QStringLiteral("cuda:1 — B"));
    QCOMPARE(s.currentDevice(), Device::cpu());
  }

  void keyboardChoiceEmitsTheDevice() {
    DeviceSelector s({{Device::cpu(), "CPU"}, {Device::cuda(0), "cuda:0 — A"}}, "");
    s.show();
    QVERIFY(QTest::qWaitForWindowExposed(&s));
    QSignalSpy spy(&s, &DeviceSelector::deviceChanged);
    s.setFocus();
    QTest::keyClick(&s, Qt::Key_Down);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).value<Device>(), Device::cuda(0));
    QCOMPARE(s.currentDevice(), Device::cuda(0));
  }

  void missingGpuIsExplainedAndNotSelectable() {
    DeviceSelector s({{Device::cpu(), "CPU"}}, "no CUDA device");
    QCOMPARE(s.count(), 2);
    QCOMPARE(s.itemText(1), QStringLiteral("CUDA: no CUDA device"));
    s.show();
    QVERIFY(QTest::qWaitForWindowExposed(&s));
    s.setFocus();
    QTest::keyClick(&s, Qt::Key_Down);  // the disabled entry is skipped
    QCOMPARE(s.currentIndex(), 0);
    QCOMPARE(s.currentDevice(), Device::cpu());
    QVERIFY(!s.setCurrentDevice(Device::cuda(0)));
  }

  void detectedMatchesTheCore() {
    QString why;
    const auto entries = DeviceSelector::detected(&why);
    QCOMPARE(int(entries.size()), 1 + plexus::cuda::device_count());
    QCOMPARE(entries.front().device, Device::cpu());
    QVERIFY(!why.isEmpty());
    DeviceSelector s;
    QCOMPARE(s.count(), plexus::cuda::device_count() ? int(entries.size()) : 2);
  }
};

Q_DECLARE_METATYPE(plexus::Device)
QTEST_MAIN(TestDeviceSelector)
#include "test_widgets_device_selector.moc"
