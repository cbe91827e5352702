//===- CudaStatus.h - CUDA, cuBLAS and NCCL errors as Status ----*- C++ -*-===//
//
// One macro per library turns a failed call into an error Status returned
// from the enclosing function, naming the call, the library's message and the
// file:line of the call site. The runtime never throws or exits on them.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_CUDA_CUDASTATUS_H
#define PARTITION_RUNTIME_CUDA_CUDASTATUS_H

#include "partition/runtime/Status.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

namespace partition::runtime::cuda {

/// The Status for a failed CUDA runtime call `expr` at file:line. Clears the
/// thread's last-error state so that a later cudaGetLastError() after a kernel
/// launch does not report this error again. Out of memory maps to
/// ResourceExhausted, a missing driver or device to Unavailable, the rest to
/// Internal.
Status cudaErrorStatus(cudaError_t error, const char *expr, const char *file,
                       int line);

/// The Status for a failed cuBLAS or cuBLASLt call.
Status cublasErrorStatus(cublasStatus_t status, const char *expr,
                         const char *file, int line);

/// The Status for a failed NCCL call; `comm` (may be null) adds NCCL's last
/// error message.
Status ncclErrorStatus(ncclResult_t result, const char *expr, const char *file,
                       int line, ncclComm_t comm = nullptr);

/// "no error" or cuBLAS's name of `status`.
const char *cublasStatusName(cublasStatus_t status);

} // namespace partition::runtime::cuda

/// Returns an error Status from the enclosing function if the CUDA runtime
/// call `expr` fails.
#define PARTITION_CUDA_CHECK(expr)                                             \
  do {                                                                         \
    cudaError_t _cudaError = (expr);                                           \
    if (_cudaError != cudaSuccess)                                             \
      return ::partition::runtime::cuda::cudaErrorStatus(_cudaError, #expr,    \
                                                         __FILE__, __LINE__);  \
  } while (0)

/// Returns an error Status from the enclosing function if the cuBLAS or
/// cuBLASLt call `expr` fails.
#define PARTITION_CUBLAS_CHECK(expr)                                           \
  do {                                                                         \
    cublasStatus_t _cublasStatus = (expr);                                     \
    if (_cublasStatus != CUBLAS_STATUS_SUCCESS)                                \
      return ::partition::runtime::cuda::cublasErrorStatus(                    \
          _cublasStatus, #expr, __FILE__, __LINE__);                           \
  } while (0)

/// Returns an error Status from the enclosing function if the NCCL call
/// `expr` fails. ncclInProgress (a non-blocking communicator still working)
/// is not an error; the caller polls for completion.
#define PARTITION_NCCL_CHECK(expr)                                             \
  do {                                                                         \
    ncclResult_t _ncclResult = (expr);                                         \
    if (_ncclResult != ncclSuccess && _ncclResult != ncclInProgress)           \
      return ::partition::runtime::cuda::ncclErrorStatus(_ncclResult, #expr,   \
                                                         __FILE__, __LINE__);  \
  } while (0)

#endif // PARTITION_RUNTIME_CUDA_CUDASTATUS_H
