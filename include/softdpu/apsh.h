/*
 * softdpu extensions to doca_apsh.h (App Shield), in libdoca_apsh.
 *
 * User YARA rules: DOCA 2.5 scans only with its three built-in rules (enum doca_apsh_yara_rule).
 * softdpu also compiles rule text or rule files with libyara and scans a process with them,
 * using the system's scan window size and step exactly as doca_apsh_yara_get does; the results
 * are the same doca_apsh_yara objects (read with doca_apsh_yara_info_get, freed with
 * doca_apsh_yara_free).
 * Exec hash maps: the builder of the files attestation reads (below).
 * Namespaces and containers: what DOCA's process and container attributes do not cover (below).
 */
#ifndef SOFTDPU_APSH_H_
#define SOFTDPU_APSH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../doca_apsh.h"
#include "../doca_compat.h"
#include "../doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compiled user rules. */
struct doca_apsh_user_yara_rules;

/* Compiles YARA rule text. INVALID_VALUE for NULL arguments or rules that do not compile (the
 * SDK log has libyara's message with the line); NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_user_yara_rules_create_from_string(const char *rules_text,
							  struct doca_apsh_user_yara_rules **rules);

/* The same for a rule file (INVALID_VALUE also when it cannot be read). */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_user_yara_rules_create_from_file(const char *rules_path,
							struct doca_apsh_user_yara_rules **rules);

/* Declares that every rule's condition can only become true, never false, when more bytes are
 * scanned ("any of them", "all of them", "N of them"; no "not", no counts compared with "<",
 * no filesize). Scans then skip the windows of memory in which no rule matches as a whole, which
 * is much faster. Default: false. INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_user_yara_rules_set_monotonic(struct doca_apsh_user_yara_rules *rules, bool monotonic);

/* Rules stay valid for scans still running elsewhere; NULL is ignored. */
DOCA_EXPERIMENTAL
void doca_apsh_user_yara_rules_destroy(struct doca_apsh_user_yara_rules *rules);

/* doca_apsh_yara_get with user rules: every rule of the set counts. Same results and errors. */
DOCA_EXPERIMENTAL
doca_error_t doca_apsh_user_yara_get(struct doca_apsh_process *process, const struct doca_apsh_user_yara_rules *rules,
				     uint64_t scan_type, struct doca_apsh_yara ***yara_matches, int *yara_matches_size);

/*
 * Exec hash maps: the file doca_apsh_attestation_get compares a process's executable pages with
 * (its exec_hash_map_path; format in docs/apsh.md). softdpu-exec-hash-build-map builds them with
 * these calls.
 */
struct softdpu_apsh_exec_hash_map;

/* An empty map. INVALID_VALUE for NULL; NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_exec_hash_map_create(struct softdpu_apsh_exec_hash_map **map);

/* Reads the regular file file_path (at most 4 GiB) and adds the SHA-256 of each 4 KiB page of
 * its executable segments (an ELF64 file) or of every page (any other file), recorded under
 * recorded_path, the path the guest sees (NULL: file_path).
 * Errors: INVALID_VALUE for NULL map or file_path, or a malformed ELF file; IO_FAILED when the
 * file cannot be read (not a regular file, missing, unreadable, too big); FULL when the map has
 * 65536 files already; NO_MEMORY. On error the map is unchanged, and
 * softdpu_apsh_exec_hash_map_get_error says why. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_exec_hash_map_add_file(struct softdpu_apsh_exec_hash_map *map, const char *file_path,
						 const char *recorded_path);

/* The number of files in the map. INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_exec_hash_map_get_num_files(const struct softdpu_apsh_exec_hash_map *map,
						      uint32_t *num_files);

/* The map in its file format (JSON text, NUL-terminated; *length without the NUL), valid until
 * the map changes or is destroyed. INVALID_VALUE for NULL; NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_exec_hash_map_format(struct softdpu_apsh_exec_hash_map *map, const char **text,
					       size_t *length);

/* Why the last failed softdpu_apsh_exec_hash_map_add_file failed ("" when none did); valid until
 * the next call on the map. NULL for a NULL map. */
DOCA_EXPERIMENTAL
const char *softdpu_apsh_exec_hash_map_get_error(const struct softdpu_apsh_exec_hash_map *map);

/* NULL is ignored. */
DOCA_EXPERIMENTAL
void softdpu_apsh_exec_hash_map_destroy(struct softdpu_apsh_exec_hash_map *map);

