#pragma once
// "My blocks": the blocks a person saved to reuse in any project. Each is a fragment file
// (project text holding the block's nodes, the edges among them and the block, collapsed;
// graph::extract_block) in one folder, written atomically. Inserting one pastes a copy with
// fresh ids: blocks are copied, never shared definitions (docs/editor.md says why).
#include <QString>

#include <vector>

#include "graph/graph.h"

namespace plexus::widgets {

class BlockLibrary {
 public:
  explicit BlockLibrary(QString folder) : folder_(std::move(folder)) {}
  // $PLEXUS_BLOCKS_DIR when set, else "blocks" in the app's data folder.
  static QString defaultFolder();
  QString folder() const { return folder_; }

  struct Entry {
    QString name;            // the block's name
    QString path;            // its file
    graph::Graph fragment;   // what inserting it pastes
  };
  // The saved blocks, by name; files that do not read as a block are left out.
  std::vector<Entry> entries() const;
  // Saves the block `id` of `graph` (with everything inside it) as <name>.plexus, numbered when
  // that exists; returns the file. Throws (IoError, ValueError) and writes nothing on failure.
  QString save(const graph::Graph& graph, const std::string& id) const;

 private:
  QString folder_;
};

}  // namespace plexus::widgets
