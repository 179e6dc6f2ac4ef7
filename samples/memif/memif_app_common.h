/*
 * Shared by the memif example applications: connection options and set-up, signals, clocks,
 * and the numbered test frame format that the generator writes and the sink checks.
 */
#ifndef SOFTDPU_SAMPLES_MEMIF_APP_COMMON_H
#define SOFTDPU_SAMPLES_MEMIF_APP_COMMON_H

#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include <libmemif.h>

/* Largest frame the applications handle (jumbo 9000 B plus slack), and chain length cap. */
#define MEMIF_APP_MAX_FRAME 16384
#define MEMIF_APP_MAX_BURST 256
#define MEMIF_APP_MAX_SEGMENTS 64

/* Connection options common to every application. */
struct memif_app_options {
	int is_master;           /* 1 = server (listens), 0 = client (connects, creates the memory) */
	const char *socket_path; /* NULL = libmemif's default socket; "@name" = abstract */
	uint32_t interface_id;
	const char *secret; /* NULL = none */
	const char *if_name;
	uint16_t buffer_size;   /* 0 = default (2048) */
	uint8_t log2_ring_size; /* 0 = default (10) */
	memif_interface_mode_t mode;
	double connect_timeout_s; /* give up when not connected within this time */
	int interrupt;            /* receive in interrupt mode rather than polling */
	int quiet;
};

/* One interface, its socket and connection state. */
struct memif_app {
	const char *prog;
	struct memif_app_options options;
	memif_socket_handle_t socket;
	memif_conn_handle_t conn;
	volatile int connected;
	int link_lost; /* the peer went away after connecting */
	/* Called (from memif_poll_event) for interrupt-mode receive, with the app's context. */
	int (*on_rx_interrupt)(struct memif_app *app, uint16_t qid);
	void *user;
};

/* Set by SIGINT/SIGTERM: finish up and report. */
extern volatile sig_atomic_t memif_app_stop_requested;

/* getopt_long entries for the common options (values >= 0x100; see memif_app_parse_common). */
#define MEMIF_APP_COMMON_LONG_OPTIONS                                                                                  \
	{"role", required_argument, 0, 0x100}, {"socket", required_argument, 0, 0x101},                                \
	    {"id", required_argument, 0, 0x102}, {"secret", required_argument, 0, 0x103},                              \
	    {"name", required_argument, 0, 0x104}, {"buffer-size", required_argument, 0, 0x105},                       \
	    {"ring-log2", required_argument, 0, 0x106}, {"mode", required_argument, 0, 0x107},                         \
	    {"connect-timeout", required_argument, 0, 0x108}, {"interrupt", no_argument, 0, 0x109},                    \
	    {"quiet", no_argument, 0, 0x10a},                                                                          \
	{                                                                                                              \
		"help", no_argument, 0, 'h'                                                                            \
	}

#define MEMIF_APP_COMMON_USAGE                                                                                         \
	"connection options:\n"                                                                                        \
	"  --role server|client    memif role (server = master, listens; client = slave; default client)\n"            \
	"  --socket PATH|@NAME     control socket (@NAME: abstract; default /run/vpp/memif.sock)\n"                    \
	"  --id N                  interface id (default 0)\n"                                                         \
	"  --secret STRING         shared secret (up to 24 bytes)\n"                                                   \
	"  --name NAME             interface name (default memif0)\n"                                                  \
	"  --buffer-size N         buffer size, a power of two (default 2048)\n"                                       \
	"  --ring-log2 N           log2 of the ring size (default 10)\n"                                               \
	"  --mode ethernet|ip|punt interface mode (default ethernet)\n"                                                \
	"  --connect-timeout S     fail when not connected within S seconds (default 10)\n"                            \
	"  --interrupt             receive in interrupt mode (default: polling)\n"                                     \
	"  --quiet                 print only the final report and errors\n"

void memif_app_default_options(struct memif_app_options *options);
/* Handles a common option; returns 0, -1 on a bad value (message printed), 1 if not common. */
int memif_app_parse_common(struct memif_app_options *options, const char *prog, int opt, const char *arg);

