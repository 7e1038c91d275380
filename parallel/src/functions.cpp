// Broadcast, ReduceAddCoalesced, Scatter, Gather (functions.h).
#include "wick/parallel/functions.h"

#include "wick/autograd/functions.h"
#include "wick/autograd/record.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::parallel {

using autograd::variable_list;

namespace {

// Note [Missing gradients in comm nodes]: zeros for every undefined gradient.
void materialize(const autograd::Node& node, variable_list& grads) {
  grads.resize(node.num_outputs());
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined()) grads[i] = node.zeros_for_output(i);
}

std::vector<autograd::Edge> edges_of(const std::vector<Tensor>& inputs) {
  std::vector<autograd::Edge> edges;
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs)
    edges.push_back(autograd::requires_grad(t) ? autograd::gradient_edge(t) : autograd::Edge{});
  return edges;
}

}  // namespace

// ---- Broadcast ----

Broadcast::Broadcast(std::vector<Device> devices, size_t num_inputs, Device source, std::vector<bool> needs_grad)
    : devices_(std::move(devices)), num_inputs_(num_inputs), source_(source), needs_grad_(std::move(needs_grad)) {}

std::vector<Tensor> Broadcast::apply(const std::vector<Device>& devices, const std::vector<Tensor>& inputs,
                                     size_t buffer_size) {
  WICK_CHECK(!devices.empty(), "Broadcast: Expected at least one device to broadcast to");
  if (inputs.empty()) return {};
  for (size_t i = 0; i < inputs.size(); ++i) {
    WICK_CHECK(inputs[i].defined(), "Broadcast: input {} is undefined; expected a tensor", i);
    WICK_CHECK(inputs[i].device() == devices[0],
               "Broadcast: All tensors must be on devices[0] ({}), but input {} is on {}", devices[0], i,
               inputs[i].device());
  }
  const size_t n = inputs.size();
  std::vector<std::vector<Tensor>> per_device = comm::broadcast_coalesced(inputs, devices, buffer_size);
  std::vector<Tensor> out;
  out.reserve(n * devices.size());
  for (auto& list : per_device)
    for (auto& t : list) out.push_back(std::move(t));

  if (!autograd::needs_grad(inputs)) {
    // Under no-grad an input that requires grad must not come back as an output that does:
    // hand out an alias (same storage and version counter) instead of the input itself.
    for (size_t i = 0; i < n; ++i)
      if (autograd::requires_grad(inputs[i])) out[i] = native::alias(inputs[i]);
    return out;
  }
  std::vector<bool> needs(n);
  for (size_t i = 0; i < n; ++i) needs[i] = autograd::requires_grad(inputs[i]);
  auto node = std::make_shared<Broadcast>(devices, n, devices[0], needs);
  node->set_next_edges(edges_of(inputs));
  node->set_output_meta(out.size() - 1, out.back());  // sizes the output table once
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t i = k % n;
    if (!needs[i]) {
      node->set_output_meta(k, out[k]);
      continue;
    }
    // The source device's output is the input itself: alias it (same storage and version
    // counter) so that it can carry this node as its grad_fn.
    if (k < n) out[k] = native::alias(inputs[i]);
    autograd::set_history(out[k], node, static_cast<uint32_t>(k));
  }
  return out;
}

variable_list Broadcast::apply(variable_list&& grads) {
  materialize(*this, grads);
  std::vector<size_t> selected;
  for (size_t i = 0; i < num_inputs_; ++i)
    if (needs_grad_[i]) selected.push_back(i);
  std::vector<Tensor> list;
  list.reserve(selected.size() * devices_.size());
  for (size_t d = 0; d < devices_.size(); ++d)
    for (size_t i : selected) list.push_back(grads[d * num_inputs_ + i]);
  std::vector<Tensor> reduced = ReduceAddCoalesced::apply(source_, selected.size(), list);
  variable_list result(num_inputs_);
  for (size_t k = 0; k < selected.size(); ++k) result[selected[k]] = std::move(reduced[k]);
  return result;
}

// ---- ReduceAddCoalesced ----

ReduceAddCoalesced::ReduceAddCoalesced(std::vector<Device> devices, size_t num_inputs, Device destination)
    : devices_(std::move(devices)), num_inputs_(num_inputs), destination_(destination) {}

