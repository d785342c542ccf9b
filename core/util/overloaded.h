#pragma once
// std::visit over a variant with one lambda per alternative:
//   std::visit(Overloaded{[](const A&) {...}, [](const B&) {...}}, v);

namespace plexus {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
// C++20 deduces this guide for an aggregate; clang before 17 does not.
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace plexus
