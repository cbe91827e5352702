//===- MeshAttrTest.cpp - device mesh attribute ---------------------------===//
//
// Axis lookup and the device id <-> mesh coordinate mapping of #part.mesh.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartAttrs.h"
#include "partition/Dialect/Part/IR/PartDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace partition::part;

namespace {

class MeshAttrTest : public ::testing::Test {
protected:
  MeshAttrTest() {
    ctx.getOrLoadDialect<PartDialect>();
    mesh = dyn_cast_or_null<MeshAttr>(
        parseAttribute("#part.mesh<[\"pp\"=2, \"dp\"=3, \"tp\"=4]>", &ctx));
  }
  MLIRContext ctx;
  MeshAttr mesh;
};

TEST_F(MeshAttrTest, AxesAndSizes) {
  ASSERT_TRUE(mesh);
  EXPECT_EQ(mesh.getNumAxes(), 3u);
  EXPECT_EQ(mesh.getNumDevices(), 24);
  EXPECT_EQ(mesh.getAxisIndex("dp"), 1u);
  EXPECT_EQ(mesh.getAxisSize("tp"), 4);
  EXPECT_FALSE(mesh.getAxisSize("ep").has_value());
  EXPECT_EQ(mesh.getGroupSize(
                {StringAttr::get(&ctx, "pp"), StringAttr::get(&ctx, "tp")}),
            8);
}

TEST_F(MeshAttrTest, DeviceIdsAreRowMajor) {
  EXPECT_EQ(mesh.getDeviceId({0, 0, 0}), 0);
  EXPECT_EQ(mesh.getDeviceId({0, 0, 1}), 1);
  EXPECT_EQ(mesh.getDeviceId({0, 1, 0}), 4);
  EXPECT_EQ(mesh.getDeviceId({1, 2, 3}), 23);
  for (int64_t device = 0; device < mesh.getNumDevices(); ++device)
    EXPECT_EQ(mesh.getDeviceId(mesh.getCoordinates(device)), device);
  EXPECT_EQ(mesh.getCoordinates(13), SmallVector<int64_t>({1, 0, 1}));
}

TEST_F(MeshAttrTest, RejectsBadAxes) {
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  EXPECT_FALSE(parseAttribute("#part.mesh<[\"a\"=2, \"a\"=2]>", &ctx));
  EXPECT_FALSE(parseAttribute("#part.mesh<[\"a\"=0]>", &ctx));
  EXPECT_FALSE(parseAttribute("#part.mesh<[\"\"=2]>", &ctx));
}

TEST_F(MeshAttrTest, CheckedBuilderReportsMismatchedLists) {
  std::string message;
  ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  MeshAttr bad =
      MeshAttr::getChecked([&] { return emitError(UnknownLoc::get(&ctx)); },
                           &ctx, {StringAttr::get(&ctx, "dp")}, {2, 4});
  EXPECT_FALSE(bad);
  EXPECT_EQ(message, "mesh has 1 axis names but 2 sizes");
}

} // namespace
