// The editor's column table of a CSV dataset (dataset/dataset_columns_view.h) in the real
// property panel on a real GraphDocument, driven with key presses: a row per column of the file
// with its detected type, counts and profile; a column's settings and its role edited in place,
// each one undo step of the document; settings back at their defaults leave the binding; the
// profile drawn in its cell; and the free-text dataset settings (missing values) typed in the
// form, re-reading the table.
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QHeaderView>
#include <QLineEdit>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "common/theme.h"
#include "data/table.h"
#include "data/table_columns.h"
#include "dataset/dataset_columns_model.h"
#include "dataset/dataset_columns_view.h"
#include "editor/model/graph_document.h"
#include "editor/param_editor.h"
#include "editor/property_panel.h"
#include "graph/dataset_params.h"

using namespace plexus;
using namespace plexus::widgets;
using Model = DatasetColumnsModel;

namespace {

// 60 rows: an id, a number with three missing cells, a category with "NA" cells, a date, a
// sentence per row (free text: too many distinct values for categories) and the label.
QByteArray csvText() {
  QByteArray text = "id,x,colour,when,note,label\n";
  const char* colours[] = {"red", "blue", "green", "NA"};
  for (int i = 0; i < 60; ++i) {
    const QByteArray x = i % 20 == 3 ? QByteArray() : QByteArray::number(0.5 * i);
    text += QByteArray::number(i) + "," + x + "," + colours[i % 4] + ",2024-0" + QByteArray::number(1 + i % 9) +
            "-1" + QByteArray::number(i % 10) + ",a remark number " + QByteArray::number(i) + " about it," +
            (i % 3 == 0 ? "yes" : "no") + "\n";
  }
  return text;
}

// The tabular template's graph: Input -> Linear -> MSE against the labels.
graph::Graph project() {
  graph::Graph g;
  g.nodes = {{"in", "Input", "in", {}, {}}, {"out", "Linear", "out", {{"out_features", int64_t(1)}}, {}},
             {"loss", "MSE", "loss", {}, {}}};
  g.edges = {{{"in", "x"}, {"out", "input"}}, {{"out", "output"}, {"loss", "input"}}, {{"in", "y"}, {"loss", "target"}}};
  g.dataset = {.kind = "csv", .path = "data.csv", .target = "label", .task = "classification"};
  return g;
}

struct Page {
  QTemporaryDir dir;
  GraphDocument doc;
  PropertyPanel panel{&doc};
  DatasetColumnsView* view = nullptr;
  QTableView* table = nullptr;

  Page() {
    QFile file(dir.filePath("data.csv"));
    if (file.open(QIODevice::WriteOnly)) file.write(csvText());
    file.close();
    doc.reset(project(), dir.filePath("project.plexus"));  // data.csv is found next to the project
    panel.resize(900, 900);
    panel.show();
    QApplication::setActiveWindow(&panel);
    panel.showNodes({});
    view = panel.findChild<DatasetColumnsView*>("datasetColumns");
    table = view ? view->table() : nullptr;
  }
  bool ready() { return QTest::qWaitForWindowActive(&panel) && table && table->isVisible(); }
  Model* model() const { return view->model(); }
  int row(const char* column) const {
    for (int r = 0; r < model()->rowCount(); ++r)
      if (model()->index(r, Model::Name).data().toString() == QLatin1String(column)) return r;
    return -1;
  }
  int steps() { return doc.undoStack()->count(); }
  const graph::DatasetBinding& binding() const { return doc.graph().dataset; }

  // As a person does: the cell made current, F2 to edit it, then keys in its editor (a combo
  // box picks the item its first letters name and commits it).
  void edit(const char* column, int field, const QString& keys, bool enter = false) {
    const QModelIndex index = model()->index(row(column), field);
    table->setFocus();
    table->setCurrentIndex(index);
    QTest::keyClick(table, Qt::Key_F2);
    QWidget* editor = QApplication::focusWidget();
    QVERIFY2(editor && editor != table, "no editor opened");
    if (auto* line = qobject_cast<QLineEdit*>(editor)) line->selectAll();
    QTest::keyClicks(editor, keys);
    if (enter) QTest::keyClick(editor, Qt::Key_Return);
    QCoreApplication::processEvents();  // the view commits a line edit's text after Return, queued
  }
};

graph::ColumnSetting setting(const graph::DatasetBinding& b, const std::string& name) {
  for (const graph::ColumnSetting& c : b.columns)
    if (c.name == name) return c;
  return {.name = "(none)"};
}

}  // namespace

