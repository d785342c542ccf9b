#include "graph/project.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "graph/blocks.h"
#include "graph/dataset_params.h"
#include "graph/json_text.h"
#include "graph/node_settings.h"
#include "graph/sweep_settings.h"
#include "graph/training_params.h"
#include "io/atomic_file.h"
#include "util/error.h"
#include "util/text.h"

namespace plexus::graph {
namespace {

// The settings table of each struct with one.
template <class S>
const std::vector<SettingRow<S>>& settings_table() {
  if constexpr (std::is_same_v<S, TrainingSettings>) return training_settings();
  else if constexpr (std::is_same_v<S, ColumnSetting>) return column_settings();
  else if constexpr (std::is_same_v<S, SweepSettings>) return sweep_settings();
  else return dataset_settings();
}

using namespace json;

// ---------------------------------------------------------------------------------------------
// Reading a project from the document. Types and structure only: what the values mean is the
// validator's business.

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

class ProjectReader {
 public:
  ProjectReader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Graph read(const Value& root) {
    const Object* top = std::get_if<Object>(&root.v);
    if (!top) fail("", root.offset, cat("expected a JSON object at the top level, ", got(root)));
    // The version first: a newer file may have anything else changed.
    const Member* format = find(*top, "format");
    if (!format)
      fail("", root.offset, "missing \"format\", the format version: this is not a Plexus project file");
    read_format(format->value);
    check_keys(*top, "", {"format", "description", "nodes", "edges", "blocks", "dataset", "training", "sweep", "view"},
               "a project has format, description, nodes, edges, blocks, dataset, training, sweep and view");

    Graph g;
    if (const Member* m = find(*top, "description")) g.description = string(m->value, "description");
    read_nodes(require(*top, root, "", "nodes", " (the list of nodes, may be empty)"), g.nodes);
    read_edges(require(*top, root, "", "edges", " (the list of edges, may be empty)"), g.edges);
    if (const Member* m = find(*top, "blocks")) read_blocks(m->value, g);
    if (const Member* m = find(*top, "dataset")) read_dataset(m->value, g.dataset);
    if (const Member* m = find(*top, "training")) read_training(m->value, g.training);
    if (const Member* m = find(*top, "sweep")) read_sweep(m->value, g.sweep);
    if (const Member* m = find(*top, "view")) {
      if (!std::holds_alternative<Object>(m->value.v)) fail("view", m->value.offset, cat("expected an object, ", got(m->value)));
      emit_compact(m->value, g.view);
    }
    return g;
  }

 private:
  [[noreturn]] void fail(const std::string& path, size_t offset, const std::string& what) const {
    throw ProjectError(cat(source_, ": ", path, path.empty() ? "" : ": ", what, " (", line_column(text_, offset), ')'));
  }

  static const Member* find(const Object& o, std::string_view key) {
    for (const Member& m : o)
      if (m.key == key) return &m;
    return nullptr;
  }
  const Value& require(const Object& o, const Value& ov, const std::string& path, std::string_view key,
                       std::string_view hint = "") const {
    const Member* m = find(o, key);
    if (!m) fail(path, ov.offset, cat("missing ", shown(key), hint));
    return m->value;
  }
  void check_keys(const Object& o, const std::string& path, const std::vector<std::string_view>& allowed,
                  const std::string& description) const {
    for (const Member& m : o)
      if (std::find(allowed.begin(), allowed.end(), m.key) == allowed.end())
        fail(path, m.key_offset, cat("unknown key ", shown(m.key), "; ", description));
  }
  const Object& object(const Value& v, const std::string& path, const char* what) const {
    const Object* o = std::get_if<Object>(&v.v);
    if (!o) fail(path, v.offset, cat("expected ", what, ", ", got(v)));
    return *o;
  }
  const Array& array(const Value& v, const std::string& path, const char* what) const {
    const Array* a = std::get_if<Array>(&v.v);
    if (!a) fail(path, v.offset, cat("expected ", what, ", ", got(v)));
    return *a;
  }
  [[noreturn]] void out_of_range(const std::string& path, const Value& v, uint64_t u) const {
    fail(path, v.offset,
         cat("integer ", std::to_string(u), " is out of range; the largest allowed is ", std::to_string(kInt64Max)));
  }

