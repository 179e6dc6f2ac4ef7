// softdpu/apsh.h, pausing a QEMU guest for a consistent query: thin forwarders over
// pause_qemu_guest/resume_qemu_guest (introspection.hpp).
#include "apsh/introspection.hpp"
#include "common/api_barrier.hpp"
#include "device/memory_source.hpp"

#include <softdpu/apsh.h>

#include <cstring>
#include <string>

using softdpu::apsh::Status;
using softdpu::common::api_barrier;

namespace {

void copy_error(const std::string &text, char *error, size_t error_size)
{
	if (error == nullptr || error_size == 0)
		return;
	const size_t length = std::min(text.size(), error_size - 1);
	std::memcpy(error, text.data(), length);
	error[length] = '\0';
}

// The QMP socket of a memory source, or a reason why there is none.
bool qmp_socket_of(const char *memory_source, std::string &socket, std::string &why)
{
	if (memory_source == nullptr) {
		why = "NULL memory source";
		return false;
	}
	auto source = softdpu::device::parse_memory_source_spec(memory_source, why);
	if (!source)
		return false;
	if (source->qmp_socket.empty()) {
		why = std::string("memory source \"") + memory_source + "\" has no QMP socket (add ,qmp=SOCKET)";
		return false;
	}
	socket = source->qmp_socket;
	return true;
}

} // namespace

extern "C" {

doca_error_t softdpu_apsh_guest_pause(const char *memory_source, bool *was_running, char *error, size_t error_size)
{
	copy_error("", error, error_size);
	if (was_running == nullptr) {
		copy_error("NULL was_running", error, error_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*was_running = false;
	return api_barrier(__func__, [&] {
		std::string socket, why;
		if (!qmp_socket_of(memory_source, socket, why)) {
			copy_error(why, error, error_size);
			return DOCA_ERROR_INVALID_VALUE;
		}
		const Status status = softdpu::apsh::pause_qemu_guest(socket, *was_running);
		copy_error(status.reason, error, error_size);
		return status.code;
	});
}

doca_error_t softdpu_apsh_guest_resume(const char *memory_source, char *error, size_t error_size)
{
	copy_error("", error, error_size);
	return api_barrier(__func__, [&] {
		std::string socket, why;
		if (!qmp_socket_of(memory_source, socket, why)) {
			copy_error(why, error, error_size);
			return DOCA_ERROR_INVALID_VALUE;
		}
		const Status status = softdpu::apsh::resume_qemu_guest(socket);
		copy_error(status.reason, error, error_size);
		return status.code;
	});
}

} // extern "C"
