/* model_triton.h — TritonCompiledPerfModel (perf-model spec §9): Inductor
 * pointwise / reduction kernels (triton_poi_ / triton_red_ / triton_per_)
 * modelled from their trace args (V2). The Inductor-cache fallback (V1) is
 * left out: when V2 fails the model is NOT_IMPLEMENTED and can_model is
 * false. Category `triton`; no sheet (the descriptor's sheet is NULL). */
#ifndef TL_MODEL_TRITON_H
#define TL_MODEL_TRITON_H

#include "perf_model.h"

extern const tl_perf_class tl_pc_TritonCompiledPerfModel;

/* The pattern matcher of §1: the name starts with triton_poi_, triton_red_
 * or triton_per_. */
int tl_triton_name_matches(const char *name);

/* The class's can_model hook: true iff the V2 trace-args parse succeeds. */
int tl_triton_can_model(const tl_perf_event *ev);

/* The fused ATen ops segmented from a kernel name, rendered as the
 * `fused_ops` param ("aten._unsafe_view, aten.mul, aten.silu"; "" when the
 * name does not parse). Sets *flops_per_elem (may be NULL) to the sum of the
 * ops' per-element FLOPs. Returns the number of ops. */
size_t tl_triton_fused_ops(const char *name, tl_sbuf *out, int64_t *flops_per_elem);

/* KNOWN_OPS (spec Appendix B, triton_known_ops.c). */
int tl_triton_known_op(const char *name);
size_t tl_triton_known_op_count(void);

#endif
