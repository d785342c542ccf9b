#include "tryit/attribution_view.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QVBoxLayout>
#include <algorithm>

#include "common/panel_style.h"
#include "explain/attribution.h"
#include "tryit/heat_colours.h"
#include "explain/heat_image.h"
#include "tryit/model_input.h"

namespace plexus::widgets {

namespace {

constexpr int kPictureSide =
    140;  // 5 × MNIST's 28, the size of the panel's input preview: the column fits at 1280 × 800

}  // namespace

AttributionView::AttributionView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("attributionView"));
  method_ = new QComboBox(this);
  method_->setObjectName(QStringLiteral("attributionMethod"));
  using M = explain::AttributionMethod;
  const std::pair<M, QString> methods[] = {
      {M::Saliency, tr("Saliency")},     {M::GradientTimesInput, tr("Gradient × input")},
      {M::SmoothGrad, tr("SmoothGrad")}, {M::IntegratedGradients, tr("Integrated gradients")},
      {M::GradCam, tr("Grad-CAM")},
  };
  for (const auto& [method, name] : methods) method_->addItem(name, int(method));
  method_->setToolTip(
      tr("Saliency: how much each input value moves the class's score. Gradient × input: that, times the value. "
         "SmoothGrad: saliency averaged over noisy copies. Integrated gradients: the score's change from a black "
         "picture (or no text), shared out. Grad-CAM: where in a convolution's feature maps the class is."));
  class_ = new QComboBox(this);
  class_->setObjectName(QStringLiteral("attributionClass"));
  node_ = new QComboBox(this);
  node_->setObjectName(QStringLiteral("attributionNode"));
  node_->setToolTip(tr("The node whose feature maps Grad-CAM weighs: one with a picture-shaped output"));
  for (QComboBox* box : {method_, class_, node_}) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(5);
    guardWheel(box);
  }
  node_label_ = new QLabel(tr("Node"), this);

  picture_ = new QLabel(this);
  picture_->setObjectName(QStringLiteral("attributionPicture"));
  picture_->setFixedSize(kPictureSide, kPictureSide);
  picture_->setAlignment(Qt::AlignCenter);
  picture_->setStyleSheet(QStringLiteral("QLabel { background: black; }"));
  text_ = new QLabel(this);
  text_->setObjectName(QStringLiteral("attributionText"));
  text_->setTextFormat(Qt::RichText);
  text_->setWordWrap(true);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(mono.pointSizeF() * 1.6);
  text_->setFont(mono);
  legend_ = new HeatLegend(this);
  legend_->setEnds(tr("none"), tr("most"));
  legend_->setToolTip(tr("Bright: the parts of the input that moved the class's score most"));
  opacity_ = new QSlider(Qt::Horizontal, this);
  opacity_->setObjectName(QStringLiteral("attributionOpacity"));
  opacity_->setRange(0, 100);
  opacity_->setValue(65);
  opacity_->setToolTip(tr("0: the input alone; 100: the heat map alone"));
  opacity_label_ = new QLabel(tr("Opacity"), this);
  caption_ = new QLabel(this);
  caption_->setObjectName(QStringLiteral("attributionCaption"));
  caption_->setWordWrap(true);
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_ = errorLabel(QStringLiteral("attributionError"), this);

  auto* form = new QFormLayout;
  form->setContentsMargins(0, 0, 0, 0);
  form->addRow(tr("Method"), method_);
  form->addRow(tr("Class"), class_);
  form->addRow(node_label_, node_);
  auto* opacity = new QHBoxLayout;
  opacity->addWidget(opacity_label_);
  opacity->addWidget(opacity_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(sectionLabel(tr("Why this prediction"), this));
  layout->addLayout(form);
  layout->addSpacing(6);
  layout->addWidget(picture_);
  layout->addWidget(text_);
  layout->addWidget(legend_);
  layout->addLayout(opacity);
  layout->addWidget(caption_);
  layout->addWidget(error_);
  layout->addStretch();

  setClasses({});
  updateNodeRow();
  showMessage(QString());
  connect(method_, &QComboBox::currentIndexChanged, this, [this] {
    updateNodeRow();
    emit requestChanged();
  });
  connect(class_, &QComboBox::currentIndexChanged, this, &AttributionView::requestChanged);
  connect(node_, &QComboBox::currentIndexChanged, this, [this] {
    if (method_->currentData().toInt() == int(explain::AttributionMethod::GradCam)) emit requestChanged();
  });
  connect(opacity_, &QSlider::valueChanged, this, &AttributionView::render);
}

