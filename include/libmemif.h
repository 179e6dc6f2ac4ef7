/*
 * softdpu libmemif: the libmemif 3.1 C API (memif protocol 2.0), implemented in C++.
 *
 * Names, values, types and signatures follow the libmemif 3.1 interface so that programs
 * written for it build and run unchanged. The text and comments are softdpu's own.
 *
 * Terms: "master" is the listening side (server), "slave" the connecting side (client). The
 * slave creates all shared memory. S2M rings carry slave-to-master traffic, M2S the reverse.
 */

#ifndef _LIBMEMIF_H_
#define _LIBMEMIF_H_

/** Version of the libmemif API this library provides. */
#define LIBMEMIF_VERSION "3.1"
/** Application name used when memif_init() is given none. */
#define MEMIF_DEFAULT_APP_NAME "libmemif-app"

#include <inttypes.h>
#include <stddef.h>
#include <sys/timerfd.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Error codes returned by every libmemif function. */
typedef enum {
	MEMIF_ERR_SUCCESS = 0, /**< success */
	/* system call errors */
	MEMIF_ERR_SYSCALL,         /**< other system call error */
	MEMIF_ERR_CONNREFUSED,     /**< connection refused */
	MEMIF_ERR_ACCES,           /**< permission denied */
	MEMIF_ERR_NO_FILE,         /**< file does not exist */
	MEMIF_ERR_FILE_LIMIT,      /**< system open file limit reached */
	MEMIF_ERR_PROC_FILE_LIMIT, /**< process open file limit reached */
	MEMIF_ERR_ALREADY,         /**< connection already requested */
	MEMIF_ERR_AGAIN,           /**< fd is not a socket, or the operation would block */
	MEMIF_ERR_BAD_FD,          /**< invalid file descriptor */
	MEMIF_ERR_NOMEM,           /**< out of memory */
	/* libmemif errors */
	MEMIF_ERR_INVAL_ARG,     /**< invalid argument */
	MEMIF_ERR_NOCONN,        /**< the handle has no connection */
	MEMIF_ERR_CONN,          /**< the handle already has a connection */
	MEMIF_ERR_CB_FDUPDATE,   /**< the memif_control_fd_update_t callback failed */
	MEMIF_ERR_FILE_NOT_SOCK, /**< the socket path exists but is not a socket */
	MEMIF_ERR_NO_SHMFD,      /**< missing shared memory fd */
	MEMIF_ERR_COOKIE,        /**< wrong ring cookie */
	MEMIF_ERR_NOBUF_RING,    /**< ring full */
	MEMIF_ERR_NOBUF,         /**< not enough memif buffers */
	MEMIF_ERR_NOBUF_DET,     /**< memif_get_details needs a larger buffer */
	MEMIF_ERR_INT_WRITE,     /**< sending an interrupt failed */
	MEMIF_ERR_MFMSG,         /**< malformed message received */
	MEMIF_ERR_QID,           /**< invalid queue id */
	/* memif protocol errors */
	MEMIF_ERR_PROTO,        /**< incompatible protocol version */
	MEMIF_ERR_ID,           /**< no interface with this id */
	MEMIF_ERR_ACCSLAVE,     /**< a slave cannot accept connection requests */
	MEMIF_ERR_ALRCONN,      /**< the interface is already connected */
	MEMIF_ERR_MODE,         /**< mode mismatch */
	MEMIF_ERR_SECRET,       /**< secret mismatch */
	MEMIF_ERR_NOSECRET,     /**< secret required */
	MEMIF_ERR_MAXREG,       /**< region limit reached */
	MEMIF_ERR_MAXRING,      /**< ring limit reached */
	MEMIF_ERR_NO_INTFD,     /**< missing interrupt fd */
	MEMIF_ERR_DISCONNECT,   /**< the peer sent a disconnect */
	MEMIF_ERR_DISCONNECTED, /**< the peer interface disconnected */
	MEMIF_ERR_UNKNOWN_MSG,  /**< unknown message type */
	MEMIF_ERR_POLL_CANCEL,  /**< memif_poll_event() was cancelled */
	MEMIF_ERR_MAX_RING,     /**< ring size too large */
	MEMIF_ERR_PRIVHDR,      /**< private headers are not supported */
} memif_err_t;

