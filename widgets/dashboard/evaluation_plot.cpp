#include "dashboard/evaluation_plot.h"

#include "common/plot_style.h"
#include "common/theme.h"

namespace plexus::widgets {

EvaluationPlot::EvaluationPlot(const QString& title, QWidget* parent) : QCustomPlot(parent) {
  plotLayout()->insertRow(0);
  plotLayout()->setRowStretchFactor(0, 0.001);  // as tall as its text
  QFont font = this->font();
  font.setBold(true);
  title_ = new QCPTextElement(this, title, font);
  title_->setMargins(QMargins(6, 4, 6, 2));
  plotLayout()->addElement(0, 0, title_);
  setInteractions({});
  setNoAntialiasingOnDrag(true);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &EvaluationPlot::applyTheme);
  applyTheme();
}

void EvaluationPlot::setTitle(const QString& title) { title_->setText(title); }
QString EvaluationPlot::title() const { return title_->text(); }

QPen EvaluationPlot::dataPen() { return QPen(ThemeManager::instance().theme().selection, 2); }

QPen EvaluationPlot::referencePen() {
  return QPen(ThemeManager::instance().theme().mutedText, 1.2, Qt::DashLine);
}

QPen EvaluationPlot::markPen() { return QPen(ThemeManager::instance().theme().error, 2); }

void EvaluationPlot::applyTheme() {
  const PlotColours c = plotColours(ThemeManager::instance().theme());
  setBackground(c.background);
  for (QCPAxis* axis : axisRect()->axes()) styleAxis(axis, c);
  title_->setTextColor(c.text);
  legend->setBrush(Qt::NoBrush);
  legend->setBorderPen(Qt::NoPen);
  legend->setTextColor(c.text);
  replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace plexus::widgets
