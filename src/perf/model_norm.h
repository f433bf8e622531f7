/* model_norm.h — normalization perf models (perf-model spec §4.6):
 * categories NORM_fwd / NORM_bwd, sheet Normalization, maf vector. */
#ifndef TL_MODEL_NORM_H
#define TL_MODEL_NORM_H

#include "perf_model.h"

extern const tl_perf_class tl_pc_BatchNorm;
extern const tl_perf_class tl_pc_BatchNormBwd;
extern const tl_perf_class tl_pc_LayerNorm;
extern const tl_perf_class tl_pc_LayerNormBwd;
extern const tl_perf_class tl_pc_GroupNorm;
extern const tl_perf_class tl_pc_GroupNormBwd;
extern const tl_perf_class tl_pc_InstanceNorm;
extern const tl_perf_class tl_pc_InstanceNormBwd;
extern const tl_perf_class tl_pc_RMSNorm;
extern const tl_perf_class tl_pc_RMSNormBwd;
extern const tl_perf_class tl_pc_FusedLnModulate;
extern const tl_perf_class tl_pc_FusedLnModulateBackward;

#endif
