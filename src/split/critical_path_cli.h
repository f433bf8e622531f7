/* critical_path_cli.h — the `tracelens critical-path` command
 * (trace/critical_path.h, docs/critical-path.md). Owns nothing after it
 * returns. */
#ifndef TL_CRITICAL_PATH_CLI_H
#define TL_CRITICAL_PATH_CLI_H

/* argv holds the arguments after "critical-path"; returns the exit status. */
int tl_critical_path_cli(int argc, char **argv);

#endif
