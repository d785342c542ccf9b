#pragma once
// Try It for a text project: a prompt the model continues, the temperature and how many
// samples, a Generate button, and what the model wrote. It shows and asks; the page's Predictor
// generates, off the UI thread.
#include <QString>
#include <QStringList>
#include <QWidget>

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace plexus::widgets {

class TextPrompt : public QWidget {
  Q_OBJECT
 public:
  explicit TextPrompt(QWidget* parent = nullptr);

  // The model that generates; Generate waits for one.
  void setModel(const QString& description);
  bool hasModel() const { return has_model_; }
  void showSamples(const QStringList& samples);
  void showError(const QString& message);

  QLineEdit* promptField() const { return prompt_; }
  QString generatedText() const;  // the samples shown, one a line
  QString errorText() const;      // "" when none

 signals:
  // Generate (or Return in the prompt): continue `prompt` ("" lets the model begin) `count` times.
  void generateRequested(const QString& prompt, double temperature, int count);

 private:
  void requestGeneration();

  QLabel* model_;
  QLineEdit* prompt_;
  QDoubleSpinBox* temperature_;
  QSpinBox* count_;
  QPushButton* generate_;
  QPlainTextEdit* output_;
  QLabel* error_;
  bool has_model_ = false;
  bool waiting_ = false;  // a request is out: Generate waits for its answer
};

}  // namespace plexus::widgets