/* Parse helpers: print "prog: bad NAME 'arg'" and return -1 on failure. */
int memif_app_parse_u64(const char *prog, const char *name, const char *arg, uint64_t min, uint64_t max, uint64_t *out);
int memif_app_parse_seconds(const char *prog, const char *name, const char *arg, double *out);

/* memif_init, socket, interface. Returns 0, or 1 with a message. */
int memif_app_open(struct memif_app *app, const char *prog, const struct memif_app_options *options);
/* Handles control events until connected (1 on timeout, stop or error, with a message). */
int memif_app_wait_connected(struct memif_app *app);
/* Handles pending control events without waiting. Returns 0, or 1 with a message if the link dropped. */
int memif_app_service(struct memif_app *app);
/* Deletes the interface and socket and releases libmemif. */
void memif_app_close(struct memif_app *app);
/*
 * Buffers a frame of frame_len bytes needs on tx queue 0. memif_buffer_alloc's count is in
 * buffers, not frames, so the caller must know the buffer size: ours as a client; as a server
 * the client's, assumed equal to ours (--buffer-size; 2048 is the default of libmemif and DPDK).
 */
uint16_t memif_app_buffers_per_frame(const struct memif_app *app, uint32_t frame_len);
/* Waits until the peer has taken everything queued on tx queue 0 (or timeout_s passed). */
void memif_app_drain_tx(struct memif_app *app, double timeout_s);

void memif_app_install_signal_handlers(void);
double memif_app_now(void);

/*
 * The test frame (all offsets from the frame start):
 *   0  destination MAC, 6 source MAC, 12 EtherType 0x88b5 (local experimental)
 *   14 magic "SDPM", 18 sequence number (u64 little endian), 26 frame length (u32 little endian)
 *   30 pattern: the byte at offset k is (uint8_t)(sequence + k)
 * An echo peer may rewrite the MAC addresses; everything from offset 12 on is checked.
 */
#define MEMIF_APP_FRAME_HEADER 30
#define MEMIF_APP_FRAME_MIN 32
#define MEMIF_APP_ETHERTYPE 0x88b5

/* Writes bytes [offset, offset + len) of frame seq of total length frame_len into dst. */
void memif_app_frame_write(uint64_t seq, uint32_t frame_len, uint32_t offset, uint8_t *dst, uint32_t len);
/* The pattern is written with 32-byte stores where the CPU has AVX2; narrow != 0 keeps it to
 * 16-byte stores (so tests reach both, and A/B runs can compare them). */
void memif_app_frame_use_narrow_stores(int narrow);

enum memif_app_verify { MEMIF_APP_VERIFY_NONE, MEMIF_APP_VERIFY_HEADER, MEMIF_APP_VERIFY_FULL };

/*
 * Checks received frames piece by piece, as they arrive in chained buffers: feed every buffer in
 * order; the last buffer of a frame (no NEXT flag) completes it.
 */
struct memif_app_checker {
	enum memif_app_verify verify;
	uint32_t expected_len; /* 0 = any length */
	/* per-frame state */
	uint32_t offset;
	uint8_t header[MEMIF_APP_FRAME_HEADER];
	int frame_bad;
	/* totals */
	uint64_t frames, bytes, next_seq, lost, reordered, corrupt, foreign;
	uint64_t first_error_seq;
	char first_error[160];
};

void memif_app_checker_init(struct memif_app_checker *checker, enum memif_app_verify verify, uint32_t expected_len);
/* Feeds one buffer of a frame; last = this buffer ends the frame. */
void memif_app_checker_feed(struct memif_app_checker *checker, const uint8_t *data, uint32_t len, int last);
/* Counts frames never received up to total (call once at the end when the total is known). */
void memif_app_checker_finish(struct memif_app_checker *checker, uint64_t total);
int memif_app_checker_failed(const struct memif_app_checker *checker);
void memif_app_checker_report(const struct memif_app_checker *checker, FILE *out, const char *who);

#endif
