/* join.h — the full outer join of two Tables on key columns, with the
 * semantics of pandas.merge(how="outer"). Owns nothing but the table it
 * returns; the inputs are only read.
 *
 * - Rows are grouped by the key tuple; the result lists the groups sorted
 *   lexicographically by key tuple (numbers numerically, text by bytes =
 *   code points, missing last within each key column).
 * - Missing keys equal missing keys.
 * - Within a group: every left row with every right row (left-major, each
 *   side in its own row order); a group one side lacks keeps the other's rows
 *   with the lacking side's cells missing.
 * - Key columns come first, then the left table's other columns, then the
 *   right's (callers make non-key names unique, e.g. "tag::col"). A key cell
 *   is the left row's, or the right row's when there is no left row.
 * - Types: a key column is I64 when both sides are I64, BOOL when both are
 *   BOOL, F64 for other numeric mixes, STR when either side is text (a
 *   numeric side's values become their CSV text; a side without values
 *   adopts the other's type). A non-key I64 column that gets missing cells
 *   becomes F64 (as a pandas int64 column becomes float64); other columns
 *   keep their type. */
#ifndef TL_JOIN_H
#define TL_JOIN_H

#include "../table/table.h"
#include "../util/error.h"

/* NULL with err set when a key column is absent from either table. */
tl_table *tl_join_outer(const tl_table *l, const tl_table *r, const char *const *keys, size_t nkeys,
                        const char *name, tl_error *err);

#endif
