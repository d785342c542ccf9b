#include "editor/property_panel.h"

#include <QApplication>
#include <QComboBox>
#include <QCompleter>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>
#include <functional>
#include <map>
#include <tuple>

#include "common/icons.h"
#include "common/panel_style.h"
#include "common/theme.h"
#include "data/csv.h"
#include "editor/block_page.h"
#include "editor/layer_help.h"
#include "editor/model/graph_document.h"
#include "editor/param_editor.h"
#include "editor/problems_panel.h"
#include "editor/settings_form.h"
#include "graph/dataset_params.h"
#include "graph/node_settings.h"

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
  void addSettingRows(QFormLayout* form);
  void showProblems(const graph::Node& node);

  GraphDocument* document_;
  const QString id_;
  const std::string type_;
  const graph::LayerType* layer_;  // null for a type the registry does not know
  QFrame* stripe_ = nullptr;
  QLabel* icon_ = nullptr;
  QToolButton* help_ = nullptr;  // the layer type's help; none for an unknown type
  QLineEdit* name_;
  std::optional<std::string> shown_name_;
  std::vector<ParamEditor*> editors_;
  SettingsForm* settings_ = nullptr;  // its own training settings, for a node that learns
  QLabel* refused_ = nullptr;         // why the last such edit was refused
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
  if (graph::node_settings_apply(node)) addSettingRows(form);
  layout->addLayout(form);
  if (refused_) layout->addWidget(refused_);
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

// How the optimizer treats the node's weights, relative to the project's training settings.
void PropertyPanel::NodePage::addSettingRows(QFormLayout* form) {
  refused_ = new QLabel(this);
  refused_->setObjectName(QStringLiteral("settingRefused"));
  refused_->setWordWrap(true);
  refused_->hide();
  settings_ = new SettingsForm(
      this, form,
      {.value = [this](const std::string& name) { return *graph::node_setting_value(*document_->node(id_), name); },
       .applies = [](const std::string&) { return true; },
       .store =
           [this](const std::string& name, const ParamValue& value) {
             refused_->hide();
             document_->setNodeSetting(id_, qstr(name), value);
           },
       .refused =
           [this](const QString& why) {
             refused_->setText(why);
             refused_->show();
           }},
      SettingsForm::Inapplicable::Hidden);
  auto* heading = sectionLabel(qstr(graph::node_settings().front().section), this);  // "Training"
  heading->setContentsMargins(0, 8, 0, 0);
  form->addRow(heading);
  for (const graph::NodeSetting& row : graph::node_settings()) settings_->add(row.name(), row.spec);
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
  if (layer_) {
    help_ = new QToolButton(header);
    help_->setObjectName(QStringLiteral("layerHelpButton"));
    help_->setAutoRaise(true);
    help_->setToolTip(tr("What %1 does, its ports and parameters (F1 on the canvas)").arg(qstr(layer_->display_name)));
    connect(help_, &QToolButton::clicked, this, [this] { LayerHelp::showFor(*layer_, this); });
    titleRow->addWidget(help_, 0, Qt::AlignTop);
  }

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
  if (settings_) settings_->refresh();
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
  if (help_) help_->setIcon(icon(QStringLiteral("info")));
  applyMutedColour(this);
  for (ParamEditor* editor : editors_) editor->applyTheme();
  if (settings_) {
    settings_->applyTheme();
    setColour(refused_, QPalette::WindowText, theme.error);
  }
  if (const graph::Node* node = document_->node(id_)) showProblems(*node);  // icons in the new colours
}

void PropertyPanel::NodePage::retire() {
  for (ParamEditor* editor : editors_) editor->blockSignals(true);
  if (settings_)
    for (const graph::NodeSetting& row : graph::node_settings()) settings_->editor(row.name())->blockSignals(true);
  name_->blockSignals(true);
  hide();
  deleteLater();
}

// ---- the project page (nothing selected) ----------------------------------------------------