/*
 * A consistent view of a running QEMU guest: pause it over QMP for the length of one query
 * (`softdpu apsh --consistent`). memory_source is a memory source in the syntax of
 * SOFTDPU_APSH_MEMORY (softdpu_memory_source_check) that carries ",qmp=<socket>"; error, when not
 * NULL, receives the reason (truncated to error_size bytes, NUL included).
 */

/* Sends QMP "stop" when the guest runs. *was_running (not NULL) tells whether it ran: resume only
 * then. INVALID_VALUE for NULL arguments, a malformed source or one without a QMP socket;
 * NOT_CONNECTED when QEMU cannot be reached; IO_FAILED when QEMU refuses; TIME_OUT when it does not
 * answer within 5 s. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_guest_pause(const char *memory_source, bool *was_running, char *error, size_t error_size);

/* Sends QMP "cont". Errors as softdpu_apsh_guest_pause. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_guest_resume(const char *memory_source, char *error, size_t error_size);

/*
 * Namespaces and containers beyond DOCA's attributes (DOCA_APSH_PROCESS_LINUX_NS_PID/MNT/NET and
 * DOCA_APSH_CONTAINER_ID are in doca_apsh_attr.h). Read like DOCA's attributes:
 *   uint32_t uts = softdpu_apsh_process_info_get(process, SOFTDPU_APSH_PROCESS_LINUX_NS_UTS);
 * Values stay valid until the process or container array is freed. Namespaces are inode numbers
 * as the links in /proc/PID/ns show them, 0 when unknown (an exiting process, a kernel without them).
 */
enum softdpu_apsh_process_attr {
	SOFTDPU_APSH_PROCESS_LINUX_NS_UTS = 0x53440000,
	SOFTDPU_APSH_PROCESS_LINUX_NS_IPC = 0x53440001,
	SOFTDPU_APSH_PROCESS_LINUX_NS_USER = 0x53440002,
	SOFTDPU_APSH_PROCESS_LINUX_NS_CGROUP = 0x53440003,
	SOFTDPU_APSH_PROCESS_LINUX_NS_PID_NR = 0x53440004,    /* the pid inside its own pid namespace */
	SOFTDPU_APSH_PROCESS_LINUX_CGROUP = 0x53440005,       /* cgroup v2 path, "/" at the root */
	SOFTDPU_APSH_PROCESS_LINUX_CONTAINER_ID = 0x53440006, /* the runtime's ID in the cgroup, or "" */
};

typedef uint32_t SOFTDPU_APSH_PROCESS_LINUX_NS_UTS_TYPE;
typedef uint32_t SOFTDPU_APSH_PROCESS_LINUX_NS_IPC_TYPE;
typedef uint32_t SOFTDPU_APSH_PROCESS_LINUX_NS_USER_TYPE;
typedef uint32_t SOFTDPU_APSH_PROCESS_LINUX_NS_CGROUP_TYPE;
typedef uint32_t SOFTDPU_APSH_PROCESS_LINUX_NS_PID_NR_TYPE;
typedef const char *SOFTDPU_APSH_PROCESS_LINUX_CGROUP_TYPE;
typedef const char *SOFTDPU_APSH_PROCESS_LINUX_CONTAINER_ID_TYPE;

