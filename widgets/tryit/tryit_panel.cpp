#include "tryit/tryit_panel.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>

#include "common/icons.h"
#include "common/image_thumbnail.h"
#include "common/panel_style.h"
#include "common/qt_text.h"
#include "common/theme.h"
#include "tryit/digit_canvas.h"
#include "tryit/model_input.h"
#include "tryit/probability_bars.h"
#include "tryit/table_form.h"

namespace plexus::widgets {

namespace {

// Drawings are converted from this many pixels a side: ten times MNIST's, so framing a digit
// into 20 pixels averages many pixels into each.
constexpr int kDrawingSide = 280;
constexpr int kPreviewSide = 140;

// The extensions core's decoder reads (data::read_image goes by the content).
bool isImageFile(const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  return suffix == QLatin1String("png") || suffix == QLatin1String("jpg") || suffix == QLatin1String("jpeg") ||
         suffix == QLatin1String("bmp");
}

QString droppedImage(const QMimeData* mime) {
  const QList<QUrl> urls = mime->urls();
  if (urls.size() != 1 || !urls.first().isLocalFile() || !isImageFile(urls.first().toLocalFile())) return {};
  return urls.first().toLocalFile();
}

QToolButton* button(const QString& text, const QString& icon_name, const QString& tip, QWidget* parent) {
  auto* b = new QToolButton(parent);
  b->setText(text);
  b->setToolTip(tip);
  b->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  b->setIcon(icon(icon_name));
  // Icons are tinted for the theme.
  QObject::connect(&ThemeManager::instance(), &ThemeManager::changed, b, [b, icon_name] { b->setIcon(icon(icon_name)); });
  return b;
}

// Nearest neighbour at a whole factor where it fits: the model's pixels, each one visible.
QPixmap magnified(const QImage& image, int side) {
  const int longest = std::max(image.width(), image.height());
  const int factor = std::max(1, side / longest);
  const QSize size = longest * factor <= side ? image.size() * factor : image.size().scaled(side, side, Qt::KeepAspectRatio);
  return QPixmap::fromImage(image.scaled(size, Qt::IgnoreAspectRatio, Qt::FastTransformation));
}

bool sameValues(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  return !a.defined() || (a.shape() == b.shape() && a.to_vector() == b.to_vector());
}

}  // namespace

TryItPanel::TryItPanel(QWidget* parent)
    : QWidget(parent),
      convert_([](const data::Image& picture, const Shape& chw) { return data::image_to_input(picture, chw); }) {
  setObjectName(QStringLiteral("tryItPanel"));
  setAcceptDrops(true);
  chooseImage = [this] {
    return QFileDialog::getOpenFileName(this, tr("Open an image to try"), QString(),
                                        tr("Images (*.png *.jpg *.jpeg *.bmp)"));
  };

  canvas_ = new DigitCanvas(this);
  clear_ = button(tr("Clear"), QStringLiteral("delete"), tr("Clear the drawing or the picture"), this);
  undo_ = button(tr("Undo Stroke"), QStringLiteral("undo"), tr("Take back the last stroke"), this);
  QToolButton* open = button(tr("Open Image…"), QStringLiteral("open"), tr("Try a PNG, JPEG or BMP file"), this);
  QToolButton* load = button(tr("Load Checkpoint…"), QStringLiteral("open"),
                             tr("Try the weights of a checkpoint or weights file of this project"), this);
  open->setObjectName(QStringLiteral("openImage"));
  load->setObjectName(QStringLiteral("loadCheckpoint"));
  clear_->setObjectName(QStringLiteral("clearDrawing"));
  undo_->setObjectName(QStringLiteral("undoStroke"));
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("modelStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  preview_ = new QLabel(this);
  preview_->setObjectName(QStringLiteral("inputPreview"));
  preview_->setFixedSize(kPreviewSide, kPreviewSide);
  preview_->setAlignment(Qt::AlignCenter);
  preview_->setStyleSheet(QStringLiteral("QLabel { background: black; }"));
  preview_caption_ = new QLabel(this);
  preview_caption_->setWordWrap(true);
  reconstruction_heading_ = sectionLabel(tr("Reconstruction"), this);
  reconstruction_ = new QLabel(this);
  reconstruction_->setObjectName(QStringLiteral("reconstruction"));
  reconstruction_->setFixedSize(kPreviewSide, kPreviewSide);
  reconstruction_->setAlignment(Qt::AlignCenter);
  reconstruction_->setStyleSheet(QStringLiteral("QLabel { background: black; }"));
  reconstruction_->setToolTip(tr("What the model makes of its input: the output its loss compares with the input"));

  error_ = new QLabel(this);
  error_->setObjectName(QStringLiteral("tryItError"));
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->hide();

  bars_ = new ProbabilityBars(this);
  value_ = new QLabel(this);
  value_->setObjectName(QStringLiteral("regressionValue"));
  value_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  value_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont big = value_->font();
  big.setPointSizeF(big.pointSizeF() * 2);
  big.setBold(true);
  value_->setFont(big);
  no_output_ = new QLabel(this);
  no_output_->setWordWrap(true);
  no_output_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  output_ = new QStackedWidget(this);
  for (QWidget* w : {static_cast<QWidget*>(no_output_), static_cast<QWidget*>(bars_), static_cast<QWidget*>(value_)})
    output_->addWidget(w);

  prediction_ = sectionLabel(QString(), this);
  prediction_->setObjectName(QStringLiteral("predictionHeading"));

  text_ = new QLineEdit(this);
  text_->setObjectName(QStringLiteral("tryItText"));
  text_->setPlaceholderText(tr("Type a text for the model to classify"));
  text_->setClearButtonEnabled(true);
  QFont typed = text_->font();
  typed.setPointSizeF(typed.pointSizeF() * 1.5);
  text_->setFont(typed);
  text_note_ = new QLabel(this);
  text_note_->setObjectName(QStringLiteral("tryItTextNote"));
  text_note_->setWordWrap(true);

  // Left: what is fed, drawn or opened, or typed. Right: the model, its input and what it makes of it.
  auto* tools = new QHBoxLayout;
  for (QToolButton* b : {clear_, undo_, open}) tools->addWidget(b);
  tools->addStretch();
  auto* drawing_page = new QWidget(this);
  auto* drawing = new QVBoxLayout(drawing_page);
  drawing->setContentsMargins(0, 0, 0, 0);
  drawing->addLayout(tools);
  drawing->addWidget(canvas_, 1);
  // A typed source's page: its heading, then its widgets from the top.
  const auto typedPage = [this](const QString& heading, std::initializer_list<QWidget*> widgets) {
    auto* page = new QWidget(this);
    auto* column = new QVBoxLayout(page);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(sectionLabel(heading, this));
    for (QWidget* w : widgets) column->addWidget(w);
    column->addStretch();
    return page;
  };
  QWidget* text_page = typedPage(tr("Text"), {text_, text_note_});
  table_ = new TableForm(this);
  table_note_ = new QLabel(this);
  table_note_->setObjectName(QStringLiteral("tryItTableNote"));
  table_note_->setWordWrap(true);
  QWidget* table_page = typedPage(tr("Columns"), {table_note_, table_});
  source_ = new QStackedWidget(this);
  source_->addWidget(drawing_page);
  source_->addWidget(text_page);
  source_->addWidget(table_page);
  auto* model = new QHBoxLayout;
  model->addWidget(sectionLabel(tr("Model"), this));
  model->addStretch();
  model->addWidget(load);
  auto* side = new QVBoxLayout;
  side->addLayout(model);
  side->addWidget(status_);
  side->addSpacing(12);
  preview_heading_ = sectionLabel(tr("Model input"), this);
  side->addWidget(preview_heading_);
  side->addWidget(preview_);
  side->addWidget(preview_caption_);
  side->addSpacing(12);
  side->addWidget(prediction_);
  side->addWidget(error_);
  side->addWidget(output_);
  side->addWidget(reconstruction_heading_);
  side->addWidget(reconstruction_);
  side->addStretch();

  auto* usable = new QWidget(this);
  auto* body = new QHBoxLayout(usable);
  body->setContentsMargins(0, 0, 0, 0);
  body->addWidget(source_, 3);
  body->addSpacing(16);
  body->addLayout(side, 2);
  unusable_ = new QLabel(this);
  unusable_->setObjectName(QStringLiteral("needsImageInput"));
  unusable_->setAlignment(Qt::AlignCenter);
  unusable_->setWordWrap(true);
  pages_ = new QStackedWidget(this);
  pages_->addWidget(usable);
  pages_->addWidget(unusable_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 8, 8, 8);
  layout->addWidget(pages_);

  connect(canvas_, &DigitCanvas::changed, this, [this] {
    picture_.reset();  // drawing replaced it
    updateInput();
  });
  connect(clear_, &QToolButton::clicked, this, [this] {
    picture_.reset();
    canvas_->clear();
    updateInput();
  });
  connect(undo_, &QToolButton::clicked, canvas_, &DigitCanvas::undo);
  connect(open, &QToolButton::clicked, this, [this] {
    const QString path = chooseImage();
    if (!path.isEmpty()) openImage(path);
  });
  // Every edit is fed: the Predictor keeps only the latest input, so fast typing costs nothing.
  connect(text_, &QLineEdit::textChanged, this, &TryItPanel::updateInput);
  connect(table_, &TableForm::changed, this, &TryItPanel::updateInput);
  connect(load, &QToolButton::clicked, this, &TryItPanel::loadCheckpointRequested);
  styleAsError(error_);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, [this] { styleAsError(error_); });

  setInputShape({1, 28, 28});
  setModel(QString(), {});
  hideReconstruction();
}

void TryItPanel::setInputShape(const Shape& shape, const QString& what) {
  shape_ = shape;
  setMode(Mode::Drawing);
  if (!isImageInput(shape)) {
    unusable_->setText(tr("Try It needs a model whose input is an image ([channels, height, width] with 1 or 3 "
                          "channels).\nThis project's input is %1.")
                           .arg(what.isEmpty() ? qstr(to_string(shape)) : what));
    pages_->setCurrentWidget(unusable_);
    setInput(Tensor());
    return;
  }
  pages_->setCurrentIndex(0);
  preview_caption_->setText(tr("%1 × %2, %3, as the model is fed it")
                                .arg(shape[2])
                                .arg(shape[1])
                                .arg(shape[0] == 1 ? tr("gray") : tr("colour")) +
                            (isMnistInput(shape) ? tr(";\na drawing is framed as MNIST digits are") : QString()));
  updateInput();
}

void TryItPanel::setTextInput(const Shape& shape, const QString& note, TextEncoder encode) {
  shape_ = shape;
  encode_ = std::move(encode);
  text_note_->setText(note);
  setMode(Mode::Text);
  pages_->setCurrentIndex(0);
  updateInput();
}

void TryItPanel::setTableInput(std::shared_ptr<const data::TablePreparation> preparation) {
  shape_ = preparation ? Shape{preparation->width()} : Shape{};
  table_note_->setText(preparation ? tr("One field per column the model reads; an empty field is a missing value, "
                                        "filled as training filled it.")
                                   : tr("Train the project, or load a checkpoint of it: the form then has a field "
                                        "per column the model reads."));
  table_->setPreparation(std::move(preparation));
  setMode(Mode::Table);
  pages_->setCurrentIndex(0);
  updateInput();
}

void TryItPanel::setMode(Mode mode) {
  mode_ = mode;
  if (mode != Mode::Text) encode_ = nullptr;
  source_->setCurrentIndex(int(mode));
  for (QWidget* w : {static_cast<QWidget*>(preview_heading_), static_cast<QWidget*>(preview_),
                     static_cast<QWidget*>(preview_caption_)})
    w->setVisible(mode == Mode::Drawing);
}

void TryItPanel::setModel(const QString& description, const QStringList& class_names) {
  status_->setText(description);
  clearError();
  if (description.isEmpty()) hideReconstruction();
  if (description.isEmpty()) {
    no_output_->setText(tr("No model yet: train the project, or load a checkpoint of it."));
    output_->setCurrentWidget(no_output_);
    prediction_->setText(tr("Prediction"));
    return;
  }
  // The same model with new weights keeps its output until the new one comes: no flicker.
  QWidget* page = class_names.isEmpty() ? static_cast<QWidget*>(value_) : bars_;
  if (page != output_->currentWidget() || class_names != bars_->classNames()) {
    bars_->setClassNames(class_names);
    value_->setText(QStringLiteral("—"));
    prediction_->setText(tr("Prediction"));
    output_->setCurrentWidget(page);
  }
}

QString TryItPanel::modelStatus() const { return status_->text(); }

bool TryItPanel::hasModel() const { return output_->currentWidget() != no_output_; }

void TryItPanel::showProbabilities(const std::vector<float>& probabilities) {
  clearError();
  bars_->setProbabilities(probabilities);
  const int top = bars_->topClass();
  prediction_->setText(top < 0 ? tr("Prediction") : tr("Prediction: %1").arg(bars_->classNames()[top]));
}

void TryItPanel::showValues(const std::vector<float>& values) {
  clearError();
  QStringList shown;
  for (const float v : values) shown << QString::number(v, 'g', 5);
  value_->setText(shown.join(QStringLiteral(", ")));
}

QString TryItPanel::valueText() const { return value_->text(); }

void TryItPanel::showReconstruction(const Tensor& raw) {
  clearError();
  // Raw pixels are in [0, 1]; an output a little outside is clipped, not stretched, so a faint
  // reconstruction looks faint beside its input.
  std::vector<float> pixels = raw.to_vector();
  for (float& v : pixels) v = std::clamp(v, 0.f, 1.f);
  reconstruction_image_ = thumbnailImage(pixels.data(), raw.shape());
  reconstruction_->setPixmap(magnified(reconstruction_image_, kPreviewSide));
  reconstruction_heading_->show();
  reconstruction_->show();
  // Without classes there is nothing else to say: the picture is the prediction.
  if (bars_->classNames().isEmpty()) {
    output_->hide();
    prediction_->hide();
  }
}

void TryItPanel::hideReconstruction() {
  reconstruction_image_ = QImage();
  reconstruction_->clear();
  reconstruction_heading_->hide();
  reconstruction_->hide();
  output_->show();
  prediction_->show();
}

void TryItPanel::showError(const QString& message) {
  error_->setText(message);
  error_->show();
}

QString TryItPanel::errorText() const { return error_->isHidden() ? QString() : error_->text(); }

void TryItPanel::clearError() {
  error_->hide();
  error_->clear();
}

void TryItPanel::setPictureConverter(PictureConverter convert) {
  convert_ = std::move(convert);
  if (picture_) updateInput();
}

bool TryItPanel::openImage(const QString& path) {
  try {
    openPicture(data::read_image(path.toStdString()));
  } catch (const std::exception& e) {
    showError(qstr(e.what()));
    return false;
  }
  return true;
}

void TryItPanel::openPicture(data::Image picture) {
  canvas_->setPicture(toQImage(picture));
  picture_ = std::move(picture);
  updateInput();
}

void TryItPanel::updateInput() {
  undo_->setEnabled(!canvas_->strokes().empty());
  clear_->setEnabled(!canvas_->isEmpty());
  if (mode_ != Mode::Drawing) {
    clearError();  // a character or a value taken out takes its message with it
    const bool table = mode_ == Mode::Table;
    if (table ? !table_->preparation() : text_->text().isEmpty() || !encode_) return setInput(Tensor());
    try {
      setInput(table ? table_->input() : encode_(text_->text()));
    } catch (const std::exception& e) {
      showError(qstr(e.what()));
      setInput(Tensor());
    }
    return;
  }
  if (!isImageInput(shape_)) return setInput(Tensor());
  try {
    if (picture_)
      setInput(convert_(*picture_, shape_));
    else
      setInput(drawingToInput(canvas_->render(kDrawingSide), shape_).value_or(Tensor()));
  } catch (const std::exception& e) {
    showError(qstr(e.what()));
    setInput(Tensor());
  }
}

void TryItPanel::setInput(Tensor input) {
  if (sameValues(input, input_)) return;
  input_ = std::move(input);
  if (input_.defined() && mode_ == Mode::Drawing) {
    const Tensor pixels = input_.contiguous();
    input_image_ = thumbnailImage(pixels.data(), pixels.shape());
  } else {
    input_image_ = QImage();
  }
  showPreview();
  if (!input_.defined()) {
    hideReconstruction();
    bars_->setProbabilities({});
    value_->setText(QStringLiteral("—"));
    prediction_->setText(tr("Prediction"));
  }
  emit inputChanged(input_);
}

void TryItPanel::showPreview() {
  if (input_image_.isNull()) {
    preview_->clear();
    return;
  }
  preview_->setPixmap(magnified(input_image_, kPreviewSide));
}

void TryItPanel::dragEnterEvent(QDragEnterEvent* event) {
  if (pages_->currentIndex() == 0 && mode_ == Mode::Drawing && !droppedImage(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void TryItPanel::dropEvent(QDropEvent* event) {
  const QString path = droppedImage(event->mimeData());
  if (path.isEmpty() || mode_ != Mode::Drawing) return;
  event->acceptProposedAction();
  openImage(path);
}

}  // namespace plexus::widgets
