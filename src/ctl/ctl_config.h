/* ctl_config: the daemon's config file, a list of vxctl commands.
 *
 * Each line that is not empty (after blanks) and does not start with '#'
 * (after blanks) is one command in the syntax of ctl_cmd.h.  Every line is
 * parsed before anything is returned, so a file with one bad line yields an
 * error "FILE:LINE: word N "x": ..." and no commands: the daemon refuses to
 * start, or a live reload changes nothing.
 *
 * `datapath kernel|user` chooses the datapath before any port exists, so
 * it may only be the file's first command: anywhere else the file is
 * refused, "FILE:LINE: word 1 "datapath": ...".
 *
 * ctl_config_parse() is pure (a buffer in, commands out);
 * ctl_config_load() reads the file and calls it. */
#ifndef VX_CTL_CTL_CONFIG_H
#define VX_CTL_CTL_CONFIG_H

#include <stddef.h>

#include "ctl/ctl_cmd.h"

enum {
	CTL_CONFIG_MAX_SIZE = 4 << 20,   /* bytes in one file */
	CTL_BATCH_MAX_SIZE = 64 << 20,   /* bytes in one -batch file: flower.json's
	                                  * concurrency cases send 100,000 rule
	                                  * lines (~14 MB) per process */
	CTL_CONFIG_MAX_LINE = 4096,      /* bytes in one line */
	CTL_CONFIG_ERR_SIZE = 512,
};

struct ctl_config {
	struct ctl_cmd *cmds;
	unsigned int *lines;  /* 1-based source line of each command, so the
	                       * daemon can say "FILE:LINE: port exists" */
	size_t n_cmds;
};

/* Parse text[0..len) (need not be NUL-terminated); name is used in error
 * messages.  Returns 0 with *cfg filled (release it), or -EINVAL (bad
 * line), -EFBIG, -ENOMEM with err holding "NAME:LINE: message" and *cfg
 * empty. */
int ctl_config_parse(const char *name, const char *text, size_t len,
		     struct ctl_config *cfg, char *err, size_t err_size);

/* A `vxctl -batch` file: parsed as above, and every command must be a
 * `filter add` or `filter del` (a batch is one change of the rules); any
 * other is refused as "NAME:LINE: word N \"x\": -batch takes filter add
 * and filter del lines only".  Same returns. */
int ctl_config_parse_batch(const char *name, const char *text, size_t len,
			   struct ctl_config *cfg, char *err, size_t err_size);

/* Read and parse the file at path.  Errors as above, plus the errno of a
 * failed open/read ("PATH: No such file or directory"). */
int ctl_config_load(const char *path, struct ctl_config *cfg, char *err,
		    size_t err_size);

/* Frees the commands; cfg is left empty. NULL is a no-op. */
void ctl_config_release(struct ctl_config *cfg);

#endif /* VX_CTL_CTL_CONFIG_H */
