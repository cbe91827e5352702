//===- UninstrumentedLLVM.h - LLVM headers as the installed LLVM sees them ===//
//
// Force-included in sanitizer builds (PARTITION_SANITIZERS with "address").
// Debian's libLLVM and libMLIR are not built with AddressSanitizer, but
// llvm/Support/Compiler.h turns on BumpPtrAllocator's poisoning in any
// translation unit compiled with it. Our code would then poison a new slab
// inline while the libraries, which share the allocators (MLIR's storage
// uniquer), hand out memory from it without unpoisoning it: every later read
// is a false use-after-poison. Here the headers behave as in the libraries.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_CMAKE_UNINSTRUMENTEDLLVM_H
#define PARTITION_CMAKE_UNINSTRUMENTEDLLVM_H

#if defined(__cplusplus) && __has_include(<llvm/Support/Compiler.h>)
#include <llvm/Support/Compiler.h>
#undef LLVM_ADDRESS_SANITIZER_BUILD
#define LLVM_ADDRESS_SANITIZER_BUILD 0
#define __asan_poison_memory_region(p, size) ((void)(p), (void)(size))
#define __asan_unpoison_memory_region(p, size) ((void)(p), (void)(size))
#endif

#endif // PARTITION_CMAKE_UNINSTRUMENTEDLLVM_H