class PropertyPanel::ProjectPage : public QWidget {
 public:
  ProjectPage(GraphDocument* document, QWidget* parent);
  void refresh();
  void applyTheme();
  void addDatasetView(QWidget* view);

 private:
  void addSettingRows();
  void showBinding(const graph::DatasetBinding& binding);
  void readColumns(const graph::DatasetBinding& binding);
  void showColumns(const graph::DatasetBinding& binding);
  void showTarget(const QString& column);
  void showStatus(const QString& text, bool problem);  // a problem shows in the error colour
  void colourStatus();
  void commitKind(const QString& kind);
  void commitTarget(const QString& target);
  void commitFeatures();
  void commitField(const std::function<void(graph::DatasetBinding&)>& change);
  void browse();

  GraphDocument* document_;
  QLabel* file_;
  QFormLayout* form_;
  QComboBox* kind_;
  QLineEdit* path_;
  QPushButton* browse_;
  QLabel* status_;
  QLabel* examples_;
  QComboBox* target_;  // editable: a column the file lacks, or of a file not readable, can be typed
  QComboBox* task_;
  QListWidget* features_;
  // The headings of the setting rows, each shown while a row under it applies.
  std::vector<std::pair<QLabel*, std::vector<std::string>>> headings_;
  SettingsForm* settings_;
  QLabel* summary_;
  QVBoxLayout* dataset_views_;
  std::optional<graph::DatasetBinding> shown_;
  // The columns of a CSV file's header, read again only when the file changes.
  struct CsvColumns {
    QString file;  // absolute; "" when no readable file is bound
    QDateTime modified;
    qint64 size = -1;
    QStringList names;
    QString error;  // why the header cannot be read
  };
  CsvColumns columns_;
  std::optional<std::tuple<QStringList, std::string, std::vector<std::string>>> shown_features_;
  bool status_problem_ = false;
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

// How a kind reads in the Kind combo and what it expects; the project file keeps the kind.
QString kindLabel(const std::string& kind) {
  if (kind == "mnist") return QObject::tr("MNIST digits");
  if (kind == "fashion-mnist") return QObject::tr("Fashion-MNIST");
  if (kind == "image_folder") return QObject::tr("Image folder");
  if (kind == "csv") return QObject::tr("CSV file");
  if (kind == "text") return QObject::tr("Text file");
  if (kind == "text_classes") return QObject::tr("Labelled texts");
  return qstr(kind);
}

QString kindToolTip(const std::string& kind) {
  if (graph::is_idx_dataset(kind)) return QObject::tr("A folder with the IDX files of %1").arg(kindLabel(kind));
  if (kind == "image_folder") return QObject::tr("A folder with one folder of pictures per class");
  if (kind == "csv") return QObject::tr("A CSV file: one example per row, a header naming the columns");
  if (kind == "text") return QObject::tr("A UTF-8 text file: windows of characters, each predicting the next");
  if (kind == "text_classes")
    return QObject::tr("A folder with a .txt file per class (an example a line) or a folder of .txt files per class "
                       "(an example a file)");
  return {};
}

}  // namespace

