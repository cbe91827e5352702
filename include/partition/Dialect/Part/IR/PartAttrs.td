//===- PartAttrs.td - part attributes and enums ------------*- tablegen -*-===//

#ifndef PARTITION_DIALECT_PART_IR_PARTATTRS_TD
#define PARTITION_DIALECT_PART_IR_PARTATTRS_TD

include "partition/Dialect/Part/IR/PartDialect.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Part_ReductionKind : I32EnumAttr<"ReductionKind",
    "how a collective combines the values of its group", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">,
      I32EnumAttrCase<"Avg", 3, "avg">]> {
  let cppNamespace = "::partition::part";
}

def Part_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "the formula a gelu op uses", [
      I32EnumAttrCase<"Erf", 0, "erf">,
      I32EnumAttrCase<"Tanh", 1, "tanh">]> {
  let cppNamespace = "::partition::part";
}

def Part_LossReduction : I32EnumAttr<"LossReduction",
    "how a loss combines its per-example values", [
      I32EnumAttrCase<"Mean", 0, "mean">,
      I32EnumAttrCase<"Sum", 1, "sum">,
      I32EnumAttrCase<"None", 2, "none">]> {
  let cppNamespace = "::partition::part";
}

def Part_ComparisonDirection : I32EnumAttr<"ComparisonDirection",
    "the relation a compare op tests", [
      I32EnumAttrCase<"EQ", 0, "eq">,
      I32EnumAttrCase<"NE", 1, "ne">,
      I32EnumAttrCase<"LT", 2, "lt">,
      I32EnumAttrCase<"LE", 3, "le">,
      I32EnumAttrCase<"GT", 4, "gt">,
      I32EnumAttrCase<"GE", 5, "ge">]> {
  let cppNamespace = "::partition::part";
}

def Part_ArgRoleEnum : I32EnumAttr<"ArgRole",
    "what a function argument is to a training or inference step", [
      I32EnumAttrCase<"Parameter", 0, "parameter">,
      I32EnumAttrCase<"Input", 1, "input">,
      I32EnumAttrCase<"Label", 2, "label">,
      I32EnumAttrCase<"State", 3, "state">]> {
  let cppNamespace = "::partition::part";
  let genSpecializedAttr = 0;
}

def Part_ArgRoleAttr : EnumAttr<Part_Dialect, Part_ArgRoleEnum, "role"> {
  let summary = "role of a function argument: parameter, input, label or (optimizer) state";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

def Part_MeshAttr : Part_Attr<"Mesh", "mesh"> {
  let summary = "a grid of devices with named axes";
  let description = [{
    An ordered list of named axes with their sizes, major to minor. The
    device with mesh coordinates `(c0, ..., cn-1)` has the linear id
    `c0 * s1 * ... * sn-1 + ... + cn-1`.

    ```mlir
    #part.mesh<["dp"=2, "tp"=4]>
    ```

    **Constraints:**
    - axis names are non-empty and distinct;
    - every axis size is at least 1;
    - the axis sizes multiply to at most `kMaxDevices` (2^24) devices.
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::StringAttr", "axis names, major to minor">:$axisNames,
    ArrayRefParameter<"int64_t", "axis sizes">:$axisSizes);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The most devices a mesh may have: ranks are int32 in the plan, and
    /// passes and the translator enumerate the devices.
    static constexpr int64_t kMaxDevices = int64_t(1) << 24;
    /// Number of axes.
    unsigned getNumAxes() const { return getAxisNames().size(); }
    /// Index of the axis called `name`, if any.
    std::optional<unsigned> getAxisIndex(::llvm::StringRef name) const;
    /// Size of the axis called `name`, if any.
    std::optional<int64_t> getAxisSize(::llvm::StringRef name) const;
    /// Total number of devices (the product of all axis sizes).
    int64_t getNumDevices() const;
    /// Mesh coordinates of the device with linear id `device` (row-major
    /// over the axes, as the runtime numbers devices: DeviceGroups.h).
    ::llvm::SmallVector<int64_t> getCoordinates(int64_t device) const;
    /// Linear id of the device at `coordinates`.
    int64_t getDeviceId(::llvm::ArrayRef<int64_t> coordinates) const;
    /// Product of the sizes of `axes`; every axis must exist.
    int64_t getGroupSize(::llvm::ArrayRef<::mlir::StringAttr> axes) const;
    /// Index of the device at `coordinates` in its group over `axes`:
    /// row-major over `axes` in the order listed, as collectives, shards and
    /// part.axis_index number a group's members (DeviceGroups.h); every
    /// axis must exist.
    int64_t getGroupIndex(::llvm::ArrayRef<int64_t> coordinates,
                          ::llvm::ArrayRef<::mlir::StringAttr> axes) const;
  }];
}

//===----------------------------------------------------------------------===//
// Sharding
//===----------------------------------------------------------------------===//

