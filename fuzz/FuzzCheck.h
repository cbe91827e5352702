//===- FuzzCheck.h - invariants the fuzz targets assert ---------*- C++ -*-===//
//
// A fuzz target reports a broken invariant by aborting, which libFuzzer
// records as a crash with the input that caused it. Used for properties the
// sanitizers cannot see: an accepted file that does not round-trip, an error
// without a message.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_FUZZ_FUZZCHECK_H
#define PARTITION_FUZZ_FUZZCHECK_H

#include <cstdio>
#include <cstdlib>

/// Aborts with `message` and the place when `condition` is false.
#define FUZZ_CHECK(condition, message)                                         \
  do {                                                                         \
    if (!(condition)) {                                                        \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s (%s)\n",          \
                   __FILE__, __LINE__, message, #condition);                   \
      std::abort();                                                            \
    }                                                                          \
  } while (false)

#endif // PARTITION_FUZZ_FUZZCHECK_H
