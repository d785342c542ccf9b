#include "dataset/dataset_class_balance.h"

#include <QFutureWatcher>
#include <QLocale>
#include <QPainter>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <exception>
#include <numeric>

#include "common/qt_text.h"
#include "common/theme.h"
#include "dataset/dataset_class_colours.h"
#include "graph/dataset_info.h"
#include "session/class_balance.h"
#include "session/run.h"

namespace plexus::widgets {
namespace {

constexpr int kMargin = 4;
constexpr int kNameWidth = 96;   // at most; names longer are elided
constexpr int kCountWidth = 84;  // "12,345 (99.9%)" in the small font

struct Counted {
  std::vector<int64_t> counts;  // empty: nothing to show
  std::vector<QString> names;
};

// What a run would train on (session::make_training_run): the same split, the same counts.
Counted countTrainingSplit(const graph::DatasetBinding& binding, uint64_t seed, double validationFraction) {
  try {
    if (binding.kind.empty() || binding.kind == "text") return {};
    const graph::DatasetSplits splits =
        graph::open_dataset(binding, seed, validationFraction);
    const int64_t classes = splits.info.classes;
    if (classes <= 0) return {};
    Counted out{session::training_class_counts(*splits.train, classes), {}};
    for (const std::string& name : session::class_names(*splits.train, classes)) out.names.push_back(qstr(name));
    return out;
  } catch (const std::exception&) {
    return {};  // the dataset panel's status says what is wrong with the dataset
  }
}

}  // namespace

ClassBalanceChart::ClassBalanceChart(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("classBalance"));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, qOverload<>(&QWidget::update));
  hide();
}

void ClassBalanceChart::showDataset(const graph::DatasetBinding& dataset, uint64_t seed, double validationFraction) {
  Key key{dataset, seed, validationFraction};
  if (key_ == key) return;
  key_ = std::move(key);
  const int generation = ++generation_;
  auto* watcher = new QFutureWatcher<Counted>(this);
  connect(watcher, &QFutureWatcher<Counted>::finished, this, [this, watcher, generation] {
    watcher->deleteLater();
    if (generation != generation_) return;  // a newer request is on its way
    Counted counted = watcher->result();
    setCounts(std::move(counted.counts), std::move(counted.names));
    emit countsShown();
  });
  watcher->setFuture(QtConcurrent::run(countTrainingSplit, dataset, seed, validationFraction));
}

void ClassBalanceChart::setCounts(std::vector<int64_t> counts, std::vector<QString> names) {
  counts_ = std::move(counts);
  names_ = std::move(names);
  setVisible(!counts_.empty());
  setToolTip(counts_.empty() ? QString() : summary());
  updateGeometry();
  update();
}

int64_t ClassBalanceChart::count(int cls) const { return cls >= 0 && cls < classes() ? counts_[size_t(cls)] : 0; }

QString ClassBalanceChart::className(int cls) const {
  return cls >= 0 && cls < int(names_.size()) && !names_[size_t(cls)].isEmpty() ? names_[size_t(cls)]
                                                                                 : QString::number(cls);
}

QString ClassBalanceChart::summary() const {
  const int64_t total = std::accumulate(counts_.begin(), counts_.end(), int64_t(0));
  const QString examples = tr("%1 training examples").arg(QLocale().toString(qlonglong(total)));
  const int64_t empty = std::count(counts_.begin(), counts_.end(), int64_t(0));
  if (empty > 0)
    return empty == 1 ? tr("%1; 1 class without any").arg(examples) : tr("%1; %2 classes without any").arg(examples).arg(empty);
  if (counts_.empty()) return examples;
  const auto [least, most] = std::minmax_element(counts_.begin(), counts_.end());
  return tr("%1; the largest class has %2 × the smallest's")
      .arg(examples, QLocale().toString(double(*most) / double(*least), 'f', 1));
}

int ClassBalanceChart::rowHeight() const { return QFontMetrics(smallerFont(font(), 0.9)).height() + 4; }

QSize ClassBalanceChart::minimumSizeHint() const {
  const int line = QFontMetrics(smallerFont(font(), 0.9)).height();
  return {160, 2 * kMargin + (classes() + 2) * rowHeight() + line / 2};  // heading, rows, summary
}

QSize ClassBalanceChart::sizeHint() const { return {280, minimumSizeHint().height()}; }

void ClassBalanceChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const Theme& theme = ThemeManager::instance().theme();
  const QFont small = smallerFont(font(), 0.9);
  const QFontMetrics fm(small);
  painter.setFont(small);
  const int row = rowHeight();
  const QRect area = rect().adjusted(kMargin, kMargin, -kMargin, -kMargin);

  painter.setPen(theme.text);
  painter.drawText(QRect(area.left(), area.top(), area.width(), row), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("Training examples per class"));
  const int64_t total = std::accumulate(counts_.begin(), counts_.end(), int64_t(0));
  const int64_t max = counts_.empty() ? 0 : *std::max_element(counts_.begin(), counts_.end());
  int widest = 0;
  for (int c = 0; c < classes(); ++c) widest = std::max(widest, fm.horizontalAdvance(className(c)));
  const int nameWidth = std::min({widest, kNameWidth, area.width() / 3});
  const int barLeft = area.left() + nameWidth + 6, barRight = area.right() - kCountWidth;
  for (int c = 0; c < classes(); ++c) {
    const int top = area.top() + (c + 1) * row;
    painter.setPen(theme.mutedText);
    painter.drawText(QRect(area.left(), top, nameWidth, row), Qt::AlignRight | Qt::AlignVCenter,
                     fm.elidedText(className(c), Qt::ElideRight, nameWidth));
    const double share = total > 0 ? double(count(c)) / double(total) : 0.0;
    const int length = max > 0 ? int(std::lround(double(barRight - barLeft) * double(count(c)) / double(max))) : 0;
    painter.setPen(Qt::NoPen);
    painter.setBrush(classColour(c, theme.dark));
    painter.drawRoundedRect(QRectF(barLeft, top + 2, std::max(length, count(c) > 0 ? 2 : 0), row - 4), 2, 2);
    painter.setPen(count(c) == 0 ? theme.error : theme.text);
    painter.drawText(QRect(barRight + 6, top, kCountWidth - 6, row), Qt::AlignLeft | Qt::AlignVCenter,
                     tr("%1 (%2%)").arg(QLocale().toString(qlonglong(count(c)))).arg(100.0 * share, 0, 'f', 1));
  }
  painter.setPen(theme.mutedText);
  painter.drawText(QRect(area.left(), area.top() + (classes() + 1) * row, area.width(), row + fm.height() / 2),
                   Qt::AlignLeft | Qt::AlignVCenter, fm.elidedText(summary(), Qt::ElideRight, area.width()));
}

}  // namespace plexus::widgets
