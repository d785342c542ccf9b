#include "tryit/text_prompt.h"

#include <QDoubleSpinBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "common/panel_style.h"
#include "common/theme.h"

namespace plexus::widgets {

TextPrompt::TextPrompt(QWidget* parent) : QWidget(parent) {
  model_ = new QLabel(tr("No model yet: train the project, or load a checkpoint"), this);
  model_->setObjectName(QStringLiteral("textModel"));
  model_->setWordWrap(true);
  prompt_ = new QLineEdit(this);
  prompt_->setObjectName(QStringLiteral("textPrompt"));
  prompt_->setPlaceholderText(tr("Text the model continues (empty: it begins a new line)"));
  temperature_ = new QDoubleSpinBox(this);
  temperature_->setObjectName(QStringLiteral("textTemperature"));
  temperature_->setRange(0, 3);
  temperature_->setSingleStep(0.1);
  temperature_->setDecimals(2);
  temperature_->setValue(0.8);
  temperature_->setToolTip(tr("Lower: likelier characters; higher: more varied. 0: always the likeliest."));
  count_ = new QSpinBox(this);
  count_->setObjectName(QStringLiteral("textCount"));
  count_->setRange(1, 100);
  count_->setValue(5);
  generate_ = new QPushButton(tr("Generate"), this);
  generate_->setObjectName(QStringLiteral("textGenerate"));
  generate_->setEnabled(false);
  output_ = new QPlainTextEdit(this);
  output_->setObjectName(QStringLiteral("textGenerated"));
  output_->setReadOnly(true);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setStyleHint(QFont::Monospace);
  output_->setFont(mono);
  output_->setLineWrapMode(QPlainTextEdit::NoWrap);  // a sample a line, however long
  error_ = new QLabel(this);
  error_->setObjectName(QStringLiteral("textError"));
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->hide();

  auto* settings = new QHBoxLayout;
  settings->addWidget(new QLabel(tr("Temperature"), this));
  settings->addWidget(temperature_);
  settings->addSpacing(12);
  settings->addWidget(new QLabel(tr("Samples"), this));
  settings->addWidget(count_);
  settings->addStretch(1);
  settings->addWidget(generate_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(model_);
  layout->addWidget(prompt_);
  layout->addLayout(settings);
  layout->addWidget(error_);
  layout->addWidget(output_, 1);

  connect(generate_, &QPushButton::clicked, this, &TextPrompt::requestGeneration);
  connect(prompt_, &QLineEdit::returnPressed, this, &TextPrompt::requestGeneration);
}

void TextPrompt::setModel(const QString& description) {
  has_model_ = true;
  model_->setText(description);
  generate_->setEnabled(!waiting_);
}

void TextPrompt::requestGeneration() {
  if (!has_model_ || waiting_) return;
  waiting_ = true;
  generate_->setEnabled(false);
  generate_->setText(tr("Generating…"));
  error_->hide();
  emit generateRequested(prompt_->text(), temperature_->value(), count_->value());
}

void TextPrompt::showSamples(const QStringList& samples) {
  waiting_ = false;
  generate_->setText(tr("Generate"));
  generate_->setEnabled(has_model_);
  error_->hide();
  output_->setPlainText(samples.join(QLatin1Char('\n')));
}

void TextPrompt::showError(const QString& message) {
  waiting_ = false;
  generate_->setText(tr("Generate"));
  generate_->setEnabled(has_model_);
  setColour(error_, QPalette::WindowText, ThemeManager::instance().theme().error);
  error_->setText(message);
  error_->show();
}

QString TextPrompt::generatedText() const { return output_->toPlainText(); }

QString TextPrompt::errorText() const { return error_->isHidden() ? QString() : error_->text(); }

}  // namespace plexus::widgets
