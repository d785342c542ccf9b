#include "tryit_explainer.h"

#include <QComboBox>
#include <QLineEdit>
#include <QWidget>
#include <algorithm>
#include <exception>

#include "common/qt_text.h"
#include "tryit/attention_view.h"
#include "explain/attribution.h"
#include "tryit/attribution_view.h"
#include "explain/probe.h"
#include "predictor.h"
#include "tryit/probability_bars.h"
#include "tryit/text_prompt.h"
#include "tryit/tryit_panel.h"

namespace plexus::app {

namespace {

const QString kAttributions = QStringLiteral("tryit-attributions");
const QString kAttention = QStringLiteral("tryit-attention");

QStringList stringList(const std::vector<std::string>& strings) {
  QStringList out;
  for (const std::string& s : strings) out << widgets::qstr(s);
  return out;
}

// What the model was shown, for the caption and the heat map: a picture, or the characters typed.
struct Explained {
  Tensor picture;          // [C, H, W], or undefined for text
  QStringList characters;  // the text's, as the model reads them
  Tensor heat;
  QString caption;
};

QString captionOf(const explain::Attribution& a, const QString& method, const QStringList& classes, bool text) {
  const QString cls = a.target < classes.size() ? classes[int(a.target)] : QObject::tr("output %1").arg(a.target);
  QString caption = a.method == explain::AttributionMethod::GradCam
                        ? QObject::tr("%1 at %2 for “%3” (score %4).").arg(method, widgets::qstr(a.node), cls)
                        : QObject::tr("%1 for “%2” (score %3).").arg(method, cls);
  caption = caption.arg(double(a.score), 0, 'g', 4);
  if (a.method == explain::AttributionMethod::IntegratedGradients)
    caption +=
        QLatin1Char(' ') + (text ? QObject::tr("From no text (score %1): the attributions add up to the difference.")
                                 : QObject::tr("From a black picture (score %1): the attributions add up to the "
                                               "difference."))
                               .arg(double(a.baseline_score), 0, 'g', 4);
  return caption;
}

}  // namespace

TryItExplainer::TryItExplainer(Predictor* predictor, widgets::TryItPanel* panel, widgets::TextPrompt* prompt,
                               QWidget* parent)
    : QObject(parent), predictor_(predictor), panel_(panel), prompt_(prompt) {
  attributions_ = new widgets::AttributionView(parent);
  attention_ = new widgets::AttentionView(parent);
  attention_->hide();  // until a model has MultiheadAttention nodes

  connect(attributions_, &widgets::AttributionView::requestChanged, this, &TryItExplainer::inspectAttributions);
  connect(panel_->bars(), &widgets::ProbabilityBars::classClicked, attributions_,
          &widgets::AttributionView::chooseClass);
  connect(attention_, &widgets::AttentionView::nodeChanged, this, &TryItExplainer::inspectAttention);
  connect(prompt_->promptField(), &QLineEdit::textChanged, this, [this] {
    if (!panel_shown_) inspectAttention();
  });
  connect(predictor_, &Predictor::modelChanged, this,
          [this](const QString&, const QStringList& class_names) { attributions_->setClasses(class_names); });
  connect(predictor_, &Predictor::inspectionFailed, this, [this](const QString& key, const QString& message) {
    if (key == kAttributions) {
      attributions_->showError(message);
      emit attributionShown();
    } else if (key == kAttention) {
      attention_->showError(message);
      emit attentionShown();
    }
  });
  inspectAttributions();
  inspectAttention();
}

void TryItExplainer::setPanelShown(bool shown) {
  if (shown == panel_shown_) return;
  panel_shown_ = shown;
  attributions_->setVisible(shown);
  inspectAttributions();
  inspectAttention();
}

void TryItExplainer::inspectAttributions() {
  if (!panel_shown_) return predictor_->setInspection(kAttributions, {});
  const widgets::AttributionView::Request request = attributions_->request();
  explain::AttributionOptions options;
  options.method = explain::AttributionMethod(request.method);
  options.target = request.target;
  options.node = request.node.toStdString();
  widgets::AttributionView* view = attributions_;
  const QString method = attributions_->methodBox()->currentText();
  predictor_->setInspection(
      kAttributions,
      [this, view, options, method](const session::TrainedModel& model, const Tensor& input) -> std::function<void()> {
        const QStringList classes = stringList(model.class_names);
        const QStringList nodes = stringList(explain::picture_nodes(model));
        const bool text = !model.vocabulary.empty() && input.defined() && input.dim() == 1;
        std::optional<Explained> shown;
        QString error, message;
        if (!input.defined()) {
          message = tr("Draw or open a picture, or type a text: its heat map shows here.");
        } else if (input.dim() != 3 && !text) {
          message = tr("Heat maps are drawn over pictures and typed text; this model's input is %1.")
                        .arg(widgets::qstr(to_string(input.shape())));
        } else {
          try {
            const explain::Attribution a = explain::attribute(model, input, options);
            Explained e;
            e.heat = a.heat;
            if (text) {
              const std::vector<float> ids = input.contiguous().to_vector();
              for (const float id : ids) {
                if (id < 1 || size_t(id) > model.vocabulary.size()) break;  // 0 pads the text's end
                e.characters << widgets::qstr(model.vocabulary[size_t(id) - 1]);
              }
            } else {
              e.picture = input;
            }
            e.caption = captionOf(a, method, classes, text);
            shown = std::move(e);
          } catch (const std::exception& e) {
            error = widgets::qstr(e.what());
          }
        }
        return [this, view, classes, nodes, shown = std::move(shown), error, message] {
          view->setClasses(classes);
          view->setNodes(nodes);
          if (!error.isEmpty())
            view->showError(error);
          else if (!shown)
            view->showMessage(message);
          else if (!shown->characters.isEmpty())
            view->showText(shown->characters, shown->heat.contiguous().to_vector(), shown->caption);
          else
            view->showPicture(shown->picture, shown->heat, shown->caption);
          emit attributionShown();
        };
      });
}

void TryItExplainer::inspectAttention() {
  const bool from_panel = panel_shown_;
  const std::string typed = prompt_->promptField()->text().toStdString();
  const std::string chosen = attention_->node().toStdString();
  widgets::AttentionView* view = attention_;
  predictor_->setInspection(
      kAttention,
      [this, view, from_panel, typed, chosen](const session::TrainedModel& model,
                                              const Tensor& input) -> std::function<void()> {
        const std::vector<std::string> nodes = explain::attention_nodes(model);
        if (nodes.empty())
          return [view] {
            view->setNodes({});
            view->hide();
          };
        const std::string node = std::find(nodes.begin(), nodes.end(), chosen) != nodes.end() ? chosen : nodes.front();
        std::optional<explain::AttentionMap> map;
        QString error, message;
        if (from_panel ? !input.defined() : typed.empty()) {
          message = from_panel ? tr("Type a text: the attention of its characters shows here.")
                               : tr("Type a prompt: the attention of its characters shows here.");
        } else {
          try {
            map = from_panel ? explain::attention_map(model, input, node) : explain::attention_map(model, typed, node);
          } catch (const std::exception& e) {
            error = widgets::qstr(e.what());
          }
        }
        return [this, view, nodes = stringList(nodes), map = std::move(map), error, message] {
          view->show();
          view->setNodes(nodes);
          if (!error.isEmpty()) {
            view->showError(error);
          } else if (!map) {
            view->showMessage(message);
          } else {
            const Shape& s = map->weights.shape();
            view->showWeights(map->weights.contiguous().to_vector(), int(s[0]), int(s[1]), int(s[2]),
                              stringList(map->tokens));
          }
          emit attentionShown();
        };
      });
}

}  // namespace plexus::app
