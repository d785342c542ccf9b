#pragma once
// Run ▸ Load Weights…: how the tensors of a weights file named otherwise (a PyTorch state_dict
// saved as safetensors) match the open project (session/weights_import.h), every one in a
// table (status, file tensor, project tensor, shapes) before anything changes; Load writes
// the project's weights with the matched tensors, Cancel nothing.
#include <QDialog>
#include <memory>

#include "graph/graph.h"

class QDialogButtonBox;
class QLabel;
class QTableWidget;

namespace plexus::session {
struct ProjectImport;
}

namespace plexus::app {

class LoadWeightsDialog : public QDialog {
  Q_OBJECT

 public:
  // Plans the import of `weights` into `project` (compiled with its seed, its dataset looked up
  // from `project_dir`); throws what plan_import throws (a file that is not safetensors, a
  // project that does not compile).
  LoadWeightsDialog(const graph::Graph& project, const QString& project_dir, const QString& weights,
                    QWidget* parent = nullptr);
  ~LoadWeightsDialog() override;

  // Writes the imported weights to `out`; returns the error, or "" when written.
  QString save(const QString& out);
  // How many tensors Load takes from the file.
  int matched() const;
  bool complete() const;

  QTableWidget* table() const { return table_; }
  QDialogButtonBox* buttons() const { return buttons_; }

 private:
  std::unique_ptr<session::ProjectImport> import_;
  QString weights_;
  QLabel* summary_;
  QTableWidget* table_;
  QDialogButtonBox* buttons_;
};

}  // namespace plexus::app
