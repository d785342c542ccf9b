#include "experiment/sweep_editor.h"

#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>
#include <exception>

#include "common/panel_style.h"
#include "common/qt_text.h"
#include "editor/model/graph_document.h"
#include "editor/settings_form.h"
#include "graph/dataset_params.h"
#include "graph/node_settings.h"
#include "graph/sweep_settings.h"
#include "graph/training_params.h"
#include "util/text.h"

namespace plexus::widgets {

namespace {

bool sweepable(const graph::ParamSpec& spec) {
  using T = graph::ParamType;
  return spec.type == T::Int || spec.type == T::Float || spec.type == T::Choice || spec.type == T::Bool;
}

// The target's value in the project now, for a new parameter's first values.
std::optional<graph::ParamValue> currentValue(const graph::Graph& g, const graph::SweepTarget& t) {
  using K = graph::SweepTarget::Kind;
  switch (t.kind) {
    case K::Training:
      return graph::training_value(g.training, t.name);
    case K::Dataset:
      return graph::dataset_value(g.dataset, t.name);
    case K::NodeParam:
      if (const graph::Node* node = g.find(t.node)) return graph::param_value(*node, t.spec);
      return std::nullopt;
    case K::NodeSetting:
      if (const graph::Node* node = g.find(t.node)) return graph::node_setting_value(*node, t.name);
      return std::nullopt;
  }
  return std::nullopt;
}

// A first definition of a parameter sweeping `t`: a log range of a decade either side of a
// positive real, half and twice a whole number, every choice, both flags.
graph::SweepParameter firstSweep(const std::string& target, const graph::SweepTarget& t,
                                 const std::optional<graph::ParamValue>& now) {
  graph::SweepParameter p;
  p.target = target;
  const graph::ParamSpec& spec = t.spec;
  if (spec.type == graph::ParamType::Choice) {
    for (const std::string& c : spec.choices) p.values.emplace_back(std::in_place_type<std::string>, c);
  } else if (spec.type == graph::ParamType::Bool) {
    for (const bool flag : {false, true}) p.values.emplace_back(std::in_place_type<bool>, flag);
  } else if (spec.type == graph::ParamType::Float && now && std::get<double>(*now) > 0) {
    const double v = std::get<double>(*now);
    p.min = std::max(v / 10, spec.min > 0 ? spec.min : v / 10);
    p.max = std::min(v * 10, spec.max);
    p.scale = "log";
  } else if (spec.type == graph::ParamType::Int && now) {
    const int64_t v = std::get<int64_t>(*now);
    for (const int64_t w : {v / 2, v, v * 2})
      if (w >= spec.min && w <= spec.max && (p.values.empty() || w != std::get<int64_t>(p.values.back())))
        p.values.emplace_back(std::in_place_type<int64_t>, w);  // in place: GCC 12 warns falsely on a moved temporary
  } else if (now) {
    p.values.emplace_back(*now);
  }
  return p;
}

}  // namespace

std::optional<graph::ParamValue> parseSweepValue(const graph::ParamSpec& spec, const QString& text) {
  const QString t = text.trimmed();
  bool ok = false;
  switch (spec.type) {
    case graph::ParamType::Int: {
      const qlonglong v = t.toLongLong(&ok);
      return ok ? std::optional<graph::ParamValue>(int64_t(v)) : std::nullopt;
    }
    case graph::ParamType::Float: {
      const double v = t.toDouble(&ok);
      return ok && std::isfinite(v) ? std::optional<graph::ParamValue>(v) : std::nullopt;
    }
    case graph::ParamType::Bool:
      if (t == QLatin1String("true")) return true;
      if (t == QLatin1String("false")) return false;
      return std::nullopt;
    case graph::ParamType::Choice:
      for (const std::string& c : spec.choices)
        if (qstr(c) == t) return c;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

SweepEditor::SweepEditor(GraphDocument* document, QWidget* parent) : QWidget(parent), doc_(document) {
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form_ = new SettingsForm(this, form,
                           {.value =
                                [this](const std::string& name) {
                                  return graph::setting_value(
                                      doc_->graph().sweep, graph::find_setting(graph::sweep_settings(), name)->field);
                                },
                            .applies = [](const std::string&) { return true; },
                            .store =
                                [this](const std::string& name, const graph::ParamValue& value) {
                                  graph::SweepSettings sweep = doc_->graph().sweep;
                                  graph::set_setting(graph::sweep_settings(), "sweep", sweep, name, value);
                                  store(sweep);
                                },
                            .refused = [this](const QString& why) { showError(why); }},
                           SettingsForm::Inapplicable::Disabled);
  for (const graph::SweepSetting& row : graph::sweep_settings()) form_->add(row.name(), row.spec);

  table_ = new QTableWidget(0, 5, this);
  table_->setObjectName(QStringLiteral("sweepParameters"));
  table_->setHorizontalHeaderLabels({tr("Parameter"), tr("Values"), tr("Min"), tr("Max"), tr("Log")});
  // The values take what the other columns leave: the list fits a narrow column without scrolling.
  for (const int column : {TargetColumn, MinColumn, MaxColumn, LogColumn})
    table_->horizontalHeader()->setSectionResizeMode(column, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(ValuesColumn, QHeaderView::Stretch);
  table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  table_->verticalHeader()->hide();
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setToolTip(
      tr("Values: the values to try, separated by commas. Empty: the range Min..Max, drawn "
         "log-uniformly when Log is checked (random and tpe only; a grid needs values)."));
  connect(table_, &QTableWidget::cellChanged, this, &SweepEditor::edited);

  add_ = new QToolButton(this);
  add_->setObjectName(QStringLiteral("addSweepParameter"));
  add_->setText(tr("Add Parameter"));
  add_->setPopupMode(QToolButton::InstantPopup);
  add_menu_ = new QMenu(add_);
  add_->setMenu(add_menu_);
  connect(add_menu_, &QMenu::aboutToShow, this, &SweepEditor::fillAddMenu);
  remove_ = new QToolButton(this);
  remove_->setObjectName(QStringLiteral("removeSweepParameter"));
  remove_->setText(tr("Remove"));
  connect(remove_, &QToolButton::clicked, this, [this] {
    if (table_->currentRow() >= 0) removeParameter(table_->currentRow());
  });
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(add_);
  buttons->addWidget(remove_);
  buttons->addStretch();

  error_ = new QLabel(this);
  error_->setObjectName(QStringLiteral("sweepError"));
  error_->setWordWrap(true);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(sectionLabel(tr("Sweep"), this));
  layout->addLayout(form);
  layout->addWidget(sectionLabel(tr("Swept parameters"), this));
  layout->addWidget(table_, 1);
  layout->addLayout(buttons);
  layout->addWidget(error_);

  connect(doc_, &GraphDocument::sweepChanged, this, &SweepEditor::refresh);
  connect(doc_, &GraphDocument::graphReset, this, &SweepEditor::refresh);
  connect(doc_, &GraphDocument::settingsChanged, this, &SweepEditor::refresh);  // a target may apply no more
  refresh();
}

QStringList SweepEditor::targets() const {
  const graph::Graph& g = doc_->graph();
  QStringList out;
  for (const graph::TrainingSetting& row : graph::training_settings())
    if (row.in_form && sweepable(row.spec)) out << qstr(row.name());
  for (const graph::DatasetSetting& row : graph::dataset_settings())
    if (row.in_form && sweepable(row.spec) && graph::dataset_value_applies(g.dataset, row.name()))
      out << qstr("dataset." + row.name());
  for (const graph::Node& node : g.nodes) {
    const graph::LayerType* type = graph::Registry::instance().find(node.type);
    if (!type) continue;
    for (const graph::ParamSpec& spec : type->params)
      if (sweepable(spec)) out << qstr(node.id + "." + spec.name);
    if (graph::node_settings_apply(node))
      for (const graph::NodeSetting& row : graph::node_settings())
        if (sweepable(row.spec)) out << qstr(node.id + "." + row.name());
  }
  return out;
}

void SweepEditor::fillAddMenu() {
  add_menu_->clear();
  const graph::Graph& g = doc_->graph();
  QMenu* training = add_menu_->addMenu(tr("Training"));
  QMenu* dataset = add_menu_->addMenu(tr("Dataset"));
  std::map<std::string, QMenu*> nodes;
  for (const QString& target : targets()) {
    const std::string t = target.toStdString();
    QMenu* menu = training;
    QString label = target;
    if (target.startsWith(QLatin1String("dataset."))) {
      menu = dataset;
      label = target.mid(8);
    } else if (const qsizetype dot = target.indexOf(QLatin1Char('.')); dot > 0) {
      const std::string id = t.substr(0, size_t(dot));
      if (!nodes.contains(id)) nodes[id] = add_menu_->addMenu(qstr(g.find(id)->label()));
      menu = nodes[id];
      label = target.mid(dot + 1);
    }
    QAction* action = menu->addAction(label);
    action->setData(target);
    const bool swept = std::any_of(g.sweep.parameters.begin(), g.sweep.parameters.end(),
                                   [&t](const graph::SweepParameter& p) { return p.target == t; });
    action->setEnabled(!swept);
    connect(action, &QAction::triggered, this, [this, target] { addParameter(target); });
  }
}

void SweepEditor::addParameter(const QString& target) {
  const std::string t = target.toStdString();
  std::string why;
  const std::optional<graph::SweepTarget> found = graph::sweep_target(doc_->graph(), t, &why);
  if (!found) {
    showError(tr("%1: %2").arg(target, qstr(why)));
    return;
  }
  graph::SweepSettings sweep = doc_->graph().sweep;
  sweep.parameters.push_back(firstSweep(t, *found, currentValue(doc_->graph(), *found)));
  store(sweep);
}

void SweepEditor::removeParameter(int row) {
  graph::SweepSettings sweep = doc_->graph().sweep;
  if (row < 0 || row >= int(sweep.parameters.size())) return;
  sweep.parameters.erase(sweep.parameters.begin() + row);
  store(sweep);
}

void SweepEditor::store(const graph::SweepSettings& sweep) {
  doc_->setSweep(sweep);
  refresh();
}

void SweepEditor::edited(int row, int column) {
  if (refreshing_) return;
  graph::SweepSettings sweep = doc_->graph().sweep;
  if (row < 0 || row >= int(sweep.parameters.size())) return;
  graph::SweepParameter& p = sweep.parameters[size_t(row)];
  const QString text = table_->item(row, column)->text().trimmed();
  const auto refuse = [&](const QString& why) {
    refresh();  // back to what the sweep holds
    showError(qstr(p.target) + QStringLiteral(": ") + why);
  };
  if (column == ValuesColumn) {
    const std::optional<graph::SweepTarget> t = graph::sweep_target(doc_->graph(), p.target);
    if (!t) return refuse(tr("names nothing in the project"));
    std::vector<graph::ParamValue> values;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
      const std::optional<graph::ParamValue> v = parseSweepValue(t->spec, part);
      if (!v)
        return refuse(tr("'%1' is not a value of it (%2)").arg(part.trimmed(), qstr(graph::to_string(t->spec.type))));
      values.push_back(*v);
    }
    p.values = values;
  } else if (column == MinColumn || column == MaxColumn) {
    bool ok = false;
    const double v = text.toDouble(&ok);
    if (!ok) return refuse(tr("'%1' is not a number").arg(text));
    (column == MinColumn ? p.min : p.max) = v;
  } else if (column == LogColumn) {
    p.scale = table_->item(row, column)->checkState() == Qt::Checked ? "log" : "linear";
  }
  store(sweep);
}

QString SweepEditor::errorText() const { return error_->text(); }

void SweepEditor::setLocked(bool locked) {
  locked_ = locked;
  refresh();
}

void SweepEditor::refresh() {
  refreshing_ = true;
  const graph::SweepSettings& sweep = doc_->graph().sweep;
  form_->refresh(!locked_);
  table_->setRowCount(int(sweep.parameters.size()));
  for (int row = 0; row < int(sweep.parameters.size()); ++row) {
    const graph::SweepParameter& p = sweep.parameters[size_t(row)];
    const bool range = p.values.empty();
    QStringList values;
    for (const graph::ParamValue& v : p.values) values << qstr(graph::to_string(v));
    // Items are kept and changed, not replaced: an edit's own item may be the one refreshed.
    const auto cell = [&](int column, const QString& text, bool editable) {
      QTableWidgetItem* item = table_->item(row, column);
      if (!item) {
        item = new QTableWidgetItem;
        table_->setItem(row, column, item);
      }
      item->setText(text);
      const Qt::ItemFlags flags = Qt::ItemIsSelectable | Qt::ItemIsEnabled;
      item->setFlags(editable && !locked_ ? flags | Qt::ItemIsEditable : flags);
      return item;
    };
    cell(TargetColumn, qstr(p.target), false);
    cell(ValuesColumn, values.join(QStringLiteral(", ")), true);
    cell(MinColumn, range ? qstr(shortest_text(p.min)) : QString(), true);
    cell(MaxColumn, range ? qstr(shortest_text(p.max)) : QString(), true);
    QTableWidgetItem* log = cell(LogColumn, QString(), false);
    log->setFlags(locked_ ? Qt::ItemIsSelectable : Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    log->setCheckState(p.scale == "log" ? Qt::Checked : Qt::Unchecked);
  }
  add_->setEnabled(!locked_);
  remove_->setEnabled(!locked_ && !sweep.parameters.empty());
  QString problem;
  try {
    graph::check_sweep(doc_->graph());
  } catch (const std::exception& e) {
    problem = qstr(e.what());
  }
  showError(problem);
  refreshing_ = false;
}

void SweepEditor::showError(const QString& text) {
  error_->setText(text);
  styleAsError(error_);
  error_->setVisible(!text.isEmpty());
}

}  // namespace plexus::widgets