AttributionView::Request AttributionView::request() const {
  Request r;
  r.method = method_->currentData().toInt();
  r.target = class_->currentIndex() < 0 ? -1 : class_->currentData().toInt();
  r.node = node_->currentText();
  return r;
}

void AttributionView::setClasses(const QStringList& names) {
  QStringList now;
  for (int i = 1; i < class_->count(); ++i) now << class_->itemText(i);
  if (!class_->count() || now != names) {
    const QSignalBlocker quiet(class_);
    const int chosen = class_->currentIndex();
    class_->clear();
    class_->addItem(tr("The top one"), -1);
    for (int i = 0; i < names.size(); ++i) class_->addItem(names[i], i);
    class_->setCurrentIndex(chosen > 0 && chosen < class_->count() ? chosen : 0);
  }
  class_->setEnabled(!names.isEmpty());
}

void AttributionView::chooseClass(int cls) {
  const int index = class_->findData(cls);
  if (index >= 0) class_->setCurrentIndex(index);
}

void AttributionView::setNodes(const QStringList& nodes) {
  if (replaceItemsKeepingChoice(node_, nodes, -1)) updateNodeRow();
}

void AttributionView::updateNodeRow() {
  const bool gradcam = method_->currentData().toInt() == int(explain::AttributionMethod::GradCam);
  node_label_->setVisible(gradcam);
  node_->setVisible(gradcam);
  node_->setEnabled(node_->count() > 0);
}

void AttributionView::showPicture(const Tensor& picture, const Tensor& heat, const QString& caption) {
  picture_in_ = picture;
  heat_ = heat;
  tints_.clear();
  error_->hide();
  caption_->setText(caption);
  picture_->show();
  text_->hide();
  legend_->show();
  opacity_->show();
  opacity_label_->show();
  render();
}

void AttributionView::render() {
  if (!picture_in_.defined()) return;
  // Core draws it as `plexus-cli explain` does, at the model's resolution; enlarged by a whole
  // factor here where it fits, so the model's pixels each stay visible.
  shown_ = toQImage(explain::heat_over_picture(picture_in_, heat_, float(opacity_->value()) / 100.f, 1));
  const int longest = std::max(shown_.width(), shown_.height());
  const int factor = std::max(1, kPictureSide / std::max(1, longest));
  const QSize size = longest * factor <= kPictureSide
                         ? shown_.size() * factor
                         : shown_.size().scaled(kPictureSide, kPictureSide, Qt::KeepAspectRatio);
  picture_->setPixmap(QPixmap::fromImage(shown_.scaled(size, Qt::IgnoreAspectRatio, Qt::FastTransformation)));
}

std::vector<float> AttributionView::heat() const {
  return heat_.defined() ? heat_.contiguous().to_vector() : std::vector<float>{};
}

void AttributionView::showText(const QStringList& characters, const std::vector<float>& heat, const QString& caption) {
  picture_in_ = Tensor();
  shown_ = QImage();
  heat_ = from_vector(heat, {int64_t(heat.size())});
  tints_.clear();
  error_->hide();
  caption_->setText(caption);
  const float top = heat.empty() ? 0.f : *std::max_element(heat.begin(), heat.end());
  QString html;
  for (int i = 0; i < characters.size() && size_t(i) < heat.size(); ++i) {
    const QColor tint = heatColour(top > 0 ? heat[size_t(i)] / top : 0.0);
    tints_.push_back(tint);
    const QString shown =
        characters[i] == QLatin1String(" ") ? QStringLiteral("&nbsp;") : characters[i].toHtmlEscaped();
    html += QStringLiteral("<span style=\"background-color:%1; color:%2\">%3</span>")
                .arg(tint.name(), textOn(tint).name(), shown);
  }
  text_->setText(html);
  picture_->hide();
  text_->show();
  legend_->show();
  opacity_->hide();
  opacity_label_->hide();
}

void AttributionView::showMessage(const QString& message) {
  picture_in_ = heat_ = Tensor();
  shown_ = QImage();
  tints_.clear();
  error_->hide();
  caption_->setText(message);
  picture_->clear();
  text_->clear();
  text_->hide();
  picture_->hide();
  legend_->hide();
  opacity_->hide();
  opacity_label_->hide();
}

void AttributionView::showError(const QString& message) {
  showMessage(QString());
  error_->setText(message);
  error_->show();
}

QString AttributionView::caption() const { return caption_->text(); }

QString AttributionView::errorText() const { return error_->isHidden() ? QString() : error_->text(); }

}  // namespace plexus::widgets