  std::string string(const Value& v, const std::string& path) const {
    const std::string* s = std::get_if<std::string>(&v.v);
    if (!s) fail(path, v.offset, cat("expected a string, ", got(v)));
    return *s;
  }
  int64_t integer(const Value& v, const std::string& path) const {
    if (const int64_t* i = std::get_if<int64_t>(&v.v)) return *i;
    if (const uint64_t* u = std::get_if<uint64_t>(&v.v)) out_of_range(path, v, *u);
    fail(path, v.offset, cat("expected an integer, ", got(v)));
  }
  double number(const Value& v, const std::string& path) const {
    if (const double* d = std::get_if<double>(&v.v)) return *d;
    if (const int64_t* i = std::get_if<int64_t>(&v.v)) return double(*i);
    if (const uint64_t* u = std::get_if<uint64_t>(&v.v)) return double(*u);
    fail(path, v.offset, cat("expected a number, ", got(v)));
  }
  bool boolean(const Value& v, const std::string& path) const {
    if (const bool* b = std::get_if<bool>(&v.v)) return *b;
    fail(path, v.offset, cat("expected true or false, ", got(v)));
  }

  void read_format(const Value& v) const {
    if (const uint64_t* u = std::get_if<uint64_t>(&v.v)) newer(std::to_string(*u));
    const int64_t f = integer(v, "format");
    if (f > kProjectFormat) newer(std::to_string(f));
    if (f < 1)
      fail("format", v.offset,
           cat("invalid format version ", std::to_string(f), "; this version reads formats up to ", std::to_string(kProjectFormat)));
  }
  [[noreturn]] void newer(const std::string& f) const {
    throw ProjectError(cat(source_, ": was written by a newer Plexus (format ", f, "); this version reads formats up to ",
                           std::to_string(kProjectFormat)));
  }

  void read_nodes(const Value& v, std::vector<Node>& nodes) const {
    const Array& a = array(v, "nodes", "an array of nodes");
    std::unordered_map<std::string, size_t> ids;  // id -> index
    nodes.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string path = index_path("nodes", i);
      const Object& o = object(a[i], path, "an object (a node)");
      check_keys(o, path, node_keys(), node_keys_text());
      Node n;
      const Value& id = require(o, a[i], path, "id");
      n.id = string(id, key_path(path, "id"));
      if (!valid_node_id(n.id))
        fail(key_path(path, "id"), id.offset,
             cat(shown(n.id),
                 " is not a valid node id; ids use letters, digits, '_' and '-', start with a letter or '_' and have "
                 "at most 128 characters"));
      if (const auto [it, fresh] = ids.emplace(n.id, i); !fresh)
        fail(key_path(path, "id"), id.offset,
             cat("duplicate node id ", shown(n.id), ", also used by nodes[", std::to_string(it->second), ']'));
      n.type = string(require(o, a[i], path, "type"), key_path(path, "type"));
      if (const Member* m = find(o, "name")) n.name = string(m->value, key_path(path, "name"));
      if (const Member* m = find(o, "params")) read_params(m->value, key_path(path, "params"), n.params);
      if (const Member* m = find(o, "position")) n.position = read_position(m->value, key_path(path, "position"));
      // Its own training settings; their errors name the node, which an index alone hides.
      for (const NodeSetting& row : node_settings())
        if (const Member* m = find(o, row.spec.name)) {
          const std::string where = cat(key_path(path, m->key), " (node ", shown(n.id), ')');
          std::visit([&](auto member) { read_value(m->value, where, n.*member); }, row.field);
        }
      nodes.push_back(std::move(n));
    }
  }

  // The keys a node may have, and how a message lists them.
  static const std::vector<std::string_view>& node_keys() {
    static const std::vector<std::string_view> keys = [] {
      std::vector<std::string_view> k{"id", "type", "name", "params", "position"};
      for (const NodeSetting& row : node_settings()) k.push_back(row.spec.name);
      return k;
    }();
    return keys;
  }
  static std::string node_keys_text() {
    const std::vector<std::string_view>& k = node_keys();
    return cat("a node has ", join(std::vector<std::string>(k.begin(), k.end()), ", ", " and "));
  }

