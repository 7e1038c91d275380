// Host<->device and device<->device transfers (Note [Copies] in docs/cuda.md).
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

#include "cuda_check.h"
#include "stream_internal.h"
#include "wick/core/error.h"
#include "wick/cuda/memory.h"
#include "wick/cuda/runtime.h"

namespace wick::cuda {

namespace {
// Enables `device`'s access to `peer`'s memory once per ordered pair; false when impossible.
bool enable_peer_access(int device, int peer) {
  static std::mutex m;
  static std::set<std::pair<int, int>> enabled, impossible;
  std::lock_guard<std::mutex> lock(m);
  const auto key = std::make_pair(device, peer);
  if (enabled.count(key)) return true;
  if (impossible.count(key)) return false;
  int can = 0;
  WICK_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, peer));
  if (!can) {
    impossible.insert(key);
    return false;
  }
  CUDAGuard g(device);
  const cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();
  } else if (err != cudaSuccess) {
    (void)cudaGetLastError();
    impossible.insert(key);
    return false;
  }
  enabled.insert(key);
  return true;
}
}  // namespace

bool can_access_peer(int device, int peer) {
  check_device_index(device);
  check_device_index(peer);
  if (device == peer) return true;
  int can = 0;
  WICK_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, peer));
  return can != 0;
}

void copy_to_device_async(void* device_dst, const void* host, size_t bytes, Stream s) {
  if (bytes == 0) return;
  CUDAGuard g(s.device());
  auto stream = static_cast<cudaStream_t>(s.handle());
  if (is_pinned(host)) {
    WICK_CUDA_CHECK(cudaMemcpyAsync(device_dst, host, bytes, cudaMemcpyHostToDevice, stream));
    return;
  }
  PinnedBuffer staging(bytes);
  std::memcpy(staging.data(), host, bytes);
  WICK_CUDA_CHECK(cudaMemcpyAsync(device_dst, staging.data(), bytes, cudaMemcpyHostToDevice, stream));
  staging.release_after(s);
}

void copy_to_host_async(void* host, const void* device_src, size_t bytes, Stream s) {
  if (bytes == 0) return;
  CUDAGuard g(s.device());
  auto stream = static_cast<cudaStream_t>(s.handle());
  WICK_CUDA_CHECK(cudaMemcpyAsync(host, device_src, bytes, cudaMemcpyDeviceToHost, stream));
  if (!is_pinned(host)) WICK_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void copy_peer_async(void* dst, int dst_device, const void* src, int src_device, size_t bytes) {
  if (bytes == 0) return;
  check_device_index(dst_device);
  check_device_index(src_device);
  const Stream dst_stream = get_current_stream(dst_device);
  if (dst_device == src_device) {
    CUDAGuard g(dst_device);
    WICK_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(dst_stream.handle())));
    return;
  }
  const Stream src_stream = get_current_stream(src_device);
  if (enable_peer_access(dst_device, src_device)) {
    // The copy runs on dst's stream after the work queued on src's stream (which produced the
    // bytes); src's stream then waits for the copy before it may overwrite or reuse them.
    Event ready;
    ready.record(src_stream);
    ready.block(dst_stream);
    {
      CUDAGuard g(dst_device);
      WICK_CUDA_CHECK(
          cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, static_cast<cudaStream_t>(dst_stream.handle())));
    }
    Event done;
    done.record(dst_stream);
    done.block(src_stream);
    return;
  }
  // No peer path: stage through pinned host memory (the device-to-host half waits).
  PinnedBuffer staging(bytes);
  copy_to_host_async(staging.data(), src, bytes, src_stream);
  src_stream.synchronize();
  CUDAGuard g(dst_device);
  WICK_CUDA_CHECK(cudaMemcpyAsync(dst, staging.data(), bytes, cudaMemcpyHostToDevice,
                                  static_cast<cudaStream_t>(dst_stream.handle())));
  staging.release_after(dst_stream);
}

}  // namespace wick::cuda
