#include "editor/property_panel.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>

#include <functional>
#include <map>

#include "common/icons.h"
#include "common/panel_style.h"
#include "common/theme.h"
#include "editor/model/graph_document.h"
#include "editor/param_editor.h"
#include "editor/problems_panel.h"

namespace plexus::widgets {
namespace {

using graph::ParamValue;

QLabel* mutedLabel(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setProperty("muted", true);
  return label;
}

// Labels marked "muted" under `root` take the theme's muted text colour.
void applyMutedColour(QWidget* root) {
  const QColor muted = ThemeManager::instance().theme().mutedText;
  for (QLabel* label : root->findChildren<QLabel*>())
    if (label->property("muted").toBool()) setColour(label, QPalette::WindowText, muted);
}

// Rows rebuilt on every refresh may hold the button being clicked, hence deleteLater; hidden
// at once, so they do not linger on screen under their replacements.
void clearLayout(QLayout* layout) {
  while (QLayoutItem* item = layout->takeAt(0)) {
    if (QWidget* w = item->widget()) {
      w->hide();
      w->deleteLater();
    }
    delete item;
  }
}

}  // namespace

// ---- the page of one node -------------------------------------------------------------------

class PropertyPanel::NodePage : public QWidget {
 public:
  NodePage(GraphDocument* document, const graph::Node& node, QWidget* parent);

  const QString& id() const { return id_; }
  const std::string& type() const { return type_; }
  void refresh();
  void applyTheme();
  // Leaves for good: nothing it still holds (focus leaving an editor) may change the graph.
  void retire();

 private:
  QWidget* header();
  void addParamRows(QFormLayout* form);
  void showProblems(const graph::Node& node);

