// Where partition-import writes: every output path is checked before the
// import starts, regular files are replaced by a rename, anything else is
// written in place and never renamed over.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_models.py %t
//
// A directory as -o: nothing is written, not even the weights.
// RUN: mkdir %t/dir
// RUN: not partition-import %t/good.onnx --dim batch=2 -o %t/dir --weights %t/w.safetensors 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: partition-import: cannot write {{.*}}dir (-o): it is a directory
// RUN: not ls %t/w.safetensors
// RUN: not ls %t/w.safetensors.tmp-*
// RUN: not partition-import %t/good.onnx --dim batch=2 -o %t/out.mlir --weights %t/dir 2>&1 | FileCheck %s --check-prefix=WDIR
// WDIR: partition-import: cannot write {{.*}}dir (--weights): it is a directory
// RUN: not ls %t/out.mlir
//
// A missing directory, and one that is a file:
// RUN: not partition-import %t/good.onnx --dim batch=2 -o %t/none/out.mlir --weights %t/w.safetensors 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: partition-import: cannot write {{.*}}none/out.mlir (-o): its directory {{.*}}none: No such file or directory
// RUN: not partition-import %t/good.onnx --dim batch=2 -o %t/good.onnx/out.mlir 2>&1 | FileCheck %s --check-prefix=NOTDIR
// NOTDIR: partition-import: cannot write {{.*}}good.onnx/out.mlir (-o): Not a directory
// RUN: not ls %t/w.safetensors
//
// One file for both outputs:
// RUN: not partition-import %t/good.onnx --dim batch=2 -o %t/same --weights %t/./same 2>&1 | FileCheck %s --check-prefix=SAME
// SAME: partition-import: -o {{.*}}same and --weights {{.*}}/./same name the same file
// RUN: not ls %t/same
// RUN: not partition-import %t/good.onnx --dim batch=2 --weights - 2>&1 | FileCheck %s --check-prefix=SAME-STDOUT
// SAME-STDOUT: partition-import: -o - and --weights - name the same file
//
// A symbolic link to /dev/null: written through, the link stays a link and
// /dev/null a character device.
// RUN: ln -s /dev/null %t/null-link
// RUN: partition-import %t/good.onnx --dim batch=2 -o %t/null-link --weights %t/null-link
// RUN: test -L %t/null-link
// RUN: test -c /dev/null
// RUN: partition-import %t/good.onnx --dim batch=2 -o /dev/null --weights /dev/null
// RUN: test -c /dev/null
//
// A FIFO is written into, not replaced.
// RUN: mkfifo %t/fifo
// RUN: %python %S/Inputs/read_fifo.py %t/fifo %t/from-fifo.mlir -- partition-import %t/good.onnx --dim batch=2 -o %t/fifo
// RUN: test -p %t/fifo
// RUN: FileCheck %s --check-prefix=FIFO < %t/from-fifo.mlir
// FIFO: func.func @main
//
// A FIFO that no process reads is refused before the import (writing it
// would wait forever):
// RUN: mkfifo %t/lonely
// RUN: not timeout 20 partition-import %t/good.onnx --dim batch=2 -o %t/lonely 2>&1 | FileCheck %s --check-prefix=LONELY
// LONELY: partition-import: cannot write {{.*}}lonely (-o): it is a FIFO that no process reads (writing it would wait forever)
//
// A symbolic link to a regular file: the file is replaced, the link kept.
// RUN: echo old > %t/real.mlir
// RUN: ln -s real.mlir %t/link.mlir
// RUN: partition-import %t/good.onnx --dim batch=2 -o %t/link.mlir
// RUN: test -L %t/link.mlir
// RUN: FileCheck %s --check-prefix=FIFO < %t/real.mlir
// RUN: ln -s missing.mlir %t/dangling.mlir
// RUN: not partition-import %t/good.onnx --dim batch=2 -o %t/dangling.mlir 2>&1 | FileCheck %s --check-prefix=DANGLING
// DANGLING: cannot write {{.*}}dangling.mlir (-o): it is a symbolic link to a missing file
//
// A device that fails on write: the weights file is not renamed into place.
// RUN: not partition-import %t/good.onnx --dim batch=2 -o /dev/full --weights %t/w.safetensors 2>&1 | FileCheck %s --check-prefix=FULL
// FULL: partition-import: cannot write /dev/full (-o): No space left on device
// RUN: not ls %t/w.safetensors
// RUN: not ls %t/w.safetensors.tmp-*
