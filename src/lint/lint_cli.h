/*
 * lint_cli.h: `gpu-scheduler lint [OPTIONS] FILE...`, the command line around lint.h: reads the files
 * ("-" is stdin), the node list (--nodes FILE, or --kubeconfig: GET /api/v1/nodes once), prints
 * "FILE:LINE: error|warning: MESSAGE" lines on stdout and a summary on stderr.
 *
 * Exit status, as linters have it: 0 no errors (warnings allowed, unless --strict), 1 errors (or, with
 * --strict, warnings), 2 usage or I/O (a file that cannot be read, a bad node list, the apiserver not
 * answering). docs/lint.md.
 */
#ifndef GS_LINT_LINT_CLI_H
#define GS_LINT_LINT_CLI_H

/* argv[0] is "lint". Returns the exit status. */
int gs_lint_main(int argc, char **argv);

#endif
