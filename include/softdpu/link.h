/*
 * softdpu extension: the packet links of the emulated system (docs/links.md), in libdoca_common.
 * Every function with an Ethernet network interface has a packet port. A function and its DPU
 * representor are the two ends of one link (host pf0 <-> representor hpf0, netdev pf0hpf); a DPU
 * PF's port is an uplink (p0, p1) whose other end is outside the emulated system. Each link is a
 * memif connection (libmemif.h, or DPDK's net_memif): one socket per link, served by one end (the
 * memif master) and connected to by the other (the slave).
 *
 * Sockets live in "<run dir>/links/<link name>.sock"; the run directory is $SOFTDPU_RUN_DIR, else
 * $XDG_RUNTIME_DIR/softdpu, else /tmp/softdpu-<euid>. The links come from the process topology
 * (SOFTDPU_TOPOLOGY, docs/topology.md), both sides whatever SOFTDPU_SIDE says.
 *
 * Errors: DOCA_ERROR_INVALID_VALUE for NULL arguments or a buffer too small;
 * DOCA_ERROR_INITIALIZATION when the topology cannot be loaded or a socket path would be longer
 * than a unix socket address allows (the reason is logged as an SDK error);
 * DOCA_ERROR_NO_MEMORY.
 */
#ifndef SOFTDPU_LINK_H_
#define SOFTDPU_LINK_H_

#include <stddef.h>
#include <stdint.h>

#include "../doca_compat.h"
#include "../doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SOFTDPU_LINK_NAME_SIZE 64    /* topology names: at most 63 characters */
#define SOFTDPU_LINK_IFACE_SIZE 16   /* network interface names: at most 15 characters */
#define SOFTDPU_LINK_SOCKET_SIZE 108 /* sizeof(sockaddr_un.sun_path) */

enum softdpu_link_kind {
	SOFTDPU_LINK_KIND_REPRESENTOR = 0, /* a host function (or DPU SF) <-> its representor on the DPU */
	SOFTDPU_LINK_KIND_UPLINK = 1,      /* a DPU PF (p0, p1) <-> the outside */
	SOFTDPU_LINK_KIND_EXTERNAL = 2,    /* any other function (one without a representor) <-> the outside */
};

/* One end of a link. */
struct softdpu_link_end {
	char owner[SOFTDPU_LINK_NAME_SIZE];  /* function or representor name; "" for the outside end */
	char iface[SOFTDPU_LINK_IFACE_SIZE]; /* its network interface; may be "" */
	char side[8];                        /* "host", "dpu", or "outside" */
	uint8_t is_master;                   /* 1: memif master (listens on the socket); 0: slave (connects) */
};

struct softdpu_link {
	char name[SOFTDPU_LINK_NAME_SIZE]; /* the representor's name, else the function's ("hpf0", "p0") */
	enum softdpu_link_kind kind;
	char socket[SOFTDPU_LINK_SOCKET_SIZE]; /* memif control socket (a filesystem path) */
	uint32_t interface_id;                 /* memif interface id on that socket */
	uint32_t buffer_size;                  /* memif buffer size: 16384, a 9000-byte frame in one buffer */
	uint8_t log2_ring_size;                /* memif ring size (10: 1024 slots) */
	struct softdpu_link_end server;        /* the end that serves the socket: the DPU end */
	struct softdpu_link_end client;        /* the end that connects: the host function, or the outside */
};

/* Number of links of the topology. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_link_get_count(uint32_t *count);

/* Link number index (0 <= index < count), in topology order. DOCA_ERROR_NOT_FOUND past the end. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_link_get(uint32_t index, struct softdpu_link *link);

/* The link whose end is function or representor `name` ("pf0", "hpf0", "p0"), and in is_master
 * (may be NULL) whether that end serves. DOCA_ERROR_NOT_FOUND when the name is no link's end (no
 * such function or representor, no network interface, an InfiniBand function, an emulated
 * representor). */
DOCA_EXPERIMENTAL
doca_error_t softdpu_link_find(const char *name, struct softdpu_link *link, uint8_t *is_master);

/* The directory that holds the link sockets, "<run dir>/links", in dir (size bytes, NUL included).
 * With create != 0 it is created (mode 0700, parents included) when missing, as a memif master
 * needs before it can bind: DOCA_ERROR_OPERATING_SYSTEM when that fails (the reason logged). */
DOCA_EXPERIMENTAL
doca_error_t softdpu_link_get_socket_dir(char *dir, size_t size, uint8_t create);

/*
 * Link counters. A process that moves frames through one end of a link ("softdpu link attach")
 * keeps that end's counters in "<run dir>/links/<link>.<server|client>.stats", a file it maps
 * into its memory; the file goes when the process ends (a killed keeper's stale file counts as
 * none). These counters exist only for ends that such a process keeps: DPDK ports keep their own
 * (rte_eth_stats), which the program that owns the port reads.
 */

/* One direction at one end of a link. */
struct softdpu_link_counters {
	uint64_t packets;
	uint64_t bytes;
	uint64_t drops;
};

struct softdpu_link_stats {
	struct softdpu_link_counters rx; /* frames the end received from the link; drops: not handed on */
	struct softdpu_link_counters tx; /* frames the end sent into the link; drops: could not be sent */
};

/* The counters file of one end, held by its keeper (opaque). */
struct softdpu_link_stats_file;

/* Creates the counters file of link `link_name`'s server end (is_master != 0) or client end, all
 * counters zero, and maps it: *stats points into the mapping until softdpu_link_stats_destroy().
 * The caller is the only writer: it updates each field with a relaxed atomic store
 * (__atomic_store_n(&field, value, __ATOMIC_RELAXED)), no system call. The socket directory is
 * created when missing. Errors: DOCA_ERROR_INVALID_VALUE (NULL), DOCA_ERROR_NOT_FOUND (no such
 * link), DOCA_ERROR_IN_USE (another live process keeps that end's counters; its pid is logged),
 * DOCA_ERROR_INITIALIZATION (topology or socket path, as above), DOCA_ERROR_OPERATING_SYSTEM. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_link_stats_create(const char *link_name, uint8_t is_master, struct softdpu_link_stats_file **file,
				       struct softdpu_link_stats **stats);

/* Unmaps and removes the counters file. DOCA_ERROR_INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_link_stats_destroy(struct softdpu_link_stats_file *file);

/* Reads the counters of link `link_name`'s server end (is_master != 0) or client end, and in pid
 * (may be NULL) the process that keeps them. DOCA_ERROR_NOT_FOUND when there is no such link or
 * no live process keeps that end's counters; DOCA_ERROR_INVALID_VALUE for NULL;
 * DOCA_ERROR_INITIALIZATION as above. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_link_stats_read(const char *link_name, uint8_t is_master, struct softdpu_link_stats *stats,
				     uint32_t *pid);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_LINK_H_ */
