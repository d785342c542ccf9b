#pragma once
// TextFigures: the headline of a character model's run, after each epoch: its loss on the
// training and validation splits in nats, in bits per character and as perplexity, the
// validation figures large; next-character accuracy (how often the most likely character is
// the right one) beside them, small, since it says little of a model that must spread its
// bets. (A text file is split into training and validation only: there is no test split.)
// A model with several loss nodes gets each node's own loss, small, under each split's total:
// "CrossEntropy 'next' 1.412 · MSE 'style' 0.052".
#include <QString>
#include <QWidget>
#include <vector>

#include "train/events.h"
#include "train/health.h"

class QGridLayout;
class QLabel;

namespace plexus::widgets {

class TextFigures : public QWidget {
  Q_OBJECT

 public:
  enum Row { Training, Validation };
  enum Column { Nats, BitsPerChar, Perplexity, Accuracy };

  explicit TextFigures(QWidget* parent = nullptr);

  void clear();
  // What the loss nodes are called (node id -> label); a node not named is called by its id.
  void setLossNames(const train::NodeInfos& names);
  void setEpoch(const train::EpochEnd& epoch);

  QString title() const;
  // The figure shown, "" where there is none (before the first epoch, a run without validation).
  QString text(Row row, Column column) const;
  // The loss nodes' own losses under a split's total, "" for a model with one loss.
  QString lossNodesText(Row row) const;

 private:
  void setRow(Row row, double loss, double accuracy, const std::vector<train::LossPart>& parts);
  void setLossNodes(Row row, const std::vector<train::LossPart>& parts);  // none: the line goes
  void applyTheme();

  QLabel* title_;
  QLabel* heads_[4];
  QLabel* cells_[2][4];
  QLabel* lossNodes_[2];
  train::NodeInfos lossNames_;
};

}  // namespace plexus::widgets
