// The reference pages in docs/generated/ match the ODS definitions; after
// changing an op, attribute or pass, run scripts/gen-docs.sh.
// RUN: diff %partition_src_root/docs/generated/PartOps.md %partition_obj_root/docs/Dialects/PartOps.md
// RUN: diff %partition_src_root/docs/generated/PartAttrs.md %partition_obj_root/docs/Dialects/PartAttrs.md
// RUN: diff %partition_src_root/docs/generated/PartPasses.md %partition_obj_root/docs/PartPasses.md
