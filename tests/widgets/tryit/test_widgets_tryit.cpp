// The Try-it panel, driven with real mouse events offscreen: a stroke changes the input it
// emits, Undo and Clear take strokes back, a drawing is framed as MNIST's digits were (centre of
// mass at the centre, the longer side 20 pixels, wherever and however small it is drawn), other
// input sizes take the whole canvas; the bars show given probabilities with the top class
// highlighted; a regression shows its value and a non-image project says why the panel cannot
// be used; image files open and drop, feeding exactly what core's image_to_input makes of them
// (or the app's own picture conversion); an RGB input shows in colour. A model of a CSV file's
// rows takes a form of its columns, the typed row prepared as training prepared rows, a bad
// value's message shown beside it.
// Also writes screenshots to the temp dir (light and dark) for a human to look at.
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QPainter>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <cmath>
#include <numeric>

#include "common/theme.h"
#include "data/csv_format.h"
#include "data/image_file.h"
#include "data/table.h"
#include "data/table_prep.h"
#include "data/text_classes.h"
#include "ops/ops.h"
#include "tryit/digit_canvas.h"
#include "tryit/model_input.h"
#include "tryit/probability_bars.h"
#include "tryit/table_form.h"
#include "tryit/tryit_panel.h"

using namespace plexus;
using namespace plexus::widgets;

namespace {

struct Moments {
  double mass = 0, x = 0, y = 0;  // total and centre of mass (continuous pixel coordinates)
  int left = 1 << 30, top = 1 << 30, right = -1, bottom = -1;  // pixels above a faint threshold
};

// Of channel 0 of an input [C, H, W].
Moments moments(const Tensor& input) {
  const std::vector<float> v = input.to_vector();
  const auto h = int(input.size(1)), w = int(input.size(2));
  Moments m;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float p = v[size_t(y * w + x)];
      m.mass += p;
      m.x += p * (x + 0.5);
      m.y += p * (y + 0.5);
      if (p > 0.1f) {
        m.left = std::min(m.left, x);
        m.right = std::max(m.right, x);
        m.top = std::min(m.top, y);
        m.bottom = std::max(m.bottom, y);
      }
    }
  m.x /= m.mass;
  m.y /= m.mass;
  return m;
}

double maxDifference(const Tensor& a, const Tensor& b) {
  const std::vector<float> va = a.to_vector(), vb = b.to_vector();
  double worst = 0;
  for (size_t i = 0; i < va.size(); ++i) worst = std::max(worst, double(std::abs(va[i] - vb[i])));
  return worst;
}

// Drags the mouse through `points` (sheet coordinates, 0..1) on the canvas.
void drawStroke(DigitCanvas* canvas, const QList<QPointF>& points) {
  const QRectF sheet = canvas->sheetRect();
  const auto at = [&](const QPointF& p) {
    return QPoint(int(sheet.left() + p.x() * sheet.width()), int(sheet.top() + p.y() * sheet.height()));
  };
  QTest::mousePress(canvas, Qt::LeftButton, {}, at(points.front()));
  for (qsizetype i = 1; i < points.size(); ++i) {
    // Intermediate points, as a real drag delivers them.
    for (int step = 1; step <= 4; ++step)
      QTest::mouseMove(canvas, at(points[i - 1] + (points[i] - points[i - 1]) * step / 4.0));
  }
  QTest::mouseRelease(canvas, Qt::LeftButton, {}, at(points.back()));
}

// An "L" at a given place and size (sheet coordinates).
QList<QPointF> ell(QPointF origin, double size) {
  return {origin, origin + QPointF(0, size), origin + QPointF(size * 0.6, size)};
}

QColor pixel(const QImage& image, int x, int y) { return image.pixelColor(x, y); }

void dropFile(QWidget* target, const QString& path, bool* accepted) {
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(path)});
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(target, &enter);
  *accepted = enter.isAccepted();
  if (!*accepted) return;
  QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(target, &drop);
}

