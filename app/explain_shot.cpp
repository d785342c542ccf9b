#include "explain_shot.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QPushButton>
#include <QTimer>
#include <memory>

#include "tryit/attention_view.h"
#include "explain/attribution.h"
#include "tryit/attribution_view.h"
#include "main_window.h"
#include "tryit/text_prompt.h"
#include "tryit/tryit_panel.h"
#include "tryit_explainer.h"
#include "tryit_page.h"

namespace plexus::app {

namespace {

constexpr int kPatienceMs = 120000;  // a checkpoint's load and a few passes, on a loaded machine

}  // namespace

void whenExplanationsShown(MainWindow& window, const QString& method, const QString& prompt,
                           std::function<void()> ready, std::function<void(const QString&)> failed) {
  TryItPage* page = window.tryIt();
  widgets::AttributionView* attributions = page->explainer()->attributions();
  if (!method.isEmpty()) {
    const std::optional<explain::AttributionMethod> m = explain::parse_method(method.toStdString());
    const int index = m ? attributions->methodBox()->findData(int(*m)) : -1;
    if (index < 0) return failed(QObject::tr("unknown method '%1'").arg(method));
    attributions->methodBox()->setCurrentIndex(index);
  }
  auto* poll = new QTimer(&window);
  auto since = std::make_shared<QElapsedTimer>();
  since->start();
  auto prompted = std::make_shared<bool>(false);
  QObject::connect(poll, &QTimer::timeout, &window, [page, attributions, prompt, ready, failed, poll, since, prompted] {
    if (since->elapsed() > kPatienceMs) {
      poll->stop();
      return failed(QObject::tr("Try It showed no explanation within %1 s").arg(kPatienceMs / 1000));
    }
    bool shown = false;
    if (page->textPrompt()->isVisibleTo(page)) {
      widgets::TextPrompt* text = page->textPrompt();
      if (!*prompted) {
        auto* generate = text->findChild<QPushButton*>(QStringLiteral("textGenerate"));
        if (!generate || !generate->isEnabled()) return;
        text->promptField()->setText(prompt);
        generate->click();
        *prompted = true;
        return;
      }
      const widgets::AttentionView* attention = page->explainer()->attention();
      shown = !text->generatedText().isEmpty() &&
              (attention->isHidden() || attention->heads() > 0 || !attention->errorText().isEmpty());
    } else {
      shown = page->panel()->hasModel() &&
              (!attributions->shownImage().isNull() || !attributions->characterTints().empty() ||
               !attributions->errorText().isEmpty());
    }
    if (!shown) return;
    poll->stop();
    QTimer::singleShot(300, poll, ready);  // the views' last layout pass
  });
  poll->start(100);
}

}  // namespace plexus::app
