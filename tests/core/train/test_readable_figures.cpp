// The figures a person reads off a run's metrics: the most frequent mistakes of a confusion
// matrix, and a cross-entropy in nats as bits and perplexity.
#include "support/check.h"

#include <cmath>

#include "train/readable_figures.h"

using namespace plexus;

namespace {

// Row-major counts: row = true class, column = predicted class.
train::ConfusionMatrix matrix(int64_t classes, std::vector<int64_t> counts) {
  return train::ConfusionMatrix(classes, std::move(counts));
}

}  // namespace

TEST(topConfusionsAreTheLargestOffDiagonalCellsFirst) {
  const auto m = matrix(3, {50, 2, 7,   //
                            9, 40, 0,   //
                            1, 3, 20});
  const std::vector<train::Confusion> top = train::top_confusions(m, 10);
  COMPARE(top.size(), size_t(5));  // the diagonal and the empty cell are not mistakes
  COMPARE(top[0].truth, int64_t(1));
  COMPARE(top[0].predicted, int64_t(0));
  COMPARE(top[0].count, int64_t(9));
  COMPARE(top[0].share, 9.0 / 49.0);  // of the true class's 49 examples
  COMPARE(top[1].count, int64_t(7));
  COMPARE(top[1].share, 7.0 / 59.0);
  COMPARE(top[2].count, int64_t(3));
  COMPARE(top[3].count, int64_t(2));
  COMPARE(top[4].count, int64_t(1));
  COMPARE(top[4].truth, int64_t(2));
  COMPARE(top[4].predicted, int64_t(0));
}

TEST(tiedConfusionsKeepRowMajorOrderAndTheLimitCuts) {
  const auto m = matrix(3, {0, 4, 4,  //
                            4, 0, 1,  //
                            4, 0, 0});
  const std::vector<train::Confusion> top = train::top_confusions(m, 3);
  COMPARE(top.size(), size_t(3));
  // Four 4s: (0,1), (0,2), (1,0), (2,0) in row-major order; the 1 and the last 4 are cut.
  COMPARE(top[0].truth, int64_t(0));
  COMPARE(top[0].predicted, int64_t(1));
  COMPARE(top[1].truth, int64_t(0));
  COMPARE(top[1].predicted, int64_t(2));
  COMPARE(top[2].truth, int64_t(1));
  COMPARE(top[2].predicted, int64_t(0));
  COMPARE(top[0].share, 0.5);  // a class never right still has its share of its own examples
  COMPARE(train::top_confusions(m, 0).size(), size_t(0));
  COMPARE(train::top_confusions(matrix(2, {5, 0, 0, 5}), 20).size(), size_t(0));  // no mistakes
}

TEST(crossEntropyInNatsAsBitsAndPerplexity) {
  COMPARE(train::nats_to_bits(std::log(4.0)), 2.0);
  COMPARE(train::perplexity(std::log(4.0)), 4.0);
  COMPARE(train::nats_to_bits(0.0), 0.0);
  COMPARE(train::perplexity(0.0), 1.0);  // a certain model: one choice
  COMPARE(train::nats_to_bits(1.0), 1.0 / std::log(2.0));
}
