// Helpers for the libmemif unit tests: per-thread databases driven by memif_per_thread_poll_event
// in one thread, unique abstract socket names, and packet patterns.
#pragma once

#include <libmemif.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <unistd.h>

namespace memif_test {

inline std::string unique_socket_name(const char *tag)
{
	static int counter = 0;
	return "@softdpu-memif-test-" + std::to_string(getpid()) + "-" + tag + "-" + std::to_string(counter++);
}

// One interface with its own database and socket; counts its connection callbacks.
struct Endpoint {
	memif_per_thread_main_handle_t db = nullptr;
	memif_socket_handle_t socket = nullptr;
	memif_conn_handle_t conn = nullptr;
	int connects = 0;
	int disconnects = 0;
	int interrupts = 0;

	static int on_connect(memif_conn_handle_t, void *ctx)
	{
		static_cast<Endpoint *>(ctx)->connects++;
		return 0;
	}
	static int on_disconnect(memif_conn_handle_t, void *ctx)
	{
		static_cast<Endpoint *>(ctx)->disconnects++;
		return 0;
	}
	static int on_interrupt(memif_conn_handle_t, void *ctx, uint16_t)
	{
		static_cast<Endpoint *>(ctx)->interrupts++;
		return 0;
	}

	int open(const std::string &socket_name)
	{
		int err = memif_per_thread_init(&db, this, nullptr, const_cast<char *>("memif-test"), nullptr, nullptr,
						nullptr);
		if (err != MEMIF_ERR_SUCCESS)
			return err;
		return memif_per_thread_create_socket(db, &socket, socket_name.c_str(), nullptr);
	}

	// args.socket is filled in; other fields as given.
	int create(memif_conn_args_t args, bool with_interrupt_callback = false)
	{
		args.socket = socket;
		return memif_create(&conn, &args, on_connect, on_disconnect,
				    with_interrupt_callback ? on_interrupt : nullptr, this);
	}

	void close()
	{
		if (conn != nullptr)
			memif_delete(&conn);
		if (socket != nullptr)
			memif_delete_socket(&socket);
		if (db != nullptr)
			memif_per_thread_cleanup(&db);
	}
	~Endpoint() { close(); }

	void poll_all() const
	{
		// Each call handles at most one event: drain what is ready.
		for (int i = 0; i < 64; ++i)
			if (db == nullptr || memif_per_thread_poll_event(db, 0) != MEMIF_ERR_SUCCESS)
				break;
	}
};

inline memif_conn_args_t make_args(bool master, uint32_t id = 0)
{
	memif_conn_args_t args;
	std::memset(&args, 0, sizeof args);
	args.is_master = master ? 1 : 0;
	args.interface_id = id;
	std::strcpy(reinterpret_cast<char *>(args.interface_name), master ? "server-if" : "client-if");
	return args;
}

// Runs `step` until `done` holds or the time runs out; returns done().
inline bool run_until(const std::function<bool()> &done, const std::function<void()> &step, int timeout_ms = 5000)
{
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	while (!done()) {
		if (std::chrono::steady_clock::now() > deadline)
			return false;
		step();
		usleep(100);
	}
	return true;
}

// Byte i of packet `sequence`: depends on both, so reordering and corruption show.
inline uint8_t pattern_byte(uint32_t sequence, size_t i)
{
	return uint8_t((sequence * 131u) ^ (i * 7u) ^ (i >> 8));
}

} // namespace memif_test