  GraphDocument* document_;
  const QString id_;
  const std::string type_;
  const graph::LayerType* layer_;  // null for a type the registry does not know
  QFrame* stripe_ = nullptr;
  QLabel* icon_ = nullptr;
  QLineEdit* name_;
  std::optional<std::string> shown_name_;
  std::vector<ParamEditor*> editors_;
  QVBoxLayout* extras_;    // parameters the type does not have (each can be removed)
  QVBoxLayout* problems_;  // the node's problems
};

PropertyPanel::NodePage::NodePage(GraphDocument* document, const graph::Node& node, QWidget* parent)
    : QWidget(parent),
      document_(document),
      id_(qstr(node.id)),
      type_(node.type),
      layer_(graph::Registry::instance().find(node.type)),
      name_(new QLineEdit(this)),
      extras_(new QVBoxLayout),
      problems_(new QVBoxLayout) {
  auto* layout = new QVBoxLayout(this);
  layout->setSpacing(10);
  layout->addWidget(header());

  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setLabelAlignment(Qt::AlignLeft);
  name_->setObjectName(QStringLiteral("name"));
  name_->setPlaceholderText(id_);
  connect(name_, &QLineEdit::editingFinished, this, [this] {
    document_->rename(id_, name_->text().trimmed());
    if (const graph::Node* node = document_->node(id_))
      setTextKeepingCursor(name_, qstr(node->name));  // tidy when nothing changed
  });
  form->addRow(tr("Name"), name_);
  if (layer_) addParamRows(form);
  layout->addLayout(form);
  layout->addLayout(extras_);
  layout->addLayout(problems_);
  layout->addStretch(1);
  applyTheme();
}

// One row per parameter of the registry type: the only list of parameters there is.
void PropertyPanel::NodePage::addParamRows(QFormLayout* form) {
  for (const graph::ParamSpec& spec : layer_->params) {
    auto* editor = new ParamEditor(spec, this);
    connect(editor, &ParamEditor::committed, this,
            [this, name = qstr(spec.name)](const std::optional<ParamValue>& value) {
              if (value)
                document_->setParam(id_, name, *value);
              else
                document_->resetParam(id_, name);
            });
    form->addRow(paramLabel(editor, this), editor);
    editors_.push_back(editor);
  }
}

QWidget* PropertyPanel::NodePage::header() {
  auto* header = new QWidget(this);
  stripe_ = new QFrame(header);
  stripe_->setFixedWidth(4);
  stripe_->setAutoFillBackground(true);
  icon_ = new QLabel(header);

  auto* title = new QLabel(layer_ ? qstr(layer_->display_name) : tr("Unknown layer type"), header);
  QFont font = title->font();
  font.setBold(true);
  font.setPointSizeF(font.pointSizeF() * 1.2);
  title->setFont(font);
  title->setWordWrap(true);
  auto* titleRow = new QHBoxLayout;
  titleRow->addWidget(icon_);
  titleRow->addWidget(title, 1);

  auto* text = new QVBoxLayout;
  text->setSpacing(2);
  text->addLayout(titleRow);
  if (layer_) {
    text->addWidget(mutedLabel(tr("%1 · %2").arg(qstr(layer_->name), qstr(layer_->category)), header));
    text->addWidget(mutedLabel(qstr(layer_->description), header));
  } else {
    text->addWidget(mutedLabel(tr("Plexus has no layer type '%1'. The node can be renamed or deleted; "
                                  "it keeps its parameters as they are.")
                                   .arg(qstr(type_)),
                               header));
  }
  auto* layout = new QHBoxLayout(header);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(8);
  layout->addWidget(stripe_);
  layout->addLayout(text, 1);
  return header;
}

void PropertyPanel::NodePage::refresh() {
  const graph::Node* node = document_->node(id_);
  if (!node) return;
  if (shown_name_ != node->name) {
    shown_name_ = node->name;
    setTextKeepingCursor(name_, qstr(node->name));
  }
  for (ParamEditor* editor : editors_) {
    const auto it = node->params.find(editor->spec().name);
    editor->setValue(it == node->params.end() ? std::nullopt : std::optional<ParamValue>(it->second));
  }
  showProblems(*node);
}

void PropertyPanel::NodePage::showProblems(const graph::Node& node) {
  // Parameters a file gave the node that its type does not take: shown, so they can be removed.
  clearLayout(extras_);
  for (const auto& [name, value] : node.params) {
    if (layer_ && layer_->param(name)) continue;
    auto* row = new QWidget(this);
    auto* line = new QHBoxLayout(row);
    line->setContentsMargins(0, 0, 0, 0);
    line->addWidget(new QLabel(tr("%1 = %2").arg(qstr(name), paramText(value)), row), 1);
    auto* remove = new QToolButton(row);
    remove->setIcon(icon(QStringLiteral("delete")));
    remove->setAutoRaise(true);
    remove->setToolTip(tr("Remove the parameter %1").arg(qstr(name)));
    connect(remove, &QToolButton::clicked, this, [this, name = qstr(name)] { document_->resetParam(id_, name); });
    line->addWidget(remove);
    extras_->addWidget(row);
  }

  clearLayout(problems_);
  const std::vector<graph::Problem> problems = document_->problemsFor(id_);
  if (problems.empty()) return;
  problems_->addWidget(sectionLabel(tr("Problems"), this));
  for (const graph::Problem& p : problems) {
    auto* row = new QWidget(this);
    auto* line = new QHBoxLayout(row);
    line->setContentsMargins(0, 0, 0, 0);
    auto* icon = new QLabel(row);
    const int size = style()->pixelMetric(QStyle::PM_SmallIconSize);
    icon->setPixmap(severityIcon(p.severity).pixmap(size, size));
    auto* message = new QLabel(qstr(p.message), row);
    message->setWordWrap(true);
    message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    line->addWidget(icon, 0, Qt::AlignTop);
    line->addWidget(message, 1);
    problems_->addWidget(row);
  }
}

void PropertyPanel::NodePage::applyTheme() {
  const Theme& theme = ThemeManager::instance().theme();
  const QString category = layer_ ? qstr(layer_->category) : QString();
  setColour(stripe_, QPalette::Window, theme.category(category));
  const int size = style()->pixelMetric(QStyle::PM_LargeIconSize) * 3 / 4;
  icon_->setPixmap((layer_ ? categoryIcon(category) : icon(QStringLiteral("warning"))).pixmap(size, size));
  applyMutedColour(this);
  for (ParamEditor* editor : editors_) editor->applyTheme();
  if (const graph::Node* node = document_->node(id_)) showProblems(*node);  // icons in the new colours
}

void PropertyPanel::NodePage::retire() {
  for (ParamEditor* editor : editors_) editor->blockSignals(true);
  name_->blockSignals(true);
  hide();
  deleteLater();
}

// ---- the project page (nothing selected) ----------------------------------------------------

class PropertyPanel::ProjectPage : public QWidget {
 public:
  ProjectPage(GraphDocument* document, QWidget* parent);
  void refresh();
  void applyTheme() { applyMutedColour(this); }

