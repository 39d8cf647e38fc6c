/* vxctl -batch FILE: tc's -batch for flower rules.
 *
 * FILE ("-": standard input) holds `filter add` and `filter del` lines in
 * the syntax of ctl_flower.h, `#` comments and blank lines, as a config
 * file does (ctl/ctl_config.h).  It is read and parsed here first, so a
 * bad line is refused as "FILE:LINE: word N \"x\": ..." without a round
 * trip, then sent whole as ONE batch request (ctl/ctl_proto.h): the daemon
 * applies every line as one change of the rules, which the datapath sees
 * all at once or not at all.  A line the daemon refuses (a missing port, a
 * duplicate handle, a del that matches nothing) is named the same way and
 * nothing of the file is applied. */
#ifndef VX_CLI_VXCTL_BATCH_H
#define VX_CLI_VXCTL_BATCH_H

#include <stddef.h>

/* Reads FILE ("-": stdin) into a malloc'ed *text of *len bytes and checks
 * every line.  Returns 0, or CTL_STATUS_REFUSED with the reason printed
 * on stderr. */
int vxctl_batch_read(const char *file, char **text, size_t *len);

/* -force -batch FILE: tc's way, line by line.  Each command line (blank
 * lines and `#` comments skipped) is split into words and handed to
 * run(ctx, n, words), which prints its own answer or error and returns a
 * CTL_STATUS; a line that fails is followed by tc's own
 * "Command failed FILE:LINE" on stderr and the next line is run.  Any
 * command may be in the file, as in tc's batch; the lines are separate
 * changes (what the batch request makes atomic is the file without
 * -force).  Stops early only when the daemon cannot be reached.  Returns
 * CTL_STATUS_OK when every line succeeded, CTL_STATUS_UNREACHABLE when it
 * stopped so, else CTL_STATUS_REFUSED (tc exits 1 the same way). */
int vxctl_batch_force(const char *file,
		      int (*run)(void *ctx, int n, const char *const *words), void *ctx);

#endif
