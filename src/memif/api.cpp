// The libmemif 3.1 C API: argument checks, then calls into the database and connection classes.
#include "memif/database.hpp"

#include <libmemif.h>

#include <new>

using namespace softdpu::memif;

namespace {

Database *g_database = nullptr; // memif_init's database

template <typename Body> int guarded(Body body)
{
	try {
		return body();
	} catch (const std::bad_alloc &) {
		return MEMIF_ERR_NOMEM;
	} catch (...) {
		return MEMIF_ERR_SYSCALL;
	}
}

Database *as_database(void *handle)
{
	auto *database = static_cast<Database *>(handle);
	return database != nullptr && database->valid() ? database : nullptr;
}

Connection *as_connection(void *handle)
{
	auto *connection = static_cast<Connection *>(handle);
	return connection != nullptr && connection->valid() ? connection : nullptr;
}

MemifSocket *as_socket(void *handle)
{
	auto *socket = static_cast<MemifSocket *>(handle);
	return socket != nullptr && socket->valid() ? socket : nullptr;
}

int create_database(Database **out, void *private_ctx, memif_control_fd_update_t *on_control_fd_update,
		    const char *app_name, memif_alloc_t *alloc, memif_realloc_t *realloc_fn, memif_free_t *free_fn)
{
	AllocatorFns fns;
	if (alloc != nullptr)
		fns.alloc = alloc;
	if (realloc_fn != nullptr)
		fns.realloc = realloc_fn;
	if (free_fn != nullptr)
		fns.free = free_fn;
	Database *database = db_new<Database>(fns, fns, on_control_fd_update, app_name, private_ctx);
	if (database == nullptr)
		return MEMIF_ERR_NOMEM;
	const int err = database->start();
	if (err != MEMIF_ERR_SUCCESS) {
		const AllocatorFns copy = database->allocator();
		db_delete(copy, database);
		return err;
	}
	*out = database;
	return MEMIF_ERR_SUCCESS;
}

void destroy_database(Database *database)
{
	const AllocatorFns fns = database->allocator(); // the database's own copy dies with it
	db_delete(fns, database);
}

// Messages indexed by memif_err_t.
char g_messages[][48] = {
    "Success",
    "Unspecified syscall error",
    "Connection refused",
    "Permission denied",
    "File not found",
    "System limit on open files reached",
    "Per-process limit on open files reached",
    "Connection already requested",
    "File descriptor is not a socket or would block",
    "Bad file descriptor",
    "Out of memory",
    "Invalid argument",
    "Memif connection handle does not exist",
    "Memif connection handle already exists",
    "Callback memif_control_fd_update_t error",
    "File specified by socket path is not a socket",
    "Missing shared memory file descriptor",
    "Invalid cookie on ring",
    "Ring buffer full",
    "Not enough memif buffers",
    "Memif details need a larger buffer",
    "Failed to send an interrupt",
    "Malformed message received",
    "Invalid queue id",
    "Incompatible memif protocol version",
    "Unmatched interface id",
    "Slave cannot accept connection requests",
    "Interface is already connected",
    "Mode mismatch",
    "Secret mismatch",
    "Secret required",
    "Limit on the number of regions reached",
    "Limit on the number of rings reached",
    "Missing interrupt file descriptor",
    "Disconnect received",
    "Peer interface disconnected",
    "Unknown message type",
    "Memif event polling was cancelled",
    "Ring size too large",
    "Private headers not supported",
};
static_assert(sizeof g_messages / sizeof g_messages[0] == MEMIF_ERR_PRIVHDR + 1);
char g_unknown_error[] = "Unknown error";

} // namespace

