/* model_attention.h — the SDPA perf models (perf-model spec §4.3) and the
 * inference attention models (§4.10, category InferenceAttention).
 *
 * Inputs beyond Input Dims / type / Concrete Inputs, all read from the
 * event's args dict:
 *   args["annotation"]          the enclosing iteration annotation (the
 *                               reference's event["annotation"], §4.10);
 *                               absent = "NA" (no workload statistics)
 *   args["attention_perf_meta"] {"k_cache_dtype": ...}, optional
 *   args["v4_H_Q"], ["v4_d_h"], ["v4_tp"], ["v4_window"], ["v4_index_topk"],
 *   ["v4_model_name"]           pseudo_v4_paged_decode_* extras */
#ifndef TL_MODEL_ATTENTION_H
#define TL_MODEL_ATTENTION_H

#include <stdint.h>

#include "perf_model.h"

/* SDPA family (category SDPA_fwd / SDPA_bwd, sheet SDPA) */
extern const tl_perf_class tl_pc_flash_attention;
extern const tl_perf_class tl_pc_flash_attention_backward;
extern const tl_perf_class tl_pc_flash_attention_varlen_forward;
extern const tl_perf_class tl_pc_flash_attention_varlen_backward;
extern const tl_perf_class tl_pc_aten__scaled_dot_product_cudnn_attention;
extern const tl_perf_class tl_pc_aten__scaled_dot_product_efficient_attention;
extern const tl_perf_class tl_pc_aten__scaled_dot_product_flash_attention;
extern const tl_perf_class tl_pc_aiter__flash_attn_forward;
extern const tl_perf_class tl_pc_aiter__flash_attn_backward;
extern const tl_perf_class tl_pc_aiter__fmha_v3_forward;
extern const tl_perf_class tl_pc_aiter__fmha_v3_backward;
extern const tl_perf_class tl_pc_aiter__mha_fwd;
extern const tl_perf_class tl_pc_aiter__fmha_v3_fwd;
extern const tl_perf_class tl_pc_aiter__mha_bwd;
extern const tl_perf_class tl_pc_flash_attn_v3_forward;
extern const tl_perf_class tl_pc_evoformer_attention;

/* Inference attention (category InferenceAttention, sheet InferenceAttention) */
extern const tl_perf_class tl_pc_vllm_unified_attention_with_output;
extern const tl_perf_class tl_pc_mha_varlen_fwd;
extern const tl_perf_class tl_pc_aiter_fmha_v3_varlen_fwd;
extern const tl_perf_class tl_pc_aiter_mha_batch_prefill;
extern const tl_perf_class tl_pc_aiter_paged_attention_ragged;
extern const tl_perf_class tl_pc_mla_decode_fwd;
extern const tl_perf_class tl_pc_pseudo_mla_prefill_fwd;
extern const tl_perf_class tl_pc_pa_decode_gluon;
extern const tl_perf_class tl_pc_pseudo_v4_paged_decode_swa;
extern const tl_perf_class tl_pc_pseudo_v4_paged_decode_csa;
extern const tl_perf_class tl_pc_pseudo_v4_paged_decode_hca;
extern const tl_perf_class tl_pc_pa_sparse_prefill_opus_fwd;
extern const tl_perf_class tl_pc_mla_tilelang_sparse_fwd;
extern const tl_perf_class tl_pc_gdn_attention_core;
extern const tl_perf_class tl_pc_sglang_store_cache;

/* The per-request workload sums of a detailed iteration annotation
 * (vLLM execute_…_context_…(sq…sk…sqsq…sqsk…)_generation_…(…), SGLang
 * step[… c_sq=… …], ATOM prefill[…]/decode[… sqsq=… sqsk=…]), in the order
 * c_sq, c_sk, c_sqsq, c_sqsk, g_sq, g_sk, g_sqsq, g_sqsk. Returns 0 when the
 * annotation carries none (the reference's chunk_stats() raises). */
int tl_attention_chunk_stats(const char *annotation, int64_t stats[8]);

#endif
