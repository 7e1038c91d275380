// comm: broadcast[_coalesced], reduce_add[_coalesced], scatter, gather (comm.h).
#include "wick/parallel/comm.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/core/trace.h"
#include "wick/parallel/communicator.h"

namespace wick::parallel::comm {

namespace {

std::string shape_str(IntArrayRef s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

std::string devices_str(const std::vector<Device>& ds) {
  std::string s;
  for (size_t i = 0; i < ds.size(); ++i) s += (i ? ", " : "") + ds[i].str();
  return "[" + s + "]";
}

// Tracer args of a transfer (Note [Tracer]): bytes of the defined inputs, and the devices.
size_t bytes_of(const std::vector<Tensor>& ts) {
  size_t n = 0;
  for (const Tensor& t : ts)
    if (t.defined()) n += t.nbytes();
  return n;
}
std::string transfer_args(size_t bytes, const std::vector<Device>& devices) {
  return fmt::format("\"bytes\": {}, \"devices\": \"{}\"", bytes, devices_str(devices));
}

void check_defined(const Tensor& t, const char* op, size_t i) {
  WICK_CHECK(t.defined(), "{}: tensor {} is undefined; expected a tensor", op, i);
}

// A contiguous view of `flat` (1-d) at element `offset` with `sizes`, sharing its storage but
// holding `version` as its own counter (Note [Coalesced outputs and version counters]).
Tensor view_with_version(const Tensor& flat, int64_t offset, IntArrayRef sizes,
                         std::shared_ptr<VersionCounter> version) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = flat.impl()->storage;
  impl->offset = flat.impl()->offset + offset;
  impl->sizes = DimVector(sizes);
  impl->strides = native::contiguous_strides(sizes);
  impl->dtype = flat.dtype();
  impl->own_version = std::move(version);
  return Tensor(std::move(impl));
}

// Views of `flat` for `tensors` (by index `idx`), packed back to back in that order; every view
// gets its own version counter (all counters of one call live in one allocation). Empty tensors
// become fresh empty tensors.
void unflatten_into(const Tensor& flat, const std::vector<Tensor>& like, const std::vector<size_t>& idx,
                    std::vector<Tensor>& out, Device device) {
  std::shared_ptr<VersionCounter[]> counters(new VersionCounter[idx.size()]);
  int64_t offset = 0;
  for (size_t k = 0; k < idx.size(); ++k) {
    const Tensor& t = like[idx[k]];
    if (t.numel() == 0) {
      out[idx[k]] = native::empty(t.sizes(), t.dtype(), device);
      continue;
    }
    out[idx[k]] = view_with_version(flat, offset, t.sizes(), std::shared_ptr<VersionCounter>(counters, &counters[k]));
    offset += t.numel();
  }
}

int64_t total_numel(const std::vector<Tensor>& ts, const std::vector<size_t>& idx) {
  int64_t n = 0;
  for (size_t i : idx) n += ts[i].numel();
  return n;
}

// The wrapped gather dim of `tensors` (checked alike but for it), and in `gathered` the sum of
// their sizes along it (checked against overflow).
int64_t gather_dim(const std::vector<Tensor>& tensors, int64_t dim, const char* op, int64_t& gathered) {
  WICK_CHECK(!tensors.empty(), "{}: Expected at least one tensor to gather from", op);
  for (size_t i = 0; i < tensors.size(); ++i) check_defined(tensors[i], op, i);
  const Tensor& t0 = tensors[0];
  WICK_CHECK_INDEX(t0.dim() > 0,
                   "{}: cannot gather 0-dim tensors along a dimension; expected tensors with at least one "
                   "dimension (the autograd Gather turns scalars into a vector)",
                   op);
  const int64_t d = native::wrap_dim(dim, t0.dim(), op);
  for (size_t i = 1; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    WICK_CHECK(t.dim() == t0.dim(),
               "{}: Expected all input tensors to have the same number of dimensions, but tensor {} has {} and "
               "tensor 0 has {}",
               op, i, t.dim(), t0.dim());
    WICK_CHECK_TYPE(t.dtype() == t0.dtype(),
                    "{}: Expected all input tensors to have the same dtype, but tensor {} is {} "
                    "and tensor 0 is {}",
                    op, i, t.dtype(), t0.dtype());
    for (int64_t k = 0; k < t0.dim(); ++k) {
      WICK_CHECK(k == d || t.size(k) == t0.size(k),
                 "{}: Input tensor at index {} has invalid shape {}, but expected the shape of tensor 0, {}, in every "
                 "dimension except {}",
                 op, i, shape_str(t.sizes()), shape_str(t0.sizes()), d);
    }
  }
  gathered = 0;
  for (const Tensor& t : tensors)
    WICK_CHECK(!add_overflow(gathered, t.size(d), &gathered),
               "{}: the {} tensors' sizes along dim {} sum past int64; gather fewer or smaller tensors", op,
               tensors.size(), d);
  return d;
}

// dst (a slice of the output) <- src, memcpy when both are contiguous host memory.
void copy_slice(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.is_cpu() && src.is_cpu() && dst.is_contiguous() && src.is_contiguous() && dst.dtype() == src.dtype()) {
    std::memcpy(dst.data_ptr(), src.data_ptr(), src.nbytes());
  } else {
    native::copy_(dst, src);
  }
}

}  // namespace

