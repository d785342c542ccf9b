#include "common/icons.h"

#include <QCoreApplication>
#include <QFile>
#include <QHash>
#include <QIconEngine>
#include <QPainter>
#include <QSet>
#include <QStringList>
#include <QSvgRenderer>

#include "common/theme.h"

// Q_INIT_RESOURCE declares a function where it is used, so it must be called outside a namespace.
static void initPlexusResource() { Q_INIT_RESOURCE(plexus); }

namespace plexus::widgets {

void initResources() {
  [[maybe_unused]] static const bool done = (initPlexusResource(), true);
}

namespace {

// Renders the SVG at the requested pixel size (crisp at any device pixel ratio), with every
// #000000 replaced by the mode's colour. Without a tint the SVG keeps its own colours.
class SvgIconEngine : public QIconEngine {
 public:
  SvgIconEngine(QByteArray svg, QColor tint, QColor muted) : svg_(std::move(svg)), tint_(tint), muted_(muted) {}

  QSize actualSize(const QSize& size, QIcon::Mode, QIcon::State) override {
    const int side = qMin(size.width(), size.height());
    return {side, side};  // the icons are square
  }

  QPixmap pixmap(const QSize& size, QIcon::Mode mode, QIcon::State) override {
    if (size.isEmpty()) return {};
    const QString key = QStringLiteral("%1x%2/%3").arg(size.width()).arg(size.height()).arg(int(mode));
    if (const auto it = cache_.constFind(key); it != cache_.constEnd()) return *it;
    QPixmap pm(size);
    pm.fill(Qt::transparent);
    QPainter painter(&pm);
    if (mode == QIcon::Disabled) painter.setOpacity(0.6);
    QSvgRenderer renderer(svgFor(mode));
    const QSize square = actualSize(size, mode, QIcon::Off);
    renderer.render(&painter, QRectF(QPointF((size.width() - square.width()) / 2.0,
                                             (size.height() - square.height()) / 2.0), square));
    painter.end();
    cache_.insert(key, pm);
    return pm;
  }

  void paint(QPainter* painter, const QRect& rect, QIcon::Mode mode, QIcon::State state) override {
    const qreal dpr = painter->device()->devicePixelRatioF();
    QPixmap pm = pixmap(rect.size() * dpr, mode, state);
    pm.setDevicePixelRatio(dpr);
    painter->drawPixmap(rect, pm);
  }

  QIconEngine* clone() const override { return new SvgIconEngine(*this); }
  QString key() const override { return QStringLiteral("plexus-svg"); }

 private:
  QByteArray svgFor(QIcon::Mode mode) const {
    if (!tint_.isValid()) return svg_;
    // A selected item sits on the highlight colour, which always carries white text.
    const QColor colour = mode == QIcon::Disabled ? muted_
                          : mode == QIcon::Selected ? QColor(Qt::white)
                                                    : tint_;
    QByteArray svg = svg_;
    return svg.replace("#000000", colour.name().toLatin1());
  }

  QByteArray svg_;
  QColor tint_, muted_;
  QHash<QString, QPixmap> cache_;
};

QByteArray readSvg(const QString& name) {
  initResources();
  QFile file(QStringLiteral(":/icons/%1.svg").arg(name));
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QIcon loadIcon(const QString& name, const QColor& tint) {
  // Keyed by the colours too, so a theme change can never serve an icon of the old theme; the
  // cache is emptied on a change only to let the old icons go.
  static QHash<QString, QIcon> cache;
  static QSet<QString> warned;
  [[maybe_unused]] static const bool hooked = [] {
    QObject::connect(&ThemeManager::instance(), &ThemeManager::changed, [] { cache.clear(); });
    qAddPostRoutine([] { cache.clear(); });  // pixmaps must go before the application does
    return true;
  }();

  const QColor muted = ThemeManager::instance().theme().mutedText;
  const QString key = QStringList{name, tint.isValid() ? tint.name() : QString(), muted.name()}.join(QLatin1Char('/'));
  if (const auto it = cache.constFind(key); it != cache.constEnd()) return *it;
  const QByteArray svg = readSvg(name);
  if (svg.isEmpty()) {
    if (!warned.contains(name)) qWarning("plexus: no icon named '%s'", qPrintable(name));
    warned.insert(name);
    return {};
  }
  const QIcon icon(new SvgIconEngine(svg, tint, muted));
  cache.insert(key, icon);
  return icon;
}

}  // namespace

QIcon icon(const QString& name) { return loadIcon(name, ThemeManager::instance().theme().text); }

QIcon icon(const QString& name, const QColor& colour) { return loadIcon(name, colour); }

QIcon swatchIcon(const QColor& colour) {
  // One icon per colour (the colours are the runs' and classes' few): the run list sets its rows'
  // swatches again on every update, and a new icon each time left its pixmaps in Qt's pixmap
  // cache, where nothing asks for them again, a few KiB a run over a long session.
  static QHash<QRgb, QIcon> made;
  if (const auto it = made.constFind(colour.rgba()); it != made.constEnd()) return *it;
  QIcon out;
  for (const int size : {12, 16, 24, 32}) {
    QPixmap pixmap(size, size);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(Qt::NoPen);
    painter.setBrush(colour);
    const qreal inset = size / 6.0;
    painter.drawRoundedRect(QRectF(pixmap.rect()).adjusted(inset, inset, -inset, -inset), size / 8.0, size / 8.0);
    painter.end();
    out.addPixmap(pixmap);
  }
  made.insert(colour.rgba(), out);
  return out;
}

QIcon categoryIcon(const QString& category) {
  const Theme& theme = ThemeManager::instance().theme();
  // The category colours are deep, made to carry white text; as thin strokes on a dark base
  // they need lifting to stay legible.
  const QColor colour = theme.category(category);
  return loadIcon(QStringLiteral("cat-") + category.toLower(), theme.dark ? colour.lighter(160) : colour);
}

QIcon appIcon() { return loadIcon(QStringLiteral("plexus"), QColor()); }

}  // namespace plexus::widgets
