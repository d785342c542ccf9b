#pragma once
// LayerPalette: the layer types the user adds to the graph, one group per registry category in
// registry order. It reads only the registry: a new entry there shows up here by itself. The
// search box filters; Enter or a double click asks for a layer; dragging one carries its type
// (kLayerMimeType) to the editor. A "My blocks" group first lists the blocks its owner gives
// (setMyBlocks: the project's and the saved ones); they are asked for, and dragged, as
// fragments (project text, kGraphMimeType), which the editor pastes as copies.
#include <QByteArray>
#include <QString>
#include <QWidget>
#include <optional>
#include <vector>

class QAction;
class QLineEdit;
class QMimeData;
class QTreeWidget;
class QTreeWidgetItem;

namespace plexus::widgets {

inline constexpr char kLayerMimeType[] = "application/x-plexus-layer";

// A block the palette offers.
struct PaletteBlock {
  QString name, note;   // "encoder"; shown greyed after it: where it comes from
  QString tooltip;
  QByteArray fragment;  // what inserting it pastes (graph::fragment_to_text)
};

class LayerPalette : public QWidget {
  Q_OBJECT

 public:
  explicit LayerPalette(QWidget* parent = nullptr);

  // kLayerMimeType holds the type name in UTF-8, and so does the text. The caller owns it.
  static QMimeData* mimeDataForType(const QString& type);
  // The layer type `data` carries, if it is one of the registry.
  static std::optional<QString> typeFromMimeData(const QMimeData* data);

  QString currentType() const;          // empty when no layer is current
  void setFilter(const QString& text);  // as if typed into the search box
  void setMyBlocks(const std::vector<PaletteBlock>& blocks);
  QTreeWidgetItem* myBlocksGroup() const { return my_blocks_; }
  QTreeWidget* tree() const { return tree_; }
  QLineEdit* searchBox() const { return search_; }
  // Wide enough for every layer's full name (and type name) without eliding, so the dock that
  // holds the palette can open at that width.
  QSize sizeHint() const override;

 signals:
  void addRequested(const QString& type);
  void fragmentRequested(const QByteArray& fragment);  // a block of My blocks

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void populate();
  void applyFilter(const QString& text);
  void applyTheme();
  // The first visible layer whose name or type has every word of `name_words` (none: the first
  // visible layer), or null.
  QTreeWidgetItem* firstVisibleLayer(const QStringList& name_words = {}) const;
  void activate(const QTreeWidgetItem* item);  // double click or Enter: a layer or a block

  QLineEdit* search_;
  QAction* search_icon_;
  QTreeWidget* tree_;
  QTreeWidgetItem* my_blocks_;
};

}  // namespace plexus::widgets