/* NULL (and an SDK error) for a NULL process or an unknown attribute. */
DOCA_EXPERIMENTAL
const void *softdpu_apsh_process_attr_get(struct doca_apsh_process *process, enum softdpu_apsh_process_attr attr);
#define softdpu_apsh_process_info_get(process, attr)                                                                   \
	((attr##_TYPE)(uintptr_t)softdpu_apsh_process_attr_get(process, attr))

enum softdpu_apsh_container_attr {
	SOFTDPU_APSH_CONTAINER_RUNTIME = 0x53440100, /* "docker", "cri-o", "containerd", "podman", "lxc" or "" */
	/* the cgroup and namespaces of its first process in a pid namespace of its own, else of its first */
	SOFTDPU_APSH_CONTAINER_CGROUP = 0x53440101,
	SOFTDPU_APSH_CONTAINER_NS_PID = 0x53440102,
	SOFTDPU_APSH_CONTAINER_NS_MNT = 0x53440103,
	SOFTDPU_APSH_CONTAINER_NS_NET = 0x53440104,
	SOFTDPU_APSH_CONTAINER_PROCESSES = 0x53440105, /* how many processes it has */
};

typedef const char *SOFTDPU_APSH_CONTAINER_RUNTIME_TYPE;
typedef const char *SOFTDPU_APSH_CONTAINER_CGROUP_TYPE;
typedef uint32_t SOFTDPU_APSH_CONTAINER_NS_PID_TYPE;
typedef uint32_t SOFTDPU_APSH_CONTAINER_NS_MNT_TYPE;
typedef uint32_t SOFTDPU_APSH_CONTAINER_NS_NET_TYPE;
typedef uint32_t SOFTDPU_APSH_CONTAINER_PROCESSES_TYPE;

/* NULL (and an SDK error) for a NULL container or an unknown attribute. */
DOCA_EXPERIMENTAL
const void *softdpu_apsh_container_attr_get(struct doca_apsh_container *container,
					    enum softdpu_apsh_container_attr attr);
#define softdpu_apsh_container_info_get(container, attr)                                                               \
	((attr##_TYPE)(uintptr_t)softdpu_apsh_container_attr_get(container, attr))

/* The container's connections, read afresh as doca_apsh_netscan_get reads them: the sockets in
 * its processes' network namespaces other than the host's, and those its processes hold in the
 * host's. Freed with doca_apsh_netscan_free. INVALID_VALUE for NULL arguments; other errors as
 * doca_apsh_netscan_get. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_container_netscan_get(struct doca_apsh_container *container,
						struct doca_apsh_netscan ***connections, int *connections_size);

/*
 * Continuous watch (`softdpu apsh watch`): what DOCA's App Shield agent does, as a stream. A watch
 * keeps the state of a started system's guest as its last poll saw it; each poll reads the guest
 * again (only what the watched kinds need) and reports what changed, one event per change:
 *
 *   softdpu_apsh_watch_create(system, SOFTDPU_APSH_WATCH_KIND_DEFAULT, &watch);
 *   softdpu_apsh_watch_poll(watch, on_event, ctx, NULL);   (the first poll: the baseline, no events)
 *   every interval: softdpu_apsh_watch_poll(watch, on_event, ctx, &count);
 *   softdpu_apsh_watch_destroy(watch);
 *
 * Identities: a process is its pid and start time (a reused pid is a new process); a module its
 * name and address; a listening socket its network namespace, protocol, family, address and port;
 * an attestation failure, YARA match or injection belongs to its process and its address, and is
 * reported once while it lasts (again when it comes back after having gone).
 */
struct softdpu_apsh_watch;

/* What a watch looks at (bits; softdpu_apsh_watch_create's kinds). */
#define SOFTDPU_APSH_WATCH_KIND_PROCESSES (1u << 0)   /* processes started and exited */
#define SOFTDPU_APSH_WATCH_KIND_MODULES (1u << 1)     /* kernel modules loaded and unloaded */
#define SOFTDPU_APSH_WATCH_KIND_SOCKETS (1u << 2)     /* listening sockets opened and closed */
#define SOFTDPU_APSH_WATCH_KIND_ATTESTATION (1u << 3) /* needs softdpu_apsh_watch_set_hash_map */
#define SOFTDPU_APSH_WATCH_KIND_YARA (1u << 4)        /* needs one of the softdpu_apsh_watch_set_*yara_rules */
#define SOFTDPU_APSH_WATCH_KIND_INJECTIONS (1u << 5)  /* as doca_apsh_injection_detect_get finds them */
#define SOFTDPU_APSH_WATCH_KIND_ALL (0x3fu)
#define SOFTDPU_APSH_WATCH_KIND_DEFAULT                                                                                \
	(SOFTDPU_APSH_WATCH_KIND_PROCESSES | SOFTDPU_APSH_WATCH_KIND_MODULES | SOFTDPU_APSH_WATCH_KIND_SOCKETS |       \
	 SOFTDPU_APSH_WATCH_KIND_INJECTIONS)

enum softdpu_apsh_watch_event_type {
	SOFTDPU_APSH_WATCH_PROCESS_STARTED = 1,
	SOFTDPU_APSH_WATCH_PROCESS_EXITED = 2,
	SOFTDPU_APSH_WATCH_MODULE_LOADED = 3,
	SOFTDPU_APSH_WATCH_MODULE_UNLOADED = 4,
	SOFTDPU_APSH_WATCH_SOCKET_LISTENING = 5, /* a TCP socket in LISTEN, or an unconnected bound UDP socket */
	SOFTDPU_APSH_WATCH_SOCKET_CLOSED = 6,    /* such a socket is gone */
	/* an executable area of a file in the hash map has a page in memory that does not match it */
	SOFTDPU_APSH_WATCH_ATTESTATION_FAILURE = 7,
	SOFTDPU_APSH_WATCH_YARA_MATCH = 8,
	SOFTDPU_APSH_WATCH_INJECTION = 9,
};

/* One change. Strings are never NULL ("" when they do not apply) and, like the event, valid only
 * during the callback. Fields that do not apply to the type are 0. */
struct softdpu_apsh_watch_event {
	enum softdpu_apsh_watch_event_type type;
	uint64_t timestamp_ns; /* CLOCK_REALTIME of the poll that saw the change */
	/* The process (every type but the module events): */
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_time_ns; /* the guest's CLOCK_MONOTONIC at its fork (0 when the kernel lacks it) */
	const char *comm;
	bool kernel_thread;
	/* Modules: name, address, size. Attestation and injections: the area (start, length, file path
	 * or "" for anonymous memory, protection "rwx"). YARA: rule name, window address and length. */
	const char *name;
	uint64_t address;
	uint64_t size;
	const char *path;
	const char *protection;
	/* Attestation: the area's pages in memory and how many of them match the map. */
	uint32_t pages_present;
	uint32_t matching_pages;
	/* Sockets: "tcp" or "udp", 4 or 6, local address and port, network namespace inode (0 unknown). */
	const char *protocol;
	int ip_version;
	const char *local_addr;
	uint16_t local_port;
	uint32_t net_ns;
};

typedef void (*softdpu_apsh_watch_callback)(const struct softdpu_apsh_watch_event *event, void *user_data);

/* A watch over a started system (doca_apsh_system_start). kinds: SOFTDPU_APSH_WATCH_KIND_* bits.
 * INVALID_VALUE for NULL arguments, no kind or unknown bits; BAD_STATE when the system is not
 * started; NO_MEMORY. The watch keeps the system (and its context) alive: they may be destroyed
 * first. One thread at a time may use a watch; its polls take the system's lock like the queries. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_watch_create(struct doca_apsh_system *system, uint32_t kinds,
				       struct softdpu_apsh_watch **watch);

/* The hash map attestation compares with (the file doca_apsh_attestation_get takes), read now.
 * INVALID_VALUE for NULL arguments or a map that cannot be read (the SDK log says why); NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_watch_set_hash_map(struct softdpu_apsh_watch *watch, const char *exec_hash_map_path);

/* YARA with DOCA's built-in rules (num_rules of them; 0: all three), scanning as doca_apsh_yara_get
 * with scan_type (DOCA_APSH_YARA_SCAN_VMA and/or DOCA_APSH_YARA_SCAN_HEAP). INVALID_VALUE for a NULL
 * watch, NULL rules with num_rules > 0, an unknown rule or scan type; INITIALIZATION when the
 * built-in rules cannot be compiled (libyara failed; the SDK log says why); NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_watch_set_yara_rules(struct softdpu_apsh_watch *watch, const enum doca_apsh_yara_rule *rules,
					       uint32_t num_rules, uint64_t scan_type);

/* YARA with user rules (softdpu_apsh_watch keeps them; the caller may destroy its handle).
 * INVALID_VALUE for NULL arguments or an unknown scan type (the call allocates nothing). */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_watch_set_user_yara_rules(struct softdpu_apsh_watch *watch,
						    const struct doca_apsh_user_yara_rules *rules, uint64_t scan_type);

/* Reads the guest and calls callback (when not NULL) for each change since the last successful
 * poll, in order: processes started, then modules, sockets, attestation failures, YARA matches,
 * injections; then exits, unloads and closes. The first successful poll only records the state (no
 * events). *num_events (when not NULL) receives how many there were.
 * Errors: INVALID_VALUE for a NULL watch; BAD_STATE when the attestation or YARA kind was asked for
 * without its hash map or rules; NO_MEMORY; INITIALIZATION when the guest cannot be read (QEMU
 * exited, the image went away; the SDK log says why), as doca_apsh_processes_get. After an error
 * the watch keeps the state of its last successful poll and may be polled again. A process that
 * exits while it is being read is not an error.
 * The callback must not poll its own watch: such a poll returns BAD_STATE and reports nothing. It
 * may destroy its watch (softdpu_apsh_watch_destroy): the watch is then freed when the callback
 * returns, the poll makes no more callbacks and returns DOCA_SUCCESS (*num_events counts all the
 * changes), and the watch must not be used again. Other watches may be polled from a callback. */
DOCA_EXPERIMENTAL
doca_error_t softdpu_apsh_watch_poll(struct softdpu_apsh_watch *watch, softdpu_apsh_watch_callback callback,
				     void *user_data, uint32_t *num_events);

/* NULL is ignored. */
DOCA_EXPERIMENTAL
void softdpu_apsh_watch_destroy(struct softdpu_apsh_watch *watch);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_APSH_H_ */
