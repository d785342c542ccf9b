#include "dashboard/text_samples.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>

#include "dashboard/epoch_chooser.h"

namespace plexus::widgets {

TextSamplesView::TextSamplesView(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel(tr("Samples appear after each epoch"), this);
  title_->setObjectName(QStringLiteral("sampleTitle"));
  epochs_ = new EpochChooser(QStringLiteral("sampleEpoch"), tr("The epoch whose samples are shown"), this);
  text_ = new QPlainTextEdit(this);
  text_->setObjectName(QStringLiteral("sampleText"));
  text_->setReadOnly(true);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setStyleHint(QFont::Monospace);  // where the system names no fixed font
  text_->setFont(mono);
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);  // a sample is a line, as the model wrote it

  layOutEpochView(this, title_, epochs_, text_);
  connect(epochs_, &EpochChooser::chosen, this, &TextSamplesView::showEpoch);
}

void TextSamplesView::clear() {
  samples_.clear();
  epochs_->clear();
  text_->clear();
  title_->setText(tr("Samples appear after each epoch"));
}

void TextSamplesView::addEpoch(int epoch, const std::vector<QString>& samples) {
  samples_[epoch] = samples;
  if (epochs_->add(epoch)) showEpoch(epoch);
}

void TextSamplesView::showEpoch(int epoch) {
  const auto it = samples_.find(epoch);
  if (it == samples_.end()) return;
  epochs_->select(epoch);
  title_->setText(tr("Generated after epoch %1").arg(epoch));
  QStringList lines;
  for (const QString& s : it->second) lines << s;
  text_->setPlainText(lines.join(QLatin1Char('\n')));
}

int TextSamplesView::shownEpoch() const { return epochs_->shown(); }

QString TextSamplesView::text() const { return text_->toPlainText(); }

}  // namespace plexus::widgets
