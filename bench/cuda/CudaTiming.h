//===- CudaTiming.h - timing launches on a stream, for the benchmarks ---===//

#ifndef PARTITION_BENCH_CUDA_CUDATIMING_H
#define PARTITION_BENCH_CUDA_CUDATIMING_H

#include "partition/runtime/Status.h"
#include "partition/runtime/cuda/CudaStatus.h"

namespace partition::bench {

/// Times `launch` (which enqueues work on `stream`) over `iters` calls
/// after `warmup` ones, by events on the stream; seconds per call.
template <typename Fn>
runtime::StatusOr<double> timeLaunches(cudaStream_t stream, int warmup,
                                       int iters, Fn &&launch) {
  for (int i = 0; i < warmup; ++i)
    PARTITION_RETURN_IF_ERROR(launch());
  cudaEvent_t start, stop;
  PARTITION_CUDA_CHECK(cudaEventCreate(&start));
  PARTITION_CUDA_CHECK(cudaEventCreate(&stop));
  PARTITION_CUDA_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < iters; ++i)
    PARTITION_RETURN_IF_ERROR(launch());
  PARTITION_CUDA_CHECK(cudaEventRecord(stop, stream));
  PARTITION_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  PARTITION_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return static_cast<double>(ms) / 1e3 / iters;
}

} // namespace partition::bench

#endif // PARTITION_BENCH_CUDA_CUDATIMING_H