std::vector<std::vector<size_t>> bucket_indices(const std::vector<Tensor>& tensors, size_t buffer_size) {
  struct Open {
    std::vector<size_t> idx;
    size_t bytes = 0;
  };
  std::vector<std::vector<size_t>> out;
  std::vector<std::pair<DType, Open>> open;  // in order of first appearance of each dtype
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    auto it = std::find_if(open.begin(), open.end(), [&](const auto& o) { return o.first == t.dtype(); });
    if (it == open.end()) {
      open.push_back({t.dtype(), Open{}});
      it = open.end() - 1;
    }
    Open& b = it->second;
    if (!b.idx.empty() && b.bytes + t.nbytes() > buffer_size) {
      out.push_back(std::move(b.idx));
      b = Open{};
    }
    b.idx.push_back(i);
    b.bytes += t.nbytes();
  }
  for (auto& [dt, b] : open)
    if (!b.idx.empty()) out.push_back(std::move(b.idx));
  return out;
}

std::vector<Tensor> broadcast(const Tensor& tensor, const std::vector<Device>& devices) {
  profiler::RecordScope trace_event("comm", "broadcast", [&] { return transfer_args(bytes_of({tensor}), devices); });
  WICK_CHECK(tensor.defined(), "broadcast: the source tensor is undefined");
  WICK_CHECK(!devices.empty(), "broadcast: Expected at least one device to broadcast to");
  std::vector<Tensor> out(devices.size());
  std::vector<Tensor> targets;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] == tensor.device()) {
      out[i] = tensor;
    } else {
      out[i] = native::empty(tensor.sizes(), tensor.dtype(), devices[i]);
      targets.push_back(out[i]);
    }
  }
  if (!targets.empty() && tensor.numel() > 0) broadcast_out(tensor, targets);
  return out;
}

std::vector<Tensor> broadcast_out(const Tensor& tensor, const std::vector<Tensor>& out) {
  WICK_CHECK(tensor.defined(), "broadcast_out: the source tensor is undefined");
  WICK_CHECK(!out.empty(), "broadcast_out: Expected at least one output tensor to broadcast to");
  std::vector<Device> devices{tensor.device()};
  for (size_t i = 0; i < out.size(); ++i) {
    check_defined(out[i], "broadcast_out", i);
    WICK_CHECK(out[i].sizes() == tensor.sizes(),
               "broadcast_out: Expected all output tensors to have same shape as the source {} but output tensor at "
               "index {} has shape {}",
               shape_str(tensor.sizes()), i, shape_str(out[i].sizes()));
    WICK_CHECK_TYPE(
        out[i].dtype() == tensor.dtype(),
        "broadcast_out: Expected all output tensors to have the source's dtype {}, but output tensor at index "
        "{} is {}",
        tensor.dtype(), i, out[i].dtype());
    devices.push_back(out[i].device());
  }
  if (tensor.numel() == 0) return out;
  Tensor src = native::contiguous(tensor);
  std::vector<Tensor> list{src};
  std::vector<std::pair<Tensor, Tensor>> staged;  // (non-contiguous out, contiguous stand-in)
  for (const Tensor& o : out) {
    if (o.is_same(tensor)) continue;
    if (o.is_contiguous()) {
      list.push_back(o);
    } else {
      Tensor s = native::empty(o.sizes(), o.dtype(), o.device());
      staged.emplace_back(o, s);
      list.push_back(s);
    }
  }
  select_communicator(devices, tensor.dtype())->broadcast(list);
  for (auto& [o, s] : staged) native::copy_(o, s);
  for (const Tensor& o : out)
    if (!o.is_same(tensor)) o.bump_version();
  return out;
}

