#pragma once
// TryItExplainer: the Try It page's explanations, computed through its Predictor as standing
// inspections (off the UI thread, again whenever the live weights, a loaded checkpoint or the
// input change): the attributions of the panel's input (a picture or typed text) for the class
// and method its AttributionView chooses, and, for a model with MultiheadAttention nodes, the
// attention maps of the typed text (the text prompt's, for a text project) in its AttentionView.
// Errors are shown in the views, in place.
#include <QObject>
#include <QString>

namespace plexus::widgets {
class AttentionView;
class AttributionView;
class TextPrompt;
class TryItPanel;
}  // namespace plexus::widgets

class QWidget;

namespace plexus::app {

class Predictor;

class TryItExplainer : public QObject {
  Q_OBJECT

 public:
  // The views are made children of `parent`, for the page to lay out.
  TryItExplainer(Predictor* predictor, widgets::TryItPanel* panel, widgets::TextPrompt* prompt, QWidget* parent);

  widgets::AttributionView* attributions() const { return attributions_; }
  widgets::AttentionView* attention() const { return attention_; }

  // The page shows the panel (false: a text project's prompt): which inspections stand.
  void setPanelShown(bool shown);

 signals:
  void attributionShown();  // a heat map (or the reason there is none) for the current input and model
  void attentionShown();    // attention maps for the current text and model

 private:
  void inspectAttributions();
  void inspectAttention();

  Predictor* predictor_;
  widgets::TryItPanel* panel_;
  widgets::TextPrompt* prompt_;
  widgets::AttributionView* attributions_;
  widgets::AttentionView* attention_;
  bool panel_shown_ = true;
};

}  // namespace plexus::app
