/* model_conv.h — the convolution perf models (perf-model spec §4.2). */
#ifndef TL_MODEL_CONV_H
#define TL_MODEL_CONV_H

#include "perf_model.h"

extern const tl_perf_class tl_pc_aten_conv;
extern const tl_perf_class tl_pc_aten_conv_bwd;
extern const tl_perf_class tl_pc_ConvBias_;
extern const tl_perf_class tl_pc_ConvBiasReLU_;
/* ConvBias_Backward / ConvBiasReLU_Backward have seq_forward set: they read
 * the shapes of ev->seq_forward, their ConvBias_ / ConvBiasReLU_ forward of
 * the same args["Sequence number"] (the reference's per-sequence cache). */
extern const tl_perf_class tl_pc_ConvBias_Backward;
extern const tl_perf_class tl_pc_ConvBiasReLU_Backward;

#endif