  void read_params(const Value& v, const std::string& path, std::map<std::string, ParamValue>& params) const {
    for (const Member& m : object(v, path, "an object mapping parameter names to values")) {
      const std::string p = key_path(path, m.key);
      const Value& x = m.value;
      ParamValue value;
      if (const bool* b = std::get_if<bool>(&x.v)) {
        value = *b;
      } else if (const int64_t* i = std::get_if<int64_t>(&x.v)) {
        value = *i;
      } else if (const uint64_t* u = std::get_if<uint64_t>(&x.v)) {
        out_of_range(p, x, *u);
      } else if (const double* d = std::get_if<double>(&x.v)) {
        value = *d;
      } else if (const std::string* s = std::get_if<std::string>(&x.v)) {
        value = *s;
      } else if (const Array* a = std::get_if<Array>(&x.v)) {
        // Strings: a list of names. Whole numbers only: an int list; a real number among them
        // makes it a float list.
        const bool names = !a->empty() && std::holds_alternative<std::string>(a->front().v);
        const bool reals = std::any_of(a->begin(), a->end(), [](const Value& e) { return std::holds_alternative<double>(e.v); });
        if (names) {
          std::vector<std::string> list;
          list.reserve(a->size());
          for (size_t k = 0; k < a->size(); ++k) list.push_back(string((*a)[k], index_path(p, k)));
          value = std::move(list);
        } else if (reals) {
          std::vector<double> list;
          list.reserve(a->size());
          for (size_t k = 0; k < a->size(); ++k) list.push_back(number((*a)[k], index_path(p, k)));
          value = std::move(list);
        } else {
          std::vector<int64_t> list;
          list.reserve(a->size());
          for (size_t k = 0; k < a->size(); ++k) list.push_back(integer((*a)[k], index_path(p, k)));
          value = std::move(list);
        }
      } else {
        fail(p, x.offset, cat("expected a number, true or false, a string, an array of numbers or an array of names, ", got(x)));
      }
      params.emplace(m.key, std::move(value));
    }
  }

  Position read_position(const Value& v, const std::string& path) const {
    const Array& a = array(v, path, "[x, y]");
    if (a.size() != 2)
      fail(path, v.offset, cat("expected [x, y], got an array of ", std::to_string(a.size()), a.size() == 1 ? " element" : " elements"));
    return Position{number(a[0], index_path(path, 0)), number(a[1], index_path(path, 1))};
  }

  void read_edges(const Value& v, std::vector<Edge>& edges) const {
    const Array& a = array(v, "edges", "an array of edges");
    edges.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string path = index_path("edges", i);
      const Object& o = object(a[i], path, "an object (an edge)");
      check_keys(o, path, {"from", "to"}, "an edge has from and to");
      Edge e;
      e.from = read_port(require(o, a[i], path, "from", " ([node, port])"), key_path(path, "from"));
      e.to = read_port(require(o, a[i], path, "to", " ([node, port])"), key_path(path, "to"));
      edges.push_back(std::move(e));
    }
  }

