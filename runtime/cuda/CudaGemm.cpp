//===- CudaGemm.cpp - row-major GEMMs through cuBLASLt --------------------===//
//
// cuBLAS is column-major: a row-major C = op(A) op(B) is computed as the
// column-major C^T = op(B)^T op(A)^T, i.e. with the operands swapped and the
// same transpose flags.
//
//===----------------------------------------------------------------------===//

#include "CudaGemm.h"
#include "partition/runtime/cuda/CudaStatus.h"

#include <array>
#include <climits>
#include <map>
#include <memory>
#include <mutex>

using namespace partition::runtime;
using namespace partition::runtime::cuda;

namespace {

cudaDataType_t cudaType(DType type) {
  switch (type) {
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  default:
    return CUDA_R_32F;
  }
}

/// Largest power of two, at most 256, dividing `address` and, for a batch,
/// the byte stride between its matrices.
uint32_t alignmentOf(const void *pointer, int64_t batch, int64_t strideBytes) {
  uint64_t bits = reinterpret_cast<uintptr_t>(pointer) | 256u;
  if (batch > 1)
    bits |= static_cast<uint64_t>(strideBytes);
  return static_cast<uint32_t>(bits & (~bits + 1)); // lowest set bit
}

/// A column-major problem as cuBLAS sees it.
struct ColumnMajorGemm {
  cudaDataType_t abType, cType;
  cublasOperation_t opA, opB;
  int64_t m, n, k, lda, ldb, ldc;
  int64_t batch, strideA, strideB, strideC;
};

ColumnMajorGemm toColumnMajor(const RowMajorGemm &g) {
  ColumnMajorGemm c;
  c.abType = cudaType(g.abType);
  c.cType = cudaType(g.cType);
  c.opA = g.transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.opB = g.transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
  c.m = g.n;
  c.n = g.m;
  c.k = g.k;
  c.lda = g.transposeB ? g.k : g.n;
  c.ldb = g.transposeA ? g.m : g.k;
  c.ldc = g.n;
  c.batch = g.batch;
  c.strideA = g.strideB;
  c.strideB = g.strideA;
  c.strideC = g.strideC;
  return c;
}

/// Descriptors and the chosen algorithm of one problem shape.
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  bool hasAlgo = false;
  cublasLtMatmulAlgo_t algo;
  size_t workspaceBytes = 0;

  Plan() = default;
  Plan(const Plan &) = delete;
  Plan &operator=(const Plan &) = delete;
  ~Plan() {
    if (desc)
      cublasLtMatmulDescDestroy(desc);
    for (cublasLtMatrixLayout_t layout : {a, b, c})
      if (layout)
        cublasLtMatrixLayoutDestroy(layout);
  }
};

using PlanKey = std::array<int64_t, 18>;

Status makeLayout(cublasLtMatrixLayout_t &layout, cudaDataType_t type,
                  int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                  int64_t stride) {
  PARTITION_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&layout, type, static_cast<uint64_t>(rows),
                                 static_cast<uint64_t>(cols), ld));
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    PARTITION_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    PARTITION_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
        sizeof(stride)));
  }
  return Status::ok();
}

class GemmRunnerImpl final : public GemmRunner {
public:
  ~GemmRunnerImpl() override {
    plans_.clear();
    if (legacy_)
      cublasDestroy(legacy_);
    if (lt_)
      cublasLtDestroy(lt_);
  }

  Status init() {
    PARTITION_CUBLAS_CHECK(cublasLtCreate(&lt_));
    PARTITION_CUBLAS_CHECK(cublasCreate(&legacy_));
    // f32 stays f32: no TF32 tensor-op math.
    PARTITION_CUBLAS_CHECK(cublasSetMathMode(legacy_, CUBLAS_DEFAULT_MATH));
    return Status::ok();
  }

