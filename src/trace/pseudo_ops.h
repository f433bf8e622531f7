/* pseudo_ops.h — the pseudo-op pass (--enable_pseudo_ops; perf-report spec
 * §3.10): after the tree is built, synthetic cpu_ops are added to the
 * EventStore and spliced into the tree, so that the perf models of fused or
 * multi-kernel implementations (MoE, MLA, DeepSeek-V4 paged decode) see one
 * op per GPU computation, with the shapes of the op that carries them.
 *
 * Owns nothing after it returns: it appends events (UID = the next free
 * UID, in detection order; args copied from a shape donor plus
 * `Sequence number`, `Pseudo op` = true and each extension's extra args) to
 * the store, renames sglang_profiler ops, and rebuilds the tree's parent,
 * in_tree, children and gpu_events arrays in place. It runs while the trace
 * is still private to its loader (or on a private copy), never on a shared
 * trace.
 *
 * Steps, in order:
 *   1. the sglang_profiler name normalisation (`sglang_profiler::X_123` ->
 *      `sglang_profiler::X` when the name's first event is a cpu_op);
 *   2. the extensions detected on the trace, each under its own guard: one
 *      that fails stops where it is (what it injected stays, as in the
 *      reference), is reported in the summary, and the others still run.
 *        MoE_Fused           vllm::rocm_aiter_fused_moe -> pseudo_op::moe_aiter_fused_1stage
 *        MoE_Unfused_Triton  matmul_ogs kernels under vllm::moe_forward ->
 *                            pseudo_op::moe_triton_unfused_{up,down}
 *                            (+ _finalize_matmul_scatter, as the shipped reference shows)
 *        MoE_GPTQ_AWQ        vllm::outplace_fused_experts -> pseudo_op::moe_gptq_awq_{up,down}
 *        MoE_Flydsl          flydsl stage frames under aiter::fused_moe_ ->
 *                            pseudo_op::moe_flydsl_stage{1,2} (above the stage event)
 *        MLA_Decode          pseudo_mla_decode_fwd (wraps the python frame's children)
 *        MLA_Prefill         pseudo_mla_prefill_fwd (likewise)
 *        V4_Paged_Decode     pseudo_v4_paged_decode_{swa,csa,hca} (likewise)
 *      The two paged-attention KV-cache dtype detections are skipped [FIX:
 *      the reference imports a module it does not ship, which disables
 *      every extension].
 *
 * Tree shape [KEEP, as the reference leaves it]:
 *   - a single-kernel injection puts the pseudo op between the kernel's
 *     runtime launch and the op above it in the children lists
 *     (orig -> pseudo -> launch -> kernel), but the launch keeps its parent
 *     pointer: the kernel's launcher (ops sheets) and its call stack are
 *     unchanged, the pseudo op has no ts/dur (duration_us empty; ts 0 where
 *     a time is needed) and gpu_events = [kernel];
 *   - the wrap-children and above-event variants move parent pointers too,
 *     and copy ts/dur from the wrapped event;
 *   - no ancestor's gpu_events changes (they hold the kernels already). */
#ifndef TL_PSEUDO_OPS_H
#define TL_PSEUDO_OPS_H

#include <stddef.h>

#include "event_store.h"
#include "tree.h"

typedef struct tl_pseudo_opts {
    const char *v4_model_name; /* args v4_model_name (the reference reads env TL_MODEL); NULL = None */
    long v4_tp;                /* args v4_tp (env TL_TP, default 1) */
} tl_pseudo_opts;

enum { TL_PSEUDO_MAX_EXT = 8 };

typedef struct tl_pseudo_summary {
    size_t n_renamed;          /* events renamed by the sglang_profiler normalisation */
    size_t n_injected;         /* pseudo ops added */
    size_t n_ext;              /* extensions detected and run, in order */
    struct {
        const char *name;      /* static text, e.g. "MoE_Unfused_Triton" */
        size_t injected;
        int failed;            /* stopped by an error (see warnings) */
    } ext[TL_PSEUDO_MAX_EXT];
    char *warnings;            /* newline-separated notes and errors (owned), NULL when none */
} tl_pseudo_summary;

/* Runs the pass on a store and its tree (built from that store); fills *sum
 * (free it with tl_pseudo_summary_free). */
void tl_pseudo_ops_apply(tl_event_store *es, tl_tree *tree, const tl_pseudo_opts *o, tl_pseudo_summary *sum);
void tl_pseudo_summary_free(tl_pseudo_summary *s);

#endif