extern "C" {

uint16_t memif_get_version(void)
{
	return kProtocolVersion;
}

char *memif_strerror(int err_code)
{
	if (err_code < 0 || err_code > MEMIF_ERR_PRIVHDR)
		return g_unknown_error;
	return g_messages[err_code];
}

int memif_init(memif_control_fd_update_t *on_control_fd_update, char *app_name, memif_alloc_t *memif_alloc,
	       memif_realloc_t *memif_realloc, memif_free_t *memif_free)
{
	return guarded([&] {
		if (g_database != nullptr)
			return int(MEMIF_ERR_ALREADY);
		Database *database = nullptr;
		const int err = create_database(&database, nullptr, on_control_fd_update, app_name, memif_alloc,
						memif_realloc, memif_free);
		if (err != MEMIF_ERR_SUCCESS)
			return err;
		database->enable_default_socket();
		g_database = database;
		return int(MEMIF_ERR_SUCCESS);
	});
}

int memif_per_thread_init(memif_per_thread_main_handle_t *pt_main, void *private_ctx,
			  memif_control_fd_update_t *on_control_fd_update, char *app_name, memif_alloc_t *memif_alloc,
			  memif_realloc_t *memif_realloc, memif_free_t *memif_free)
{
	if (pt_main == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return guarded([&] {
		Database *database = nullptr;
		const int err = create_database(&database, private_ctx, on_control_fd_update, app_name, memif_alloc,
						memif_realloc, memif_free);
		if (err == MEMIF_ERR_SUCCESS)
			*pt_main = database;
		return err;
	});
}

int memif_cleanup(void)
{
	if (g_database != nullptr) {
		destroy_database(g_database);
		g_database = nullptr;
	}
	return MEMIF_ERR_SUCCESS;
}

int memif_per_thread_cleanup(memif_per_thread_main_handle_t *pt_main)
{
	if (pt_main == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	Database *database = as_database(*pt_main);
	if (database == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	destroy_database(database);
	*pt_main = nullptr;
	return MEMIF_ERR_SUCCESS;
}

void memif_register_external_region(memif_add_external_region_t *ar, memif_get_external_region_addr_t *gr,
				    memif_del_external_region_t *dr, memif_get_external_buffer_offset_t *go)
{
	if (g_database != nullptr)
		g_database->register_external_region(ar, gr, dr, go);
}

void memif_per_thread_register_external_region(memif_per_thread_main_handle_t pt_main, memif_add_external_region_t *ar,
					       memif_get_external_region_addr_t *gr, memif_del_external_region_t *dr,
					       memif_get_external_buffer_offset_t *go)
{
	if (Database *database = as_database(pt_main))
		database->register_external_region(ar, gr, dr, go);
}

int memif_set_connection_request_timer(struct itimerspec timer)
{
	if (g_database == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return g_database->set_connection_request_timer(timer);
}

int memif_per_thread_set_connection_request_timer(memif_per_thread_main_handle_t pt_main, struct itimerspec timer)
{
	Database *database = as_database(pt_main);
	if (database == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return database->set_connection_request_timer(timer);
}

int memif_create_socket(memif_socket_handle_t *sock, const char *filename, void *private_ctx)
{
	if (g_database == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return memif_per_thread_create_socket(g_database, sock, filename, private_ctx);
}

int memif_per_thread_create_socket(memif_per_thread_main_handle_t pt_main, memif_socket_handle_t *sock,
				   const char *filename, void *private_ctx)
{
	Database *database = as_database(pt_main);
	if (database == nullptr || sock == nullptr || filename == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return guarded([&] {
		MemifSocket *socket = nullptr;
		const int err = database->create_socket(filename, private_ctx, &socket);
		if (err == MEMIF_ERR_SUCCESS)
			*sock = socket;
		return err;
	});
}

int memif_delete_socket(memif_socket_handle_t *sock)
{
	if (sock == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	MemifSocket *socket = as_socket(*sock);
	if (socket == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	const int err = socket->database().delete_socket(socket);
	if (err == MEMIF_ERR_SUCCESS)
		*sock = nullptr;
	return err;
}

const char *memif_get_socket_filename(memif_socket_handle_t sock)
{
	MemifSocket *socket = as_socket(sock);
	return socket != nullptr ? socket->filename() : nullptr;
}

int memif_create(memif_conn_handle_t *conn, memif_conn_args_t *args, memif_connection_update_t *on_connect,
		 memif_connection_update_t *on_disconnect, memif_interrupt_t *on_interrupt, void *private_ctx)
{
	if (conn == nullptr || args == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return guarded([&] {
		MemifSocket *socket = nullptr;
		if (args->socket != nullptr) {
			socket = as_socket(args->socket);
		} else if (g_database != nullptr) {
			socket = g_database->default_socket();
		}
		if (socket == nullptr)
			return int(MEMIF_ERR_INVAL_ARG);
		if (args->log2_ring_size > kMaxLog2RingSize)
			return int(MEMIF_ERR_MAX_RING);
		if (unsigned(args->mode) > MEMIF_INTERFACE_MODE_PUNT_INJECT)
			return int(MEMIF_ERR_INVAL_ARG);
		memif_conn_args_t config = *args;
		config.socket = socket;
		if (config.num_s2m_rings == 0)
			config.num_s2m_rings = 1;
		if (config.num_m2s_rings == 0)
			config.num_m2s_rings = 1;
		if (config.buffer_size == 0)
			config.buffer_size = 2048;
		if (config.log2_ring_size == 0)
			config.log2_ring_size = 10;
		config.is_master = config.is_master != 0 ? 1 : 0;
		// Descriptor offsets are 32-bit: all buffers must lie in the first 4 GiB of their region.
		const uint64_t buffer_area = uint64_t(config.buffer_size) * (uint64_t{1} << config.log2_ring_size) *
					     (uint64_t(config.num_s2m_rings) + config.num_m2s_rings);
		if (buffer_area > UINT32_MAX)
			return int(MEMIF_ERR_INVAL_ARG);

		Database &database = socket->database();
		Connection *connection = db_new<Connection>(database.allocator(), database, *socket, config, on_connect,
							    on_disconnect, on_interrupt, private_ctx);
		if (connection == nullptr)
			return int(MEMIF_ERR_NOMEM);
		int err = socket->attach(*connection);
		if (err != MEMIF_ERR_SUCCESS) {
			db_delete(database.allocator(), connection);
			return err;
		}
		if (!connection->is_master()) {
			err = database.add_slave();
			if (err != MEMIF_ERR_SUCCESS) {
				socket->detach(*connection);
				db_delete(database.allocator(), connection);
				return err;
			}
			connection->request_connection(); // an absent server is retried on the timer
		}
		*conn = connection;
		return int(MEMIF_ERR_SUCCESS);
	});
}

int memif_delete(memif_conn_handle_t *conn)
{
	if (conn == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	Connection *connection = as_connection(*conn);
	if (connection == nullptr)
		return MEMIF_ERR_NOCONN;
	Database &database = connection->database();
	// As libmemif does: a connected interface is disconnected first, its disconnect callback included.
	connection->disconnect(MEMIF_ERR_SUCCESS, "Interface deleted", true, true);
	if (!connection->is_master())
		database.remove_slave();
	connection->socket().detach(*connection);
	db_delete(database.allocator(), connection);
	*conn = nullptr;
	return MEMIF_ERR_SUCCESS;
}

int memif_request_connection(memif_conn_handle_t conn)
{
	Connection *connection = as_connection(conn);
	if (connection == nullptr)
		return MEMIF_ERR_NOCONN;
	if (connection->is_master())
		return MEMIF_ERR_INVAL_ARG;
	return guarded([&] { return connection->request_connection(); });
}

int memif_control_fd_handler(int fd, uint8_t events)
{
	if (g_database == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return guarded([&] { return g_database->handle_fd_event(fd, events); });
}

int memif_per_thread_control_fd_handler(memif_per_thread_main_handle_t pt_main, int fd, uint8_t events)
{
	Database *database = as_database(pt_main);
	if (database == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return guarded([&] { return database->handle_fd_event(fd, events); });
}

int memif_poll_event(int timeout)
{
	if (g_database == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return guarded([&] { return g_database->poll_event(timeout); });
}

int memif_per_thread_poll_event(memif_per_thread_main_handle_t pt_main, int timeout)
{
	Database *database = as_database(pt_main);
	if (database == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return guarded([&] { return database->poll_event(timeout); });
}

int memif_cancel_poll_event(void)
{
	if (g_database == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return g_database->cancel_poll_event();
}

int memif_per_thread_cancel_poll_event(memif_per_thread_main_handle_t pt_main)
{
	Database *database = as_database(pt_main);
	if (database == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return database->cancel_poll_event();
}

int memif_get_queue_efd(memif_conn_handle_t conn, uint16_t qid, int *fd)
{
	Connection *connection = as_connection(conn);
	if (connection == nullptr)
		return MEMIF_ERR_NOCONN;
	if (fd == nullptr)
		return MEMIF_ERR_INVAL_ARG;
	return connection->datapath().get_queue_efd(qid, fd);
}

int memif_set_rx_mode(memif_conn_handle_t conn, memif_rx_mode_t rx_mode, uint16_t qid)
{
	Connection *connection = as_connection(conn);
	if (connection == nullptr)
		return MEMIF_ERR_NOCONN;
	return connection->datapath().set_rx_mode(rx_mode, qid);
}

int memif_get_details(memif_conn_handle_t conn, memif_details_t *md, char *buf, ssize_t buflen)
{
	Connection *connection = as_connection(conn);
	if (connection == nullptr)
		return MEMIF_ERR_NOCONN;
	if (md == nullptr || (buf == nullptr && buflen > 0))
		return MEMIF_ERR_INVAL_ARG;
	return connection->get_details(md, buf, buflen);
}

int memif_buffer_alloc(memif_conn_handle_t conn, uint16_t qid, memif_buffer_t *bufs, uint16_t count,
		       uint16_t *count_out, uint16_t size)
{
	Connection *connection = as_connection(conn);
	if (connection == nullptr)
		return MEMIF_ERR_NOCONN;
	if (count_out == nullptr || (bufs == nullptr && count > 0))
		return MEMIF_ERR_INVAL_ARG;
	return connection->datapath().buffer_alloc(qid, bufs, count, count_out, size);
}

int memif_buffer_enq_tx(memif_conn_handle_t conn, uint16_t qid, memif_buffer_t *bufs, uint16_t count,
			uint16_t *count_out)
{
	Connection *connection = as_connection(conn);
	if (connection == nullptr)
		return MEMIF_ERR_NOCONN;
	if (count_out == nullptr || (bufs == nullptr && count > 0))
		return MEMIF_ERR_INVAL_ARG;
	return connection->datapath().buffer_enq_tx(qid, bufs, count, count_out);
}

int memif_tx_burst(memif_conn_handle_t conn, uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *tx)
{
	Connection *connection = as_connection(conn);
	if (connection == nullptr)
		return MEMIF_ERR_NOCONN;
	if (tx == nullptr || (bufs == nullptr && count > 0))
		return MEMIF_ERR_INVAL_ARG;
	return connection->datapath().tx_burst(qid, bufs, count, tx);
}

int memif_rx_burst(memif_conn_handle_t conn, uint16_t qid, memif_buffer_t *bufs, uint16_t count, uint16_t *rx)
{
	Connection *connection = as_connection(conn);
	if (connection == nullptr)
		return MEMIF_ERR_NOCONN;
	if (rx == nullptr || (bufs == nullptr && count > 0))
		return MEMIF_ERR_INVAL_ARG;
	return connection->datapath().rx_burst(qid, bufs, count, rx);
}

int memif_refill_queue(memif_conn_handle_t conn, uint16_t qid, uint16_t count, uint16_t headroom)
{
	Connection *connection = as_connection(conn);
	if (connection == nullptr)
		return MEMIF_ERR_NOCONN;
	return connection->datapath().refill_queue(qid, count, headroom);
}

} // extern "C"
