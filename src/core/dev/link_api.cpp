// softdpu/link.h: the packet links of the process topology (src/device/link). Argument checks,
// then the link table answers.
#include <softdpu/link.h>

#include "common/run_dir.hpp"
#include "common/sdk_log.hpp"
#include "device/link/link_stats.hpp"
#include "device/link/links.hpp"
#include "device/topology.hpp"

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include <unistd.h>

using softdpu::device::Link;
using softdpu::device::LinkEnd;
using softdpu::device::LinkStatsFile;
using softdpu::device::LinkTable;
using softdpu::device::Topology;

namespace {

template <size_t N> void copy_field(char (&out)[N], const std::string &value) noexcept
{
	// Names, ifaces and socket paths are bounded by the topology's limits and kLinkMaxSocketPath.
	const size_t length = std::min(value.size(), N - 1);
	std::memcpy(out, value.data(), length);
	out[length] = '\0';
}

void fill_end(softdpu_link_end &out, const LinkEnd &end) noexcept
{
	copy_field(out.owner, end.owner);
	copy_field(out.iface, end.iface);
	copy_field(out.side, std::string(end.is_outside() ? "outside" : to_string(end.side)));
	out.is_master = end.role == softdpu::device::LinkRole::server ? 1 : 0;
}

void fill(softdpu_link &out, const Link &link) noexcept
{
	out = {};
	copy_field(out.name, link.name);
	out.kind = link.kind == softdpu::device::LinkKind::representor ? SOFTDPU_LINK_KIND_REPRESENTOR
		   : link.kind == softdpu::device::LinkKind::uplink    ? SOFTDPU_LINK_KIND_UPLINK
								       : SOFTDPU_LINK_KIND_EXTERNAL;
	copy_field(out.socket, link.socket);
	out.interface_id = link.interface_id;
	out.buffer_size = link.buffer_size;
	out.log2_ring_size = link.log2_ring_size;
	fill_end(out.server, link.server);
	fill_end(out.client, link.client);
}

// The links of the process topology, or an error code with the reason logged.
doca_error_t current_links(LinkTable &table)
{
	bool out_of_memory = false;
	const std::shared_ptr<const Topology> topology = Topology::current_shared(&out_of_memory);
	if (topology == nullptr) {
		if (out_of_memory)
			return DOCA_ERROR_NO_MEMORY;
		SDK_LOG_ERR("links: cannot load the topology: %s", Topology::current_error().c_str());
		return DOCA_ERROR_INITIALIZATION;
	}
	table = softdpu::device::links_of(*topology, softdpu::common::run_directory());
	if (!table.error.empty()) {
		SDK_LOG_ERR("links: %s", table.error.c_str());
		return DOCA_ERROR_INITIALIZATION;
	}
	return DOCA_SUCCESS;
}

// The public counters are the device layer's, field for field: the keeper writes through the pointer.
static_assert(sizeof(softdpu_link_stats) == sizeof(softdpu::device::LinkStats));
static_assert(offsetof(softdpu_link_stats, tx) == offsetof(softdpu::device::LinkStats, tx));
static_assert(offsetof(softdpu_link_counters, drops) == offsetof(softdpu::device::LinkCounters, drops));

// The counters file of link_name's server or client end: its path, or an error code.
doca_error_t stats_path(const char *link_name, uint8_t is_master, std::string &path)
{
	LinkTable table;
	if (const doca_error_t status = current_links(table); status != DOCA_SUCCESS)
		return status;
	for (const Link &link : table.links) {
		if (link.name == link_name) {
			path = softdpu::device::link_stats_path(softdpu::common::run_directory(), link.name,
								is_master != 0 ? softdpu::device::LinkRole::server
									       : softdpu::device::LinkRole::client);
			return DOCA_SUCCESS;
		}
	}
	return DOCA_ERROR_NOT_FOUND;
}

} // namespace

// The keeper's handle (softdpu/link.h's opaque struct).
struct softdpu_link_stats_file {
	std::unique_ptr<LinkStatsFile> file;
};

