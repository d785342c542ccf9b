#pragma once
// AttributionView: which parts of the input Try It holds made the model give a class its score.
// Choosers for the method (saliency, gradient × input, SmoothGrad, integrated gradients,
// Grad-CAM), the class explained (the top one by default) and Grad-CAM's node; the heat map laid
// over the input picture with an opacity slider and a legend, or for typed text each character
// tinted by its share. It shows and asks only: requestChanged() says a chooser changed, and the
// app computes (explain::attribute, off the UI thread) and hands the result back.
#include <QImage>
#include <QStringList>
#include <QWidget>
#include <vector>

#include "tensor/tensor.h"

class QComboBox;
class QLabel;
class QSlider;

namespace plexus::widgets {

class HeatLegend;

class AttributionView : public QWidget {
  Q_OBJECT

 public:
  explicit AttributionView(QWidget* parent = nullptr);

  // What the choosers ask for: `method` an explain::AttributionMethod as int, `target` the class
  // (-1: the top one), `node` Grad-CAM's (empty: the model's default).
  struct Request {
    int method = 0;
    int target = -1;
    QString node;
  };
  Request request() const;

  // The model's classes (empty: none yet); keeps the chosen class when it is still there.
  void setClasses(const QStringList& names);
  // Grad-CAM's candidates (picture-shaped outputs), the last chosen by default; keeps the chosen one.
  void setNodes(const QStringList& nodes);
  // Chooses `cls` to explain (-1: the top one), as the class box does; emits requestChanged().
  void chooseClass(int cls);

  // A picture's heat: `heat` [H, W], values ≥ 0, over `picture` [C, H, W] (the input as fed, raw);
  // `caption` says what it is ("Grad-CAM at conv2 for “7” (score 12.3).").
  void showPicture(const Tensor& picture, const Tensor& heat, const QString& caption);
  // A text's heat: one value ≥ 0 per character of `characters` (as the model reads them).
  void showText(const QStringList& characters, const std::vector<float>& heat, const QString& caption);
  // Nothing to explain yet, and why ("Draw a digit…"), or an error (shown in place, styled so).
  void showMessage(const QString& message);
  void showError(const QString& message);

  QComboBox* methodBox() const { return method_; }
  QComboBox* classBox() const { return class_; }
  QComboBox* nodeBox() const { return node_; }
  QSlider* opacitySlider() const { return opacity_; }
  QImage shownImage() const { return shown_; }                   // null unless a picture's heat is shown
  std::vector<float> heat() const;                               // the values shown (a picture's or a text's)
  std::vector<QColor> characterTints() const { return tints_; }  // empty unless a text's heat is shown
  QString caption() const;
  QString errorText() const;  // "" when none is shown

 signals:
  void requestChanged();

 private:
  void render();
  void updateNodeRow();

  QComboBox* method_;
  QComboBox* class_;
  QComboBox* node_;
  QLabel* node_label_;
  QLabel* picture_;
  QLabel* text_;
  HeatLegend* legend_;
  QSlider* opacity_;
  QLabel* opacity_label_;
  QLabel* caption_;
  QLabel* error_;
  Tensor picture_in_, heat_;  // a picture's, or a text's heat alone
  QImage shown_;
  std::vector<QColor> tints_;
};

}  // namespace plexus::widgets
