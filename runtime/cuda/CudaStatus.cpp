//===- CudaStatus.cpp - CUDA, cuBLAS and NCCL errors as Status ------------===//

#include "partition/runtime/cuda/CudaStatus.h"

using namespace partition::runtime;

Status cuda::cudaErrorStatus(cudaError_t error, const char *expr,
                             const char *file, int line) {
  // Reset the thread's last error so that it is not reported a second time by
  // the cudaGetLastError() that follows the next kernel launch. A sticky
  // error (a faulted context) stays and is reported by every later call.
  (void)cudaGetLastError();
  StatusCode code = StatusCode::Internal;
  switch (error) {
  case cudaErrorMemoryAllocation:
    code = StatusCode::ResourceExhausted;
    break;
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
  case cudaErrorInvalidDevice:
  case cudaErrorDevicesUnavailable:
    code = StatusCode::Unavailable;
    break;
  case cudaErrorInvalidValue:
    code = StatusCode::InvalidArgument;
    break;
  default:
    break;
  }
  return Status(code,
                detail::concat(expr, ": CUDA error ", cudaGetErrorName(error),
                               " (", cudaGetErrorString(error), ")"),
                file, line);
}

const char *cuda::cublasStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR:
    return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

Status cuda::cublasErrorStatus(cublasStatus_t status, const char *expr,
                               const char *file, int line) {
  StatusCode code = StatusCode::Internal;
  if (status == CUBLAS_STATUS_ALLOC_FAILED)
    code = StatusCode::ResourceExhausted;
  else if (status == CUBLAS_STATUS_NOT_SUPPORTED ||
           status == CUBLAS_STATUS_ARCH_MISMATCH)
    code = StatusCode::Unimplemented;
  else if (status == CUBLAS_STATUS_INVALID_VALUE)
    code = StatusCode::InvalidArgument;
  return Status(code,
                detail::concat(expr, ": cuBLAS error ",
                               cublasStatusName(status), " (",
                               static_cast<int>(status), ")"),
                file, line);
}

Status cuda::ncclErrorStatus(ncclResult_t result, const char *expr,
                             const char *file, int line, ncclComm_t comm) {
  StatusCode code = StatusCode::Internal;
  switch (result) {
  case ncclInvalidArgument:
  case ncclInvalidUsage:
    code = StatusCode::InvalidArgument;
    break;
  case ncclRemoteError:
  case ncclSystemError:
    code = StatusCode::Unavailable;
    break;
  default:
    break;
  }
  std::string message =
      detail::concat(expr, ": NCCL error ", ncclGetErrorString(result));
  const char *last = ncclGetLastError(comm);
  if (last && *last)
    message += detail::concat(" (", last, ")");
  return Status(code, std::move(message), file, line);
}