  // Blocks refer to nodes and to each other: read them all, then check the whole annotation
  // (graph/blocks.h) and point at the block or member at fault.
  void read_blocks(const Value& v, Graph& g) const {
    const Array& a = array(v, "blocks", "an array of blocks");
    std::vector<const Value*> where;  // each block's value
    g.blocks.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string path = index_path("blocks", i);
      const Object& o = object(a[i], path, "an object (a block)");
      check_keys(o, path, {"id", "name", "members", "position", "collapsed"},
                 "a block has id, name, members, position and collapsed");
      Block b;
      b.id = string(require(o, a[i], path, "id"), key_path(path, "id"));
      if (const Member* m = find(o, "name")) b.name = string(m->value, key_path(path, "name"));
      const std::string members_path = key_path(path, "members");
      const Array& members = array(require(o, a[i], path, "members", " (the ids of its nodes and blocks)"), members_path,
                                   "an array of node and block ids");
      for (size_t k = 0; k < members.size(); ++k) b.members.push_back(string(members[k], index_path(members_path, k)));
      if (const Member* m = find(o, "position")) b.position = read_position(m->value, key_path(path, "position"));
      if (const Member* m = find(o, "collapsed")) b.collapsed = boolean(m->value, key_path(path, "collapsed"));
      g.blocks.push_back(std::move(b));
      where.push_back(&a[i]);
    }
    if (const std::optional<BlockIssue> issue = check_blocks(g)) {
      const std::string path = index_path("blocks", issue->block);
      const Object& o = std::get<Object>(where[issue->block]->v);
      if (!issue->member) fail(key_path(path, "id"), find(o, "id")->value.offset, issue->message);
      const Array& members = std::get<Array>(find(o, "members")->value.v);
      fail(index_path(key_path(path, "members"), *issue->member), members[*issue->member].offset, issue->message);
    }
  }

  PortRef read_port(const Value& v, const std::string& path) const {
    const Array& a = array(v, path, "[node, port]");
    if (a.size() != 2)
      fail(path, v.offset,
           cat("expected [node, port], got an array of ", std::to_string(a.size()), a.size() == 1 ? " element" : " elements"));
    return PortRef{string(a[0], index_path(path, 0)), string(a[1], index_path(path, 1))};
  }

  void read_dataset(const Value& v, DatasetBinding& d) const {
    const Object& o = object(v, "dataset", "an object");
    read_settings(o, "dataset", "a dataset has", d, "",
                  {"kind", "path", "target", "task", "features", "columns", "augment"});
    if (const Member* m = find(o, "kind")) d.kind = string(m->value, "dataset.kind");
    if (const Member* m = find(o, "path")) d.path = string(m->value, "dataset.path");
    if (const Member* m = find(o, "target")) d.target = string(m->value, "dataset.target");
    if (const Member* m = find(o, "task")) d.task = string(m->value, "dataset.task");
    if (const Member* m = find(o, "features")) {
      const Array& a = array(m->value, "dataset.features", "a list of column names");
      for (size_t i = 0; i < a.size(); ++i) d.features.push_back(string(a[i], index_path("dataset.features", i)));
    }
    if (const Member* m = find(o, "columns")) {
      for (const Member& c : object(m->value, "dataset.columns", "an object of column names"))
        read_column(c, key_path("dataset.columns", c.key), d);
    }
    if (const Member* m = find(o, "augment"))
      read_settings(object(m->value, "dataset.augment", "an object"), "dataset.augment", "augment has", d, "augment", {});
  }

  // A CSV column's settings: {"missing": "median", "indicator": false}.
  void read_column(const Member& m, const std::string& path, DatasetBinding& d) const {
    ColumnSetting c;
    c.name = m.key;
    read_settings(object(m.value, path, "an object"), path, "a column has", c, "", {});
    d.columns.push_back(std::move(c));
  }

  void read_training(const Value& v, TrainingSettings& t) const {
    read_settings(object(v, "training", "an object"), "training", "training has", t, "", {});
  }

  // {"method": "random", ..., "parameters": [{"target": "lr", "min": 1e-4, "max": 1, "scale": "log"},
  // {"target": "batch_size", "values": [32, 64]}]}: types only, graph::check_sweep the meaning.
  void read_sweep(const Value& v, SweepSettings& s) const {
    const Object& o = object(v, "sweep", "an object");
    read_settings(o, "sweep", "a sweep has", s, "", {"parameters"});
    const Member* m = find(o, "parameters");
    if (!m) fail("sweep", v.offset, "missing \"parameters\" (the list of swept settings)");
    const Array& a = array(m->value, "sweep.parameters", "an array of swept settings");
    if (a.empty()) fail("sweep.parameters", m->value.offset, "a sweep needs at least one parameter");
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string path = index_path("sweep.parameters", i);
      const Object& p = object(a[i], path, "an object (a swept setting)");
      check_keys(p, path, {"target", "values", "min", "max", "scale"},
                 "a swept setting has target, and values or min, max and scale");
      SweepParameter sp;
      sp.target = string(require(p, a[i], path, "target", " (\"lr\", \"dataset.augment.shift\", \"fc1.out_features\")"),
                         key_path(path, "target"));
      const Member* values = find(p, "values");
      const Member* min = find(p, "min");
      const Member* max = find(p, "max");
      if (values && (min || max)) fail(path, a[i].offset, "give either values or min and max, not both");
      if (values) {
        const std::string vp = key_path(path, "values");
        const Array& list = array(values->value, vp, "an array of values to try");
        if (list.empty()) fail(vp, values->value.offset, "list at least one value");
        for (size_t k = 0; k < list.size(); ++k) sp.values.push_back(scalar(list[k], index_path(vp, k)));
      } else {
        if (!min || !max) fail(path, a[i].offset, "give values, or min and max");
        sp.min = number(min->value, key_path(path, "min"));
        sp.max = number(max->value, key_path(path, "max"));
        if (const Member* scale = find(p, "scale")) sp.scale = string(scale->value, key_path(path, "scale"));
      }
      s.parameters.push_back(std::move(sp));
    }
  }
  // A swept value: a number, true or false, or a word.
  ParamValue scalar(const Value& x, const std::string& path) const {
    if (const bool* b = std::get_if<bool>(&x.v)) return *b;
    if (const int64_t* i = std::get_if<int64_t>(&x.v)) return *i;
    if (const uint64_t* u = std::get_if<uint64_t>(&x.v)) out_of_range(path, x, *u);
    if (const double* d = std::get_if<double>(&x.v)) return *d;
    if (const std::string* t = std::get_if<std::string>(&x.v)) return *t;
    fail(path, x.offset, cat("expected a number, true or false or a string, ", got(x)));
  }

  // The members of `o` that are rows of S's table in `group`, besides the `other` keys the caller
  // reads; any other key is refused, naming the ones allowed.
  template <class S>
  void read_settings(const Object& o, const std::string& path, const char* has, S& out, const std::string& group,
                     std::vector<std::string_view> other) const {
    const auto& table = settings_table<S>();
    std::vector<std::string> names(other.begin(), other.end());
    for (const SettingRow<S>& row : table)
      if (row.group == group) names.push_back(row.spec.name);
    std::vector<std::string_view> keys(names.begin(), names.end());
    check_keys(o, path, keys, cat(has, " ", join(names, ", ", " and ")));
    for (const Member& m : o)
      for (const SettingRow<S>& row : table)
        if (row.group == group && row.spec.name == m.key)
          std::visit([&](auto member) { read_value(m.value, key_path(path, m.key), out.*member); }, row.field);
  }

  // A training setting by the type of its field.
  void read_value(const Value& v, const std::string& path, std::string& out) const { out = string(v, path); }
  void read_value(const Value& v, const std::string& path, double& out) const { out = number(v, path); }
  void read_value(const Value& v, const std::string& path, bool& out) const { out = boolean(v, path); }
  void read_value(const Value& v, const std::string& path, int64_t& out) const { out = integer(v, path); }
  void read_value(const Value& v, const std::string& path, uint64_t& out) const { out = unsigned_integer(v, path); }

  uint64_t unsigned_integer(const Value& v, const std::string& path) const {
    if (const uint64_t* u = std::get_if<uint64_t>(&v.v)) return *u;
    if (const int64_t* i = std::get_if<int64_t>(&v.v); i && *i >= 0) return uint64_t(*i);
    fail(path, v.offset, cat("expected a non-negative integer, ", got(v)));
  }

  std::string_view text_;
  const std::string& source_;
};

