/* cli.h — the `tracelens ranks` command (multi-rank collective report,
 * docs/ranks.md): option parsing, rank-trace resolution (DIR, pattern, glob
 * with a rank regex; ranks from file names checked against
 * distributedInfo.rank) and output. Owns nothing after it returns. */
#ifndef TL_RANKS_CLI_H
#define TL_RANKS_CLI_H

/* argv holds the arguments after "ranks" (also "summarize ..." and
 * "reduce ..."); returns the exit status. */
int tl_ranks_cli(int argc, char **argv);

struct tl_ranks_source;
/* The same with the per-rank summaries given by src (mapreduce.h; NULL:
 * this process's own pass): the MPI driver's entry. */
int tl_ranks_cli_with(int argc, char **argv, struct tl_ranks_source *src);

#ifdef TL_MPI
/* mpi_driver.c (built with -DTRACELENS_MPI=ON): is this process started by
 * mpirun, and `tracelens ranks` spread over the MPI processes. */
int tl_mpi_launched(void);
int tl_ranks_mpi_cli(int argc, char **argv);
#endif

#endif