/* Events on a file descriptor, exchanged with memif_control_fd_update_t and memif_control_fd_handler(). */
/** The fd is readable (handler) / watch for readability (update callback). */
#define MEMIF_FD_EVENT_READ (1 << 0)
/** The fd is writable / watch for writability. */
#define MEMIF_FD_EVENT_WRITE (1 << 1)
/** An error occurred on the fd. */
#define MEMIF_FD_EVENT_ERROR (1 << 2)
/** The fd is about to be closed: stop watching it. */
#define MEMIF_FD_EVENT_DEL (1 << 3)
/** Change the set of events watched on an fd already watched. */
#define MEMIF_FD_EVENT_MOD (1 << 4)

/** Handle of a per-thread database created by memif_per_thread_init(). */
typedef void *memif_per_thread_main_handle_t;

/** Handle of a memif interface (connection). */
typedef void *memif_conn_handle_t;

/** Handle of a memif socket. */
typedef void *memif_socket_handle_t;

/** Custom allocator: allocate size bytes. */
typedef void *(memif_alloc_t)(size_t size);

/** Custom allocator: resize the block at ptr to size bytes. */
typedef void *(memif_realloc_t)(void *ptr, size_t size);

/** Custom allocator: free a block. */
typedef void(memif_free_t)(void *ptr);

/**
 * Called when the application must start, change or stop watching fd (events: MEMIF_FD_EVENT_*).
 * private_ctx is the database's context: NULL for memif_init(), the memif_per_thread_init() one
 * otherwise.
 */
typedef int(memif_control_fd_update_t)(int fd, uint8_t events, void *private_ctx);

/** Called when an interface connects or disconnects. */
typedef int(memif_connection_update_t)(memif_conn_handle_t conn, void *private_ctx);

/** Called when the interrupt eventfd of receive queue qid fires. */
typedef int(memif_interrupt_t)(memif_conn_handle_t conn, void *private_ctx, uint16_t qid);

/* External regions: the application supplies the buffer memory. */

/** Optional: return the offset of a free buffer in the external region. */
typedef uint32_t(memif_get_external_buffer_offset_t)(void *private_ctx);

/** Slave side: create an external region of size bytes; return its address and fd. */
typedef int(memif_add_external_region_t)(void **addr, uint32_t size, int *fd, void *private_ctx);

/** Master side: map the external region received from the slave and return its address. */
typedef void *(memif_get_external_region_addr_t)(uint32_t size, int fd, void *private_ctx);

/** Release an external region. */
typedef int(memif_del_external_region_t)(void *addr, uint32_t size, int fd, void *private_ctx);

/** Register external region callbacks in the global database (go is optional). */
void memif_register_external_region(memif_add_external_region_t *ar, memif_get_external_region_addr_t *gr,
				    memif_del_external_region_t *dr, memif_get_external_buffer_offset_t *go);

/** Register external region callbacks in a per-thread database (go is optional). */
void memif_per_thread_register_external_region(memif_per_thread_main_handle_t pt_main, memif_add_external_region_t *ar,
					       memif_get_external_region_addr_t *gr, memif_del_external_region_t *dr,
					       memif_get_external_buffer_offset_t *go);

#ifndef _MEMIF_H_
/** Interface mode; both sides must agree. */
typedef enum {
	MEMIF_INTERFACE_MODE_ETHERNET = 0,
	MEMIF_INTERFACE_MODE_IP = 1,
	MEMIF_INTERFACE_MODE_PUNT_INJECT = 2,
} memif_interface_mode_t;
#endif /* _MEMIF_H_ */

/**
 * Arguments of memif_create(). socket NULL selects the default socket (global database only).
 * A zero field takes its default: 1 ring each way, 2048-byte buffers, 2^10 ring slots.
 * is_master: 1 = master, 0 = slave.
 */
