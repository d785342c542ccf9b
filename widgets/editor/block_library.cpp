#include "editor/block_library.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include <algorithm>

#include "common/qt_text.h"
#include "graph/blocks.h"
#include "graph/fragment.h"
#include "graph/project.h"
#include "util/error.h"

namespace plexus::widgets {
namespace {

// The block a saved fragment is about: its one block that no other block holds.
const graph::Block* outermost(const graph::Graph& fragment) {
  const graph::Block* found = nullptr;
  for (const graph::Block& b : fragment.blocks)
    if (!graph::parent_block(fragment, b.id)) {
      if (found) return nullptr;  // several: not a saved block
      found = &b;
    }
  return found;
}

// A file name from a block name: letters, digits, '-' and '_' kept, the rest '_'.
QString fileStem(const QString& name) {
  QString stem;
  for (const QChar c : name) stem += c.isLetterOrNumber() || c == '-' || c == '_' ? c : QChar('_');
  return stem.isEmpty() ? QStringLiteral("block") : stem.left(80);
}

}  // namespace

QString BlockLibrary::defaultFolder() {
  const QString forced = qEnvironmentVariable("PLEXUS_BLOCKS_DIR");
  if (!forced.isEmpty()) return forced;
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/blocks");
}

std::vector<BlockLibrary::Entry> BlockLibrary::entries() const {
  std::vector<Entry> out;
  const QDir dir(folder_);
  for (const QString& file : dir.entryList({QStringLiteral("*.plexus")}, QDir::Files, QDir::Name)) {
    const QString path = dir.absoluteFilePath(file);
    try {
      graph::Graph fragment = graph::load_project(path.toStdString());
      if (const graph::Block* block = outermost(fragment)) out.push_back({qstr(block->name), path, std::move(fragment)});
    } catch (const Error&) {
      // Damaged or foreign: not offered. The file stays for the user to look at.
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Entry& a, const Entry& b) { return QString::localeAwareCompare(a.name, b.name) < 0; });
  return out;
}

QString BlockLibrary::save(const graph::Graph& graph, const std::string& id) const {
  const graph::Block* block = graph.find_block(id);
  if (!block) throw ValueError("there is no block '" + id + "' to save");
  const graph::Graph fragment = graph::extract_block(graph, id);
  if (!QDir().mkpath(folder_)) throw IoError(folder_.toStdString() + ": cannot create the folder for saved blocks");
  const QString stem = fileStem(qstr(block->name));
  QString path = QDir(folder_).absoluteFilePath(stem + QStringLiteral(".plexus"));
  for (int n = 2; QFileInfo::exists(path); ++n)
    path = QDir(folder_).absoluteFilePath(QStringLiteral("%1 %2.plexus").arg(stem).arg(n));
  graph::save_project(path.toStdString(), fragment);
  return path;
}

}  // namespace plexus::widgets
