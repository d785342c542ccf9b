#pragma once
// What the start page offers (widgets/start/start_page.h), read from the files: the shipped
// examples and the templates of a new project (resources/projects/template_*.plexus, compiled
// in), each with its description, its dataset, whether this machine has that data where the
// project would look for it, and where that data comes from.
#include <QString>
#include <QStringList>

#include <vector>

#include "graph/graph.h"
#include "start/start_page.h"

namespace plexus::app {

// The examples among `paths` (MainWindow::examples()); a file that cannot be read is left out.
std::vector<widgets::StartProject> startExamples(const QStringList& paths);

// The templates, in the order the page lists them; their key is what newProjectFromTemplate takes.
std::vector<widgets::StartProject> startTemplates();

// The template `name` ("image", "tabular", "text") as a new project: its dataset path, relative
// in the template, made absolute where this machine has that data (next to the examples or in
// the source checkout around them, else the current folder), so the untitled project trains as
// it is and keeps its data wherever it is saved; no description (the template's words are not
// the new project's). Throws when there is no such template.
graph::Graph newProjectFromTemplate(const QString& name);

}  // namespace plexus::app
