/* model_moe.h — the MoE perf models of perf-model spec §4.11 (categories
 * MoE_fused / MoE_unfused, maf matrix; MoE_aux, maf vector) and
 * topk_softplus (§4.9, MoE_aux). */
#ifndef TL_MODEL_MOE_H
#define TL_MODEL_MOE_H

#include "perf_model.h"

/* Expected number of experts hit by M tokens routed to topk of E experts:
 * E * (1 - ((E - topk) / E) ** M), a double. */
double tl_moe_active_experts(int64_t E, int64_t topk, int64_t M);

/* MoE_fused */
extern const tl_perf_class tl_pc_moe_aiter_fused_1stage;
extern const tl_perf_class tl_pc_moe_aiter_fused_blockscale;
/* MoE_unfused */
extern const tl_perf_class tl_pc_moe_aiter_unfused_up;
extern const tl_perf_class tl_pc_moe_aiter_unfused_down;
extern const tl_perf_class tl_pc_moe_aiter_ck_stage1;
extern const tl_perf_class tl_pc_moe_aiter_ck_stage2;
extern const tl_perf_class tl_pc_moe_triton_unfused_up;
extern const tl_perf_class tl_pc_moe_triton_unfused_down;
extern const tl_perf_class tl_pc_moe_gptq_awq_up;
extern const tl_perf_class tl_pc_moe_gptq_awq_down;
extern const tl_perf_class tl_pc_moe_flydsl_stage1;
extern const tl_perf_class tl_pc_moe_flydsl_stage2;
extern const tl_perf_class tl_pc_moe_triton_invoke_grouped_gemm;
/* MoE_aux */
extern const tl_perf_class tl_pc_BiasedGroupedTopk;
extern const tl_perf_class tl_pc_MoeSortScatterGather;
extern const tl_perf_class tl_pc_sglang_fused_append_shared_experts;
extern const tl_perf_class tl_pc_topk_softplus;

#endif
