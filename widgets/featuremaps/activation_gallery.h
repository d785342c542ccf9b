#pragma once
// ActivationGallery: the examples of a split that excite one channel of a node most, highest
// first, each with its activation: pictures as tiles, texts as a list. While they are computed
// it shows the progress (and a Stop button); a click on an example emits exampleClicked with its
// place in the list.
#include <QImage>
#include <QString>
#include <QWidget>
#include <cstdint>
#include <vector>

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QStackedWidget;

namespace plexus::widgets {

class TileGrid;

class ActivationGallery : public QWidget {
  Q_OBJECT

 public:
  struct Example {
    QImage picture;  // a picture example (null for a text)
    QString text;    // a text example
    float activation = 0;
    QString toolTip;
  };

  explicit ActivationGallery(QWidget* parent = nullptr);

  void showProgress(const QString& title, int64_t done, int64_t total);
  void showExamples(const QString& title, std::vector<Example> examples);
  void showError(const QString& title, const QString& message);

  QString title() const;
  bool busy() const;  // the progress is shown
  const std::vector<Example>& examples() const { return examples_; }
  TileGrid* pictures() const { return pictures_; }
  QListWidget* texts() const { return texts_; }

 signals:
  void exampleClicked(int index);
  void stopRequested();

 private:
  std::vector<Example> examples_;
  QLabel* title_;
  QStackedWidget* pages_;
  QWidget* progressPage_;
  QProgressBar* progress_;
  QPushButton* stop_;
  QLabel* message_;
  TileGrid* pictures_;
  QListWidget* texts_;
};

}  // namespace plexus::widgets
