#pragma once
// AttentionView: what a MultiheadAttention node attends to for a typed text. Choosers for the
// node and the heads (their average, one head, or all side by side as a small grid); each map is
// position × position, a row per query character and a column per key character, coloured by
// the weight (0 to 1: a row is a softmax and sums to 1); hovering a cell tells its query and key
// characters and the weight. It shows and asks only: the app computes (explain::attention_map,
// off the UI thread) and hands the weights back.
#include <QStringList>
#include <QWidget>
#include <vector>

class QComboBox;
class QLabel;

namespace plexus::widgets {

class HeatLegend;

// The maps themselves, painted: one or more T × S matrices with the characters on the axes.
class AttentionGrid : public QWidget {
  Q_OBJECT
 public:
  explicit AttentionGrid(QWidget* parent = nullptr);
  struct Map {
    QString title;              // "Head 2", "Average of 4 heads"
    std::vector<float> values;  // T × S, row-major
  };
  void setMaps(std::vector<Map> maps, int queries, int keys, const QStringList& query_labels,
               const QStringList& key_labels);
  const std::vector<Map>& maps() const { return maps_; }
  // The map, query and key under `pos`; false outside every cell.
  bool cellAt(const QPoint& pos, int* map, int* query, int* key) const;
  QRect cellRect(int map, int query, int key) const;
  // What hovering the cell says.
  QString describe(int map, int query, int key) const;

  QSize sizeHint() const override { return {420, 420}; }
  QSize minimumSizeHint() const override { return {200, 200}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  struct Geometry {
    int columns = 1, cell = 0, label = 0, title = 0, panelWidth = 0, panelHeight = 0;
  };
  Geometry geometry() const;
  QRect matrixRect(int map) const;

  std::vector<Map> maps_;
  int queries_ = 0, keys_ = 0;
  QStringList query_labels_, key_labels_;
};

class AttentionView : public QWidget {
  Q_OBJECT

 public:
  explicit AttentionView(QWidget* parent = nullptr);

  // The model's MultiheadAttention nodes; keeps the chosen one, else the first.
  void setNodes(const QStringList& nodes);
  QString node() const;

  // Node's weights [heads, T, S] (row-major) for the text of `tokens` (T labels; the keys are
  // the same positions when S == T, else numbered).
  void showWeights(const std::vector<float>& weights, int heads, int queries, int keys, const QStringList& tokens);
  void showMessage(const QString& message);
  void showError(const QString& message);

  // The heads chooser's entries: -1 their average, k ≥ 0 head k, -2 all side by side.
  static constexpr int kAverage = -1, kAllHeads = -2;
  void chooseHeads(int choice);
  int heads() const { return heads_; }
  QComboBox* nodeBox() const { return node_; }
  QComboBox* headBox() const { return head_; }
  AttentionGrid* grid() const { return grid_; }
  QString caption() const;
  QString errorText() const;

 signals:
  void nodeChanged();

 private:
  void render();

  QComboBox* node_;
  QComboBox* head_;
  AttentionGrid* grid_;
  HeatLegend* legend_;
  QLabel* caption_;
  QLabel* error_;
  std::vector<float> weights_;
  int heads_ = 0, queries_ = 0, keys_ = 0;
  QStringList tokens_;
};

}  // namespace plexus::widgets
