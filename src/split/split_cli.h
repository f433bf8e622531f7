/* split_cli.h — the `tracelens split` command (split.h, docs/split.md).
 * Owns nothing after it returns. */
#ifndef TL_SPLIT_CLI_H
#define TL_SPLIT_CLI_H

/* argv holds the arguments after "split"; returns the exit status. */
int tl_split_cli(int argc, char **argv);

#endif
