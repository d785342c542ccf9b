// The slicing layers: Split and Chunk cut each example into pieces along a dimension, one output
// port per piece (so their parameters decide their ports: graph::LayerType::output_ports), and
// Slice keeps start:end:step of one dimension. Dimensions count the batch as 0, as in PyTorch
// code written for batched tensors (torch.split(x, [2, 3], dim=1), x[:, 1:-1:2]); the batch is
// never cut. The pieces are views, so their gradients add back into the input's.
#include <algorithm>

#include "layers/families.h"
#include "layers/shape_rules.h"
#include "ops/ops.h"
#include "util/text.h"

namespace plexus::layers {
namespace {

// The ports of a node cut into `n` pieces: output0, output1, ...
std::vector<graph::PortSpec> piece_ports(size_t n) {
  std::vector<graph::PortSpec> ports;
  for (size_t i = 0; i < n; ++i)
    ports.push_back({"output" + std::to_string(i), "piece " + std::to_string(i) + " along dim"});
  return ports;
}

// The size of dim (counting the batch as 0) of the node's input, refused when it has no such dim.
int64_t dim_size(const graph::ShapeContext& c, int64_t dim) {
  const Shape& in = one_input(c);
  if (dim > int64_t(in.size()))
    fail("input", c.node.label() + ": dim " + std::to_string(dim) + " does not exist in " + batched(in) + from(c, 0) +
                      " (it has dims 1 to " + std::to_string(in.size()) + " besides the batch)");
  return in[size_t(dim - 1)];
}

// The input's shape with dim's size replaced by each of `sizes`: the pieces' shapes.
std::vector<Shape> pieces(const graph::ShapeContext& c, int64_t dim, const std::vector<int64_t>& sizes) {
  std::vector<Shape> out;
  for (int64_t s : sizes) {
    out.push_back(one_input(c));
    out.back()[size_t(dim - 1)] = s;
  }
  return out;
}

// The pieces as the layers downstream take them best: a piece of a dim past the first is a
// strided view.
std::vector<Tensor> contiguous_pieces(std::vector<Tensor> pieces) {
  for (Tensor& t : pieces) t = contiguous(t);
  return pieces;
}

// ONNX's Split (opset 13: the sizes are an input), one output per piece.
void onnx_split(const OnnxContext& c, int64_t dim, const std::vector<int64_t>& sizes) {
  c.out.add_initializer(c.name("sizes"), sizes);
  c.out.add_node("Split", {c.input_names[0], c.name("sizes")}, c.output_names, {{"axis", dim}});
}

// The same in Python: `a, b = torch.split(x, [2, 3], dim=1)`.
void pytorch_split(const CodeContext& c, int64_t dim, const std::vector<int64_t>& sizes) {
  std::string list;
  for (int64_t n : sizes) list += (list.empty() ? "" : ", ") + std::to_string(n);
  c.out.line(join(c.output_names) + (c.output_names.size() == 1 ? "," : "") + " = torch.split(" + c.input() + ", [" +
             list + "], dim=" + std::to_string(dim) + ")");
}

// The same in C++: the pieces split() cuts, each made contiguous as Plexus makes them.
void cpp_split(const CodeContext& c, int64_t dim, const std::vector<int64_t>& sizes) {
  c.out.line("const std::vector<Tensor> " + c.local("pieces") + " = split(" + c.input() + ", " + cpp(sizes) + ", " +
             std::to_string(dim) + ");");
  for (size_t i = 0; i < c.output_names.size(); ++i)
    if (c.used(i)) c.out.assign(c.output_names[i], "contiguous(" + c.local("pieces") + "[" + std::to_string(i) + "])");
}

struct SplitParams {
  std::vector<int64_t> sections;
  int64_t dim;
};

void add_split(Registrar& r) {
  using P = SplitParams;
  Layer<P> t = named<P>("Split", "Layers", "Split",
                        "Cuts each example along a dimension into pieces of the given sizes, one output each.");
  t.inputs = {{"input", "any shape whose dim has the sections' total size"}};
  t.outputs = piece_ports(2);
  t.output_ports = [](const P& p) { return piece_ports(p.sections.size()); };
  t.params = {graph::param("sections", "Sections", &P::sections, {1, 1}, 1, graph::kBig,
                           "The size of each piece along dim, in order; they must add up to dim's size. One output "
                           "port per entry (output0, output1, ...)."),
              graph::param("dim", "Dimension", &P::dim, 1, 1, 8, "The dimension to cut, counting the batch as 0.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    const int64_t n = dim_size(c, p.dim);
    int64_t total = 0;
    for (int64_t s : p.sections) total += s;  // at most 8 entries of at most 2^24: no overflow
    if (total != n)
      fail("", c.node.label() + ": sections " + graph::to_string(graph::ParamValue(p.sections)) + " add up to " +
                   std::to_string(total) + ", but dim " + std::to_string(p.dim) + " of " + batched(one_input(c)) +
                   from(c, 0) + " has size " + std::to_string(n));
    return pieces(c, p.dim, p.sections);
  };
  t.build = [](const BuildContext&, const P& p) {
    return BuiltNode{nullptr, [sizes = p.sections, dim = p.dim](const std::vector<Tensor>& in) {
                       return contiguous_pieces(split(in.at(0), sizes, dim));
                     }};
  };
  t.onnx = [](const OnnxContext& c, const P& p) { onnx_split(c, p.dim, p.sections); };
  t.pytorch = [](const CodeContext& c, const P& p) { pytorch_split(c, p.dim, p.sections); };
  t.cpp = [](const CodeContext& c, const P& p) { cpp_split(c, p.dim, p.sections); };
  r.add(std::move(t));
}

struct ChunkParams {
  int64_t chunks, dim;
};

// torch.chunk's pieces of a dim of size n: ceil(n / chunks) each, the last what is left.
std::vector<int64_t> chunk_sizes(int64_t n, int64_t chunks) {
  const int64_t size = (n + chunks - 1) / chunks;
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < n; start += size) sizes.push_back(std::min(size, n - start));
  return sizes;
}

void add_chunk(Registrar& r) {
  using P = ChunkParams;
  Layer<P> t = named<P>("Chunk", "Layers", "Chunk",
                        "Cuts each example along a dimension into equal pieces (the last may be smaller), one output "
                        "each.");
  t.inputs = {{"input", "any shape"}};
  t.outputs = piece_ports(2);
  t.output_ports = [](const P& p) { return piece_ports(size_t(p.chunks)); };
  t.params = {graph::param("chunks", "Chunks", &P::chunks, 2, 1, 8,
                           "The number of pieces, each ceil(size / chunks) long, as torch.chunk cuts; one output port "
                           "each (output0, output1, ...)."),
              graph::param("dim", "Dimension", &P::dim, 1, 1, 8, "The dimension to cut, counting the batch as 0.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    const int64_t n = dim_size(c, p.dim);
    const std::vector<int64_t> sizes = chunk_sizes(n, p.chunks);
    // torch.chunk then returns fewer tensors than asked for; a port would have nothing to give.
    if (int64_t(sizes.size()) != p.chunks)
      fail("", c.node.label() + ": dim " + std::to_string(p.dim) + " of " + batched(one_input(c)) + from(c, 0) +
                   " has size " + std::to_string(n) + ", which cuts into " + std::to_string(sizes.size()) +
                   " pieces of at most " + std::to_string(sizes.empty() ? 0 : sizes[0]) + ", not " +
                   std::to_string(p.chunks) + " (use a Split with explicit sections)");
    return pieces(c, p.dim, sizes);
  };
  t.build = [](const BuildContext&, const P& p) {
    return BuiltNode{nullptr, [chunks = p.chunks, dim = p.dim](const std::vector<Tensor>& in) {
                       return contiguous_pieces(chunk(in.at(0), chunks, dim));
                     }};
  };
  t.onnx = [](const OnnxContext& c, const P& p) {
    onnx_split(c, p.dim, chunk_sizes(c.inputs.at(0)[size_t(p.dim - 1)], p.chunks));
  };
  t.pytorch = [](const CodeContext& c, const P& p) {
    pytorch_split(c, p.dim, chunk_sizes(c.inputs.at(0)[size_t(p.dim - 1)], p.chunks));
  };
  t.cpp = [](const CodeContext& c, const P& p) {  // chunk()'s pieces, their sizes spelled out
    cpp_split(c, p.dim, chunk_sizes(c.inputs.at(0)[size_t(p.dim - 1)], p.chunks));
  };
  r.add(std::move(t));
}

struct SliceParams {
  int64_t dim, start, end, step;
  // start and end as Python reads them on a dim of size n: negatives count from the end, then
  // both are clamped to [0, n] (end to at least start).
  std::pair<int64_t, int64_t> bounds(int64_t n) const {
    const int64_t s = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
    return {s, std::clamp<int64_t>(end < 0 ? end + n : end, s, n)};
  }
};

void add_slice(Registrar& r) {
  using P = SliceParams;
  Layer<P> t = named<P>("Slice", "Layers", "Slice",
                        "Keeps start:end:step of one dimension, as x[:, start:end:step] does in PyTorch.");
  t.inputs = {{"input", "any shape"}};
  t.outputs = {{"output", "the input's shape with dim's size the number of indices kept"}};
  auto end = graph::param("end", "End", &P::end, int64_t(graph::kBig), -graph::kBig, graph::kBig,
                          "Where to stop (not included); a negative index counts from the end, and one past the end "
                          "stops at the end.");
  end.spec.default_means = "the end";
  t.params = {graph::param("dim", "Dimension", &P::dim, 1, 1, 8, "The dimension to slice, counting the batch as 0."),
              graph::param("start", "Start", &P::start, 0, -graph::kBig, graph::kBig,
                           "The first index kept; a negative index counts from the end (-1 is the last)."),
              std::move(end),
              graph::param("step", "Step", &P::step, 1, 1, graph::kBig, "Keeps every step-th index from start.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    const int64_t n = dim_size(c, p.dim);
    const auto [s, e] = p.bounds(n);
    if (s == e)
      fail("", c.node.label() + ": " + std::to_string(p.start) + ":" + std::to_string(p.end) + ":" +
                   std::to_string(p.step) + " keeps nothing of dim " + std::to_string(p.dim) + " of " +
                   batched(one_input(c)) + from(c, 0) + ", of size " + std::to_string(n));
    return pieces(c, p.dim, {(e - s + p.step - 1) / p.step});
  };
  t.build = [](const BuildContext&, const P& p) {
    return BuiltNode{nullptr, [p](const std::vector<Tensor>& in) {
                       const auto [s, e] = p.bounds(in.at(0).shape()[size_t(p.dim)]);
                       return contiguous(slice(in.at(0), p.dim, s, e, p.step));
                     }};
  };
  // The bounds as Plexus resolves them, so that ONNX's own clamping has nothing to do.
  t.onnx = [](const OnnxContext& c, const P& p) {
    const auto [s, e] = p.bounds(c.inputs.at(0)[size_t(p.dim - 1)]);
    c.out.add_initializer(c.name("starts"), std::vector<int64_t>{s});
    c.out.add_initializer(c.name("ends"), std::vector<int64_t>{e});
    c.out.add_initializer(c.name("axes"), std::vector<int64_t>{p.dim});
    c.out.add_initializer(c.name("steps"), std::vector<int64_t>{p.step});
    c.out.add_node("Slice", {c.input_names[0], c.name("starts"), c.name("ends"), c.name("axes"), c.name("steps")},
                   c.output_names);
  };
  t.pytorch = [](const CodeContext& c, const P& p) {
    const auto bounds = p.bounds(c.inputs.at(0)[size_t(p.dim - 1)]);
    std::string index;
    for (int64_t d = 0; d < p.dim; ++d) index += ":, ";
    index += std::to_string(bounds.first) + ":" + std::to_string(bounds.second) +
             (p.step == 1 ? "" : ":" + std::to_string(p.step));
    c.assign(c.input() + "[" + index + "]");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    const auto bounds = p.bounds(c.inputs.at(0)[size_t(p.dim - 1)]);
    c.assign("contiguous(slice(" + c.input() + ", " + std::to_string(p.dim) + ", " + std::to_string(bounds.first) + ", " +
             std::to_string(bounds.second) + ", " + std::to_string(p.step) + "))");
  };
  r.add(std::move(t));
}

}  // namespace

void add_split_layers(Registrar& r) {
  add_split(r);
  add_chunk(r);
  add_slice(r);
}

}  // namespace plexus::layers