PropertyPanel::ProjectPage::ProjectPage(GraphDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      file_(mutedLabel({}, this)),
      form_(new QFormLayout),
      kind_(new QComboBox(this)),
      path_(new QLineEdit(this)),
      browse_(new QPushButton(tr("Browse…"), this)),
      status_(new QLabel(this)),
      examples_(mutedLabel({}, this)),
      target_(new QComboBox(this)),
      task_(new QComboBox(this)),
      features_(new QListWidget(this)),
      summary_(new QLabel(this)) {
  kind_->setObjectName(QStringLiteral("datasetKind"));
  for (const std::string& kind : graph::dataset_kinds()) {
    kind_->addItem(kindLabel(kind), qstr(kind));
    kind_->setItemData(kind_->count() - 1, kindToolTip(kind), Qt::ToolTipRole);
  }
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
  status_->setObjectName(QStringLiteral("datasetStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  target_->setObjectName(QStringLiteral("datasetTarget"));
  target_->setEditable(true);
  target_->setInsertPolicy(QComboBox::NoInsert);
  target_->lineEdit()->setPlaceholderText(tr("label column"));
  // Typing offers the matching columns in a popup; inline completion would change the text typed.
  if (QCompleter* completer = target_->completer()) {
    completer->setCompletionMode(QCompleter::PopupCompletion);
    completer->setCaseSensitivity(Qt::CaseSensitive);  // as the file's column names are
    completer->setFilterMode(Qt::MatchContains);
  }
  guardWheel(target_);
  connect(target_->lineEdit(), &QLineEdit::editingFinished, this, [this] { commitTarget(target_->currentText()); });
  connect(target_, &QComboBox::textActivated, this, &ProjectPage::commitTarget);
  task_->setObjectName(QStringLiteral("datasetTask"));
  for (const char* task : {"classification", "regression"}) task_->addItem(QString::fromLatin1(task));
  guardWheel(task_);
  connect(task_, &QComboBox::activated, this,
          [this](int i) { commitField([this, i](auto& b) { b.task = task_->itemText(i).toStdString(); }); });
  features_->setObjectName(QStringLiteral("datasetFeatures"));
  features_->setToolTip(tr("The columns the model reads. All checked: every column but the target, "
                           "as the file has them."));
  connect(features_, &QListWidget::itemChanged, this, &ProjectPage::commitFeatures);

  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form_->addRow(tr("Kind"), kind_);
  form_->addRow(tr("Path"), pathRow);
  form_->addRow(tr("Target column"), target_);
  form_->addRow(tr("Task"), task_);
  form_->addRow(tr("Features"), features_);
  addSettingRows();

  auto* title = sectionLabel(tr("Project"), this);
  QFont font = title->font();
  font.setPointSizeF(font.pointSizeF() * 1.2);
  title->setFont(font);
  summary_->setObjectName(QStringLiteral("graphSummary"));
  summary_->setWordWrap(true);

  auto* layout = new QVBoxLayout(this);
  layout->setSpacing(6);
  layout->addWidget(title);
  layout->addWidget(file_);
  layout->addSpacing(6);
  layout->addWidget(sectionLabel(tr("Dataset"), this));
  layout->addLayout(form_);
  // Under the form, not in it: with rows hidden, Qt 6.4's QFormLayout writes out of bounds laying
  // out a spanning row whose height depends on its width, as a wrapped label's does (valgrind).
  layout->addWidget(status_);
  layout->addWidget(examples_);
  dataset_views_ = new QVBoxLayout;
  layout->addLayout(dataset_views_);
  layout->addSpacing(6);
  layout->addWidget(sectionLabel(tr("Graph"), this));
  layout->addWidget(summary_);
  layout->addStretch(1);
  applyTheme();
}

// The image settings, the text settings and the augmentation: one row per setting of the
// dataset table, shown for the kinds it applies to.
void PropertyPanel::ProjectPage::addSettingRows() {
  settings_ = new SettingsForm(
      this, form_,
      {.value = [this](const std::string& name) { return *graph::dataset_value(document_->graph().dataset, name); },
       .applies = [this](const std::string& name) { return graph::dataset_value_applies(document_->graph().dataset, name); },
       .store =
           [this](const std::string& name, const ParamValue& value) {
             graph::DatasetBinding next = document_->graph().dataset;
             graph::set_dataset_value(next, name, value);
             document_->setDataset(next);
           },
       .refused = [this](const QString& why) { showStatus(why, true); }},
      SettingsForm::Inapplicable::Hidden);
  // Under the table's sections (Images, Text, Augmentation), in its order.
  std::optional<std::string> shown;
  for (const graph::DatasetSetting& row : graph::dataset_settings()) {
    if (row.section != shown) {
      shown = row.section;
      auto* heading = sectionLabel(qstr(*shown), this);
      heading->setContentsMargins(0, 8, 0, 0);
      form_->addRow(heading);
      headings_.push_back({heading, {}});
    }
    settings_->add(row.name(), row.spec, QStringLiteral("dataset.%1").arg(qstr(row.name())));
    headings_.back().second.push_back(row.name());
  }
}

void PropertyPanel::ProjectPage::addDatasetView(QWidget* view) { dataset_views_->addWidget(view); }

void PropertyPanel::ProjectPage::applyTheme() {
  applyMutedColour(this);
  settings_->applyTheme();
  colourStatus();
}

void PropertyPanel::ProjectPage::colourStatus() {
  const Theme& theme = ThemeManager::instance().theme();
  setColour(status_, QPalette::WindowText, status_problem_ ? theme.error : theme.mutedText);
}

void PropertyPanel::ProjectPage::refresh() {
  const graph::DatasetBinding& b = document_->graph().dataset;
  readColumns(b);
  if (shown_ != b) showBinding(b);
  showColumns(b);
  file_->setText(document_->displayName());
  if (!columns_.error.isEmpty())
    showStatus(tr("The columns cannot be read: %1").arg(columns_.error), true);
  else
    showStatus(document_->datasetStatus(),
               !b.kind.empty() && (!document_->datasetInfo() || !document_->datasetLocation().found));
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

void PropertyPanel::ProjectPage::showStatus(const QString& text, bool problem) {
  status_->setText(text);
  status_problem_ = problem;
  colourStatus();
}

// Fields the document changed are updated; the others keep what is being typed.
void PropertyPanel::ProjectPage::showBinding(const graph::DatasetBinding& b) {
  const auto changed = [&](auto field) { return !shown_ || (*shown_).*field != b.*field; };
  if (changed(&graph::DatasetBinding::kind)) chooseText(kind_, qstr(b.kind), Qt::UserRole);
  if (changed(&graph::DatasetBinding::path)) setTextKeepingCursor(path_, qstr(b.path));
  if (changed(&graph::DatasetBinding::target)) showTarget(qstr(b.target));
  if (changed(&graph::DatasetBinding::task)) chooseText(task_, qstr(b.task));
  const bool bound = !b.kind.empty(), csv = b.kind == "csv";
  path_->setEnabled(bound);
  browse_->setEnabled(bound);
  form_->setRowVisible(target_, csv);
  form_->setRowVisible(task_, csv);
  for (const auto& [heading, rows] : headings_)
    form_->setRowVisible(heading, std::ranges::any_of(rows, [&](const std::string& name) {
                           return graph::dataset_value_applies(b, name);
                         }));
  settings_->refresh();
  shown_ = b;
}

// Cheap enough for every refresh: the file is read again only when it changed.
void PropertyPanel::ProjectPage::readColumns(const graph::DatasetBinding& b) {
  const graph::DatasetLocation where = document_->datasetLocation();
  const QFileInfo file(where.found ? qstr(where.path.string()) : QString());
  if (b.kind != "csv" || !where.found || !file.isFile() || !file.isReadable()) {
    columns_ = {};
    return;
  }
  if (file.absoluteFilePath() == columns_.file && file.lastModified() == columns_.modified &&
      file.size() == columns_.size)
    return;
  columns_ = {file.absoluteFilePath(), file.lastModified(), file.size(), {}, {}};
  try {
    for (const std::string& name : data::read_csv_header(where.path.string())) columns_.names << qstr(name);
  } catch (const std::exception& e) {
    columns_.error = qstr(e.what());
  }
}

// The target's choices and the feature list come from the header; features are checked as the
// binding says (none listed: all of them).
void PropertyPanel::ProjectPage::showColumns(const graph::DatasetBinding& b) {
  QStringList items;
  for (int i = 0; i < target_->count(); ++i) items << target_->itemText(i);
  if (items != columns_.names) {
    const QString typed = target_->currentText();  // the items change under what is being typed
    {
      const QSignalBlocker quiet(target_);
      target_->clear();
      target_->addItems(columns_.names);
    }
    showTarget(typed);
  }

  const bool listed = b.kind == "csv" && std::ranges::any_of(columns_.names, [&](const QString& name) {
                        return name.toStdString() != b.target;
                      });
  form_->setRowVisible(features_, listed);
  auto shown = std::make_tuple(columns_.names, b.target, b.features);
  if (!listed || shown_features_ == shown) return;
  shown_features_ = std::move(shown);
  const QSignalBlocker quiet(features_);
  features_->clear();
  for (const QString& name : columns_.names) {
    if (name.toStdString() == b.target) continue;
    auto* item = new QListWidgetItem(name, features_);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    const bool chosen = b.features.empty() || std::ranges::find(b.features, name.toStdString()) != b.features.end();
    item->setCheckState(chosen ? Qt::Checked : Qt::Unchecked);
  }
  // As tall as its rows, up to a few; more scroll.
  const int rows = std::min(features_->count(), 8);
  features_->setFixedHeight(rows * features_->sizeHintForRow(0) + 2 * features_->frameWidth() + 2);
}

// The column as the current item when the file has it, so the arrow keys move on from there.
void PropertyPanel::ProjectPage::showTarget(const QString& column) {
  const QSignalBlocker quiet(target_);
  target_->setCurrentIndex(target_->findText(column));
  setTextKeepingCursor(target_->lineEdit(), column);
}

void PropertyPanel::ProjectPage::commitKind(const QString& kind) {
  // Settings that do not apply to the new kind go back to their defaults.
  document_->setDataset(kind.isEmpty() ? graph::DatasetBinding{}
                                       : graph::for_kind(document_->graph().dataset, kind.toStdString()));
}

void PropertyPanel::ProjectPage::commitTarget(const QString& target) {
  const std::string name = target.trimmed().toStdString();
  commitField([&](auto& b) {
    b.target = name;
    std::erase(b.features, name);  // the target is no feature
  });
}

// All checked is stored as no list, so columns added to the file later are read too.
void PropertyPanel::ProjectPage::commitFeatures() {
  std::vector<std::string> checked;
  for (int i = 0; i < features_->count(); ++i)
    if (features_->item(i)->checkState() == Qt::Checked) checked.push_back(features_->item(i)->text().toStdString());
  if (checked.empty()) {
    shown_features_.reset();  // checked again as the binding has it
    showColumns(document_->graph().dataset);
    showStatus(tr("A model needs at least one feature column."), true);
    return;
  }
  if (int(checked.size()) == features_->count()) checked.clear();
  commitField([&](auto& b) { b.features = checked; });
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
  const QString chosen = graph::is_image_dataset(b.kind) || b.kind == "text_classes"
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
  connect(document_, &GraphDocument::blocksChanged, this, [this] {
    if (block_) showSelection({block_->id()});  // renamed, or gone
  });
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, [this] {
    project_->applyTheme();
    if (node_) node_->applyTheme();
  });
  showSelection({});
}

void PropertyPanel::addDatasetView(QWidget* view) { project_->addDatasetView(view); }

void PropertyPanel::showNodes(const QStringList& ids) {
  if (!showsSameNode(ids)) commitPendingEdit();
  showSelection(ids);
}

bool PropertyPanel::showsSameNode(const QStringList& ids) const {
  const graph::Node* node = ids.size() == 1 ? document_->node(ids[0]) : nullptr;
  return node && node_ && node_->id() == ids[0] && node_->type() == node->type;
}

void PropertyPanel::showSelection(const QStringList& ids) {
  if (ids.size() == 1 && document_->block(ids[0])) {
    if (node_) node_->retire();
    node_ = nullptr;
    ids_.clear();
    if (!block_ || block_->id() != ids[0]) {
      if (block_) block_->deleteLater();
      block_ = new BlockPage(document_, ids[0], this);
      applyMutedColour(block_);
    }
    setPage(block_);
    block_->refresh();
    return;
  }
  if (block_) block_->deleteLater();
  block_ = nullptr;
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
  if (block_)
    block_->refresh();
  else if (node_)
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
