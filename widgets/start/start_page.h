#pragma once
// The start page: what a window shows while no project is open. New projects from templates
// (and a blank one, and Open…), the recent projects with their folder and date, and the
// examples as cards, each with a picture of its graph drawn by the editor's own scene, what it
// teaches, and its dataset: whether this machine has it and where it comes from. It only shows
// and asks: every choice is a signal, which the window acts on. Everything is reachable with
// Tab, and Enter or Space opens what has focus.
#include <QAbstractButton>
#include <QImage>
#include <QStringList>
#include <QWidget>

#include <vector>

#include "graph/graph.h"

class QLabel;
class QPushButton;
class QVBoxLayout;

namespace plexus::widgets {

class CardGrid;

// A project the page offers: an example to open, or a template to start a new project from.
struct StartProject {
  QString key;          // what the page hands back: the example's file, the template's name
  QString title;
  QString description;  // what it is and what it teaches
  graph::Graph graph;   // drawn as an example's picture
  QString category;     // a template's: the layer category whose icon stands for it ("Convolution")
  QString dataset;      // the data it trains on, in words ("MNIST, data/mnist")
  bool dataset_present = false;  // found where the project would look for it
  QString dataset_note;          // where that data comes from
};

// The picture of a graph on a card, drawn anew for its size and the theme.
class GraphPreview : public QWidget {
  Q_OBJECT

 public:
  GraphPreview(graph::Graph graph, QSize size, QWidget* parent = nullptr);
  QImage image();  // what is shown at the present size
  QSize sizeHint() const override { return size_hint_; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  graph::Graph graph_;
  QSize size_hint_;
  QImage image_;
};

// A card or a row of the page: a button laid out with labels, drawn as a framed panel.
class StartItem : public QAbstractButton {
  Q_OBJECT

 public:
  explicit StartItem(QWidget* parent = nullptr);
  GraphPreview* preview() const { return findChild<GraphPreview*>(); }  // an example's; null elsewhere

 protected:
  void paintEvent(QPaintEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;  // Enter and Return press it, as Space does
};

class StartPage : public QWidget {
  Q_OBJECT

 public:
  explicit StartPage(QWidget* parent = nullptr);

  // Project files, newest first; a file that is gone is shown greyed and cannot be opened.
  void setRecentFiles(const QStringList& paths);
  void setTemplates(std::vector<StartProject> templates);
  void setExamples(std::vector<StartProject> examples);

  // What a test (or a person with Tab) reaches: the items of each part, in order.
  QList<StartItem*> recentItems() const { return recent_items_; }
  QList<StartItem*> templateItems() const { return template_items_; }
  QList<StartItem*> exampleItems() const { return example_items_; }
  QPushButton* blankButton() const { return blank_; }
  QPushButton* openButton() const { return open_; }

 signals:
  void openRequested(const QString& path);      // a recent project or an example
  void templateRequested(const QString& name);  // a new project from this template
  void blankRequested();
  void openDialogRequested();     // Open…: the window asks for a file
  void forgetMissingRequested();  // drop the recent projects that are gone

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void rebuild();  // everything anew from the data: after a change and when the theme changes
  // An example as a card with its picture, or a template as a row with its icon.
  StartItem* projectItem(const StartProject& project, bool example, QWidget* parent);
  StartItem* recentItem(const QString& path, QWidget* parent);

  QStringList recent_;
  std::vector<StartProject> templates_, examples_;
  QVBoxLayout* templates_box_ = nullptr;
  QVBoxLayout* recent_box_ = nullptr;
  CardGrid* examples_grid_ = nullptr;
  QWidget* examples_section_ = nullptr;
  QPushButton* blank_ = nullptr;
  QPushButton* open_ = nullptr;
  QList<StartItem*> recent_items_, template_items_, example_items_;
};

}  // namespace plexus::widgets
