#pragma once
// The CPU's recurrent cell steps (Backend::rnn_cell_forward / rnn_cell_backward): the
// formulas of ops/recurrent_cells.h over the batch rows, split across the thread pool.
#include "ops/backend.h"

namespace plexus::cpu {

void rnn_cell_forward(const Backend::RnnStep& s);
void rnn_cell_backward(const Backend::RnnStepGrad& s);

}  // namespace plexus::cpu
