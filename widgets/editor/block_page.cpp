#include "editor/block_page.h"

#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

#include "common/qt_text.h"
#include "editor/model/graph_document.h"
#include "graph/blocks.h"

namespace plexus::widgets {
namespace {

QString layers(size_t n) { return n == 1 ? QObject::tr("1 layer") : QObject::tr("%1 layers").arg(n); }

}  // namespace

BlockPage::BlockPage(GraphDocument* document, const QString& id, QWidget* parent)
    : QWidget(parent), document_(document), id_(id), name_(new QLineEdit(this)), members_(new QLabel(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setSpacing(10);
  auto* title = new QLabel(tr("<b>Block</b> &nbsp;%1").arg(id.toHtmlEscaped()), this);
  layout->addWidget(title);
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  name_->setObjectName(QStringLiteral("blockName"));
  form->addRow(tr("Name"), name_);
  layout->addLayout(form);
  members_->setObjectName(QStringLiteral("blockMembers"));
  members_->setWordWrap(true);
  members_->setTextFormat(Qt::RichText);
  layout->addWidget(members_);
  auto* hint = new QLabel(tr("Double-click the block on the canvas to open or close it. Ungroup (Ctrl+Shift+G) "
                             "gives its layers back to the graph; grouping never changes what trains."),
                          this);
  hint->setWordWrap(true);
  hint->setProperty("muted", true);
  layout->addWidget(hint);
  layout->addStretch();
  connect(name_, &QLineEdit::editingFinished, this, [this] {
    const QString name = name_->text().trimmed();
    if (!name.isEmpty()) document_->renameBlock(id_, name);
  });
  refresh();
}

void BlockPage::refresh() {
  const graph::Block* block = document_->block(id_);
  if (!block) return;
  if (!name_->hasFocus()) name_->setText(qstr(block->name));
  const graph::Graph& g = document_->graph();
  QStringList lines{tr("<b>Holds %1</b>").arg(layers(graph::block_nodes(g, *block).size()))};
  for (const std::string& m : block->members)
    if (const graph::Node* n = g.find(m))
      lines << qstr(n->label()).toHtmlEscaped();
    else if (const graph::Block* inner = g.find_block(m))
      lines << tr("Block '%1' (%2)").arg(qstr(inner->name).toHtmlEscaped(), layers(graph::block_nodes(g, *inner).size()));
  members_->setText(lines.join(QStringLiteral("<br>")));
}

}  // namespace plexus::widgets
