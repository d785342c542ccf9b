#include "start_projects.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <exception>
#include <filesystem>

#include "common/qt_text.h"
#include "graph/dataset_info.h"
#include "graph/project.h"
#include "main_window.h"
#include "util/error.h"

namespace plexus::app {
namespace {

using widgets::qstr;

struct Template {
  const char* name;
  const char* title;
  const char* category;  // the layer category whose icon stands for it
};
// The page's order; each is resources/projects/template_<name>.plexus.
constexpr Template kTemplates[] = {{"image", QT_TRANSLATE_NOOP("StartPage", "Image classifier"), "Convolution"},
                                   {"tabular", QT_TRANSLATE_NOOP("StartPage", "Tabular (CSV)"), "Layers"},
                                   {"text", QT_TRANSLATE_NOOP("StartPage", "Text (character model)"), "Recurrent"}};

QString tr(const char* text) { return QCoreApplication::translate("StartPage", text); }

QString templateResource(const QString& name) { return QStringLiteral(":/projects/template_%1.plexus").arg(name); }

graph::Graph readTemplate(const QString& name) {
  QFile file(templateResource(name));
  if (!file.open(QIODevice::ReadOnly)) throw IoError("no project template named '" + name.toStdString() + "'");
  return graph::parse_project(file.readAll().toStdString(), templateResource(name).toStdString());
}

// The dataset kinds in words.
QString kindName(const std::string& kind) {
  if (kind == "mnist") return QStringLiteral("MNIST");
  if (kind == "fashion-mnist") return QStringLiteral("Fashion-MNIST");
  if (kind == "image_folder") return tr("image folder");
  if (kind == "csv") return QStringLiteral("CSV");
  if (kind == "text") return tr("text");
  if (kind == "text_classes") return tr("labelled texts");
  return qstr(kind);
}

// Where the data of each kind comes from, for someone who does not have it yet.
QString dataNote(const std::string& kind) {
  if (kind == "mnist")
    return tr("Handwritten digits: in a source checkout, bash scripts/fetch-mnist downloads them into data/mnist.");
  if (kind == "fashion-mnist")
    return tr("Pictures of clothes: Debian's dataset-fashion-mnist package installs them in "
              "/usr/share/datasets/fashion-mnist.");
  if (kind == "image_folder")
    return tr("Your own pictures, one sub-folder per class. From MNIST, in a source checkout: "
              "build/tests/make_image_folder data/digits-png --source mnist:data/mnist.");
  if (kind == "text")
    return tr("English first names: in a source checkout, bash scripts/fetch-names downloads them into data/names. "
              "Or any UTF-8 text file of your own.");
  if (kind == "text_classes")
    return tr("First names by list: in a source checkout, bash scripts/fetch-names lays them out in data/names_gender. "
              "Or a folder of your own with a .txt file per class, an example a line.");
  if (kind == "csv")
    return tr("A CSV file: the housing example's comes with Plexus; the penguins tables, in a source checkout, "
              "bash scripts/fetch-penguins downloads into data/penguins. Or choose your own in the Properties panel.");
  return {};
}

widgets::StartProject entry(const graph::Graph& g, const QString& key, const QString& title, bool present) {
  widgets::StartProject p;
  p.key = key;
  p.title = title;
  p.description = qstr(g.description);
  p.graph = g;
  p.dataset = g.dataset.kind.empty() ? tr("none") : kindName(g.dataset.kind) + QStringLiteral(", ") +
                                                         QDir::toNativeSeparators(qstr(g.dataset.path));
  p.dataset_present = present;
  p.dataset_note = dataNote(g.dataset.kind);
  return p;
}

// Where a template's relative dataset path is looked for: the current folder (where an untitled
// project looks), the examples' folder (their CSV) and the checkout around it (data/, where the
// fetch scripts put MNIST, the names and the penguins).
QStringList dataRoots() {
  QStringList roots{QDir::currentPath()};
  const QStringList examples = MainWindow::examples();
  if (!examples.isEmpty()) {
    const QDir dir = QFileInfo(examples.front()).absoluteDir();
    roots << dir.absolutePath() << QDir::cleanPath(dir.absoluteFilePath(QStringLiteral("..")));
  }
  return roots;
}

// The template with its dataset path made absolute where this machine has the data.
graph::Graph templateOnThisMachine(const QString& name) {
  graph::Graph g = readTemplate(name);
  const std::filesystem::path path = g.dataset.path;
  if (path.empty() || path.is_absolute()) return g;
  for (const QString& root : dataRoots()) {
    const std::filesystem::path here = std::filesystem::path(root.toStdString()) / path;
    std::error_code ec;
    if (std::filesystem::exists(here, ec)) {
      g.dataset.path = here.lexically_normal().string();
      break;
    }
  }
  return g;
}

}  // namespace

std::vector<widgets::StartProject> startExamples(const QStringList& paths) {
  std::vector<widgets::StartProject> out;
  for (const QString& path : paths) {
    try {
      const graph::Graph g = graph::load_project(path.toStdString());
      // As the opened project will look for it: next to the file, then in the current folder.
      const bool present =
          graph::locate_dataset(g.dataset.path, QFileInfo(path).absolutePath().toStdString()).found;
      out.push_back(entry(g, path, QFileInfo(path).completeBaseName(), present));
    } catch (const std::exception& e) {
      qWarning("start page: %s", e.what());  // a broken example is not offered
    }
  }
  return out;
}

std::vector<widgets::StartProject> startTemplates() {
  std::vector<widgets::StartProject> out;
  for (const Template& t : kTemplates) {
    const graph::Graph g = templateOnThisMachine(QLatin1String(t.name));
    const bool present = graph::locate_dataset(g.dataset.path, {}).found;
    out.push_back(entry(g, QLatin1String(t.name), tr(t.title), present));
    out.back().category = QLatin1String(t.category);
  }
  return out;
}

graph::Graph newProjectFromTemplate(const QString& name) {
  graph::Graph g = templateOnThisMachine(name);
  g.description.clear();  // the template's words, not the new project's
  return g;
}

}  // namespace plexus::app