typedef struct {
	memif_socket_handle_t socket; /**< default: /run/vpp/memif.sock */
	uint8_t secret[24];           /**< optional interface authentication */

	uint8_t num_s2m_rings;  /**< default 1 */
	uint8_t num_m2s_rings;  /**< default 1 */
	uint16_t buffer_size;   /**< default 2048 */
	uint8_t log2_ring_size; /**< default 10 (1024 slots) */
	uint8_t is_master;

	uint32_t interface_id;
	uint8_t interface_name[32];
	memif_interface_mode_t mode;
} memif_conn_args_t;

/** Receive mode of a queue. */
typedef enum {
	MEMIF_RX_MODE_INTERRUPT = 0, /**< the peer signals the queue eventfd */
	MEMIF_RX_MODE_POLLING        /**< no signals; the application polls */
} memif_rx_mode_t;

/** A buffer in shared memory, as handed out by alloc and rx_burst. */
typedef struct {
	uint16_t desc_index; /**< ring descriptor index */
	void *ring;          /**< the ring holding the descriptor */
	uint32_t len;        /**< data length (rx) or capacity (alloc) */
/** The packet continues in the next buffer (chained buffers). */
#define MEMIF_BUFFER_FLAG_NEXT (1 << 0)
/** The buffer comes from a receive ring. */
#define MEMIF_BUFFER_FLAG_RX (1 << 1)
	uint8_t flags;
	void *data; /**< the data in shared memory */
} memif_buffer_t;

/** Queue details, part of memif_details_t. */
typedef struct {
	uint8_t region;
	uint8_t qid;
	uint32_t ring_size;
/** The queue is in polling mode (otherwise interrupt mode). */
#define MEMIF_QUEUE_FLAG_POLLING 1
	uint16_t flags;
	uint16_t head;
	uint16_t tail;
	uint16_t buffer_size;
} memif_queue_details_t;

/** Region details, part of memif_details_t. */
typedef struct {
	uint8_t index;
	void *addr;
	uint32_t size;
	int fd;
	uint8_t is_external;
} memif_region_details_t;

/** Interface details filled by memif_get_details(); the strings point into the caller's buffer. */
typedef struct {
	uint8_t *if_name;
	uint8_t *inst_name;
	uint8_t *remote_if_name;
	uint8_t *remote_inst_name;

	uint32_t id;
	uint8_t *secret; /* optional */
	uint8_t role;    /* 0 = master, 1 = slave */
	uint8_t mode;    /* 0 = ethernet, 1 = ip, 2 = punt/inject */
	uint8_t *socket_filename;
	uint8_t regions_num;
	memif_region_details_t *regions;
	uint8_t rx_queues_num;
	uint8_t tx_queues_num;
	memif_queue_details_t *rx_queues;
	memif_queue_details_t *tx_queues;

	uint8_t *error;
	uint8_t link_up_down; /* 1 = up, 0 = down */
} memif_details_t;

/** Protocol version: (major << 8) | minor, 0x0200. */
uint16_t memif_get_version(void);

/** Return the interrupt eventfd of receive queue qid in *fd. */
int memif_get_queue_efd(memif_conn_handle_t conn, uint16_t qid, int *fd);

/** Set receive queue qid to interrupt or polling mode. */
int memif_set_rx_mode(memif_conn_handle_t conn, memif_rx_mode_t rx_mode, uint16_t qid);

/** Message for an error code (a static string; never NULL). */
char *memif_strerror(int err_code);

/** Fill *md; its strings and arrays are stored in buf (buflen bytes). */
int memif_get_details(memif_conn_handle_t conn, memif_details_t *md, char *buf, ssize_t buflen);

/**
 * Initialise the global database. With on_control_fd_update NULL, libmemif watches its fds
 * itself (memif_poll_event()); otherwise every fd is reported through the callback and the
 * application feeds events to memif_control_fd_handler(). app_name is truncated to 32 bytes;
 * NULL allocators select malloc/realloc/free.
 */
int memif_init(memif_control_fd_update_t *on_control_fd_update, char *app_name, memif_alloc_t *memif_alloc,
	       memif_realloc_t *memif_realloc, memif_free_t *memif_free);

/** Create an independent database (no default socket), returned in *pt_main. */
int memif_per_thread_init(memif_per_thread_main_handle_t *pt_main, void *private_ctx,
			  memif_control_fd_update_t *on_control_fd_update, char *app_name, memif_alloc_t *memif_alloc,
			  memif_realloc_t *memif_realloc, memif_free_t *memif_free);