extern "C" {

doca_error_t softdpu_link_get_count(uint32_t *count)
{
	if (count == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		LinkTable table;
		if (const doca_error_t status = current_links(table); status != DOCA_SUCCESS)
			return status;
		*count = static_cast<uint32_t>(table.links.size());
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t softdpu_link_get(uint32_t index, struct softdpu_link *link)
{
	if (link == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		LinkTable table;
		if (const doca_error_t status = current_links(table); status != DOCA_SUCCESS)
			return status;
		if (index >= table.links.size())
			return DOCA_ERROR_NOT_FOUND;
		fill(*link, table.links[index]);
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t softdpu_link_find(const char *name, struct softdpu_link *link, uint8_t *is_master)
{
	if (name == nullptr || link == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		LinkTable table;
		if (const doca_error_t status = current_links(table); status != DOCA_SUCCESS)
			return status;
		const auto end = softdpu::device::find_link_end(table, name);
		if (!end)
			return DOCA_ERROR_NOT_FOUND;
		fill(*link, *end->link);
		if (is_master != nullptr)
			*is_master = end->is_server ? 1 : 0;
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t softdpu_link_get_socket_dir(char *dir, size_t size, uint8_t create)
{
	if (dir == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		const std::string path = softdpu::device::link_socket_directory(softdpu::common::run_directory());
		if (path.size() >= size)
			return DOCA_ERROR_INVALID_VALUE;
		if (create != 0) {
			if (const int err = softdpu::common::make_run_directory(path); err != 0) {
				SDK_LOG_ERR("links: cannot create %s: %s", path.c_str(), std::strerror(err));
				return DOCA_ERROR_OPERATING_SYSTEM;
			}
		}
		std::memcpy(dir, path.c_str(), path.size() + 1);
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t softdpu_link_stats_create(const char *link_name, uint8_t is_master, struct softdpu_link_stats_file **file,
				       struct softdpu_link_stats **stats)
{
	if (link_name == nullptr || file == nullptr || stats == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		std::string path;
		if (const doca_error_t status = stats_path(link_name, is_master, path); status != DOCA_SUCCESS)
			return status;
		const std::string dir = softdpu::device::link_socket_directory(softdpu::common::run_directory());
		if (const int err = softdpu::common::make_run_directory(dir); err != 0) {
			SDK_LOG_ERR("links: cannot create %s: %s", dir.c_str(), std::strerror(err));
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
		LinkStatsFile::Created created = LinkStatsFile::create(path, static_cast<uint32_t>(getpid()));
		if (created.file == nullptr) {
			SDK_LOG_ERR("links: counters of link %s's %s end: %s", link_name,
				    is_master != 0 ? "server" : "client", created.reason.c_str());
			return created.error == LinkStatsFile::Error::in_use ? DOCA_ERROR_IN_USE
									     : DOCA_ERROR_OPERATING_SYSTEM;
		}
		auto handle = std::make_unique<softdpu_link_stats_file>();
		*stats = reinterpret_cast<softdpu_link_stats *>(created.file->stats());
		handle->file = std::move(created.file);
		*file = handle.release();
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t softdpu_link_stats_destroy(struct softdpu_link_stats_file *file)
{
	if (file == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	delete file;
	return DOCA_SUCCESS;
}

doca_error_t softdpu_link_stats_read(const char *link_name, uint8_t is_master, struct softdpu_link_stats *stats,
				     uint32_t *pid)
{
	if (link_name == nullptr || stats == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		std::string path;
		if (const doca_error_t status = stats_path(link_name, is_master, path); status != DOCA_SUCCESS)
			return status;
		const auto reading = softdpu::device::read_link_stats(path);
		if (!reading)
			return DOCA_ERROR_NOT_FOUND;
		stats->rx = {reading->stats.rx.packets, reading->stats.rx.bytes, reading->stats.rx.drops};
		stats->tx = {reading->stats.tx.packets, reading->stats.tx.bytes, reading->stats.tx.drops};
		if (pid != nullptr)
			*pid = reading->pid;
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

} // extern "C"