// ---------------------------------------------------------------------------------------------
// Writing: the canonical text. Everything written is checked to read back.

class ProjectWriter {
 public:
  std::string write(const Graph& g) {
    out_ = "{\n  \"format\": ";
    out_ += std::to_string(g.blocks.empty() ? kProjectFormatWithoutBlocks : kProjectFormat);
    if (!g.description.empty()) {
      out_ += ",\n";
      member(1, "description");
      text(g.description, "description");
    }
    out_ += ",\n  \"nodes\": ";
    write_nodes(g.nodes);
    out_ += ",\n  \"edges\": ";
    write_edges(g.edges);
    write_blocks(g);
    write_dataset(g.dataset);
    write_training(g.training);
    write_sweep(g.sweep);
    if (!g.view.empty()) {
      out_ += ",\n  \"view\": ";
      write_view(g.view);
    }
    out_ += "\n}\n";
    return std::move(out_);
  }

 private:
  [[noreturn]] static void fail(const std::string& what) { throw ValueError(cat("cannot save the project: ", what)); }

  void member(int level, std::string_view key) {
    indent(out_, level);
    append_string(out_, key);  // our own key names
    out_ += ": ";
  }
  void text(std::string_view s, const std::string& path) {
    if (!append_string(out_, s)) fail(cat(path, " is not valid UTF-8"));
  }
  void real(double d, const std::string& path) {
    if (!std::isfinite(d)) fail(cat(path, " is not a finite number (", std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf", ')'));
    out_ += real_text(d);
  }

  void write_nodes(const std::vector<Node>& nodes) {
    if (nodes.empty()) {
      out_ += "[]";
      return;
    }
    std::unordered_map<std::string, size_t> ids;
    out_ += "[\n";
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      const std::string path = index_path("nodes", i);
      if (!valid_node_id(n.id)) fail(cat(path, ".id ", shown(n.id), " is not a valid node id"));
      if (const auto [it, fresh] = ids.emplace(n.id, i); !fresh)
        fail(cat(path, ".id: duplicate node id ", shown(n.id), ", also used by nodes[", std::to_string(it->second), ']'));
      out_ += "    {\n";
      member(3, "id");
      text(n.id, cat(path, ".id"));
      out_ += ",\n";
      member(3, "type");
      text(n.type, cat(path, ".type"));
      out_ += ",\n";
      member(3, "name");
      text(n.name, cat(path, ".name"));
      out_ += ",\n";
      member(3, "params");
      if (n.params.empty()) {
        out_ += "{}";
      } else {
        out_ += "{\n";
        size_t k = 0;
        for (const auto& [name, value] : n.params) {
          const std::string p = key_path(cat(path, ".params"), name);
          indent(out_, 4);
          text(name, p);
          out_ += ": ";
          param(value, p);
          out_ += ++k < n.params.size() ? ",\n" : "\n";
        }
        indent(out_, 3);
        out_ += "}";
      }
      out_ += ",\n";
      member(3, "position");
      out_ += "[";
      real(n.position.x, cat(path, ".position[0]"));
      out_ += ", ";
      real(n.position.y, cat(path, ".position[1]"));
      out_ += "]";
      // Only where chosen: a node trained as the project says reads as before.
      for (const NodeSetting& row : node_settings()) {
        if (setting_value(n, row.field) == row.spec.default_value) continue;
        out_ += ",\n";
        member(3, row.spec.name);
        std::visit([&](auto field) { write_value(n.*field, key_path(path, row.spec.name)); }, row.field);
      }
      out_ += "\n    }";
      out_ += i + 1 < nodes.size() ? ",\n" : "\n";
    }
    out_ += "  ]";
  }

  void param(const ParamValue& value, const std::string& path) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            out_ += std::to_string(x);
          } else if constexpr (std::is_same_v<T, double>) {
            real(x, path);
          } else if constexpr (std::is_same_v<T, bool>) {
            out_ += x ? "true" : "false";
          } else if constexpr (std::is_same_v<T, std::string>) {
            text(x, path);
          } else {
            out_ += "[";
            for (size_t k = 0; k < x.size(); ++k) {
              if (k) out_ += ", ";
              if constexpr (std::is_same_v<T, std::vector<double>>)
                real(x[k], index_path(path, k));  // "2.0": read back as a float list
              else if constexpr (std::is_same_v<T, std::vector<std::string>>)
                text(x[k], index_path(path, k));
              else
                out_ += std::to_string(x[k]);
            }
            out_ += "]";
          }
        },
        value);
  }

  void write_edges(const std::vector<Edge>& edges) {
    if (edges.empty()) {
      out_ += "[]";
      return;
    }
    out_ += "[\n";
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      const std::string path = index_path("edges", i);
      out_ += "    {\"from\": [";
      text(e.from.node, cat(path, ".from[0]"));
      out_ += ", ";
      text(e.from.port, cat(path, ".from[1]"));
      out_ += "], \"to\": [";
      text(e.to.node, cat(path, ".to[0]"));
      out_ += ", ";
      text(e.to.port, cat(path, ".to[1]"));
      out_ += "]}";
      out_ += i + 1 < edges.size() ? ",\n" : "\n";
    }
    out_ += "  ]";
  }

  // Left out when there are none, so projects without blocks read as before.
  void write_blocks(const Graph& g) {
    if (g.blocks.empty()) return;
    if (const std::optional<BlockIssue> issue = check_blocks(g)) {
      std::string path = index_path("blocks", issue->block);
      path = issue->member ? index_path(key_path(path, "members"), *issue->member) : key_path(path, "id");
      fail(cat(path, ": ", issue->message));
    }
    out_ += ",\n  \"blocks\": [\n";
    for (size_t i = 0; i < g.blocks.size(); ++i) {
      const Block& b = g.blocks[i];
      const std::string path = index_path("blocks", i);
      out_ += "    {\n";
      member(3, "id");
      text(b.id, cat(path, ".id"));
      out_ += ",\n";
      member(3, "name");
      text(b.name, cat(path, ".name"));
      out_ += ",\n";
      member(3, "members");
      out_ += "[";
      for (size_t k = 0; k < b.members.size(); ++k) {
        if (k) out_ += ", ";
        text(b.members[k], index_path(cat(path, ".members"), k));
      }
      out_ += "],\n";
      member(3, "position");
      out_ += "[";
      real(b.position.x, cat(path, ".position[0]"));
      out_ += ", ";
      real(b.position.y, cat(path, ".position[1]"));
      out_ += "],\n";
      member(3, "collapsed");
      out_ += b.collapsed ? "true" : "false";
      out_ += "\n    }";
      out_ += i + 1 < g.blocks.size() ? ",\n" : "\n";
    }
    out_ += "  ]";
  }

  // Only what differs from the defaults, so a project states what its author chose.
  void write_dataset(const DatasetBinding& d) {
    if (d == DatasetBinding{}) return;
    out_ += ",\n  \"dataset\": {";
    const char* sep = "\n";
    const auto next = [&](std::string_view key, int level) {
      out_ += sep;
      sep = ",\n";
      member(level, key);
    };
    for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"kind", &d.kind},
                                     {"path", &d.path}, {"target", &d.target}, {"task", &d.task}}) {
      if (value->empty()) continue;
      next(key, 2);
      text(*value, cat("dataset.", key));
    }
    if (!d.features.empty()) {
      next("features", 2);
      out_ += '[';
      for (size_t i = 0; i < d.features.size(); ++i) {
        if (i) out_ += ", ";
        text(d.features[i], index_path("dataset.features", i));
      }
      out_ += ']';
    }
    if (!d.columns.empty()) {
      next("columns", 2);
      out_ += '{';
      const char* column_sep = "\n";
      for (const ColumnSetting& c : d.columns) {
        out_ += column_sep;
        column_sep = ",\n";
        indent(out_, 3);
        text(c.name, "dataset.columns");
        out_ += ": {";
        const char* key_sep = "";
        for (const ColumnSettingRow& row : column_settings()) {
          if (setting_value(c, row.field) == row.spec.default_value) continue;
          out_ += key_sep;
          key_sep = ", ";
          append_string(out_, row.spec.name);
          out_ += ": ";
          std::visit([&](auto field) { write_value(c.*field, cat("dataset.columns.", row.spec.name)); }, row.field);
        }
        out_ += '}';
      }
      out_ += "\n    }";
    }
    const auto chosen = [&](const DatasetSetting& row) { return setting_value(d, row.field) != row.spec.default_value; };
    for (const DatasetSetting& row : dataset_settings()) {
      if (!row.group.empty() || !chosen(row)) continue;
      next(row.spec.name, 2);
      std::visit([&](auto field) { write_value(d.*field, cat("dataset.", row.spec.name)); }, row.field);
    }
    bool augmented = false;
    for (const DatasetSetting& row : dataset_settings()) {
      if (row.group != "augment" || !chosen(row)) continue;
      if (!augmented) {
        next("augment", 2);
        out_ += '{';
        sep = "\n";
        augmented = true;
      }
      next(row.spec.name, 3);
      std::visit([&](auto field) { write_value(d.*field, cat("dataset.augment.", row.spec.name)); }, row.field);
    }
    if (augmented) out_ += "\n    }";
    out_ += "\n  }";
  }

  void write_training(const TrainingSettings& t) {
    out_ += ",\n  \"training\": {";
    const char* sep = "\n";
    for (const TrainingSetting& s : training_settings()) {
      if (s.omit_default && setting_value(t, s.field) == setting_value(TrainingSettings{}, s.field)) continue;
      out_ += sep;
      sep = ",\n";
      member(2, s.spec.name);
      std::visit([&](auto field) { write_value(t.*field, cat("training.", s.spec.name)); }, s.field);
    }
    out_ += "\n  }";
  }

  // Only for a project with a sweep, so that other projects keep their bytes.
  void write_sweep(const SweepSettings& s) {
    if (!s.defined()) return;
    out_ += ",\n  \"sweep\": {";
    for (const SweepSetting& row : sweep_settings()) {
      out_ += "\n";
      member(2, row.spec.name);
      std::visit([&](auto field) { write_value(s.*field, cat("sweep.", row.spec.name)); }, row.field);
      out_ += ",";
    }
    out_ += "\n";
    member(2, "parameters");
    out_ += "[\n";
    for (size_t i = 0; i < s.parameters.size(); ++i) {
      const SweepParameter& p = s.parameters[i];
      const std::string path = index_path("sweep.parameters", i);
      indent(out_, 3);
      out_ += "{\"target\": ";
      text(p.target, cat(path, ".target"));
      if (!p.values.empty()) {
        out_ += ", \"values\": [";
        for (size_t k = 0; k < p.values.size(); ++k) {
          if (k) out_ += ", ";
          const std::string vp = index_path(cat(path, ".values"), k);
          if (p.values[k].index() > 3) fail(cat(vp, " is a list; a swept value is a number, a flag or a word"));
          param(p.values[k], vp);
        }
        out_ += "]";
      } else {
        out_ += ", \"min\": ";
        real(p.min, cat(path, ".min"));
        out_ += ", \"max\": ";
        real(p.max, cat(path, ".max"));
        out_ += ", \"scale\": ";
        text(p.scale, cat(path, ".scale"));
      }
      out_ += "}";
      out_ += i + 1 < s.parameters.size() ? ",\n" : "\n";
    }
    indent(out_, 2);
    out_ += "]\n  }";
  }

  // A training setting by the type of its field.
  void write_value(const std::string& v, const std::string& path) { text(v, path); }
  void write_value(double v, const std::string& path) { real(v, path); }
  void write_value(bool v, const std::string&) { out_ += v ? "true" : "false"; }
  void write_value(int64_t v, const std::string&) { out_ += std::to_string(v); }
  void write_value(uint64_t v, const std::string&) { out_ += std::to_string(v); }

  void write_view(const std::string& view) {
    Value v;
    try {
      // One level less than a file allows: the view sits inside the top-level object.
      v = parse(view, "the view state", kProjectMaxDepth - 1);
    } catch (const ProjectError& e) {
      fail(e.what());
    }
    if (!std::holds_alternative<Object>(v.v)) fail(cat("the view state must be a JSON object, ", got(v)));
    emit_pretty(v, 1, out_);
  }

  std::string out_;
};

}  // namespace

