#include "dashboard/resume_offer.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

#include "common/theme.h"

namespace plexus::widgets {

ResumeOffer::ResumeOffer(QWidget* parent) : QFrame(parent) {
  setObjectName(QStringLiteral("resumeOffer"));
  setFrameShape(QFrame::StyledPanel);
  text_ = new QLabel(this);
  text_->setWordWrap(true);
  text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  resume_ = new QPushButton(tr("Resume"), this);
  resume_->setObjectName(QStringLiteral("resumeOfferButton"));
  resume_->setToolTip(
      tr("Go on training the run in its own folder from its last checkpoint, as if it had never stopped"));
  dismiss_ = new QPushButton(tr("Dismiss"), this);
  dismiss_->setObjectName(QStringLiteral("dismissResumeOffer"));
  dismiss_->setToolTip(tr("Hide this; the run list still offers Resume This Run"));
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(8, 4, 8, 4);
  layout->addWidget(text_, 1);
  layout->addWidget(resume_);
  layout->addWidget(dismiss_);
  connect(resume_, &QPushButton::clicked, this, [this] {
    const int run = run_;
    withdraw();
    emit resumeRequested(run);
  });
  connect(dismiss_, &QPushButton::clicked, this, &ResumeOffer::withdraw);
  connect(&ThemeManager::instance(), &ThemeManager::changed, this, &ResumeOffer::restyle);
  restyle();
  hide();
}

void ResumeOffer::offer(int run, const QString& text) {
  run_ = run;
  text_->setText(text);
  show();
}

void ResumeOffer::withdraw() {
  run_ = -1;
  hide();
}

QString ResumeOffer::text() const { return isHidden() ? QString() : text_->text(); }

// A warning's colour on the frame, as the other notices of the dashboard.
void ResumeOffer::restyle() {
  const Theme& theme = ThemeManager::instance().theme();
  setStyleSheet(QStringLiteral("#resumeOffer { border: 1px solid %1; border-radius: 4px; }").arg(theme.warning.name()));
}

}  // namespace plexus::widgets