std::vector<std::vector<Tensor>> broadcast_coalesced(const std::vector<Tensor>& tensors,
                                                     const std::vector<Device>& devices, size_t buffer_size) {
  profiler::RecordScope trace_event("comm", "broadcast_coalesced",
                                    [&] { return transfer_args(bytes_of(tensors), devices); });
  WICK_CHECK(!devices.empty(), "broadcast_coalesced: Expected at least one device to broadcast to");
  for (size_t i = 0; i < tensors.size(); ++i) {
    check_defined(tensors[i], "broadcast_coalesced", i);
    WICK_CHECK(tensors[i].device() == devices[0],
               "broadcast_coalesced: All tensors must be on devices[0] ({}), but tensor {} is on {}", devices[0], i,
               tensors[i].device());
  }
  std::vector<std::vector<Tensor>> out(devices.size(), std::vector<Tensor>(tensors.size()));
  out[0] = tensors;
  if (devices.size() == 1 || tensors.empty()) return out;

  for (const std::vector<size_t>& bucket : bucket_indices(tensors, buffer_size)) {
    const int64_t n = total_numel(tensors, bucket);
    const DType dtype = tensors[bucket[0]].dtype();
    std::vector<Tensor> flats;
    flats.reserve(devices.size() - 1);
    for (size_t d = 1; d < devices.size(); ++d) flats.push_back(native::empty({n}, dtype, devices[d]));
    if (n > 0) {
      std::vector<Tensor> pieces;
      pieces.reserve(bucket.size());
      for (size_t i : bucket)
        if (tensors[i].numel() > 0) pieces.push_back(tensors[i]);
      select_communicator(devices, dtype)->broadcast_bucket(pieces, flats);
    }
    for (size_t d = 1; d < devices.size(); ++d) unflatten_into(flats[d - 1], tensors, bucket, out[d], devices[d]);
  }
  return out;
}

Tensor reduce_add(const std::vector<Tensor>& tensors, Device destination) {
  profiler::RecordScope trace_event("comm", "reduce_add",
                                    [&] { return transfer_args(bytes_of(tensors), {destination}); });
  WICK_CHECK(!tensors.empty(), "reduce_add: Expected at least one tensor to reduce");
  std::vector<Device> devices;
  int root = -1;
  for (size_t i = 0; i < tensors.size(); ++i) {
    check_defined(tensors[i], "reduce_add", i);
    WICK_CHECK(tensors[i].sizes() == tensors[0].sizes(),
               "reduce_add: input {} has invalid size: got {}, but expected {}", i, shape_str(tensors[i].sizes()),
               shape_str(tensors[0].sizes()));
    WICK_CHECK_TYPE(tensors[i].dtype() == tensors[0].dtype(), "reduce_add: input {} has dtype {}, but expected {}", i,
                    tensors[i].dtype(), tensors[0].dtype());
    devices.push_back(tensors[i].device());
    if (root < 0 && devices.back() == destination) root = static_cast<int>(i);
  }
  WICK_CHECK(root >= 0,
             "reduce_add: expects destination to be on the same device as one of the tensors; got destination {} and "
             "tensors on {}",
             destination, devices_str(devices));
  Tensor out = native::empty(tensors[0].sizes(), tensors[0].dtype(), destination);
  if (out.numel() == 0) return out;
  std::vector<Tensor> ins;
  ins.reserve(tensors.size());
  for (const Tensor& t : tensors) ins.push_back(native::contiguous(t));
  select_communicator(devices, out.dtype())->reduce(ins, out, root);
  return out;
}

