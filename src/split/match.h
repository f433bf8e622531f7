/* match.h — the `tracelens match-blocks` command (inference spec §1.8,
 * docs/split.md). Owns nothing after it returns. */
#ifndef TL_MATCH_H
#define TL_MATCH_H

/* argv holds the arguments after "match-blocks"; returns the exit status. */
int tl_match_cli(int argc, char **argv);

#endif
