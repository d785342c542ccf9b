#pragma once
// TextFigures: the headline of a character model's run, after each epoch: its loss on the
// training and validation splits in nats, in bits per character and as perplexity, the
// validation figures large; next-character accuracy (how often the most likely character is
// the right one) beside them, small, since it says little of a model that must spread its
// bets. (A text file is split into training and validation only: there is no test split.)
#include <QString>
#include <QWidget>

#include "train/events.h"

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
  void setEpoch(const train::EpochEnd& epoch);

  QString title() const;
  // The figure shown, "" where there is none (before the first epoch, a run without validation).
  QString text(Row row, Column column) const;

 private:
  void setRow(Row row, double loss, double accuracy);
  void applyTheme();

  QLabel* title_;
  QLabel* heads_[4];
  QLabel* cells_[2][4];
};

}  // namespace plexus::widgets
