#pragma once
// TryItPanel: try a model on one's own input. A canvas to draw on (Clear, Undo), Open Image… and
// drops of PNG, JPEG or BMP files, the exact input the model is fed (at its resolution,
// magnified, in colour for an RGB model), and what the model makes of it: class probabilities
// as bars, or the value of a regression.
// A model of labelled texts gets a text field instead of the drawing: each edit is encoded and
// fed, so the bars follow the typing. A model of a CSV file gets a form of its feature columns
// (TableForm), its row prepared as training prepared rows; a value a column cannot take shows
// its message beside the form. A project whose input is none of these gets a message saying
// the panel needs an image.
//
// It shows and edits only: it emits the model input (inputChanged) and is handed back the
// model's output (showProbabilities, showValues); it never touches a model.
#include <QImage>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <optional>
#include <vector>

#include "data/image_file.h"
#include "data/table_prep.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

class QLabel;
class QLineEdit;
class QStackedWidget;
class QToolButton;

namespace plexus::widgets {

class DigitCanvas;
class ProbabilityBars;
class TableForm;

class TryItPanel : public QWidget {
  Q_OBJECT

 public:
  explicit TryItPanel(QWidget* parent = nullptr);

  // The model's input shape per example. An image input [C, H, W] (C 1 or 3) enables the panel
  // and converts the current drawing or picture again; anything else shows why it cannot be used
  // (`what` names the input, e.g. "13 CSV features").
  void setInputShape(const Shape& shape, const QString& what = QString());
  Shape inputShape() const { return shape_; }

  // How typed text becomes the model input [T] (the app gives data::encode_typed_text with the
  // model's vocabulary, length and lowercasing); its errors (a character the model does not
  // know) are shown in the panel.
  using TextEncoder = std::function<Tensor(const QString& text)>;
  // A model that classifies typed text (input `shape` [T]): the text field replaces the drawing.
  // `note` says how the model reads text; a null `encode` (no model yet) feeds nothing.
  void setTextInput(const Shape& shape, const QString& note, TextEncoder encode);
  bool textInput() const { return mode_ == Mode::Text; }
  QLineEdit* textField() const { return text_; }

  // A model of a CSV file's rows (null: such a project, no model yet): the form of its columns
  // replaces the drawing.
  void setTableInput(std::shared_ptr<const data::TablePreparation> preparation);
  bool tableInput() const { return mode_ == Mode::Table; }
  TableForm* tableForm() const { return table_; }

  // A model is ready: `description` says which, in a few words ("Live weights: Run 2, epoch 3");
  // `class_names` (empty for a regression) choose between bars and values. An empty
  // description: there is no model yet. Clears the shown output.
  void setModel(const QString& description, const QStringList& class_names);
  QString modelStatus() const;
  bool hasModel() const;
  // The model's output for the input emitted last: probabilities (one per class) or values.
  void showProbabilities(const std::vector<float>& probabilities);
  void showValues(const std::vector<float>& values);
  // A model scored against its input: its output for it, [C, H, W] in raw units, shown as a
  // picture beside the input (for a model that does not classify, instead of values).
  void showReconstruction(const Tensor& raw);
  QImage reconstructionImage() const { return reconstruction_image_; }  // null when none is shown
  // Shown until the next output or input (a file that would not open, a checkpoint that would
  // not load, a model that failed on the input).
  void showError(const QString& message);
  QString errorText() const;  // "" when none is shown

  // How an opened picture becomes the model's input of shape [C, H, W]: as the model's training
  // prepared its pictures (the app gives session::picture_input with the project's dataset
  // settings). data::image_to_input until set. Converts the shown picture again.
  using PictureConverter = std::function<Tensor(const data::Image& picture, const Shape& chw)>;
  void setPictureConverter(PictureConverter convert);

  // Shows an image file and feeds it; false (and the reason shown) when it cannot be read.
  bool openImage(const QString& path);
  // Shows a decoded picture (a dataset's example) and feeds it, as an opened file.
  void openPicture(data::Image picture);
  // The current input: [C, H, W] in raw units, or a text's ids [T]; undefined when there is none
  // (nothing drawn or typed).
  const Tensor& input() const { return input_; }
  QImage inputImage() const { return input_image_; }  // the input as a picture, H x W

  DigitCanvas* canvas() const { return canvas_; }
  ProbabilityBars* bars() const { return bars_; }
  QString valueText() const;  // what a regression shows

  // The Open Image dialog; replaceable so tests can answer it without a modal loop.
  std::function<QString()> chooseImage;

 signals:
  void inputChanged(const plexus::Tensor& raw);
  void loadCheckpointRequested();

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void updateInput();
  enum class Mode { Drawing, Text, Table };  // what feeds the model; the source_ page of each, in order
  void setMode(Mode mode);
  void setInput(Tensor input);
  void clearError();
  void showPreview();
  void hideReconstruction();

  Shape shape_;
  std::optional<data::Image> picture_;  // an opened file, as core decoded it
  PictureConverter convert_;
  Mode mode_ = Mode::Drawing;
  TextEncoder encode_;
  Tensor input_;
  QImage input_image_, reconstruction_image_;
  QStackedWidget* pages_;
  QStackedWidget* source_;  // the drawing, or the text field
  DigitCanvas* canvas_;
  QLineEdit* text_;
  QLabel* text_note_;
  TableForm* table_;
  QLabel* table_note_;
  QLabel* preview_heading_;
  QLabel* preview_;
  QLabel* preview_caption_;
  QLabel* reconstruction_;
  QLabel* reconstruction_heading_;
  QLabel* status_;
  QLabel* prediction_;  // "Prediction: 3"
  QLabel* unusable_;
  QLabel* error_;
  QStackedWidget* output_;
  ProbabilityBars* bars_;
  QLabel* value_;
  QLabel* no_output_;
  QToolButton* undo_;
  QToolButton* clear_;
};

}  // namespace plexus::widgets