std::vector<Tensor> reduce_add_coalesced(const std::vector<std::vector<Tensor>>& inputs, Device destination,
                                         size_t buffer_size) {
  profiler::RecordScope trace_event("comm", "reduce_add_coalesced", [&] {
    size_t bytes = 0;
    for (const auto& list : inputs) bytes += bytes_of(list);
    return transfer_args(bytes, {destination});
  });
  WICK_CHECK(!inputs.empty(), "reduce_add_coalesced: Expected at least one list of tensors to reduce");
  const std::vector<Tensor>& first = inputs[0];
  std::vector<Device> devices;
  bool has_destination = false;
  for (size_t d = 0; d < inputs.size(); ++d) {
    WICK_CHECK(
        inputs[d].size() == first.size(),
        "reduce_add_coalesced: Expected every device's list to hold {} tensors (as list 0), but list {} holds {}",
        first.size(), d, inputs[d].size());
    for (size_t i = 0; i < first.size(); ++i) {
      const Tensor& t = inputs[d][i];
      WICK_CHECK(t.defined(), "reduce_add_coalesced: tensor {} of list {} is undefined", i, d);
      WICK_CHECK(t.sizes() == first[i].sizes(),
                 "reduce_add_coalesced: tensor {} of list {} is a {} {} tensor, but tensor {} of list 0 is a {} {} "
                 "tensor; every list must hold the same shapes and dtypes in the same order",
                 i, d, shape_str(t.sizes()), t.dtype(), i, shape_str(first[i].sizes()), first[i].dtype());
      WICK_CHECK_TYPE(
          t.dtype() == first[i].dtype(),
          "reduce_add_coalesced: tensor {} of list {} is a {} {} tensor, but tensor {} of list 0 is a {} {} "
          "tensor; every list must hold the same shapes and dtypes in the same order",
          i, d, shape_str(t.sizes()), t.dtype(), i, shape_str(first[i].sizes()), first[i].dtype());
      WICK_CHECK(t.device() == inputs[d][0].device(),
                 "reduce_add_coalesced: list {} mixes devices ({} and {}); each list must live on one device", d,
                 inputs[d][0].device(), t.device());
    }
    if (!inputs[d].empty()) {
      devices.push_back(inputs[d][0].device());
      has_destination = has_destination || devices.back() == destination;
    }
  }
  if (first.empty()) return {};
  WICK_CHECK(has_destination,
             "reduce_add_coalesced: expects destination to be the device of one of the lists; got destination {} and "
             "lists on {}",
             destination, devices_str(devices));
  std::vector<Tensor> out(first.size());
  for (const std::vector<size_t>& bucket : bucket_indices(first, buffer_size)) {
    const int64_t n = total_numel(first, bucket);
    const DType dtype = first[bucket[0]].dtype();
    std::shared_ptr<Communicator> communicator = select_communicator(devices, dtype);
    if (!communicator->wants_flat_buckets()) {
      // Each sum a tensor of its own (Note [Coalesced outputs and version counters]).
      std::vector<std::vector<Tensor>> pieces(inputs.size());
      std::vector<Tensor> outs;
      for (size_t i : bucket) {
        out[i] = native::empty(first[i].sizes(), dtype, destination);
        if (first[i].numel() == 0) continue;
        for (size_t d = 0; d < inputs.size(); ++d) pieces[d].push_back(native::contiguous(inputs[d][i]));
        outs.push_back(native::view(out[i], {first[i].numel()}));
      }
      if (!outs.empty()) communicator->reduce_bucket_each(pieces, outs);
      continue;
    }
    Tensor flat = native::empty({n}, dtype, destination);
    if (n > 0) {
      std::vector<std::vector<Tensor>> pieces(inputs.size());
      for (size_t d = 0; d < inputs.size(); ++d)
        for (size_t i : bucket)
          if (first[i].numel() > 0) pieces[d].push_back(native::contiguous(inputs[d][i]));
      communicator->reduce_bucket(pieces, flat);
    }
    unflatten_into(flat, first, bucket, out, destination);
  }
  return out;
}

std::vector<Tensor> scatter(const Tensor& tensor, const std::vector<Device>& devices,
                            const std::vector<int64_t>& chunk_sizes, int64_t dim) {
  profiler::RecordScope trace_event("comm", "scatter", [&] { return transfer_args(bytes_of({tensor}), devices); });
  WICK_CHECK(tensor.defined(), "scatter: the tensor to scatter is undefined");
  WICK_CHECK(!devices.empty(), "scatter: Expected at least one device to scatter to");
  WICK_CHECK_INDEX(tensor.dim() > 0, "scatter: cannot scatter a 0-dim tensor; expected at least one dimension");
  dim = native::wrap_dim(dim, tensor.dim(), "scatter");
  std::vector<Tensor> chunks;
  if (!chunk_sizes.empty()) {
    WICK_CHECK(chunk_sizes.size() == devices.size(),
               "scatter: Expected devices and chunk_sizes to be of same length, but got len(devices) = {} and "
               "len(chunk_sizes) = {}",
               devices.size(), chunk_sizes.size());
    int64_t total = 0;
    for (size_t i = 0; i < chunk_sizes.size(); ++i) {
      WICK_CHECK(chunk_sizes[i] >= 0, "scatter: Expected non-negative chunk sizes, but chunk_sizes[{}] = {}", i,
                 chunk_sizes[i]);
      WICK_CHECK(!add_overflow(total, chunk_sizes[i], &total),
                 "scatter: Expected chunk_sizes to sum to {} (the size of dim {} of the tensor), but chunk_sizes [{}] "
                 "sum past int64",
                 tensor.size(dim), dim, fmt::join(chunk_sizes, ", "));
    }
    WICK_CHECK(total == tensor.size(dim),
               "scatter: Expected chunk_sizes to sum to {} (the size of dim {} of the tensor), but they sum to {}",
               tensor.size(dim), dim, total);
    chunks = native::split_with_sizes(tensor, chunk_sizes, dim);
  } else {
    chunks = native::chunk(tensor, static_cast<int64_t>(devices.size()), dim);
  }
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (devices[i] != tensor.device())
      chunks[i] = native::to(chunks[i], devices[i], tensor.dtype());
    else if (chunks[i].is_same(tensor))
      chunks[i] = native::alias(tensor);  // always a new view
  }
  return chunks;
}