def Part_ShardingAttr : Part_Attr<"Sharding", "sharding"> {
  let summary = "how a tensor is split and reduced over a mesh";
  let description = [{
    For each tensor dimension, the ordered list of mesh axes it is split
    over (major to minor: with `{"a", "b"}` the device at coordinates
    `(a, b)` holds block `a * size(b) + b`); and the set of *unreduced* axes:
    over those axes the local value is a partial sum, and the full value is
    the sum over the group. A dimension with no axes, and every axis in
    neither list, is replicated.

    ```mlir
    #part.sharding<@mesh, [{"dp"}, {}] # "}]" # [{, unreduced={"tp"}>
    ```

    The attribute alone is checked for what it can see; the checks that need
    the mesh and the tensor type run where it is attached (see
    `verifyAgainst`).

    **Constraints:**
    - no mesh axis appears twice, across all dimensions and the unreduced
      set.
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    ArrayRefParameter<"::mlir::ArrayAttr", "axes per dimension">:$dims,
    ArrayRefParameter<"::mlir::StringAttr", "unreduced axes">:$unreduced);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::StringRef":$mesh,
                     "::llvm::ArrayRef<::llvm::SmallVector<::llvm::StringRef>>":$dims,
                     CArg<"::llvm::ArrayRef<::llvm::StringRef>", "{}">:$unreduced)>
  ];
  let extraClassDeclaration = [{
    /// Tensor rank this sharding describes.
    int64_t getRank() const { return getDims().size(); }
    /// Axes splitting dimension `dim`, major to minor.
    ::llvm::SmallVector<::mlir::StringAttr> getDimAxes(int64_t dim) const;
    /// Every axis that splits some dimension, in dimension order.
    ::llvm::SmallVector<::mlir::StringAttr> getShardedAxes() const;
    /// True if `axis` splits some dimension.
    bool isShardedOver(::llvm::StringRef axis) const;
    /// True if `axis` is in the unreduced set.
    bool isUnreducedOver(::llvm::StringRef axis) const;
    /// True if no dimension is split and nothing is unreduced.
    bool isFullyReplicated() const;

    /// A fully replicated sharding of rank `rank` on `mesh`.
    static ShardingAttr getReplicated(::mlir::MLIRContext *ctx,
                                      ::llvm::StringRef mesh, int64_t rank);
    /// This sharding with `axes` appended (as minor axes) to dimension `dim`;
    /// fails if an axis is already used.
    ::mlir::FailureOr<ShardingAttr>
    withDimAxesAppended(int64_t dim,
                        ::llvm::ArrayRef<::mlir::StringAttr> axes) const;
    /// Merges two shardings of the same mesh and rank: for every dimension
    /// the axes of `other` are appended after those of this sharding, and the
    /// unreduced sets are united. Fails if the meshes or ranks differ or if
    /// an axis would be used twice.
    ::mlir::FailureOr<ShardingAttr> compose(ShardingAttr other) const;
    /// The sharding of the tensor whose dimension `i` is dimension
    /// `permutation[i]` of this one (the sharding after a transpose).
    ShardingAttr permute(::llvm::ArrayRef<int64_t> permutation) const;
    /// This sharding with `axes` moved out of the unreduced set (the sharding
    /// after an all-reduce over them).
    ShardingAttr withoutUnreduced(::llvm::ArrayRef<::mlir::StringAttr> axes) const;

    /// Number of shards dimension `dim` is split into on `mesh`.
    int64_t getNumShards(int64_t dim, MeshAttr mesh) const;
    /// Shape of one device's shard of a tensor of shape `globalShape`. Fails,
    /// with a diagnostic through `emitError` when given, if the rank differs or
    /// a dimension is not divisible by its number of shards.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    getLocalShape(::llvm::ArrayRef<int64_t> globalShape, MeshAttr mesh,
                  ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError = {}) const;
    /// Shape of the whole tensor whose shards have shape `localShape`.
    ::llvm::SmallVector<int64_t>
    getGlobalShape(::llvm::ArrayRef<int64_t> localShape, MeshAttr mesh) const;
    /// Offset, per dimension, of the shard held by the device at mesh
    /// `coordinates`, for a tensor whose shards have shape `localShape`.
    ::llvm::SmallVector<int64_t>
    getShardOffsets(::llvm::ArrayRef<int64_t> localShape, MeshAttr mesh,
                    ::llvm::ArrayRef<int64_t> coordinates) const;
    /// Checks this sharding against `mesh` and a value of type `type`: every
    /// axis exists, the rank matches, and (for a global type) every split
    /// dimension divides evenly. With `typeIsLocal`, `type` is one device's
    /// shard (in a `part.spmd` function), which always divides.
    ::mlir::LogicalResult
    verifyAgainst(MeshAttr mesh, ::mlir::Type type,
                  ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
                  bool typeIsLocal = false) const;
  }];
}

#endif // PARTITION_DIALECT_PART_IR_PARTATTRS_TD
