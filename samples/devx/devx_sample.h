/*
 * What the DevX sample's two processes say to each other over their socket pair: the DevX side
 * asks, the verbs peer does the step and answers 0 (done and checked) or -1.
 */
#ifndef SAMPLES_DEVX_SAMPLE_H
#define SAMPLES_DEVX_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

enum peer_cmd {
	PEER_CHECK = 1,     /* check [offset, offset + length) of the peer's buffer holds pattern(seed) */
	PEER_RECV_CHECK,    /* take the next receive completion: length bytes of pattern(seed) */
	PEER_SEND,          /* SEND length bytes of pattern(seed) */
	PEER_FILL,          /* fill [offset, offset + length) with pattern(seed) */
	PEER_WRITE_TO_DEVX, /* RDMA WRITE length bytes of pattern(seed) to the DevX side's
			       buffer + remote_offset, with the DevX mkey as rkey */
	PEER_DONE,          /* tear down and exit 0 */
};

struct peer_msg {
	uint32_t cmd;
	uint32_t offset;
	uint32_t length;
	uint32_t seed;
	uint32_t remote_offset;
};

/* The bytes every step writes and checks. */
static inline uint8_t pattern_byte(uint32_t seed, size_t i)
{
	return (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

static inline void fill_pattern(uint8_t *p, size_t length, uint32_t seed)
{
	for (size_t i = 0; i < length; i++)
		p[i] = pattern_byte(seed, i);
}

int read_all(int fd, void *buf, size_t length);
int write_all(int fd, const void *buf, size_t length);

/* The verbs peer: plain ibv_* on `device`, talking to the DevX side over `fd`. */
int verbs_peer_main(int fd, const char *device, unsigned gid_index);

#endif
