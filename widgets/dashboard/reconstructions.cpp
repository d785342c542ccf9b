#include "dashboard/reconstructions.h"

#include <QLabel>
#include <QPainter>

#include <algorithm>
#include <cmath>

#include "common/image_thumbnail.h"
#include "dashboard/epoch_chooser.h"

namespace plexus::widgets {

// Pictures in bands, each an input row above its reconstruction row, each column one example:
// as many columns per band as give the largest pictures, at whole-pixel steps once magnified
// twice or more (a 28×28 digit stays sharp).
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
    p.setRenderHint(QPainter::SmoothPixmapTransform);
    const int gap = 6, label = fontMetrics().height() + 2, n = count();
    const QSizeF picture = inputs_.front().size();
    // The band layout with the largest pictures: `columns` examples a band.
    int columns = n;
    double best = 0;
    for (int c = 1; c <= n; ++c) {
      const int bands = (n + c - 1) / c;
      const double w = double(width() - gap * (c + 1)) / c;
      const double h = double(height() - bands * (2 * label + 2 * gap)) / (2 * bands);
      const double fit = std::min(w / picture.width(), h / picture.height());
      if (fit > best) best = fit, columns = c;
    }
    const double scale = best >= 2 ? std::floor(best) : std::max(best, 0.1);
    if (scale >= 2) p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    const QSize shown(std::max(1, int(picture.width() * scale)), std::max(1, int(picture.height() * scale)));
    const int left = (width() - columns * shown.width() - (columns - 1) * gap) / 2;
    const int band = 2 * (label + shown.height()) + 2 * gap;
    p.setPen(palette().color(QPalette::WindowText));
    for (int i = 0; i < n; ++i) {
      const int x = left + (i % columns) * (shown.width() + gap), top = (i / columns) * band;
      if (i % columns == 0) {
        p.drawText(QRect(0, top, width(), label), Qt::AlignLeft | Qt::AlignVCenter, tr("Inputs"));
        p.drawText(QRect(0, top + label + shown.height() + gap, width(), label), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("Reconstructions"));
      }
      p.drawImage(QRect(QPoint(x, top + label), shown), inputs_[size_t(i)]);
      p.drawImage(QRect(QPoint(x, top + 2 * label + shown.height() + gap), shown), outputs_[size_t(i)]);
    }
  }

 private:
  std::vector<QImage> inputs_, outputs_;
};

ReconstructionsView::ReconstructionsView(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel(tr("Reconstructions appear after each epoch"), this);
  title_->setObjectName(QStringLiteral("reconstructionTitle"));
  epochs_ = new EpochChooser(QStringLiteral("reconstructionEpoch"), tr("The epoch whose reconstructions are shown"), this);
  pairs_ = new ReconstructionPairs(this);
  layOutEpochView(this, title_, epochs_, pairs_);
  connect(epochs_, &EpochChooser::chosen, this, &ReconstructionsView::showEpoch);
}

void ReconstructionsView::clear() {
  epochs_seen_.clear();
  epochs_->clear();
  pairs_->set({}, {});
  title_->setText(tr("Reconstructions appear after each epoch"));
}

void ReconstructionsView::addEpoch(int epoch, const train::Reconstructions& pairs) {
  if (pairs.empty() || !isImageShape(pairs.example)) return;
  epochs_seen_[epoch] = pairs;
  if (epochs_->add(epoch)) showEpoch(epoch);
}

void ReconstructionsView::showEpoch(int epoch) {
  const auto it = epochs_seen_.find(epoch);
  if (it == epochs_seen_.end()) return;
  epochs_->select(epoch);
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

int ReconstructionsView::shownEpoch() const { return epochs_->shown(); }
int ReconstructionsView::pairCount() const { return pairs_->count(); }
QImage ReconstructionsView::input(int i) const { return pairs_->input(i); }
QImage ReconstructionsView::output(int i) const { return pairs_->output(i); }

}  // namespace plexus::widgets
