#include "editor/layer_help.h"

#include <QDialogButtonBox>
#include <QPointer>
#include <QPushButton>
#include <QTextBrowser>
#include <QTextFrame>
#include <QTextTable>
#include <QVBoxLayout>

#include "common/qt_text.h"
#include "graph/layer_docs.h"

namespace plexus::widgets {

LayerHelp::LayerHelp(QWidget* parent) : QDialog(parent), browser_(new QTextBrowser(this)) {
  setObjectName(QStringLiteral("layerHelp"));
  browser_->setOpenExternalLinks(true);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(browser_);
  layout->addWidget(buttons);
  resize(640, 560);
}

LayerHelp* LayerHelp::showFor(const graph::LayerType& type, QWidget* parent) {
  // One window for the whole app: a second F1 replaces what it shows instead of stacking windows.
  static QPointer<LayerHelp> help;
  if (!help) help = new LayerHelp(parent ? parent->window() : nullptr);
  help->setType(type);
  help->show();
  help->raise();
  help->activateWindow();
  return help;
}

void LayerHelp::setType(const graph::LayerType& type) {
  type_ = qstr(type.name);
  setWindowTitle(tr("Help: %1").arg(qstr(type.display_name)));
  browser_->setMarkdown(qstr(graph::layer_markdown(type, 2)));
  // Markdown's tables come with raised double borders; plain ruled ones read as a reference.
  for (QTextFrame* frame : browser_->document()->rootFrame()->childFrames()) {
    auto* table = qobject_cast<QTextTable*>(frame);
    if (!table) continue;
    QTextTableFormat format = table->format();
    format.setBorderCollapse(true);
    format.setBorder(1);
    format.setBorderStyle(QTextFrameFormat::BorderStyle_Solid);
    format.setBorderBrush(palette().color(QPalette::Mid));
    format.setCellSpacing(0);
    format.setCellPadding(4);
    if (table->columns() > 2) format.setWidth(QTextLength(QTextLength::PercentageLength, 100));  // parameters
    table->setFormat(format);
  }
}

}  // namespace plexus::widgets
