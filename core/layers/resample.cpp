// The resampling layers: Upsample and ZeroPad2d change an image's size [N, C, H, W] without
// learning anything: a decoder's or U-Net's enlargement, a padding before a convolution.
#include "layers/families.h"
#include "layers/shape_rules.h"
#include "nn/layers.h"

namespace plexus::layers {
namespace {

struct UpsampleParams {
  int64_t scale_factor;
  std::string mode;
  bool align_corners;
  nn::Upsample::Mode upsample_mode() const {
    return mode == "bilinear" ? nn::Upsample::Mode::Bilinear : nn::Upsample::Mode::Nearest;
  }
};

void add_upsample(Registrar& r) {
  using P = UpsampleParams;
  Layer<P> t;
  t.name = "Upsample";
  t.category = "Convolution";
  t.display_name = "Upsample";
  t.description = "Enlarges images by a whole factor: each cell repeated (nearest) or interpolated between its "
                  "neighbours (bilinear).";
  t.inputs = {{"input", "[N, C, H, W]"}};
  t.outputs = {{"output", "[N, C, H × scale_factor, W × scale_factor]"}};
  t.params = {graph::param("scale_factor", "Scale factor", &P::scale_factor, 2, 1, 16,
                           "How many times larger the output is, in height and in width."),
              graph::param("mode", "Mode", &P::mode, std::string("nearest"), {"nearest", "bilinear"},
                           "How the new cells are filled: nearest repeats each cell; bilinear interpolates linearly in both "
                           "directions."),
              graph::param("align_corners", "Align corners", &P::align_corners, false,
                           "Bilinear only: the corner cells of input and output coincide (PyTorch's "
                           "align_corners=True) instead of their centres' grid being stretched.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    require_rank(c, 3, "[N, C, H, W]");
    if (p.align_corners && p.mode != "bilinear")
      fail("", c.node.label() + ": align_corners applies to bilinear upsampling only, not to " + p.mode);
    const Shape& s = one_input(c);
    return {{s[0], s[1] * p.scale_factor, s[2] * p.scale_factor}};
  };
  t.build = [](const BuildContext&, const P& p) {
    return single(std::make_shared<nn::Upsample>(p.scale_factor, p.scale_factor, p.upsample_mode(), p.align_corners));
  };
  // Resize with the coordinates PyTorch uses: floor(out / scale) for nearest, half-pixel or
  // corner-aligned for bilinear.
  t.onnx = [](const OnnxContext& c, const P& p) {
    const float s = float(p.scale_factor);
    c.out.add_initializer(c.name("scales"), from_vector({1.f, 1.f, s, s}, {4}));
    OnnxAttributes a;
    if (p.mode == "nearest")
      a = {{"mode", std::string("nearest")},
           {"coordinate_transformation_mode", std::string("asymmetric")},
           {"nearest_mode", std::string("floor")}};
    else
      a = {{"mode", std::string("linear")},
           {"coordinate_transformation_mode", std::string(p.align_corners ? "align_corners" : "pytorch_half_pixel")}};
    c.out.add_node("Resize", {c.input_names[0], "", c.name("scales")}, c.output_names, a);
  };
  t.pytorch = [](const CodeContext& c, const P& p) {
    module_call(c, "nn.Upsample(scale_factor=" + std::to_string(p.scale_factor) + ", mode=\"" + p.mode + "\"" +
                        (p.mode == "bilinear" ? ", align_corners=" + py(p.align_corners) : "") + ")");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    const std::string scale = std::to_string(p.scale_factor);
    module_call(c, "nn::Upsample(" + scale + ", " + scale + ", nn::Upsample::Mode::" +
                       (p.mode == "bilinear" ? "Bilinear" : "Nearest") + ", " + cpp(p.align_corners) + ")");
  };
  r.add(std::move(t));
}

struct ZeroPad2dParams {
  std::vector<int64_t> padding;
  // [left, right, top, bottom]; one entry pads every side alike.
  int64_t side(size_t i) const { return padding.size() == 1 ? padding[0] : padding.at(i); }
};

void add_zero_pad2d(Registrar& r) {
  using P = ZeroPad2dParams;
  Layer<P> t;
  t.name = "ZeroPad2d";
  t.category = "Convolution";
  t.display_name = "Zero padding";
  t.description = "Adds rows and columns of zeros around images, e.g. an uneven padding before a convolution.";
  t.inputs = {{"input", "[N, C, H, W]"}};
  t.outputs = {{"output", "[N, C, top + H + bottom, left + W + right]"}};
  t.params = {graph::param("padding", "Padding", &P::padding, {1, 1, 1, 1}, 0, 1024,
                           "Zeros added [left, right, top, bottom], PyTorch's order; one number pads every side.")};
  t.shape = [](const graph::ShapeContext& c, const P& p) -> std::vector<Shape> {
    require_rank(c, 3, "[N, C, H, W]");
    if (p.padding.size() != 1 && p.padding.size() != 4)
      fail("", c.node.label() + ": padding " + graph::to_string(graph::ParamValue(p.padding)) +
                   " must be [left, right, top, bottom] or one number");
    const Shape& s = one_input(c);
    return {{s[0], s[1] + p.side(2) + p.side(3), s[2] + p.side(0) + p.side(1)}};
  };
  t.build = [](const BuildContext&, const P& p) {
    return single(std::make_shared<nn::ZeroPad2d>(p.side(0), p.side(1), p.side(2), p.side(3)));
  };
  // ONNX's Pad lists the starts of every axis, then the ends: [N, C, H, W] begin, then end.
  t.onnx = [](const OnnxContext& c, const P& p) {
    c.out.add_initializer(c.name("pads"), std::vector<int64_t>{0, 0, p.side(2), p.side(0), 0, 0, p.side(3), p.side(1)});
    c.out.add_node("Pad", {c.input_names[0], c.name("pads")}, c.output_names, {{"mode", std::string("constant")}});
  };
  t.pytorch = [](const CodeContext& c, const P& p) {  // (left, right, top, bottom), as Plexus orders them
    module_call(c, "nn.ZeroPad2d(" + py(std::vector<int64_t>{p.side(0), p.side(1), p.side(2), p.side(3)}) + ")");
  };
  t.cpp = [](const CodeContext& c, const P& p) {
    module_call(c, "nn::ZeroPad2d(" + std::to_string(p.side(0)) + ", " + std::to_string(p.side(1)) + ", " +
                       std::to_string(p.side(2)) + ", " + std::to_string(p.side(3)) + ")");
  };
  r.add(std::move(t));
}

}  // namespace

void add_resample_layers(Registrar& r) {
  add_upsample(r);
  add_zero_pad2d(r);
}

}  // namespace plexus::layers
