/* perf_model.h — the roofline perf model's interface (perf-model spec).
 * A model class turns one op event's args into FLOPs, bytes, a compute
 * spec and the ordered `param:` values. Classes are plain constant
 * descriptors (`tl_pc_<ReferenceClassName>`) defined per family in
 * model_*.c; registry.c maps op names to them. Nothing here holds state: a
 * result owns the arena its param values live in. */
#ifndef TL_PERF_MODEL_H
#define TL_PERF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "../json/pyval.h"

/* One op event as a model sees it (perf-model spec §0, §1). */
typedef struct tl_perf_event {
    const char *name;
    const tl_pv *dims;      /* args["Input Dims"], NULL when the key is absent */
    const tl_pv *types;     /* args["Input type"] */
    const tl_pv *strides;   /* args["Input Strides"] */
    const tl_pv *concrete;  /* args["Concrete Inputs"] */
    const tl_pv *args;      /* the whole args object (DICT), for the few models that read other keys */
    const char *const *kernels; /* names of the op's subtree kernels, sorted by ts */
    size_t n_kernels;
    /* For classes with seq_forward set (backward ops that look up their
     * forward by Sequence number, spec §4.2): the forward op's event, or
     * NULL when there is none. NULL for every other class. */
    const struct tl_perf_event *seq_forward;
} tl_perf_event;

enum {
    TL_PERF_OK = 0,
    TL_PERF_NOT_IMPLEMENTED, /* "no model, expected": no row anywhere (spec §1) */
    TL_PERF_ERROR,           /* any other exception of the reference (spec §1) */
};

enum { TL_PERF_MAX_PARAMS = 48 };

typedef struct tl_perf_param {
    const char *key;        /* static string or arena text */
    tl_pv value;            /* rendered with str() for `param:` columns, repr in perf_params */
} tl_perf_param;

typedef struct tl_perf_result {
    int status;
    double flops;           /* exact integer formulas: compute in int64_t/__int128, convert once */
    int has_bytes;          /* bytes() returned a number (not None) */
    double bytes;
    const char *maf;        /* "matrix", "vector" or NULL (no compute unit) */
    const char *precision;  /* tl_dtype_precision() of the class's first input, or NULL */
    tl_perf_param params[TL_PERF_MAX_PARAMS];
    int n_params;
    tl_pv_arena *arena;     /* param values; freed by tl_perf_result_free */
    char error[160];        /* for TL_PERF_ERROR: what went wrong (a warning) */
} tl_perf_result;

/* bwd = 0: flops()/bytes(); bwd = 1: flops_bwd()/bytes_bwd() (spec §1 step 3).
 * Params are the same for both. Returns r->status. */
typedef int (*tl_perf_fn)(const tl_perf_event *ev, int bwd, tl_perf_result *r);

typedef struct tl_perf_class {
    const char *name;          /* the reference's class name, e.g. "aten_mm" */
    const char *category;      /* `category` attribute, e.g. "GEMM", "SDPA_fwd", "elementwise" */
    const char *bwd_category;  /* e.g. "SDPA_bwd", or NULL */
    const char *sheet;         /* sheet family (spec §3.2): "GEMM", "SDPA", "UnaryElementwise", ... */
    int has_bwd;               /* flops_bwd/bytes_bwd are defined (not NotImplementedError) */
    tl_perf_fn fn;
    int seq_forward;           /* fn reads ev->seq_forward: the caller fills it (perf_eval.c) */
} tl_perf_class;

/* --- running a model ------------------------------------------------ */
void tl_perf_result_init(tl_perf_result *r);
void tl_perf_result_free(tl_perf_result *r);
int tl_perf_run(const tl_perf_class *c, const tl_perf_event *ev, int bwd, tl_perf_result *r);

/* --- helpers for model code (params.c) -------------------------------- */
/* Append a param (key order = call order). Values are copied into r->arena. */
void tl_pm_int(tl_perf_result *r, const char *key, int64_t v);
void tl_pm_bool(tl_perf_result *r, const char *key, int v);
void tl_pm_float(tl_perf_result *r, const char *key, double v);
void tl_pm_str(tl_perf_result *r, const char *key, const char *s);   /* NULL -> None */
void tl_pm_none(tl_perf_result *r, const char *key);
void tl_pm_pv(tl_perf_result *r, const char *key, const tl_pv *v);  /* deep copy; NULL -> None */
/* tl_pm_pv of a LIST that the reference keeps a Python list: its `param:`
 * text is [..] where other lists show as tuples. */
void tl_pm_pylist(tl_perf_result *r, const char *key, const tl_pv *v);
/* A tuple of strings, e.g. ('c10::BFloat16', 'c10::BFloat16'); NULL items are None. */
void tl_pm_str_tuple(tl_perf_result *r, const char *key, const char *const *items, size_t n);
/* A tuple of ints / of bools. */
void tl_pm_int_tuple(tl_perf_result *r, const char *key, const int64_t *items, size_t n);
void tl_pm_bool_tuple(tl_perf_result *r, const char *key, const int *items, size_t n);
/* Set or replace a param in place (keeps its position when it exists). */
tl_perf_param *tl_pm_find(tl_perf_result *r, const char *key);
/* Fail helpers: set status and message, return it. */
int tl_perf_error(tl_perf_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tl_perf_not_implemented(tl_perf_result *r);

/* Event accessors with Python-like tolerance: NULL when out of range. */
static inline const tl_pv *tl_pe_dim(const tl_perf_event *e, size_t i) { return tl_pv_at(e->dims, i); }
static inline const tl_pv *tl_pe_stride(const tl_perf_event *e, size_t i) { return tl_pv_at(e->strides, i); }
const char *tl_pe_type(const tl_perf_event *e, size_t i);      /* Input type[i] text or NULL */
const char *tl_pe_concrete(const tl_perf_event *e, size_t i);  /* Concrete Inputs[i] text or NULL */
/* Input Dims[i][j] as int; 0 with *ok = 0 when missing. */
int64_t tl_pe_dimv(const tl_perf_event *e, size_t i, size_t j, int *ok);

/* --- dtype tables (spec §2) ------------------------------------------ */
/* name2bpe on the lower-cased name; returns 0 when unknown (None). */
int tl_dtype_bpe(const char *dtype);
/* torch_dtype_map with the spec's FIX entries; NULL when unmapped. */
const char *tl_dtype_precision(const char *dtype);
/* MoE DTYPE_TO_BYTES (exact, case-sensitive), then name2bpe, then dflt (§2.3 FIX). */
double tl_dtype_bytes_moe(const char *dtype, double dflt);

/* --- registry (registry.c) -------------------------------------------- */
/* The model class of an op name: exact table, then the Triton patterns. */
const tl_perf_class *tl_perf_lookup(const char *name);
/* The exact-name category registry (§3.1 rule 1): NULL when absent. */
const char *tl_op_registry_category(const char *name);
/* Sheet families in the reference order (GEMM, SDPA, CONV, ...), NULL-terminated. */
const char *const *tl_sheet_families(void);

#endif
