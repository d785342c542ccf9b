#include "dataset/dataset_columns_view.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>

#include "common/qt_text.h"
#include "data/csv_format.h"
#include "data/table.h"
#include "dataset/dataset_choice_delegate.h"
#include "dataset/dataset_columns_model.h"
#include "dataset/dataset_profile_delegate.h"

namespace plexus::widgets {

namespace {

struct ReadTable {
  std::shared_ptr<const data::Table> table;
  QString error;
};

ReadTable readColumnsTable(const std::string& file, const std::string& delimiter, const std::string& missing) {
  try {
    data::TableFormat format;
    format.delimiter = data::csv_format::delimiter_of(delimiter);
    format.missing = data::csv_format::MissingTokens::parse(missing);
    return {std::make_shared<const data::Table>(data::read_table(file, format)), {}};
  } catch (const std::exception& e) {
    return {nullptr, qstr(e.what())};
  }
}

}  // namespace

DatasetColumnsView::DatasetColumnsView(QWidget* parent)
    : QWidget(parent), model_(new DatasetColumnsModel(this)), table_(new QTableView(this)), message_(new QLabel(this)) {
  setObjectName(QStringLiteral("datasetColumns"));
  table_->setObjectName(QStringLiteral("datasetColumnTable"));
  table_->setModel(model_);
  auto* choices = new DatasetChoiceDelegate(table_);
  table_->setItemDelegate(choices);
  table_->setItemDelegateForColumn(DatasetColumnsModel::Profile, new DatasetProfileDelegate(table_));
  table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::SelectedClicked |
                          QAbstractItemView::EditKeyPressed);
  table_->setSelectionBehavior(QAbstractItemView::SelectItems);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(DatasetColumnsModel::Profile, QHeaderView::Fixed);
  table_->horizontalHeader()->resizeSection(DatasetColumnsModel::Profile, 120);
  table_->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
  table_->setWordWrap(false);
  message_->setObjectName(QStringLiteral("datasetColumnsMessage"));
  message_->setWordWrap(true);
  message_->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(table_);
  layout->addWidget(message_);
  connect(model_, &DatasetColumnsModel::refused, this, &DatasetColumnsView::refused);
}

void DatasetColumnsView::setCommit(std::function<void(const graph::DatasetBinding&)> commit) {
  model_->commit = std::move(commit);
}

QString DatasetColumnsView::message() const { return message_->isHidden() ? QString() : message_->text(); }

void DatasetColumnsView::showFile(const QString& file, const graph::DatasetBinding& binding) {
  const QFileInfo info(file);
  Source source{file.isEmpty() ? QString() : info.absoluteFilePath(),
                file.isEmpty() ? QDateTime() : info.lastModified(),
                file.isEmpty() ? -1 : info.size(),
                binding.delimiter,
                binding.missing_values};
  model_->setBinding(binding);
  if (source == source_) return;
  source_ = source;
  read(source);
}

void DatasetColumnsView::read(const Source& source) {
  const uint64_t asked = ++reads_;
  if (source.file.isEmpty()) return showTable(nullptr, {});
  const std::string file = source.file.toStdString();
  if (source.size <= kReadAtOnce) {
    const ReadTable read = readColumnsTable(file, source.delimiter, source.missing_values);
    return showTable(read.table, read.error);
  }
  message_->setText(tr("Reading %1…").arg(QFileInfo(source.file).fileName()));
  message_->show();
  auto* watcher = new QFutureWatcher<ReadTable>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, asked] {
    if (asked == reads_) showTable(watcher->result().table, watcher->result().error);
    watcher->deleteLater();
  });
  watcher->setFuture(QtConcurrent::run(readColumnsTable, file, source.delimiter, source.missing_values));
}

void DatasetColumnsView::showTable(std::shared_ptr<const data::Table> table, const QString& error) {
  model_->setTable(std::move(table));
  message_->setText(error.isEmpty() ? QString() : tr("The columns cannot be read: %1").arg(error));
  message_->setVisible(!error.isEmpty());
  table_->setVisible(model_->rowCount() > 0);
  fitHeight();
  emit loaded();
}

// As tall as its rows, up to a dozen; more scroll inside it.
void DatasetColumnsView::fitHeight() {
  table_->resizeRowsToContents();
  const int rows = std::min(model_->rowCount(), 12);
  int height = table_->horizontalHeader()->sizeHint().height() + 2 * table_->frameWidth();
  for (int r = 0; r < rows; ++r) height += table_->rowHeight(r);
  table_->setFixedHeight(height + table_->horizontalScrollBar()->sizeHint().height());
}

}  // namespace plexus::widgets
