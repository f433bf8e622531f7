/* model_reduce.h — the reduce perf model (perf-model spec §4.5): category
 * `reduce`, sheet Reduce, maf vector. */
#ifndef TL_MODEL_REDUCE_H
#define TL_MODEL_REDUCE_H

#include "perf_model.h"

extern const tl_perf_class tl_pc_aten_reduce;

#endif
