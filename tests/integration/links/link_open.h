/*
 * Shared by the link test programs (link_peer, link_echo): opens one end of a packet link with
 * libmemif as softdpu/link.h describes it (socket, interface id, buffer size, ring size; is_master:
 * serve) and waits up to 30 s for the other end. 0 when connected; 1 otherwise (memif_app says why
 * on stderr), with nothing left open.
 */
#ifndef SOFTDPU_TESTS_LINK_OPEN_H
#define SOFTDPU_TESTS_LINK_OPEN_H

#include <softdpu/link.h>

#include "memif_app_common.h"

#include <stdint.h>

static inline int link_open_end(struct memif_app *app, const char *prog, const struct softdpu_link *link,
				const char *name, uint8_t is_master)
{
	struct memif_app_options options;
	memif_app_default_options(&options);
	options.is_master = is_master;
	options.socket_path = link->socket;
	options.interface_id = link->interface_id;
	options.if_name = name;
	options.buffer_size = (uint16_t)link->buffer_size;
	options.log2_ring_size = link->log2_ring_size;
	options.connect_timeout_s = 30;
	options.quiet = 1;
	if (memif_app_open(app, prog, &options) != 0)
		return 1;
	if (memif_app_wait_connected(app) != 0) {
		memif_app_close(app);
		return 1;
	}
	return 0;
}

#endif
