#pragma once
// A parameter as editors, checks and docs see it: its name, label, type, default, range or
// choices and doc. Layer types (graph/registry.h) and training settings (graph/training_params.h)
// both describe their parameters this way.
#include <string>
#include <vector>

#include "graph/graph.h"

namespace plexus::graph {

// IntPair: one whole number for both axes of an image or a pair [h, w] (a kernel size, a stride).
// An Int or IntPair with choices also takes those words (padding's "same" and "valid").
// Names: a list of names, each a non-empty text (an Input's table columns).
enum class ParamType { Int, Float, Bool, Choice, IntList, FloatList, IntPair, Names };
// "int", "float", "bool", "choice", "int list", "float list", "int or [h, w]", "names"
std::string to_string(ParamType t);

struct ParamSpec {
  std::string name;   // the key in project files and on the command line: "lr", "out_channels"
  std::string label;  // what a person reads in the editor and the docs: "Learning rate"
  ParamType type = ParamType::Int;
  ParamValue default_value;
  double min = 0, max = 0;           // inclusive range of Int / Float (and of list and pair entries)
  std::vector<std::string> choices;  // Choice; words an Int or IntPair takes besides numbers
  // A sentence or a few; the first one alone reads as the tooltip's line under the label
  // ("The step size of each update."), the rest say more in the docs and the help.
  std::string doc;
  // What the default stands for when it is not meant at face value, in a word or two for
  // editors ("auto" for a size taken from the input); "" = the value itself.
  std::string default_means;
};

// The node's value of the parameter, or its default when the node leaves it out.
const ParamValue& param_value(const Node& node, const ParamSpec& spec);

// The range of an Int, Float, IntList, FloatList or IntPair parameter (of each entry) as messages word it:
// "between 1 and 16777216", "between 0 and 0.99".
std::string param_range(const ParamSpec& spec);

// "" when `value` suits `spec` (its type, range, choices, at most 8 IntList entries and 1024
// FloatList ones, two IntPair ones, 1024 distinct Names); else why
// not, worded to follow the parameter's name: "must be between 1 and 16777216". The one check
// of a parameter value: the validator and the editor's property panel both use it.
std::string check_param_value(const ParamSpec& spec, const ParamValue& value);

}  // namespace plexus::graph