// A white "7" on black, written as a PNG by Qt; core decodes it.
QString writeSeven(const QString& path, QSize size) {
  QImage image(size, QImage::Format_RGB888);
  image.fill(Qt::black);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QPen(Qt::white, size.width() / 10.0, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  painter.drawPolyline(QPolygonF({QPointF(size.width() * 0.25, size.height() * 0.2),
                                  QPointF(size.width() * 0.75, size.height() * 0.2),
                                  QPointF(size.width() * 0.45, size.height() * 0.85)}));
  painter.end();
  image.save(path, "PNG");
  return path;
}

const QStringList kDigits = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"};

}  // namespace

class TestTryIt : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  std::unique_ptr<TryItPanel> panel_;

  TryItPanel* panel() { return panel_.get(); }
  QToolButton* button(const char* name) { return panel_->findChild<QToolButton*>(QLatin1String(name)); }

 private slots:
  void initTestCase() { qRegisterMetaType<Tensor>(); }  // for QSignalSpy

  void init() {
    ThemeManager::instance().setMode(ThemeMode::Light);
    panel_ = std::make_unique<TryItPanel>();
    panel_->resize(900, 560);
    panel_->show();
    QVERIFY(QTest::qWaitForWindowExposed(panel_.get()));
  }
  void cleanup() { panel_.reset(); }

  void aStrokeChangesTheInputAndClearEmptiesIt() {
    QSignalSpy inputs(panel(), &TryItPanel::inputChanged);
    QVERIFY(!panel()->input().defined());
    QVERIFY(!button("clearDrawing")->isEnabled() && !button("undoStroke")->isEnabled());

    drawStroke(panel()->canvas(), {{0.5, 0.2}, {0.5, 0.8}});  // a "1"
    QVERIFY(inputs.count() >= 1);
    const Tensor one = panel()->input();
    QVERIFY(one.defined());
    QCOMPARE(one.shape(), Shape({1, 28, 28}));
    QVERIFY(inputs.last().first().value<Tensor>().is_same(one));
    QCOMPARE(panel()->inputImage().size(), QSize(28, 28));
    // Tall and thin, in the middle columns.
    const Moments m = moments(one);
    QVERIFY2(m.bottom - m.top + 1 >= 19 && m.bottom - m.top + 1 <= 21, qPrintable(QString::number(m.bottom - m.top + 1)));
    QVERIFY(m.right - m.left + 1 <= 6);
    QVERIFY(button("clearDrawing")->isEnabled() && button("undoStroke")->isEnabled());

    const int before = int(inputs.count());
    drawStroke(panel()->canvas(), {{0.3, 0.5}, {0.7, 0.5}});  // a "+"
    QVERIFY(inputs.count() > before);
    QVERIFY(maxDifference(panel()->input(), one) > 0.5);

    QTest::mouseClick(button("clearDrawing"), Qt::LeftButton);
    QVERIFY(!panel()->input().defined());
    QVERIFY(!inputs.last().first().value<Tensor>().defined());
    QVERIFY(panel()->canvas()->isEmpty());
    QVERIFY(panel()->inputImage().isNull());
    QVERIFY(panel()->findChild<QLabel*>("inputPreview")->pixmap().isNull());
  }

  void undoTakesBackTheLastStroke() {
    drawStroke(panel()->canvas(), {{0.5, 0.2}, {0.5, 0.8}});
    const Tensor one = panel()->input();
    drawStroke(panel()->canvas(), {{0.3, 0.5}, {0.7, 0.5}});
    QCOMPARE(panel()->canvas()->strokes().size(), size_t(2));
    QTest::mouseClick(button("undoStroke"), Qt::LeftButton);
    QCOMPARE(panel()->canvas()->strokes().size(), size_t(1));
    QCOMPARE(panel()->input().to_vector(), one.to_vector());
    QTest::mouseClick(button("undoStroke"), Qt::LeftButton);
    QVERIFY(!panel()->input().defined());
    QVERIFY(!button("undoStroke")->isEnabled());
  }

  // MNIST's framing: wherever and however large a digit is drawn, the model sees it the same.
  void framingCentresTheDigitAsMnistDid() {
    drawStroke(panel()->canvas(), ell({0.08, 0.06}, 0.3));  // small, in the top left corner
    const Tensor small_corner = panel()->input();
    const Moments m = moments(small_corner);
    qInfo("centre of mass (%.2f, %.2f), box %d x %d", m.x, m.y, m.right - m.left + 1, m.bottom - m.top + 1);
    QVERIFY(std::abs(m.x - 14) < 0.5 && std::abs(m.y - 14) < 0.5);
    QVERIFY(m.bottom - m.top + 1 >= 19 && m.bottom - m.top + 1 <= 21);  // the longer side: 20 pixels
    QVERIFY(m.right - m.left + 1 < m.bottom - m.top + 1);               // aspect kept

    QTest::mouseClick(button("clearDrawing"), Qt::LeftButton);
    drawStroke(panel()->canvas(), ell({0.55, 0.6}, 0.3));  // the same, elsewhere
    const double moved = maxDifference(panel()->input(), small_corner);
    qInfo("the same L drawn elsewhere differs by at most %.3f", moved);
    QVERIFY(moved < 0.15);

    // The pure function, on a drawing of another size: the same framing.
    QImage drawing(100, 60, QImage::Format_Grayscale8);
    drawing.fill(0);
    QPainter painter(&drawing);
    painter.fillRect(QRect(70, 5, 10, 40), Qt::white);
    painter.end();
    const Moments bar = moments(*drawingToInput(drawing, {1, 28, 28}));
    QVERIFY(std::abs(bar.x - 14) < 0.5 && std::abs(bar.y - 14) < 0.5);
    QCOMPARE(bar.bottom - bar.top + 1, 20);
    QVERIFY(bar.right - bar.left + 1 <= 6);  // 5 wide, spread over 6 columns off the pixel grid
    QVERIFY2(std::abs(bar.mass - 10 * 40 * 0.25) < 1, qPrintable(QString::number(bar.mass)));  // area kept: scale 1/2
    drawing.fill(0);
    QVERIFY(!drawingToInput(drawing, {1, 28, 28}));
  }

  void otherInputSizesScaleTheWholeCanvas() {
    panel()->setInputShape({3, 32, 32});
    drawStroke(panel()->canvas(), ell({0.08, 0.06}, 0.3));  // top left corner
    const Tensor input = panel()->input();
    QCOMPARE(input.shape(), Shape({3, 32, 32}));
    QCOMPARE(panel()->inputImage().size(), QSize(32, 32));
    const Moments m = moments(input);
    QVERIFY2(m.x < 8 && m.y < 12, qPrintable(QString("%1 %2").arg(m.x).arg(m.y)));  // stays where drawn
    const std::vector<float> v = input.to_vector();
    QVERIFY(std::equal(v.begin(), v.begin() + 1024, v.begin() + 1024));  // gray: channels alike
    QVERIFY(std::equal(v.begin(), v.begin() + 1024, v.begin() + 2048));
  }

  void barsShowTheProbabilitiesWithTheTopClassHighlighted() {
    panel()->setModel("a test model", kDigits);
    QCOMPARE(panel()->modelStatus(), QString("a test model"));
    const std::vector<float> p = {0.02f, 0.05f, 0.08f, 0.55f, 0.01f, 0.04f, 0.03f, 0.12f, 0.06f, 0.04f};
    drawStroke(panel()->canvas(), {{0.5, 0.2}, {0.5, 0.8}});
    panel()->showProbabilities(p);
    ProbabilityBars* bars = panel()->bars();
    QVERIFY(bars->isVisible());
    QCOMPARE(bars->topClass(), 3);
    QCOMPARE(panel()->findChild<QLabel*>("predictionHeading")->text(), QString("Prediction: three"));
    QCOMPARE(bars->rows(), 10);

    const QImage shot = bars->grab().toImage();
    const double dpr = shot.devicePixelRatio();
    for (int row = 0; row < bars->rows(); ++row) {
      const int cls = bars->classAtRow(row);
      QCOMPARE(cls, row);  // ten classes keep their order
      const QRect track = bars->trackRect(row);
      const int y = int((track.center().y()) * dpr);
      const double end = track.left() + p[size_t(cls)] * track.width();
      const QColor fill = bars->fillColour(cls == 3);
      // Inside the filled part: the fill colour; past it: the track's.
      if (end - track.left() > 6) QCOMPARE(pixel(shot, int((end - 3) * dpr), y), fill);
      QCOMPARE(pixel(shot, int((end + 3) * dpr), y), bars->trackColour());
    }
    QVERIFY(bars->fillColour(true) != bars->fillColour(false));
    QCOMPARE(bars->fillColour(true), ThemeManager::instance().theme().selection);

    // Clearing the drawing clears the bars.
    QTest::mouseClick(button("clearDrawing"), Qt::LeftButton);
    QVERIFY(bars->probabilities().empty());
    QCOMPARE(bars->topClass(), -1);
  }

  void manyClassesListTheMostProbable() {
    QStringList names;
    for (int c = 0; c < 100; ++c) names << QString("class %1").arg(c);
    panel()->setModel("hundred", names);
    std::vector<float> p(100, 0.5f / 98);
    p[42] = 0.3f;
    p[7] = 0.2f;
    panel()->showProbabilities(p);
    ProbabilityBars* bars = panel()->bars();
    QCOMPARE(bars->rows(), ProbabilityBars::kMaxRows);
    QCOMPARE(bars->classAtRow(0), 42);
    QCOMPARE(bars->classAtRow(1), 7);
  }

  void regressionShowsItsValue() {
    panel()->setModel("a regression", {});
    drawStroke(panel()->canvas(), {{0.5, 0.2}, {0.5, 0.8}});
    panel()->showValues({3.25f});
    QVERIFY(!panel()->bars()->isVisible());
    QVERIFY(panel()->findChild<QLabel*>("regressionValue")->isVisible());
    QCOMPARE(panel()->valueText(), QString("3.25"));
  }

  // An autoencoder's output is a picture: shown beside the input, in place of values, its
  // pixels clipped to [0, 1] rather than stretched; a new model without one hides it again.
  void reconstructionShowsAsAPicture() {
    panel()->setModel("an autoencoder", {});
    drawStroke(panel()->canvas(), {{0.5, 0.2}, {0.5, 0.8}});
    std::vector<float> out(784, 0.25f);
    out[0] = 1.5f;   // past white
    out[1] = -0.5f;  // below black
    panel()->showReconstruction(from_vector(out, {1, 28, 28}));
    auto* picture = panel()->findChild<QLabel*>("reconstruction");
    QVERIFY(picture->isVisible());
    QVERIFY(!picture->pixmap().isNull());
    QVERIFY(!panel()->findChild<QLabel*>("regressionValue")->isVisible());
    const QImage shown = panel()->reconstructionImage();
    QCOMPARE(shown.size(), QSize(28, 28));
    QCOMPARE(qGray(shown.pixel(0, 0)), 255);
    QCOMPARE(qGray(shown.pixel(1, 0)), 0);
    QCOMPARE(qGray(shown.pixel(5, 5)), 64);  // 0.25 of white, not stretched to the picture's range
    panel()->setModel(QString(), {});
    QVERIFY(!picture->isVisible());
    QVERIFY(panel()->reconstructionImage().isNull());
  }

  void noModelSaysSo() {
    panel()->setModel(QString(), {});
    QVERIFY(!panel()->hasModel());
    QVERIFY(!panel()->bars()->isVisible());
    panel()->setModel("m", kDigits);
    QVERIFY(panel()->hasModel());
    QVERIFY(panel()->bars()->isVisible());
  }

  void aNonImageInputSaysThePanelNeedsOne() {
    drawStroke(panel()->canvas(), {{0.5, 0.2}, {0.5, 0.8}});
    QSignalSpy inputs(panel(), &TryItPanel::inputChanged);
    panel()->setInputShape({13}, "13 features from a CSV file");
    auto* message = panel()->findChild<QLabel*>("needsImageInput");
    QVERIFY(message->isVisible());
    QVERIFY2(message->text().contains("needs a model whose input is an image") &&
                 message->text().contains("13 features from a CSV file"),
             qPrintable(message->text()));
    QVERIFY(!panel()->canvas()->isVisible());
    QVERIFY(!panel()->input().defined());
    QCOMPARE(inputs.count(), 1);
    bool accepted = true;
    dropFile(panel(), writeSeven(tmp_.filePath("csv-drop.png"), {40, 40}), &accepted);
    QVERIFY(!accepted);

    panel()->setInputShape({1, 28, 28});  // the drawing comes back as an input
    QVERIFY(panel()->canvas()->isVisible());
    QVERIFY(panel()->input().defined());
  }

  // Names are elided only where they do not fit, whichever row is bold.
  void barNamesThatFitAreWhole() {
    panel()->setModel("names", {"female", "male"});
    panel()->showProbabilities({0.9f, 0.1f});
    ProbabilityBars* bars = panel()->bars();
    QFont bold = bars->font();
    bold.setBold(true);
    for (int row = 0; row < bars->rows(); ++row)
      QVERIFY(bars->trackRect(row).left() - 8 >= QFontMetricsF(bold).horizontalAdvance("female"));  // 8: the gap before the bar
  }

  // A model of typed text: the text field in the drawing's place, each edit encoded and fed, the
  // encoder's refusal shown and the output cleared, nothing fed for an empty field or no encoder.
  // A model of a CSV file's rows: a field per prepared column; the typed row is the model's
  // input exactly as the preparation makes it, an empty field a missing cell, and a value a
  // column cannot take says why (no input, no crash) until it is fixed.
  void aTableModelTakesAFormOfItsColumns() {
    const std::vector<std::string> names{"size", "colour", "when"};
    const data::csv_format::MissingTokens tokens = data::csv_format::MissingTokens::parse("NA");
    const data::Table train = data::table_of_rows(
        names, {{"1.5", "red", "2024-01-02"}, {"2.5", "blue", ""}, {"", "red", "2024-03-04"}}, tokens, "train");
    std::vector<data::ColumnPolicy> policies(names.size());  // each column's defaults
    for (size_t i = 0; i < names.size(); ++i) policies[i].name = names[i];
    const auto prep = std::make_shared<const data::TablePreparation>(data::fit_preparation(train, policies, {0, 1, 2}));
    const auto prepared = [&](const std::vector<std::string>& row) {
      const data::Table t = data::table_of_rows(names, {row}, tokens, "typed");
      std::vector<float> out(size_t(prep->width()));
      prep->apply(t, 0, prep->columns_in(t), out.data());
      return out;
    };
    panel()->setTableInput(prep);
    QVERIFY(panel()->tableInput());
    TableForm* form = panel()->tableForm();
    QVERIFY(form->isVisible());
    QVERIFY(!panel()->canvas()->isVisible());
    auto* size = qobject_cast<QLineEdit*>(form->field("size"));
    auto* colour = qobject_cast<QComboBox*>(form->field("colour"));
    auto* when = qobject_cast<QLineEdit*>(form->field("when"));
    QVERIFY(size && colour && when);
    QVERIFY(colour->isEditable());
    QCOMPARE(colour->count(), 2);  // training's categories: blue, red
    QCOMPARE(colour->itemText(0), QStringLiteral("blue"));
    // Nothing typed: every cell missing, filled as training filled them.
    QCOMPARE(panel()->input().to_vector(), prepared({"", "", ""}));

    size->setFocus();
    QTest::keyClicks(size, "3.25");
    colour->setFocus();
    QTest::keyClicks(colour->lineEdit(), "blue");
    when->setFocus();
    QTest::keyClicks(when, "2024-05-06");
    QCOMPARE(panel()->input().to_vector(), prepared({"3.25", "blue", "2024-05-06"}));
    QVERIFY(panel()->errorText().isEmpty());
    // A category training never saw is typed: the model's "(other)" input.
    colour->lineEdit()->selectAll();
    QTest::keyClicks(colour->lineEdit(), "green");
    QCOMPARE(panel()->input().to_vector(), prepared({"3.25", "green", "2024-05-06"}));

    // Text in a numeric field: the message names the column; no input is fed.
    QSignalSpy inputs(panel(), &TryItPanel::inputChanged);
    size->setFocus();
    QTest::keyClicks(size, "x");
    QVERIFY(!panel()->input().defined());
    QCOMPARE(inputs.count(), 1);
    QVERIFY2(panel()->errorText().contains("size"), qPrintable(panel()->errorText()));
    QTest::keyClick(size, Qt::Key_Backspace);
    QVERIFY(panel()->errorText().isEmpty());
    QCOMPARE(panel()->input().to_vector(), prepared({"3.25", "green", "2024-05-06"}));
  }

  void typedTextIsEncodedAndFed() {
    QSignalSpy inputs(panel(), &TryItPanel::inputChanged);
    panel()->setTextInput({4}, "reads 4 characters", nullptr);
    QLineEdit* field = panel()->textField();
    QVERIFY(field->isVisible() && !panel()->canvas()->isVisible());
    QVERIFY(!panel()->findChild<QLabel*>("inputPreview")->isVisible());
    QCOMPARE(panel()->findChild<QLabel*>("tryItTextNote")->text(), QString("reads 4 characters"));
    QTest::keyClicks(field, "ab");
    QVERIFY(!panel()->input().defined());  // no model to encode for yet

    const data::TextEncoding encoding{data::Vocabulary({"a", "b", "c"}), 4, true};
    panel()->setTextInput({4}, "reads 4 characters", [encoding](const QString& text) {
      return data::encode_typed_text(encoding, text.toStdString());
    });
    QCOMPARE(panel()->input().to_vector(), (std::vector<float>{1, 2, 0, 0}));
    panel()->setModel("letters", {"x", "y"});
    panel()->showProbabilities({0.25f, 0.75f});
    inputs.clear();
    QTest::keyClicks(field, "C");
    QCOMPARE(inputs.count(), 1);
    QCOMPARE(panel()->input().to_vector(), (std::vector<float>{1, 2, 3, 0}));
    QTest::keyClicks(field, "?");
    QVERIFY2(panel()->errorText().startsWith("'?', character 4 of \"abC?\""), qPrintable(panel()->errorText()));
    QVERIFY(!panel()->input().defined());
    QVERIFY(panel()->bars()->probabilities().empty());
    QTest::keyClick(field, Qt::Key_Backspace);
    QCOMPARE(panel()->errorText(), QString());
    QCOMPARE(panel()->input().to_vector(), (std::vector<float>{1, 2, 3, 0}));
    field->clear();
    QVERIFY(!panel()->input().defined());
    bool accepted = true;
    dropFile(panel(), writeSeven(tmp_.filePath("text-drop.png"), {40, 40}), &accepted);
    QVERIFY(!accepted);  // no pictures for a text model

    panel()->setInputShape({1, 28, 28});  // an image model: the drawing is back
    QVERIFY(!panel()->textInput() && panel()->canvas()->isVisible() && !field->isVisible());
  }

  // Files give the numbers core gives them: `plexus-cli predict` feeds the same.
  void droppedAndOpenedImagesFeedWhatCoreMakesOfThem() {
    const QString seven = writeSeven(tmp_.filePath("seven.png"), {90, 120});
    const Tensor expected = data::image_to_input(data::read_image(seven.toStdString()), {1, 28, 28});
    QSignalSpy inputs(panel(), &TryItPanel::inputChanged);
    bool accepted = false;
    dropFile(panel(), seven, &accepted);
    QVERIFY(accepted);
    QCOMPARE(inputs.count(), 1);
    QCOMPARE(panel()->input().to_vector(), expected.to_vector());
    QVERIFY(!panel()->canvas()->isEmpty());
    QVERIFY(panel()->canvas()->strokes().empty());
    QVERIFY(panel()->errorText().isEmpty());

    // A new input shape converts the picture again, from the file's pixels.
    panel()->setInputShape({3, 16, 16});
    QCOMPARE(panel()->input().to_vector(),
             data::image_to_input(data::read_image(seven.toStdString()), {3, 16, 16}).to_vector());
    panel()->setInputShape({1, 28, 28});

    // Drawing replaces the picture.
    drawStroke(panel()->canvas(), {{0.5, 0.2}, {0.5, 0.8}});
    QVERIFY(maxDifference(panel()->input(), expected) > 0.5);

    // Open Image… with the dialog answered.
    const QString other = writeSeven(tmp_.filePath("other.png"), {28, 28});
    panel()->chooseImage = [&] { return other; };
    QTest::mouseClick(panel()->findChild<QToolButton*>("openImage"), Qt::LeftButton);
    QCOMPARE(panel()->input().to_vector(),
             data::image_to_input(data::read_image(other.toStdString()), {1, 28, 28}).to_vector());

    // Not an image: not taken. A broken one: said so, nothing crashes, the input stays.
    QFile text(tmp_.filePath("notes.txt"));
    QVERIFY(text.open(QIODevice::WriteOnly));
    text.write("hello");
    text.close();
    dropFile(panel(), text.fileName(), &accepted);
    QVERIFY(!accepted);
    QFile broken(tmp_.filePath("broken.png"));
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write("\x89PNG\r\n\x1a\n not really");
    broken.close();
    const std::vector<float> kept = panel()->input().to_vector();
    dropFile(panel(), broken.fileName(), &accepted);
    QVERIFY(accepted);
    QVERIFY2(panel()->errorText().contains("broken.png"), qPrintable(panel()->errorText()));
    QCOMPARE(panel()->input().to_vector(), kept);
  }

  void theAppsConversionAndColourInputs() {
    // A red BMP on an RGB input: the input and its preview are red.
    QImage red(40, 20, QImage::Format_RGB888);
    red.fill(Qt::red);
    const QString file = tmp_.filePath("red.bmp");
    QVERIFY(red.save(file, "BMP"));
    panel()->setInputShape({3, 16, 16});
    bool accepted = false;
    dropFile(panel(), file, &accepted);
    QVERIFY(accepted);
    QVERIFY2(panel()->errorText().isEmpty(), qPrintable(panel()->errorText()));
    QCOMPARE(panel()->inputImage().pixelColor(8, 8), QColor(255, 0, 0));
    const QImage shown = panel()->findChild<QLabel*>("inputPreview")->pixmap().toImage();
    QCOMPARE(shown.pixelColor(shown.width() / 2, shown.height() / 2), QColor(255, 0, 0));

    // The app's conversion replaces core's default: the picture shown is converted again.
    Shape asked;
    int64_t width = 0;
    panel()->setPictureConverter([&](const data::Image& picture, const Shape& chw) {
      asked = chw;
      width = picture.width;
      return full(chw, 0.5f);
    });
    QCOMPARE(asked, Shape({3, 16, 16}));
    QCOMPARE(width, int64_t(40));
    QCOMPARE(panel()->input().to_vector(), std::vector<float>(3 * 16 * 16, 0.5f));
    // Drawings keep their own framing.
    drawStroke(panel()->canvas(), {{0.5, 0.2}, {0.5, 0.8}});
    QVERIFY(panel()->input().to_vector() != std::vector<float>(3 * 16 * 16, 0.5f));
  }

  void screenshots() {
    for (const ThemeMode mode : {ThemeMode::Light, ThemeMode::Dark}) {
      ThemeManager::instance().setMode(mode);
      TryItPanel panel;
      panel.resize(900, 520);
      panel.setModel("Live weights: epoch 2 of 5, batch 120 of 600", kDigits);
      panel.show();
      QVERIFY(QTest::qWaitForWindowExposed(&panel));
      drawStroke(panel.canvas(), {{0.35, 0.25}, {0.6, 0.22}, {0.62, 0.45}, {0.45, 0.5}, {0.65, 0.6}, {0.6, 0.8}, {0.35, 0.78}});
      panel.showProbabilities({0.01f, 0.01f, 0.04f, 0.81f, 0.0f, 0.06f, 0.0f, 0.02f, 0.04f, 0.01f});
      const QString file = QDir::temp().filePath(QString("plexus-tryit-%1.png").arg(toString(mode)));
      QVERIFY(panel.grab().save(file));
      qInfo("wrote %s", qPrintable(file));
    }
    ThemeManager::instance().setMode(ThemeMode::Light);
  }
};

QTEST_MAIN(TestTryIt)
#include "test_widgets_tryit.moc"
