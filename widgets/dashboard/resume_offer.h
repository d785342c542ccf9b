#pragma once
// ResumeOffer: the bar above the dashboard's runs that offers the last run of a project, when
// the app closed while it trained (a crash, a kill, a power cut), to resume: "Plexus closed
// during Run 3: it was interrupted at epoch 7, batch 212 of 469. Resume it …?" with Resume and
// Dismiss. Not a dialog: nothing waits on it, and the run list offers the same Resume later.
// It only asks: whoever owns the runs answers resumeRequested.
#include <QFrame>

class QLabel;
class QPushButton;

namespace plexus::widgets {

class ResumeOffer : public QFrame {
  Q_OBJECT

 public:
  explicit ResumeOffer(QWidget* parent = nullptr);

  // Shows the offer of the run `run` (an id of the caller's) with `text`.
  void offer(int run, const QString& text);
  void withdraw();                  // hides it
  int run() const { return run_; }  // -1 when nothing is offered
  QString text() const;
  QPushButton* resumeButton() const { return resume_; }
  QPushButton* dismissButton() const { return dismiss_; }

 signals:
  void resumeRequested(int run);

 private:
  void restyle();

  QLabel* text_;
  QPushButton *resume_, *dismiss_;
  int run_ = -1;
};

}  // namespace plexus::widgets