Graph parse_project(std::string_view text, const std::string& source_name) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte order mark
  if (std::all_of(text.begin(), text.end(), is_space))
    throw ProjectError(cat(source_name, ": the file is empty (a Plexus project is a JSON object)"));
  const Value root = parse(text, source_name, kProjectMaxDepth);
  return ProjectReader(text, source_name).read(root);
}

Graph load_project(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw IoError(cat(name, ": is a directory, not a project file"));
  auto too_large = [&] {
    return ProjectError(cat(name, ": the file is larger than ", std::to_string(kProjectMaxFileSize >> 20),
                            " MiB, too large for a Plexus project"));
  };
  if (const uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > kProjectMaxFileSize) throw too_large();
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw IoError(cat(name, ": cannot open: ", std::strerror(errno)));
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {  // the size may change, or be unknown (a pipe)
    text.append(buf, n);
    if (text.size() > kProjectMaxFileSize) throw too_large();
  }
  if (std::ferror(f.get())) throw IoError(cat(name, ": read error: ", std::strerror(errno)));
  return parse_project(text, name);
}

std::string serialize_project(const Graph& graph) { return ProjectWriter().write(graph); }

void save_project(const std::filesystem::path& path, const Graph& graph) {
  const std::string text = serialize_project(graph);  // throws before the file is touched
  io::write_file_atomically(path, text);
}

}  // namespace plexus::graph

