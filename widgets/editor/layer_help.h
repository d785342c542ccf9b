#pragma once
// The help of a layer type: its part of the layer reference (graph::layer_markdown, the text
// docs/layers.md is generated from) in a window of its own: display name, description, ports,
// and each parameter with its label, file key, default and allowed values. F1 on a selected
// node (NodeView) and the help button of the Properties panel open it; one window serves every
// request and follows the latest.
#include <QDialog>

#include "graph/registry.h"

class QTextBrowser;

namespace plexus::widgets {

class LayerHelp : public QDialog {
  Q_OBJECT

 public:
  // Shows `type`'s help in the one help window (made on first use, a child of `parent`'s
  // window), raised; returns it.
  static LayerHelp* showFor(const graph::LayerType& type, QWidget* parent);

  QTextBrowser* browser() const { return browser_; }
  QString typeName() const { return type_; }

 private:
  explicit LayerHelp(QWidget* parent);
  void setType(const graph::LayerType& type);

  QTextBrowser* browser_;
  QString type_;
};

}  // namespace plexus::widgets
