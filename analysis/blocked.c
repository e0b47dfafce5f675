/* The digits of a blocked layout (analysis.h): the layout algebra's blocked form as plain
 * numbers, the one place outside ir/ that reads it. */
#include "analysis.h"

#include <string.h>

bool analysis_blocked(const TirModule *m, int32_t layout, int tile_rank, AnaBlocked *b, const char **why) {
    TirBlockedForm bf;
    memset(b, 0, sizeof *b);
    if (!tir_layout_blocked_form(m, layout, tile_rank, &bf, why))
        return false;
    b->rank = bf.rank;
    for (int d = 0; d < TIR_MAXRANK; d++) {
        b->spt[d] = bf.spt[d];
        b->tpw[d] = bf.tpw[d];
        b->wpc[d] = bf.wpc[d];
        b->order[d] = bf.order[d];
        b->lane_stride[d] = bf.lane_stride[d];
        b->warp_stride[d] = bf.warp_stride[d];
        b->tile_dim[d] = bf.tile_dim[d];
        b->root_dim[d] = bf.root_dim[d];
        b->span[d] = d < bf.rank ? tir_blocked_span(&bf, d) : 0;
    }
    return true;
}

void analysis_blocked_distinct(const AnaBlocked *b, int rd, int64_t extent, int *lanes, int *warps) {
    int64_t spt = b->spt[rd], tpw = b->tpw[rd], wpc = b->wpc[rd];
    int64_t ln = extent / spt < 1 ? 1 : (extent / spt < tpw ? extent / spt : tpw);
    int64_t w = extent / (spt * tpw) < 1 ? 1 : (extent / (spt * tpw) < wpc ? extent / (spt * tpw) : wpc);
    if (lanes)
        *lanes = (int)ln;
    if (warps)
        *warps = (int)w;
}