 private:
  void showBinding(const graph::DatasetBinding& binding);
  void commitKind(const QString& kind);
  void commitField(const std::function<void(graph::DatasetBinding&)>& change);
  void browse();

  GraphDocument* document_;
  QLabel* file_;
  QFormLayout* form_;
  QComboBox* kind_;
  QLineEdit* path_;
  QPushButton* browse_;
  QLineEdit* target_;
  QComboBox* task_;
  QLabel* status_;
  QLabel* examples_;
  QLabel* summary_;
  std::optional<graph::DatasetBinding> shown_;
};

namespace {

// Shows `text` as the combo's choice; one that is not among its items (a kind a file names
// that Plexus does not know) shows as a placeholder.
void chooseText(QComboBox* combo, const QString& text, int role = Qt::DisplayRole) {
  const int index = combo->findData(text, role);
  combo->setCurrentIndex(index);
  combo->setPlaceholderText(index < 0 ? text : QString());
}

// A path inside the project's folder is stored relative to it, so the project can move with
// its data (dataset paths are looked up next to the project file).
QString storedPath(const QString& chosen, const QString& projectFile) {
  if (projectFile.isEmpty()) return chosen;
  const QString relative = QFileInfo(projectFile).absoluteDir().relativeFilePath(chosen);
  return relative.startsWith(QLatin1String("..")) ? chosen : relative;
}

bool imageKind(const std::string& kind) { return kind == "mnist" || kind == "fashion-mnist"; }

}  // namespace

PropertyPanel::ProjectPage::ProjectPage(GraphDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      file_(mutedLabel({}, this)),
      form_(new QFormLayout),
      kind_(new QComboBox(this)),
      path_(new QLineEdit(this)),
      browse_(new QPushButton(tr("Browse…"), this)),
      target_(new QLineEdit(this)),
      task_(new QComboBox(this)),
      status_(mutedLabel({}, this)),
      examples_(mutedLabel({}, this)),
      summary_(new QLabel(this)) {
  kind_->setObjectName(QStringLiteral("datasetKind"));
  for (const char* kind : {"mnist", "fashion-mnist", "csv"}) kind_->addItem(QString::fromLatin1(kind), kind);
  kind_->addItem(tr("(none)"), QString());
  guardWheel(kind_);
  connect(kind_, &QComboBox::activated, this, [this](int i) { commitKind(kind_->itemData(i).toString()); });

  path_->setObjectName(QStringLiteral("datasetPath"));
  path_->setPlaceholderText(tr("folder or file"));
  connect(path_, &QLineEdit::editingFinished, this,
          [this] { commitField([this](auto& b) { b.path = path_->text().trimmed().toStdString(); }); });
  connect(browse_, &QPushButton::clicked, this, &ProjectPage::browse);
  auto* pathRow = new QHBoxLayout;
  pathRow->addWidget(path_, 1);
  pathRow->addWidget(browse_);

  target_->setObjectName(QStringLiteral("datasetTarget"));
  target_->setPlaceholderText(tr("label column"));
  connect(target_, &QLineEdit::editingFinished, this,
          [this] { commitField([this](auto& b) { b.target = target_->text().trimmed().toStdString(); }); });
  task_->setObjectName(QStringLiteral("datasetTask"));
  for (const char* task : {"classification", "regression"}) task_->addItem(QString::fromLatin1(task));
  guardWheel(task_);
  connect(task_, &QComboBox::activated, this,
          [this](int i) { commitField([this, i](auto& b) { b.task = task_->itemText(i).toStdString(); }); });

  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form_->addRow(tr("Kind"), kind_);
  form_->addRow(tr("Path"), pathRow);
  form_->addRow(tr("Target column"), target_);
  form_->addRow(tr("Task"), task_);

  auto* title = sectionLabel(tr("Project"), this);
  QFont font = title->font();
  font.setPointSizeF(font.pointSizeF() * 1.2);
  title->setFont(font);
  status_->setObjectName(QStringLiteral("datasetStatus"));
  summary_->setObjectName(QStringLiteral("graphSummary"));
  summary_->setWordWrap(true);

  auto* layout = new QVBoxLayout(this);
  layout->setSpacing(6);
  layout->addWidget(title);
  layout->addWidget(file_);
  layout->addSpacing(6);
  layout->addWidget(sectionLabel(tr("Dataset"), this));
  layout->addLayout(form_);
  layout->addWidget(status_);
  layout->addWidget(examples_);
  layout->addSpacing(6);
  layout->addWidget(sectionLabel(tr("Graph"), this));
  layout->addWidget(summary_);
  layout->addStretch(1);
  applyTheme();
}

void PropertyPanel::ProjectPage::refresh() {
  if (shown_ != document_->graph().dataset) showBinding(document_->graph().dataset);
  file_->setText(document_->displayName());
  status_->setText(document_->datasetStatus());
  const auto& info = document_->datasetInfo();
  examples_->setVisible(info.has_value());
  if (info) {
    const QString labels = info->classes ? tr("%1 classes").arg(info->classes) : tr("regression");
    examples_->setText(tr("Each example: %1, %2").arg(qstr(to_string(info->input_shape)), labels));
  }
  const graph::Graph& g = document_->graph();
  const QString nodes = g.nodes.size() == 1 ? tr("1 node") : tr("%1 nodes").arg(g.nodes.size());
  const QString wires = g.edges.size() == 1 ? tr("1 wire") : tr("%1 wires").arg(g.edges.size());
  summary_->setText(tr("%1, %2\n%3").arg(nodes, wires, problemSummary(document_->validation().problems)));
}

// Fields the document changed are updated; the others keep what is being typed.
void PropertyPanel::ProjectPage::showBinding(const graph::DatasetBinding& b) {
  const auto changed = [&](auto field) { return !shown_ || (*shown_).*field != b.*field; };
  if (changed(&graph::DatasetBinding::kind)) chooseText(kind_, qstr(b.kind), Qt::UserRole);
  if (changed(&graph::DatasetBinding::path)) setTextKeepingCursor(path_, qstr(b.path));
  if (changed(&graph::DatasetBinding::target)) setTextKeepingCursor(target_, qstr(b.target));
  if (changed(&graph::DatasetBinding::task)) chooseText(task_, qstr(b.task));
  const bool bound = !b.kind.empty(), csv = b.kind == "csv";
  path_->setEnabled(bound);
  browse_->setEnabled(bound);
  form_->setRowVisible(target_, csv);
  form_->setRowVisible(task_, csv);
  shown_ = b;
}

void PropertyPanel::ProjectPage::commitKind(const QString& kind) {
  graph::DatasetBinding next = document_->graph().dataset;
  if (kind.isEmpty()) {
    next = {};  // no dataset: nothing else applies
  } else {
    next.kind = kind.toStdString();
    if (next.kind == "csv" && next.task.empty()) next.task = "classification";
    if (next.kind != "csv") next.target.clear(), next.task.clear();  // only a CSV file has columns
  }
  document_->setDataset(next);
}

void PropertyPanel::ProjectPage::commitField(const std::function<void(graph::DatasetBinding&)>& change) {
  graph::DatasetBinding next = document_->graph().dataset;
  change(next);
  document_->setDataset(next);
}

void PropertyPanel::ProjectPage::browse() {
  const graph::DatasetBinding& b = document_->graph().dataset;
  const QString project = document_->filePath();
  const QDir base = project.isEmpty() ? QDir::current() : QFileInfo(project).absoluteDir();
  const QString start = base.absoluteFilePath(qstr(b.path));
  const QString chosen = imageKind(b.kind)
                            ? QFileDialog::getExistingDirectory(this, tr("Dataset folder"), start)
                            : QFileDialog::getOpenFileName(this, tr("CSV file"), start,
                                                           tr("CSV files (*.csv);;All files (*)"));
  if (chosen.isEmpty()) return;
  const std::string stored = storedPath(chosen, project).toStdString();
  commitField([&](auto& binding) { binding.path = stored; });
}

// ---- the panel ----------------------------------------------------------------------------------

PropertyPanel::PropertyPanel(GraphDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      scroll_(new QScrollArea(this)),
      project_(new ProjectPage(document, this)),
      selection_(new QLabel(this)) {
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  selection_->setObjectName(QStringLiteral("selection"));
  selection_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  selection_->setMargin(9);
  selection_->setWordWrap(true);
  selection_->hide();
  project_->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll_);

  connect(document_, &GraphDocument::nodeChanged, this, &PropertyPanel::refresh);
  connect(document_, &GraphDocument::validated, this, &PropertyPanel::refresh);
  connect(document_, &GraphDocument::settingsChanged, this, &PropertyPanel::refresh);
  connect(document_, &GraphDocument::filePathChanged, this, &PropertyPanel::refresh);
  // The document changed under the page: no pending edit is committed to what is there now.
  connect(document_, &GraphDocument::nodeRemoved, this, [this](const QString& id) {
    if (ids_.contains(id)) showSelection(ids_);
  });
  connect(document_, &GraphDocument::graphReset, this, [this] { showSelection(ids_); });
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, [this] {
    project_->applyTheme();
    if (node_) node_->applyTheme();
  });
  showSelection({});
}

void PropertyPanel::showNodes(const QStringList& ids) {
  if (!showsSameNode(ids)) commitPendingEdit();
  showSelection(ids);
}

bool PropertyPanel::showsSameNode(const QStringList& ids) const {
  const graph::Node* node = ids.size() == 1 ? document_->node(ids[0]) : nullptr;
  return node && node_ && node_->id() == ids[0] && node_->type() == node->type;
}

void PropertyPanel::showSelection(const QStringList& ids) {
  ids_.clear();
  std::map<std::string, int> types;  // type -> how many selected
  for (const QString& id : ids)
    if (const graph::Node* node = document_->node(id); node && !ids_.contains(id)) ids_ << id, ++types[node->type];

  if (!showsSameNode(ids_)) {
    if (node_) node_->retire();
    node_ = nullptr;
    if (ids_.isEmpty()) {
      setPage(project_);
    } else if (ids_.size() == 1) {
      node_ = new NodePage(document_, *document_->node(ids_[0]), this);
      setPage(node_);
    } else {
      QStringList lines{tr("<b>%1 nodes selected</b>").arg(ids_.size())};
      for (const auto& [type, count] : types) lines << tr("%1 × %2").arg(count).arg(qstr(type).toHtmlEscaped());
      lines << QString() << tr("Select a single node to edit its parameters.");
      selection_->setText(lines.join(QStringLiteral("<br>")));
      setPage(selection_);
    }
  }
  refresh();
}

void PropertyPanel::refresh() {
  if (node_)
    node_->refresh();
  else if (ids_.isEmpty())
    project_->refresh();
}

void PropertyPanel::setPage(QWidget* page) {
  if (scroll_->widget() == page) return;
  if (QWidget* old = scroll_->takeWidget()) {
    old->hide();
    old->setParent(this);  // kept for later
  }
  scroll_->setWidget(page);
  page->show();
}

// Typing not yet committed (no Enter, focus still there) would be lost with the page: leaving
// the field commits it, to the node it was typed for.
void PropertyPanel::commitPendingEdit() {
  QWidget* focus = QApplication::focusWidget();
  if (focus && scroll_->widget() && scroll_->widget()->isAncestorOf(focus)) focus->clearFocus();
}

}  // namespace plexus::widgets
