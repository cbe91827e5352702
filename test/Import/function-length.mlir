// No function in lib/Import is longer than 150 lines: the importer keeps
// one handler per op (OpTable.cpp), each small enough to read whole.
// Inputs/function_length.py matches braces; it prints the longest few.
//
// RUN: %python %S/Inputs/function_length.py 150 %partition_src_root/lib/Import/*.cpp | FileCheck %s
// CHECK: functions, 0 over 150 lines