class TestDatasetColumns : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { ThemeManager::instance().setMode(ThemeMode::Light); }

  // A row per column with what the data layer says of it; the setting columns are the table's.
  void rowsDescribeTheColumns() {
    Page p;
    QVERIFY(p.ready());
    QCOMPARE(p.model()->rowCount(), 6);
    QCOMPARE(p.model()->columnCount(), Model::FirstSetting + int(graph::column_settings().size()));
    for (size_t i = 0; i < graph::column_settings().size(); ++i) {
      const graph::ParamSpec& spec = graph::column_settings()[i].spec;
      const int column = Model::FirstSetting + int(i);
      QCOMPARE(p.model()->headerData(column, Qt::Horizontal).toString(), QString::fromStdString(spec.label));
      QVERIFY(p.model()->headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString().contains(
          QString::fromStdString(spec.doc).toHtmlEscaped()));
    }
    const int type = Model::settingColumn("type");
    QCOMPARE(p.model()->index(p.row("x"), type).data().toString(), QStringLiteral("auto (numeric)"));
    QCOMPARE(p.model()->index(p.row("colour"), type).data().toString(), QStringLiteral("auto (categorical)"));
    QCOMPARE(p.model()->index(p.row("when"), type).data().toString(), QStringLiteral("auto (date)"));
    QCOMPARE(p.model()->index(p.row("note"), type).data().toString(), QStringLiteral("auto (text)"));
    QCOMPARE(p.model()->index(p.row("x"), Model::Missing).data().toString(), QStringLiteral("3 (5.0%)"));
    QCOMPARE(p.model()->index(p.row("colour"), Model::Missing).data().toString(), QStringLiteral("15 (25.0%)"));
    QCOMPARE(p.model()->index(p.row("colour"), Model::Distinct).data().toLongLong(), 3);
    // Roles as the data layer reads the binding: free text is no feature by default.
    QStringList roles;
    for (int r = 0; r < 6; ++r) roles << p.model()->roleOf(r);
    QCOMPARE(roles, QStringList({"feature", "feature", "feature", "feature", "ignored", "target"}));
  }

  // The profile cell: the profile's own counts, drawn as bars in the theme's colour.
  void profileIsDrawnFromTheColumnsProfile() {
    Page p;
    QVERIFY(p.ready());
    const data::Table file = data::read_table(p.dir.filePath("data.csv").toStdString());
    const data::ColumnProfile x = data::profile_column(file, 1);
    const QModelIndex cell = p.model()->index(p.row("x"), Model::Profile);
    QVariantList expected;
    for (const int64_t n : x.histogram) expected << qlonglong(n);
    QCOMPARE(cell.data(Model::ProfileCountsRole).toList(), expected);
    QVERIFY(!cell.data(Model::ProfileCategoriesRole).toBool());
    const QModelIndex colours = p.model()->index(p.row("colour"), Model::Profile);
    QVERIFY(colours.data(Model::ProfileCategoriesRole).toBool());
    QCOMPARE(colours.data(Model::ProfileCountsRole).toList().size(), 3);

    const QImage shot = p.table->viewport()->grab().toImage();
    const QRect rect = p.table->visualRect(cell);
    const QColor bar = ThemeManager::instance().theme().selection;
    int painted = 0;
    for (int y = rect.top(); y <= rect.bottom(); ++y)
      for (int x = rect.left(); x <= rect.right(); ++x) painted += shot.pixelColor(x, y) == bar;
    QVERIFY2(painted > rect.width() * rect.height() / 10, qPrintable(QString::number(painted)));
  }

  // A column's missing policy: one undo step; back to the default, the column leaves the binding.
  void missingPolicyIsOneUndoStep() {
    Page p;
    QVERIFY(p.ready());
    const int missing = Model::settingColumn("missing");
    const int steps = p.steps();
    p.edit("x", missing, "d");  // drop
    QCOMPARE(p.binding().columns.size(), size_t(1));
    QCOMPARE(setting(p.binding(), "x"), (graph::ColumnSetting{.name = "x", .missing = "drop"}));
    QCOMPARE(p.steps(), steps + 1);
    QCOMPARE(p.model()->index(p.row("x"), missing).data().toString(), QStringLiteral("drop"));

    p.doc.undoStack()->undo();
    QVERIFY(p.binding().columns.empty());
    QCOMPARE(p.model()->index(p.row("x"), missing).data().toString(), QStringLiteral("auto"));
    p.doc.undoStack()->redo();
    QCOMPARE(setting(p.binding(), "x").missing, std::string("drop"));

    // Two columns' settings are kept in the file's order; a constant's fill is typed.
    p.edit("colour", missing, "c");  // constant
    p.edit("colour", Model::settingColumn("fill"), "grey", true);
    QCOMPARE(setting(p.binding(), "colour"),
             (graph::ColumnSetting{.name = "colour", .missing = "constant", .fill = "grey"}));
    p.edit("id", Model::settingColumn("encoding"), "i");  // index
    std::vector<std::string> names;
    for (const graph::ColumnSetting& c : p.binding().columns) names.push_back(c.name);
    QCOMPARE(names, (std::vector<std::string>{"id", "x", "colour"}));

    // The indicator, a check box: Space toggles it.
    const QModelIndex indicator = p.model()->index(p.row("x"), Model::settingColumn("indicator"));
    p.table->setFocus();
    p.table->setCurrentIndex(indicator);
    QTest::keyClick(p.table, Qt::Key_Space);
    QCOMPARE(setting(p.binding(), "x").indicator, false);

    // Back to auto and on again: x's settings are the defaults, and it is no longer listed.
    p.edit("x", missing, "a");
    p.table->setFocus();
    p.table->setCurrentIndex(indicator);
    QTest::keyClick(p.table, Qt::Key_Space);
    QCOMPARE(setting(p.binding(), "x").name, std::string("(none)"));
    QCOMPARE(p.binding().columns.size(), size_t(2));
  }

  // The role column edits the target and the feature list.
  void roleEditsTargetAndFeatures() {
    Page p;
    QVERIFY(p.ready());
    const int steps = p.steps();
    p.edit("id", Model::Role, "i");  // ignored: the others are listed, in the file's order
    QCOMPARE(p.binding().features, (std::vector<std::string>{"x", "colour", "when"}));
    QCOMPARE(p.model()->roleOf(p.row("id")), QStringLiteral("ignored"));
    p.edit("id", Model::Role, "f");  // every column a model reads anyway: no list
    QVERIFY(p.binding().features.empty());
    QCOMPARE(p.steps(), steps + 2);

    p.edit("x", Model::Role, "t");  // a numeric target: a regression
    QCOMPARE(p.binding().target, std::string("x"));
    QCOMPARE(p.binding().task, std::string("regression"));
    p.doc.undoStack()->undo();
    p.edit("colour", Model::Role, "t");  // the target
    QCOMPARE(p.binding().target, std::string("colour"));
    QCOMPARE(p.binding().task, std::string("classification"));
    QVERIFY(p.binding().features.empty());
    QCOMPARE(p.model()->roleOf(p.row("label")), QStringLiteral("feature"));  // no list: the old target reads
    p.doc.undoStack()->undo();
    QCOMPARE(p.binding().target, std::string("label"));
    QCOMPARE(p.model()->roleOf(p.row("colour")), QStringLiteral("feature"));

    p.edit("label", Model::Role, "i");  // the target ignored: no target
    QVERIFY(p.binding().target.empty());
    QCOMPARE(p.binding().features, (std::vector<std::string>{"id", "x", "colour", "when"}));

    // The last feature cannot go: a model reads at least one column.
    for (const char* column : {"id", "x", "colour"}) p.edit(column, Model::Role, "i");
    QCOMPARE(p.binding().features, std::vector<std::string>{"when"});
    const int before = p.steps();
    p.edit("when", Model::Role, "i");
    QCOMPARE(p.binding().features, std::vector<std::string>{"when"});
    QCOMPARE(p.steps(), before);
    QVERIFY(p.panel.findChild<QLabel*>("datasetStatus")->text().contains("at least one feature"));
  }

  // A target of another kind brings the head with it, in the same undo step: a score per class
  // and CrossEntropy for categories, one value and MSE for numbers.
  void aTargetOfAnotherKindFitsTheHead() {
    Page p;
    QVERIFY(p.ready());
    const auto type = [&](const char* id) { return p.doc.node(QString::fromLatin1(id))->type; };
    const auto outputs = [&] { return std::get<int64_t>(p.doc.node("out")->params.at("out_features")); };
    const int steps = p.steps();
    p.edit("colour", Model::Role, "t");  // three categories
    QCOMPARE(type("loss"), std::string("CrossEntropy"));
    QCOMPARE(outputs(), int64_t(3));
    QCOMPARE(p.doc.graph().edges.size(), size_t(3));  // the new loss wired as the old one was
    QCOMPARE(p.steps(), steps + 1);
    p.edit("x", Model::Role, "t");  // numbers
    QCOMPARE(type("loss"), std::string("MSE"));
    QCOMPARE(outputs(), int64_t(1));
    QCOMPARE(p.binding().task, std::string("regression"));
    p.doc.undoStack()->undo();
    p.doc.undoStack()->undo();
    QCOMPARE(type("loss"), std::string("MSE"));
    QCOMPARE(outputs(), int64_t(1));
    QCOMPARE(p.doc.graph().edges, project().edges);
    QCOMPARE(p.binding(), project().dataset);
  }

  // Free text among the dataset settings (the missing values) is a line edit; typing a token
  // re-reads the table with it.
  void missingValuesAreTypedAndReadAgain() {
    Page p;
    QVERIFY(p.ready());
    auto* tokens = p.panel.findChild<ParamEditor*>("dataset.missing_values");
    QVERIFY(tokens && tokens->isVisible());
    auto* field = qobject_cast<QLineEdit*>(tokens->editor());
    QVERIFY(field);
    QVERIFY(p.panel.findChild<ParamEditor*>("dataset.delimiter")->isVisible());
    field->setFocus();
    QTest::keyClicks(field, "red");
    QTest::keyClick(field, Qt::Key_Return);
    QCOMPARE(p.binding().missing_values, std::string("red"));
    QCOMPARE(p.model()->index(p.row("colour"), Model::Missing).data().toString(), QStringLiteral("15 (25.0%)"));
    // "NA" is no longer a missing value but "red" is: as many missing cells, now another category.
    QCOMPARE(p.model()->index(p.row("colour"), Model::Distinct).data().toLongLong(), 3);
    QCOMPARE(p.model()->profile(p.row("colour")).top.front().first, std::string("NA"));  // ties by value
  }
};

QTEST_MAIN(TestDatasetColumns)
#include "test_widgets_dataset_columns.moc"
