#include "featuremaps/activation_gallery.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QStackedWidget>
#include <QVBoxLayout>

#include "common/panel_style.h"
#include "featuremaps/tile_grid.h"

namespace plexus::widgets {

ActivationGallery::ActivationGallery(QWidget* parent) : QWidget(parent) {
  title_ = sectionLabel(QString(), this);
  title_->setWordWrap(true);
  pages_ = new QStackedWidget(this);

  progressPage_ = new QWidget(pages_);
  progress_ = new QProgressBar(progressPage_);
  stop_ = new QPushButton(tr("Stop"), progressPage_);
  auto* row = new QHBoxLayout(progressPage_);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(progress_, 1);
  row->addWidget(stop_);
  connect(stop_, &QPushButton::clicked, this, &ActivationGallery::stopRequested);

  message_ = new QLabel(pages_);
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  pictures_ = new TileGrid(pages_);
  texts_ = new QListWidget(pages_);
  texts_->setMinimumHeight(200);
  for (QWidget* page : {progressPage_, static_cast<QWidget*>(message_), static_cast<QWidget*>(pictures_),
                        static_cast<QWidget*>(texts_)})
    pages_->addWidget(page);
  connect(pictures_, &TileGrid::tileClicked, this, &ActivationGallery::exampleClicked);
  connect(texts_, &QListWidget::itemClicked, this,
          [this](QListWidgetItem* item) { emit exampleClicked(texts_->row(item)); });

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title_);
  layout->addWidget(pages_);
  setVisible(false);  // until a channel is chosen
}

void ActivationGallery::showProgress(const QString& title, int64_t done, int64_t total) {
  title_->setText(title);
  progress_->setRange(0, int(std::max<int64_t>(total, 1)));
  progress_->setValue(int(std::min(done, total)));
  progress_->setFormat(tr("%1 of %2 examples").arg(done).arg(total));
  examples_.clear();
  pages_->setCurrentWidget(progressPage_);
  setVisible(true);
}

void ActivationGallery::showExamples(const QString& title, std::vector<Example> examples) {
  title_->setText(title);
  examples_ = std::move(examples);
  const bool text = !examples_.empty() && examples_.front().picture.isNull();
  if (text) {
    texts_->clear();
    for (const Example& e : examples_) {
      auto* item = new QListWidgetItem(QStringLiteral("%1   %2").arg(e.activation, 7, 'f', 3).arg(e.text), texts_);
      item->setToolTip(e.toolTip);
    }
    pages_->setCurrentWidget(texts_);
  } else {
    std::vector<TileGrid::Tile> tiles;
    for (const Example& e : examples_) tiles.push_back({e.picture, QString::number(e.activation, 'f', 2), e.toolTip});
    pictures_->setTiles(std::move(tiles), 56);
    pages_->setCurrentWidget(pictures_);
  }
  setVisible(true);
}

void ActivationGallery::showError(const QString& title, const QString& message) {
  title_->setText(title);
  examples_.clear();
  message_->setText(message);
  pages_->setCurrentWidget(message_);
  setVisible(true);
}

QString ActivationGallery::title() const { return title_->text(); }
bool ActivationGallery::busy() const { return !isHidden() && pages_->currentWidget() == progressPage_; }

}  // namespace plexus::widgets