/** Release the global database. */
int memif_cleanup(void);

/** Release a per-thread database and set *pt_main to NULL. */
int memif_per_thread_cleanup(memif_per_thread_main_handle_t *pt_main);

/**
 * Create an interface in the database of args->socket. A master listens on the socket; a slave
 * connects and retries periodically until connected.
 */
int memif_create(memif_conn_handle_t *conn, memif_conn_args_t *args, memif_connection_update_t *on_connect,
		 memif_connection_update_t *on_disconnect, memif_interrupt_t *on_interrupt, void *private_ctx);

/** Handle events (MEMIF_FD_EVENT_*) on an fd of the global database. */
int memif_control_fd_handler(int fd, uint8_t events);

/** Handle events on an fd of a per-thread database. */
int memif_per_thread_control_fd_handler(memif_per_thread_main_handle_t pt_main, int fd, uint8_t events);

/** Disconnect and delete an interface; set *conn to NULL. */
int memif_delete(memif_conn_handle_t *conn);

/** Slave only: move the rx buffers bufs onto tx queue qid without copying. */
int memif_buffer_enq_tx(memif_conn_handle_t conn, uint16_t qid, memif_buffer_t *bufs, uint16_t count,
			uint16_t *count_out);

/** Allocate count tx buffers of size bytes each (chained if size exceeds one buffer). */
int memif_buffer_alloc(memif_conn_handle_t conn, uint16_t qid, memif_buffer_t *bufs, uint16_t count,
		       uint16_t *count_out, uint16_t size);

/** Return count received buffers to the ring, each offset by headroom bytes. */
int memif_refill_queue(memif_conn_handle_t conn, uint16_t qid, uint16_t count, uint16_t headroom);

/** Transmit count allocated buffers; *tx returns how many were sent. */
int memif_tx_burst(memif_conn_handle_t conn, uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *tx);

/** Receive up to count buffers; *rx returns how many. Consumes the queue's interrupt event. */
int memif_rx_burst(memif_conn_handle_t conn, uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *rx);

/** Wait for and handle events of the global database: timeout in seconds, 0 = no wait, -1 = forever. */
int memif_poll_event(int timeout);

/** Per-thread version of memif_poll_event(). */
int memif_per_thread_poll_event(memif_per_thread_main_handle_t pt_main, int timeout);

/** memif_cancel_poll_event() is available. */
#define MEMIF_HAVE_CANCEL_POLL_EVENT 1
/** Make a concurrent memif_poll_event() return MEMIF_ERR_POLL_CANCEL. */
int memif_cancel_poll_event(void);

/** Per-thread version of memif_cancel_poll_event(). */
int memif_per_thread_cancel_poll_event(memif_per_thread_main_handle_t pt_main);

/** Set the period of the slaves' connection retries (see timerfd_settime). */
int memif_set_connection_request_timer(struct itimerspec timer);

/** Per-thread version of memif_set_connection_request_timer(). */
int memif_per_thread_set_connection_request_timer(memif_per_thread_main_handle_t pt_main, struct itimerspec timer);

/** Slave only: try to connect now. */
int memif_request_connection(memif_conn_handle_t conn);

/**
 * Create a socket handle for filename (a leading '@' names an abstract socket). Its role
 * (listener or client) is fixed by the first interface that uses it.
 */
int memif_create_socket(memif_socket_handle_t *sock, const char *filename, void *private_ctx);

/** Per-thread version of memif_create_socket(). */
int memif_per_thread_create_socket(memif_per_thread_main_handle_t pt_main, memif_socket_handle_t *sock,
				   const char *filename, void *private_ctx);

/** Delete a socket handle that no interface uses (else MEMIF_ERR_INVAL_ARG); set *sock to NULL. */
int memif_delete_socket(memif_socket_handle_t *sock);

/** The socket's filename (NULL for an invalid handle). */
const char *memif_get_socket_filename(memif_socket_handle_t sock);

#ifdef __cplusplus
}
#endif

#endif /* _LIBMEMIF_H_ */
