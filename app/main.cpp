// plexus: the Plexus desktop application.
// Placeholder main window until the GUI issues land: a central label, the training
// toolbar's device selector, and a status bar line that describes the dataset (--data DIR).
#include <QApplication>
#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMainWindow>
#include <QPixmap>
#include <QStatusBar>
#include <QStringList>
#include <QTimer>
#include <QToolBar>
#include <QtEndian>

#include <cstdio>
#include <optional>

#include "device_selector.h"

namespace {

constexpr quint32 kIdxImagesMagic = 2051;  // 0x00000803: unsigned bytes, 3 dimensions
constexpr quint32 kIdxLabelsMagic = 2049;  // 0x00000801: unsigned bytes, 1 dimension

// Reads the header of an IDX file and returns its item count, or an error message.
// Images: 16-byte header (magic, count, rows, cols); labels: 8-byte header (magic, count).
// All header fields are big-endian 32-bit integers.
struct IdxCount {
    std::optional<quint32> count;
    QString error;
};

IdxCount readIdxCount(const QString& path, quint32 expectedMagic) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {std::nullopt, QStringLiteral("cannot open %1").arg(path)};
    const bool images = expectedMagic == kIdxImagesMagic;
    const qint64 headerSize = images ? 16 : 8;
    const QByteArray header = file.read(headerSize);
    if (header.size() != headerSize)
        return {std::nullopt, QStringLiteral("%1 is too short to be an IDX file").arg(path)};
    const auto field = [&](int index) { return qFromBigEndian<quint32>(header.constData() + 4 * index); };
    if (field(0) != expectedMagic)
        return {std::nullopt, QStringLiteral("%1 has IDX magic %2, expected %3").arg(path).arg(field(0)).arg(expectedMagic)};
    const quint32 count = field(1);
    const qint64 itemSize = images ? qint64(field(2)) * field(3) : 1;
    if (file.size() != headerSize + qint64(count) * itemSize)
        return {std::nullopt, QStringLiteral("%1 is truncated or has trailing data").arg(path)};
    return {count, {}};
}

// One line for the status bar describing the MNIST folder `dir` (as the user typed it).
QString describeDataset(const QString& dir) {
    if (dir.isEmpty()) return QStringLiteral("No dataset loaded (start with --data DIR)");
    const QString shown = QDir::toNativeSeparators(dir);
    if (!QFileInfo(dir).isDir()) return QStringLiteral("No dataset: %1 is not a folder").arg(shown);

    const QDir folder(dir);
    const QStringList names = {QStringLiteral("train-images-idx3-ubyte"), QStringLiteral("train-labels-idx1-ubyte"),
                               QStringLiteral("t10k-images-idx3-ubyte"), QStringLiteral("t10k-labels-idx1-ubyte")};
    QStringList missing;
    for (const QString& name : names)
        if (!QFileInfo::exists(folder.filePath(name))) missing << name;
    if (!missing.isEmpty())
        return QStringLiteral("No MNIST dataset in %1: missing %2 (run scripts/fetch-mnist)")
            .arg(shown, missing.join(QStringLiteral(", ")));

    quint32 counts[4] = {};
    for (int i = 0; i < 4; ++i) {
        const IdxCount result = readIdxCount(folder.filePath(names[i]), i % 2 == 0 ? kIdxImagesMagic : kIdxLabelsMagic);
        if (!result.count) return QStringLiteral("Invalid MNIST dataset: %1").arg(QDir::toNativeSeparators(result.error));
        counts[i] = *result.count;
    }
    if (counts[0] != counts[1] || counts[2] != counts[3])
        return QStringLiteral("Invalid MNIST dataset in %1: image and label counts differ (%2/%3 train, %4/%5 test)")
            .arg(shown)
            .arg(counts[0])
            .arg(counts[1])
            .arg(counts[2])
            .arg(counts[3]);
    return QStringLiteral("MNIST: %1 train / %2 test images in %3").arg(counts[0]).arg(counts[2]).arg(shown);
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Plexus"));
    QApplication::setApplicationVersion(QStringLiteral(PLEXUS_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Design and train neural networks."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption dataOption(QStringLiteral("data"), QStringLiteral("Load the MNIST IDX files from <dir>."),
                                        QStringLiteral("dir"));
    parser.addOption(dataOption);
    // For tests and docs: render the main window to <file> once it is shown, then quit.
    QCommandLineOption screenshotOption(QStringLiteral("screenshot"),
                                        QStringLiteral("Save a PNG of the main window to <file> and quit."),
                                        QStringLiteral("file"));
    screenshotOption.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(screenshotOption);
    parser.process(app);

    QMainWindow window;
    window.setWindowTitle(QStringLiteral("Plexus"));
    auto* placeholder = new QLabel(QStringLiteral("<h2>Plexus</h2><p>The node editor is coming soon.</p>"));
    placeholder->setAlignment(Qt::AlignCenter);
    window.setCentralWidget(placeholder);
    window.statusBar()->showMessage(describeDataset(parser.value(dataOption)));
    QToolBar* toolbar = window.addToolBar(QStringLiteral("Training"));
    toolbar->setObjectName(QStringLiteral("trainingToolbar"));
    toolbar->addWidget(new QLabel(QStringLiteral(" Device: ")));
    auto* device = new plexus::widgets::DeviceSelector(toolbar);
    device->setObjectName(QStringLiteral("deviceSelector"));
    toolbar->addWidget(device);
    window.resize(1000, 700);
    window.show();

    if (parser.isSet(screenshotOption)) {
        const QString file = parser.value(screenshotOption);
        QTimer::singleShot(0, &window, [&window, file] {
            const bool saved = window.grab().save(file, "PNG");
            if (!saved) std::fprintf(stderr, "plexus: could not write screenshot %s\n", qPrintable(file));
            QCoreApplication::exit(saved ? 0 : 1);
        });
    }
    return QApplication::exec();
}
