/* cli.h — the `tracelens ranks` command (multi-rank collective report,
 * docs/ranks.md): option parsing, rank-trace resolution (DIR, pattern, glob
 * with a rank regex; ranks from file names checked against
 * distributedInfo.rank) and output. Owns nothing after it returns. */
#ifndef TL_RANKS_CLI_H
#define TL_RANKS_CLI_H

/* argv holds the arguments after "ranks"; returns the exit status. */
int tl_ranks_cli(int argc, char **argv);

#endif
