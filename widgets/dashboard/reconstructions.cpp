#include "dashboard/reconstructions.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QVBoxLayout>

#include <algorithm>

#include "common/image_thumbnail.h"

namespace plexus::widgets {

// Two rows of pictures, inputs above outputs, each column one example, as large as the widget
// allows at whole-pixel steps (a 28×28 digit stays sharp).
class ReconstructionPairs : public QWidget {
 public:
  explicit ReconstructionPairs(QWidget* parent) : QWidget(parent) { setMinimumSize(160, 90); }

  void set(std::vector<QImage> inputs, std::vector<QImage> outputs) {
    inputs_ = std::move(inputs);
    outputs_ = std::move(outputs);
    update();
  }
  int count() const { return int(inputs_.size()); }
  QImage input(int i) const { return inputs_.at(size_t(i)); }
  QImage output(int i) const { return outputs_.at(size_t(i)); }

 protected:
  void paintEvent(QPaintEvent*) override {
    if (inputs_.empty()) return;
    QPainter p(this);
    const int gap = 6, label = fontMetrics().height() + 2;
    const QSize picture = inputs_.front().size();
    const int n = count();
    const int cell_w = std::max(1, (width() - gap * (n + 1)) / n);
    const int cell_h = std::max(1, (height() - 2 * label - 3 * gap) / 2);
    const double fit = std::min(double(cell_w) / picture.width(), double(cell_h) / picture.height());
    const double scale = fit >= 1 ? std::floor(fit) : fit;  // whole pixels when magnified
    const QSize shown(std::max(1, int(picture.width() * scale)), std::max(1, int(picture.height() * scale)));
    const int left = (width() - n * shown.width() - (n - 1) * gap) / 2;
    p.setPen(palette().color(QPalette::WindowText));
    const auto row = [&](const std::vector<QImage>& images, int top, const QString& caption) {
      p.drawText(QRect(0, top, width(), label), Qt::AlignLeft | Qt::AlignVCenter, caption);
      for (int i = 0; i < n; ++i)
        p.drawImage(QRect(QPoint(left + i * (shown.width() + gap), top + label), shown), images[size_t(i)]);
    };
    row(inputs_, gap, tr("Inputs"));
    row(outputs_, 2 * gap + label + shown.height(), tr("Reconstructions"));
  }

 private:
  std::vector<QImage> inputs_, outputs_;
};

ReconstructionsView::ReconstructionsView(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel(tr("Reconstructions appear after each epoch"), this);
  title_->setObjectName(QStringLiteral("reconstructionTitle"));
  epochs_ = new QComboBox(this);
  epochs_->setObjectName(QStringLiteral("reconstructionEpoch"));
  epochs_->setToolTip(tr("The epoch whose reconstructions are shown"));
  epochs_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  pairs_ = new ReconstructionPairs(this);
  auto* head = new QHBoxLayout;
  head->addWidget(title_, 1);
  head->addWidget(epochs_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(head);
  layout->addWidget(pairs_, 1);
  connect(epochs_, &QComboBox::activated, this, [this](int index) { showEpoch(epochs_->itemData(index).toInt()); });
}

void ReconstructionsView::clear() {
  epochs_seen_.clear();
  epochs_->clear();
  pairs_->set({}, {});
  title_->setText(tr("Reconstructions appear after each epoch"));
}

void ReconstructionsView::addEpoch(int epoch, const train::Reconstructions& pairs) {
  if (pairs.empty() || !isImageShape(pairs.example)) return;
  const bool following = epochs_->count() == 0 || epochs_->currentIndex() == 0;
  epochs_seen_[epoch] = pairs;
  epochs_->insertItem(0, tr("Epoch %1").arg(epoch), epoch);
  if (following) showEpoch(epoch);
}

void ReconstructionsView::showEpoch(int epoch) {
  const auto it = epochs_seen_.find(epoch);
  if (it == epochs_seen_.end()) return;
  epochs_->setCurrentIndex(epochs_->findData(epoch));
  const train::Reconstructions& r = it->second;
  const Shape example(r.example.begin(), r.example.end());
  const size_t size = size_t(numel(example));
  // Raw pixels in [0, 1] keep their meaning; an output a little outside is clipped to it rather
  // than stretched, so a faint reconstruction looks faint beside its input.
  const bool unit = std::all_of(r.inputs.begin(), r.inputs.end(), [](float v) { return v >= 0.f && v <= 1.f; });
  std::vector<QImage> inputs, outputs;
  for (size_t at = 0; at + size <= r.inputs.size(); at += size) {
    inputs.push_back(thumbnailImage(r.inputs.data() + at, example));
    std::vector<float> out(r.outputs.begin() + std::ptrdiff_t(at), r.outputs.begin() + std::ptrdiff_t(at + size));
    if (unit)
      for (float& v : out) v = std::clamp(v, 0.f, 1.f);
    outputs.push_back(thumbnailImage(out.data(), example));
  }
  pairs_->set(std::move(inputs), std::move(outputs));
  title_->setText(tr("Validation examples and their reconstructions after epoch %1").arg(epoch));
}

int ReconstructionsView::shownEpoch() const { return epochs_->count() ? epochs_->currentData().toInt() : 0; }
int ReconstructionsView::pairCount() const { return pairs_->count(); }
QImage ReconstructionsView::input(int i) const { return pairs_->input(i); }
QImage ReconstructionsView::output(int i) const { return pairs_->output(i); }

}  // namespace plexus::widgets