  Status run(const RowMajorGemm &gemm, const void *a, const void *b, void *c,
             cudaStream_t stream, void *workspace,
             size_t workspaceBytes) override {
    if (gemm.m == 0 || gemm.n == 0 || gemm.batch == 0)
      return Status::ok();
    if (gemm.batch > INT32_MAX)
      return PARTITION_ERROR(Unimplemented, "GEMM batch of ", gemm.batch,
                             " matrices exceeds cuBLAS's limit");
    int64_t cBytes = dtypeSize(gemm.cType);
    if (gemm.k == 0) {
      // An empty sum: cuBLAS may not write C at all.
      if (gemm.batch == 1 || gemm.strideC == gemm.m * gemm.n) {
        PARTITION_CUDA_CHECK(cudaMemsetAsync(
            c, 0, static_cast<size_t>(gemm.batch * gemm.m * gemm.n * cBytes),
            stream));
      } else {
        for (int64_t i = 0; i < gemm.batch; ++i)
          PARTITION_CUDA_CHECK(cudaMemsetAsync(
              static_cast<char *>(c) + i * gemm.strideC * cBytes, 0,
              static_cast<size_t>(gemm.m * gemm.n * cBytes), stream));
      }
      return Status::ok();
    }

    ColumnMajorGemm g = toColumnMajor(gemm);
    int64_t abBytes = dtypeSize(gemm.abType);
    // Operand A of cuBLAS is the row-major B and vice versa.
    uint32_t alignA = alignmentOf(b, g.batch, g.strideA * abBytes);
    uint32_t alignB = alignmentOf(a, g.batch, g.strideB * abBytes);
    uint32_t alignC = alignmentOf(c, g.batch, g.strideC * cBytes);
    PlanKey key = {static_cast<int64_t>(g.abType),
                   static_cast<int64_t>(g.cType),
                   static_cast<int64_t>(g.opA),
                   static_cast<int64_t>(g.opB),
                   g.m,
                   g.n,
                   g.k,
                   g.lda,
                   g.ldb,
                   g.ldc,
                   g.batch,
                   g.batch > 1 ? g.strideA : 0,
                   g.batch > 1 ? g.strideB : 0,
                   g.batch > 1 ? g.strideC : 0,
                   alignA,
                   alignB,
                   alignC,
                   static_cast<int64_t>(workspaceBytes)};
    std::shared_ptr<const Plan> plan;
    PARTITION_RETURN_IF_ERROR(
        findPlan(key, g, alignA, alignB, alignC, workspaceBytes, plan));

    float alpha = gemm.alpha, beta = 0.0f;
    if (plan->hasAlgo) {
      // b and a swap places: see the file comment.
      PARTITION_CUBLAS_CHECK(cublasLtMatmul(
          lt_, plan->desc, &alpha, b, plan->a, a, plan->b, &beta, c, plan->c, c,
          plan->c, &plan->algo, workspace, workspaceBytes, stream));
      return Status::ok();
    }
    return runLegacy(g, alpha, beta, b, a, c, stream, workspace,
                     workspaceBytes);
  }

private:
  /// The cached plan of `key`, created on first use.
  Status findPlan(const PlanKey &key, const ColumnMajorGemm &g, uint32_t alignA,
                  uint32_t alignB, uint32_t alignC, size_t workspaceBytes,
                  std::shared_ptr<const Plan> &result) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = plans_.find(key);
    if (found != plans_.end()) {
      result = found->second;
      return Status::ok();
    }
    // A program has a fixed set of shapes, so this only fills up with many
    // distinct programs: start over rather than grow without bound (a plan
    // in use elsewhere lives on through its shared_ptr).
    if (plans_.size() >= kMaxPlans)
      plans_.clear();
    auto plan = std::make_shared<Plan>();
    PARTITION_RETURN_IF_ERROR(
        createPlan(g, alignA, alignB, alignC, workspaceBytes, *plan));
    plans_.emplace(key, plan);
    result = std::move(plan);
    return Status::ok();
  }

  Status createPlan(const ColumnMajorGemm &g, uint32_t alignA, uint32_t alignB,
                    uint32_t alignC, size_t workspaceBytes, Plan &plan) {
    PARTITION_CUBLAS_CHECK(
        cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    PARTITION_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &g.opA, sizeof(g.opA)));
    PARTITION_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &g.opB, sizeof(g.opB)));
    bool ta = g.opA == CUBLAS_OP_T, tb = g.opB == CUBLAS_OP_T;
    PARTITION_RETURN_IF_ERROR(makeLayout(plan.a, g.abType, ta ? g.k : g.m,
                                         ta ? g.m : g.k, g.lda, g.batch,
                                         g.strideA));
    PARTITION_RETURN_IF_ERROR(makeLayout(plan.b, g.abType, tb ? g.n : g.k,
                                         tb ? g.k : g.n, g.ldb, g.batch,
                                         g.strideB));
    PARTITION_RETURN_IF_ERROR(
        makeLayout(plan.c, g.cType, g.m, g.n, g.ldc, g.batch, g.strideC));

    cublasLtMatmulPreference_t preference = nullptr;
    PARTITION_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    Status status =
        choose(plan, preference, alignA, alignB, alignC, workspaceBytes);
    cublasLtMatmulPreferenceDestroy(preference);
    return status;
  }

  Status choose(Plan &plan, cublasLtMatmulPreference_t preference,
                uint32_t alignA, uint32_t alignB, uint32_t alignC,
                size_t workspaceBytes) {
    uint64_t maxWorkspace = workspaceBytes;
    PARTITION_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWorkspace,
        sizeof(maxWorkspace)));
    PARTITION_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignA,
        sizeof(alignA)));
    PARTITION_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignB,
        sizeof(alignB)));
    PARTITION_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignC,
        sizeof(alignC)));
    PARTITION_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignC,
        sizeof(alignC)));
    cublasLtMatmulHeuristicResult_t result;
    int count = 0;
    cublasStatus_t status =
        cublasLtMatmulAlgoGetHeuristic(lt_, plan.desc, plan.a, plan.b, plan.c,
                                       plan.c, preference, 1, &result, &count);
    // No algorithm (or no heuristic for this configuration): the legacy API
    // handles every shape and alignment.
    if (status == CUBLAS_STATUS_SUCCESS && count > 0 &&
        result.state == CUBLAS_STATUS_SUCCESS) {
      plan.hasAlgo = true;
      plan.algo = result.algo;
      plan.workspaceBytes = result.workspaceSize;
    }
    return Status::ok();
  }

  Status runLegacy(const ColumnMajorGemm &g, float alpha, float beta,
                   const void *a, const void *b, void *c, cudaStream_t stream,
                   void *workspace, size_t workspaceBytes) {
    if (g.m > INT_MAX || g.n > INT_MAX || g.k > INT_MAX || g.lda > INT_MAX ||
        g.ldb > INT_MAX || g.ldc > INT_MAX)
      return PARTITION_ERROR(Unimplemented, "GEMM of ", g.m, "x", g.n, "x", g.k,
                             " has no cuBLASLt algorithm and exceeds "
                             "the 32-bit sizes of cublasGemmEx");
    std::lock_guard<std::mutex> lock(legacyMutex_);
    PARTITION_CUBLAS_CHECK(cublasSetStream(legacy_, stream));
    PARTITION_CUBLAS_CHECK(
        cublasSetWorkspace(legacy_, workspace, workspaceBytes));
    PARTITION_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        legacy_, g.opA, g.opB, static_cast<int>(g.m), static_cast<int>(g.n),
        static_cast<int>(g.k), &alpha, a, g.abType, static_cast<int>(g.lda),
        g.strideA, b, g.abType, static_cast<int>(g.ldb), g.strideB, &beta, c,
        g.cType, static_cast<int>(g.ldc), g.strideC, static_cast<int>(g.batch),
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return Status::ok();
  }

  static constexpr size_t kMaxPlans = 4096;

  cublasLtHandle_t lt_ = nullptr;
  cublasHandle_t legacy_ = nullptr;
  std::mutex mutex_;
  std::map<PlanKey, std::shared_ptr<const Plan>> plans_;
  std::mutex legacyMutex_;
};

} // namespace

StatusOr<std::unique_ptr<GemmRunner>> GemmRunner::create() {
  auto runner = std::make_unique<GemmRunnerImpl>();
  PARTITION_RETURN_IF_ERROR(runner->init());
  return std::unique_ptr<GemmRunner>(std::move(runner));
}
