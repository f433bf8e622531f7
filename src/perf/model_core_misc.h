/* model_core_misc.h — the other core perf models (perf-model spec §4.8:
 * MoE dispatch/combine, causal conv1d, Mamba SSD, fused RoPE, cross
 * entropy). */
#ifndef TL_MODEL_CORE_MISC_H
#define TL_MODEL_CORE_MISC_H

#include "perf_model.h"

extern const tl_perf_class tl_pc_moe_dispatch;
extern const tl_perf_class tl_pc_moe_combine;
extern const tl_perf_class tl_pc_causal_conv1d_fwd;
extern const tl_perf_class tl_pc_mamba_ssd_fwd;
extern const tl_perf_class tl_pc_fused_rope_fwd;
extern const tl_perf_class tl_pc_cross_entropy_fwd;

#endif
