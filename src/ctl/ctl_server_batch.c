/* ctl_server_batch: what a batch request (ctl_proto.h, `vxctl -batch`)
 * needs of the server beyond an ordinary one.
 *
 * An ordinary request fits the client's fixed buffer (CTL_REQ_MAX_BODY);
 * a batch may be up to CTL_REQ_MAX_BATCH, so when its header says so the
 * client gets a buffer of that request's size, freed once it is served.
 * The other limits hold as for any request: it must be complete within
 * the request deadline, and while it is served the client's further bytes
 * wait.  Worst case: every client holding a batch buffer, max_clients x
 * CTL_REQ_MAX_BATCH, and only peers that passed the credentials check
 * (root, the daemon's uid or its group) can send one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_server_internal.h"

int ctl_client_fit_request(struct ctl_client *c)
{
	long need = ctl_proto_request_size(c->in, c->in_len);
	if (need <= 0 || (size_t)need <= c->in_cap)
		return 0; /* garbage is refused when decoded */
	uint8_t *big = malloc((size_t)need);
	if (!big)
		return -ENOMEM;
	memcpy(big, c->in, c->in_len);
	ctl_client_release_in(c);
	c->in = big;
	c->in_cap = (size_t)need;
	return 0;
}

void ctl_client_shrink(struct ctl_client *c)
{
	if (c->in == c->in_small || c->in_len > sizeof(c->in_small))
		return;
	memcpy(c->in_small, c->in, c->in_len);
	ctl_client_release_in(c);
}

void ctl_client_release_in(struct ctl_client *c)
{
	if (c->in && c->in != c->in_small)
		free(c->in);
	c->in = c->in_small;
	c->in_cap = sizeof(c->in_small);
}

int ctl_batch_parse(const struct ctl_request *req, struct ctl_config *cfg, struct ctl_cmd *cmd,
		    struct ctl_err *err)
{
	memset(cmd, 0, sizeof(*cmd));
	if (ctl_config_parse_batch(req->argv[0], req->text, req->text_len, cfg, err->msg, sizeof(err->msg)))
		return -EINVAL;
	cmd->verb = CTL_BATCH;
	cmd->batch = (struct ctl_batch){
		.name = req->argv[0], .cmds = cfg->cmds, .lines = cfg->lines, .n_cmds = cfg->n_cmds,
	};
	return 0;
}
