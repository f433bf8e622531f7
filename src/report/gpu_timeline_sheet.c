#include "gpu_timeline_sheet.h"

int tl_timeline_rows(const tl_timeline *tl, tl_timeline_row *rows)
{
    int n = 0;
    rows[n++] = (tl_timeline_row){"computation_time", tl->computation};
    rows[n++] = (tl_timeline_row){"exposed_comm_time", tl->exposed_comm};
    rows[n++] = (tl_timeline_row){"exposed_memcpy_time", tl->exposed_memcpy};
    rows[n++] = (tl_timeline_row){"busy_time", tl->busy};
    if (tl->have_micro) {
        rows[n++] = (tl_timeline_row){"micro_idle_time", tl->micro_idle};
        rows[n++] = (tl_timeline_row){"macro_idle_time", tl->macro_idle};
    } else {
        rows[n++] = (tl_timeline_row){"idle_time", tl->idle};
    }
    rows[n++] = (tl_timeline_row){"total_time", tl->total};
    rows[n++] = (tl_timeline_row){"total_comm_time", tl->total_comm};
    rows[n++] = (tl_timeline_row){"total_memcpy_time", tl->total_memcpy};
    return n;
}

