#pragma once
// What a text project's model writes as it trains: the samples generated after each epoch
// (train::EpochEnd::samples), in a monospace view that takes the image preview's place on the
// dashboard. The newest epoch is shown as it arrives; earlier ones stay a choice away.
#include <QString>
#include <QWidget>

#include <map>
#include <vector>

class QLabel;
class QPlainTextEdit;

namespace plexus::widgets {

class EpochChooser;

class TextSamplesView : public QWidget {
  Q_OBJECT
 public:
  explicit TextSamplesView(QWidget* parent = nullptr);

  void clear();
  // The samples after `epoch`; shown at once unless the user chose an earlier epoch to read.
  void addEpoch(int epoch, const std::vector<QString>& samples);
  void showEpoch(int epoch);

  int shownEpoch() const;  // 0 when there is none
  QString text() const;    // the samples shown, one a line

 private:
  QLabel* title_;
  EpochChooser* epochs_;
  QPlainTextEdit* text_;
  std::map<int, std::vector<QString>> samples_;
};

}  // namespace plexus::widgets
