#pragma once
// LayerPalette: the layer types the user adds to the graph, one group per registry category in
// registry order. It reads only the registry: a new entry there shows up here by itself. The
// search box filters; Enter or a double click asks for a layer; dragging one carries its type
// (kLayerMimeType) to the editor.
#include <QString>
#include <QWidget>
#include <optional>

class QAction;
class QLineEdit;
class QMimeData;
class QTreeWidget;
class QTreeWidgetItem;

namespace plexus::widgets {

inline constexpr char kLayerMimeType[] = "application/x-plexus-layer";

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
  QTreeWidget* tree() const { return tree_; }
  QLineEdit* searchBox() const { return search_; }
  // Wide enough for every layer's full name (and type name) without eliding, so the dock that
  // holds the palette can open at that width.
  QSize sizeHint() const override;

 signals:
  void addRequested(const QString& type);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void populate();
  void applyFilter(const QString& text);
  void applyTheme();
  QTreeWidgetItem* firstVisibleLayer() const;

  QLineEdit* search_;
  QAction* search_icon_;
  QTreeWidget* tree_;
};

}  // namespace plexus::widgets
