#include "dataset/dataset_content.h"

#include <QCoreApplication>

namespace plexus::widgets {

int DatasetContent::label(int64_t sample) const {
  return sample >= 0 && sample < int64_t(labels.size()) ? labels[size_t(sample)] : -1;
}

int DatasetContent::predicted(int64_t sample) const {
  return predictions.has(sample) ? predictions.predicted[size_t(sample)] : -1;
}

Verdict DatasetContent::verdict(int64_t sample) const {
  if (!predictions.has(sample) || label(sample) < 0) return Verdict::None;
  return predicted(sample) == label(sample) ? Verdict::Right : Verdict::Wrong;
}

QString DatasetContent::className(int cls) const {
  return cls >= 0 && cls < classes() ? classNames[size_t(cls)] : QStringLiteral("?");
}

QString DatasetContent::featureName(int column) const {
  if (column >= 0 && column < int(featureNames.size())) return featureNames[size_t(column)];
  return QStringLiteral("x%1").arg(column);
}

QString DatasetContent::describe(int64_t sample) const {
  QString text = QCoreApplication::translate("DatasetPreview", "Sample %1").arg(sample);
  if (classes() > 0) text += QCoreApplication::translate("DatasetPreview", " · label %1").arg(className(label(sample)));
  if (predictions.has(sample))
    text += QCoreApplication::translate("DatasetPreview", " · predicted %1 (%2%)")
                .arg(className(predicted(sample)))
                .arg(100.0 * predictions.confidenceOf(sample), 0, 'f', 1);
  return text;
}

QVariant DatasetContent::sampleData(int64_t sample, int role) const {
  switch (role) {
    case Qt::ToolTipRole: return describe(sample);
    case SampleIndexRole: return QVariant::fromValue<qint64>(sample);
    case LabelRole: return label(sample);
    case PredictedRole: return predicted(sample);
    case PredictedNameRole: return predictions.has(sample) ? className(predicted(sample)) : QString();
    case ConfidenceRole: return predictions.confidenceOf(sample);
    case VerdictRole: return int(verdict(sample));
    default: return {};
  }
}

}  // namespace plexus::widgets
