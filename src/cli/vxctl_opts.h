/* vxctl_opts: vxctl's global options, read as tc reads its own.
 *
 * Why?
 *   An operator's `tc -s filter show dev X ingress` must work with `tc`
 *   replaced by `vxctl`, so the options before the command are tc's, with
 *   tc's spelling rules (tc/tc.c main(), iproute2 6.1): one dash, any
 *   prefix of the long name, tried in tc's order, so `-s` is -stats (not
 *   the socket), `-b` is -batch and `-br` is -brief.  A second dash is
 *   accepted too (`--json`, `--help`), as vxctl always did.
 *
 *   -s | -stats | -statistics    counters of filter show/get (repeatable,
 *                                as tc's -s -s)
 *   -d | -details                refused: tc's flower output has no more
 *                                detail to give than vxctl prints
 *   -j | -json     -p | -pretty  JSON; -p indents it as iproute2 does
 *   -br | -brief                 tc's terse dump of filter show (refused
 *                                elsewhere: tc has no terse get)
 *   -b | -batch FILE  -f | -force
 *   -n | -netns NS               refused with the reason (no netns scopes
 *                                a filesystem socket)
 *   -h | -help
 *   --socket PATH (or -socket, --socket=PATH), else $VXCTL_SOCKET, else
 *   CTL_DEFAULT_SOCKET: the control socket.
 *
 *   The old `-s PATH` is refused when PATH looks like a path (a '/' in it,
 *   or a name ending in .sock) with the line to type instead; `-s` before
 *   a command word is -stats.
 *
 * Who calls it: vxctl_main.c, before anything else.  Pure: argv and the
 * environment's value in, a struct or a message out. */
#ifndef VX_CLI_VXCTL_OPTS_H
#define VX_CLI_VXCTL_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#define VXCTL_SOCKET_ENV "VXCTL_SOCKET"

enum { VXCTL_OPTS_ERR_SIZE = 512 };

struct vxctl_opts {
	const char *socket;   /* never NULL after a successful parse */
	unsigned int stats;   /* -s count */
	bool json, pretty, force, help, brief;
	const char *batch;    /* -b FILE, or NULL */
	int first;            /* argv index of the command's first word */
};

/* Reads argv[1..] up to the first word that does not start with '-'.
 * env_socket is $VXCTL_SOCKET (NULL or "" when unset).  Returns 0, or
 * -EINVAL with a one-line reason (no "vxctl: " prefix, no newline) in err. */
int vxctl_opts_parse(int argc, const char *const *argv, const char *env_socket,
		     struct vxctl_opts *o, char *err, size_t err_size);

/* The command's words with the global -s applied: `filter show` and
 * `filter get` (any of tc's spellings) get the grammar's "-s" after the verb (unless it is there already).
 * -br puts "-br" after it (and after "-s") for filter show.
 * Copies the n word pointers of in to out (room for n + 2) and returns the
 * new count, or -EINVAL with the reason in err when -s is given to a
 * command that has no counters to add.  In a -batch file (in_batch) -s is
 * tc's: it applies to the show lines and leaves the others as they are. */
int vxctl_opts_apply(const struct vxctl_opts *o, bool in_batch, int n, const char *const *in,
		     const char **out, char *err, size_t err_size);

#endif /* VX_CLI_VXCTL_OPTS_H */
