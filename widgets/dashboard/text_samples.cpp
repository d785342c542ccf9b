#include "dashboard/text_samples.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

namespace plexus::widgets {

TextSamplesView::TextSamplesView(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel(tr("Samples appear after each epoch"), this);
  title_->setObjectName(QStringLiteral("sampleTitle"));
  epochs_ = new QComboBox(this);
  epochs_->setObjectName(QStringLiteral("sampleEpoch"));
  epochs_->setToolTip(tr("The epoch whose samples are shown"));
  epochs_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  text_ = new QPlainTextEdit(this);
  text_->setObjectName(QStringLiteral("sampleText"));
  text_->setReadOnly(true);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setStyleHint(QFont::Monospace);  // where the system names no fixed font
  text_->setFont(mono);
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);  // a sample is a line, as the model wrote it

  auto* head = new QHBoxLayout;
  head->addWidget(title_, 1);
  head->addWidget(epochs_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(head);
  layout->addWidget(text_, 1);
  connect(epochs_, &QComboBox::activated, this, [this](int index) { showEpoch(epochs_->itemData(index).toInt()); });
}

void TextSamplesView::clear() {
  samples_.clear();
  epochs_->clear();
  text_->clear();
  title_->setText(tr("Samples appear after each epoch"));
}

void TextSamplesView::addEpoch(int epoch, const std::vector<QString>& samples) {
  // Following the newest unless the user went back to read an earlier epoch.
  const bool following = epochs_->count() == 0 || epochs_->currentIndex() == 0;
  samples_[epoch] = samples;
  epochs_->insertItem(0, tr("Epoch %1").arg(epoch), epoch);
  if (following) showEpoch(epoch);
}

void TextSamplesView::showEpoch(int epoch) {
  const auto it = samples_.find(epoch);
  if (it == samples_.end()) return;
  epochs_->setCurrentIndex(epochs_->findData(epoch));
  title_->setText(tr("Generated after epoch %1").arg(epoch));
  QStringList lines;
  for (const QString& s : it->second) lines << s;
  text_->setPlainText(lines.join(QLatin1Char('\n')));
}

int TextSamplesView::shownEpoch() const { return epochs_->count() ? epochs_->currentData().toInt() : 0; }

QString TextSamplesView::text() const { return text_->toPlainText(); }

}  // namespace plexus::widgets
