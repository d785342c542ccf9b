#pragma once
// What a model scored against its own input (an autoencoder) makes of it: after each epoch,
// some validation examples (top row) above the model's output for each (bottom row), from
// train::EpochEnd::reconstructions, beside the plots where a classifier's confusion matrix is.
// The newest epoch is shown as it arrives; earlier ones stay a choice away.
#include <QImage>
#include <QWidget>

#include <map>
#include <vector>

#include "train/events.h"

class QLabel;

namespace plexus::widgets {

class EpochChooser;
class ReconstructionPairs;

class ReconstructionsView : public QWidget {
  Q_OBJECT
 public:
  explicit ReconstructionsView(QWidget* parent = nullptr);

  void clear();
  // The pairs after `epoch`; shown at once unless the user chose an earlier epoch to look at.
  void addEpoch(int epoch, const train::Reconstructions& pairs);
  void showEpoch(int epoch);

  int shownEpoch() const;  // 0 when there is none
  int pairCount() const;   // the examples shown
  QImage input(int i) const;
  QImage output(int i) const;

 private:
  QLabel* title_;
  EpochChooser* epochs_;
  ReconstructionPairs* pairs_;
  std::map<int, train::Reconstructions> epochs_seen_;
};

}  // namespace plexus::widgets