std::vector<Tensor> scatter_out(const Tensor& tensor, const std::vector<Tensor>& out, int64_t dim) {
  WICK_CHECK(tensor.defined(), "scatter_out: the tensor to scatter is undefined");
  WICK_CHECK(!out.empty(), "scatter_out: Expected at least one output tensor to scatter to");
  WICK_CHECK_INDEX(tensor.dim() > 0, "scatter_out: cannot scatter a 0-dim tensor; expected at least one dimension");
  dim = native::wrap_dim(dim, tensor.dim(), "scatter_out");
  int64_t total = 0;
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < out.size(); ++i) {
    check_defined(out[i], "scatter_out", i);
    bool ok = out[i].dim() == tensor.dim();
    for (int64_t k = 0; ok && k < tensor.dim(); ++k) ok = k == dim || out[i].size(k) == tensor.size(k);
    WICK_CHECK(ok,
               "scatter_out: Output tensor at index {} has incorrect shape {}; expected the source's shape {} in "
               "every dimension except {}",
               i, shape_str(out[i].sizes()), shape_str(tensor.sizes()), dim);
    WICK_CHECK_TYPE(out[i].dtype() == tensor.dtype(),
                    "scatter_out: Output tensor at index {} is {}, but the source is {}", i, out[i].dtype(),
                    tensor.dtype());
    sizes.push_back(out[i].size(dim));
    WICK_CHECK(!add_overflow(total, sizes.back(), &total),
               "scatter_out: the output tensors' sizes along dim {} sum past int64; the source has {}", dim,
               tensor.size(dim));
  }
  WICK_CHECK(total == tensor.size(dim),
             "scatter_out: Total size for output tensors along scatter dim {} does not match the source tensor size; "
             "expected {}, got {}",
             dim, tensor.size(dim), total);
  auto chunks = native::split_with_sizes(tensor, sizes, dim);
  for (size_t i = 0; i < out.size(); ++i) native::copy_(out[i], chunks[i]);
  return out;
}

Tensor gather(const std::vector<Tensor>& tensors, int64_t dim, Device destination) {
  profiler::RecordScope trace_event("comm", "gather", [&] { return transfer_args(bytes_of(tensors), {destination}); });
  int64_t gathered = 0;
  const int64_t d = gather_dim(tensors, dim, "gather", gathered);
  DimVector sizes(tensors[0].sizes());
  sizes[static_cast<size_t>(d)] = gathered;
  Tensor out = native::empty(sizes, tensors[0].dtype(), destination);
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    copy_slice(native::narrow(out, d, offset, t.size(d)), t);
    offset += t.size(d);
  }
  return out;
}

Tensor gather_out(const std::vector<Tensor>& tensors, const Tensor& out, int64_t dim) {
  int64_t gathered = 0;
  const int64_t d = gather_dim(tensors, dim, "gather_out", gathered);
  WICK_CHECK(out.defined(), "gather_out: the output tensor is undefined");
  DimVector sizes(tensors[0].sizes());
  sizes[static_cast<size_t>(d)] = gathered;
  WICK_CHECK(DimVector(out.sizes()) == sizes,
             "gather_out: Expected out tensor to have shape {} and dtype {}, but got shape {} and dtype {}",
             shape_str(sizes), tensors[0].dtype(), shape_str(out.sizes()), out.dtype());
  WICK_CHECK_TYPE(out.dtype() == tensors[0].dtype(),
                  "gather_out: Expected out tensor to have shape {} and dtype {}, but got shape {} and dtype {}",
                  shape_str(sizes), tensors[0].dtype(), shape_str(out.sizes()), out.dtype());
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    native::copy_(native::narrow(out, d, offset, t.size(d)), t);
    offset += t.size(d);
  }
  return out;
}

}  // namespace wick::parallel::comm
