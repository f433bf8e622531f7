/* model_elementwise.h — elementwise perf models (perf-model spec §4.4, and
 * the primus quantizers of §4.8): category `elementwise`, maf vector,
 * sheets UnaryElementwise / BinaryElementwise. */
#ifndef TL_MODEL_ELEMENTWISE_H
#define TL_MODEL_ELEMENTWISE_H

#include "perf_model.h"

extern const tl_perf_class tl_pc_aten_unary_elementwise;
extern const tl_perf_class tl_pc_aten_binary_elementwise;
extern const tl_perf_class tl_pc_aten_replication_pad;
extern const tl_perf_class tl_pc_aten_upsample_nearest;
extern const tl_perf_class tl_pc_liger_silu_mul_function;
extern const tl_perf_class tl_pc_primus_turbo_quantize_fp8;
extern const tl_perf_class tl_pc_primus_turbo_quantize_mxfp4_dual;

#endif
