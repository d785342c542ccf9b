#pragma once
// What each Input node of a graph reads of its dataset's examples: the whole example, or some of a
// table's (CSV) columns, standardised or not. The loaders standardise the examples once, per
// column, before the graph sees them; so a column is standardised for all its readers or none.
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/layer_params.h"

namespace plexus::graph {

// An Input node's parameters. Their one field list, input_fields(), is both the Input layer
// type's (core/layers/data.cpp: its shape rule and lowering) and input_read's, so every reader
// of an Input decodes them alike.
struct InputParams {
  std::vector<int64_t> shape;        // one example's, fixed; empty = the dataset's
  std::vector<std::string> columns;  // empty = the whole example
  bool standardize = true;
};
const std::vector<ParamField<InputParams>>& input_fields();

// An Input node with its parameters.
struct InputRead : InputParams {
  const Node* node;
};

// What the Input node `input` reads. A value of the wrong kind reads as its default: the
// validator reads the Inputs of graphs whose values it refuses.
InputRead input_read(const Node& input);

// Every Input node of `g`, in the graph's order.
std::vector<InputRead> input_reads(const Graph& g);

// Of a table with feature columns `features` (in input order), which are standardised: a column is
// when its readers standardise it or none reads it; every column of a whole-example Input is read.
// Returns a column read both standardised and not as an error message naming the two Inputs.
struct Standardized {
  std::vector<bool> columns;  // per feature column; one for all of x when the dataset has no columns
  std::optional<std::pair<std::string, std::string>> conflict;  // (node id, message)
};
Standardized standardized_columns(const Graph& g, const std::vector<std::string>& features);

}  // namespace plexus::graph