std::vector<Tensor> ReduceAddCoalesced::apply(Device destination, size_t num_inputs, const std::vector<Tensor>& grads,
                                              size_t buffer_size) {
  if (num_inputs == 0) {
    WICK_CHECK(grads.empty(), "ReduceAddCoalesced: num_inputs is 0, but {} tensors were given", grads.size());
    return {};
  }
  WICK_CHECK(!grads.empty() && grads.size() % num_inputs == 0,
             "ReduceAddCoalesced: Expected a device-major list of num_inputs ({}) tensors per device, but got {} "
             "tensors",
             num_inputs, grads.size());
  const size_t groups = grads.size() / num_inputs;
  std::vector<std::vector<Tensor>> lists(groups);
  std::vector<Device> devices(groups);
  for (size_t d = 0; d < groups; ++d) {
    lists[d].assign(grads.begin() + static_cast<ptrdiff_t>(d * num_inputs),
                    grads.begin() + static_cast<ptrdiff_t>((d + 1) * num_inputs));
    WICK_CHECK(lists[d][0].defined(), "ReduceAddCoalesced: tensor 0 of group {} is undefined", d);
    devices[d] = lists[d][0].device();
  }
  std::vector<Tensor> out = comm::reduce_add_coalesced(lists, destination, buffer_size);
  if (autograd::needs_grad(grads)) {
    autograd::record(std::make_shared<ReduceAddCoalesced>(std::move(devices), num_inputs, destination), grads, out);
  }
  return out;
}

variable_list ReduceAddCoalesced::apply(variable_list&& grads) {
  materialize(*this, grads);
  if (destination_ != devices_[0]) {
    for (auto& g : grads) g = g.to(devices_[0]);
  }
  return Broadcast::apply(devices_, grads);
}

// ---- Scatter ----

Scatter::Scatter(Device input_device, int64_t dim, bool scalars)
    : input_device_(input_device), dim_(dim), scalars_(scalars) {}

std::vector<Tensor> Scatter::apply(const std::vector<Device>& devices, const Tensor& input,
                                   const std::vector<int64_t>& chunk_sizes, int64_t dim) {
  std::vector<Tensor> chunks = comm::scatter(input, devices, chunk_sizes, dim);
  if (autograd::needs_grad({&input})) {
    const int64_t d = native::wrap_dim(dim, input.dim(), "Scatter");
    autograd::record(std::make_shared<Scatter>(input.device(), d, false), {input}, chunks);
  }
  return chunks;
}

std::vector<Tensor> Scatter::apply_scalars(const std::vector<Device>& devices, const Tensor& input) {
  WICK_CHECK(input.dim() == 1 && static_cast<size_t>(input.size(0)) == devices.size(),
             "Scatter: scattering scalars needs a vector with one element per device ({}), got shape [{}]",
             devices.size(), fmt::join(input.sizes(), ", "));
  std::vector<Tensor> chunks = comm::scatter(input, devices, std::vector<int64_t>(devices.size(), 1), 0);
  for (Tensor& c : chunks) c = native::view(c, {});
  if (autograd::needs_grad({&input})) {
    autograd::record(std::make_shared<Scatter>(input.device(), 0, true), {input}, chunks);
  }
  return chunks;
}

variable_list Scatter::apply(variable_list&& grads) {
  materialize(*this, grads);
  return {Gather::apply(grads, input_device_, dim_)};
}

// ---- Gather ----

Gather::Gather(std::vector<Device> devices, std::vector<int64_t> sizes, int64_t dim, bool scalars)
    : devices_(std::move(devices)), sizes_(std::move(sizes)), dim_(dim), scalars_(scalars) {}

Tensor Gather::apply(const std::vector<Tensor>& inputs, Device destination, int64_t dim) {
  WICK_CHECK(!inputs.empty(), "Gather: Expected at least one tensor to gather from");
  bool scalars = dim == 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    WICK_CHECK(inputs[i].defined(), "Gather: input {} is undefined; expected a tensor", i);
    scalars = scalars && inputs[i].dim() == 0;
  }
  Tensor out;
  if (scalars) {
    std::vector<Tensor> vectors;
    vectors.reserve(inputs.size());
    for (const Tensor& t : inputs) vectors.push_back(native::view(t, {1}));
    out = comm::gather(vectors, 0, destination);
  } else {
    out = comm::gather(inputs, dim, destination);
  }
  if (autograd::needs_grad(inputs)) {
    const int64_t d = scalars ? 0 : native::wrap_dim(dim, inputs[0].dim(), "Gather");
    std::vector<Device> devices;
    std::vector<int64_t> sizes;
    for (const Tensor& t : inputs) {
      devices.push_back(t.device());
      sizes.push_back(scalars ? 1 : t.size(d));
    }
    autograd::record(std::make_shared<Gather>(std::move(devices), std::move(sizes), d, scalars), inputs, {out});
  }
  return out;
}

variable_list Gather::apply(variable_list&& grads) {
  materialize(*this, grads);
  if (scalars_) return Scatter::apply_scalars(devices_, grads[0]);
  return Scatter::apply(devices_, grads[0], sizes_, dim_);
}

}  // namespace wick::parallel
