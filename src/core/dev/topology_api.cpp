// softdpu/topology.h: the emulated topology behind doca_dev.h. Argument checks, then the
// device table and the topology (src/device) answer.
#include <softdpu/topology.h>

#include "core/dev/dev.hpp"
#include "device/memory_source.hpp"
#include "device/topology.hpp"

#include <cstring>
#include <new>
#include <string>

using softdpu::device::Function;
using softdpu::device::Representor;
using softdpu::device::Topology;

namespace {

// Copies a value with its NUL into a caller buffer of `size` bytes.
doca_error_t copy_out(const std::string &value, char *out, uint32_t size) noexcept
{
	if (value.size() >= size)
		return DOCA_ERROR_INVALID_VALUE;
	std::memcpy(out, value.c_str(), value.size() + 1);
	return DOCA_SUCCESS;
}

// An error message for an optional caller buffer, truncated to fit.
void copy_error(const std::string &message, char *error, size_t error_size) noexcept
{
	if (error == nullptr || error_size == 0)
		return;
	const size_t length = std::min(message.size(), error_size - 1);
	std::memcpy(error, message.data(), length);
	error[length] = '\0';
}

std::string memory_spec(const softdpu::device::MemorySource &source)
{
	std::string spec = std::string(to_string(source.kind)) + ":" + source.path;
	if (!source.qmp_socket.empty())
		spec += ",qmp=" + source.qmp_socket;
	return spec;
}

std::string devinfo_value(const doca_devinfo &devinfo, softdpu_devinfo_attr attr, bool &known)
{
	const Function &f = devinfo.function();
	const Topology &topology = devinfo.table().topology();
	known = true;
	switch (attr) {
	case SOFTDPU_DEVINFO_NAME:
		return f.name;
	case SOFTDPU_DEVINFO_FUNC_TYPE:
		return to_string(f.type);
	case SOFTDPU_DEVINFO_PARENT:
		return f.parent != nullptr ? f.parent->name : std::string();
	case SOFTDPU_DEVINFO_VUID:
		return f.vuid;
	case SOFTDPU_DEVINFO_LINK_LAYER:
		return to_string(f.link_layer);
	case SOFTDPU_DEVINFO_DPU_MANAGER:
	case SOFTDPU_DEVINFO_DPU_MANAGER_PCI: {
		const Function *manager = f.side == softdpu::device::Side::host ? topology.dpu_manager_of(f) : nullptr;
		if (manager == nullptr)
			return std::string();
		return attr == SOFTDPU_DEVINFO_DPU_MANAGER ? manager->name : manager->pci.to_string();
	}
	case SOFTDPU_DEVINFO_DPU_REPRESENTOR: {
		const Representor *rep = f.side == softdpu::device::Side::host ? topology.representor_of(f) : nullptr;
		return rep != nullptr ? rep->name : std::string();
	}
	}
	known = false;
	return std::string();
}

std::string rep_value(const Representor &rep, softdpu_devinfo_rep_attr attr, bool &known)
{
	known = true;
	switch (attr) {
	case SOFTDPU_DEVINFO_REP_NAME:
		return rep.name;
	case SOFTDPU_DEVINFO_REP_IFACE:
		return rep.iface;
	case SOFTDPU_DEVINFO_REP_EMULATION:
		return rep.emulation;
	case SOFTDPU_DEVINFO_REP_REPRESENTS:
		return rep.represents != nullptr ? rep.represents->name : std::string();
	case SOFTDPU_DEVINFO_REP_MEMORY:
		return rep.memory ? memory_spec(*rep.memory) : std::string();
	}
	known = false;
	return std::string();
}

} // namespace

extern "C" {

doca_error_t softdpu_devinfo_get_str(const struct doca_devinfo *devinfo, enum softdpu_devinfo_attr attr, char *value,
				     uint32_t size)
{
	if (devinfo == nullptr || value == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		bool known = false;
		const std::string text = devinfo_value(*devinfo, attr, known);
		return known ? copy_out(text, value, size) : DOCA_ERROR_INVALID_VALUE;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t softdpu_devinfo_rep_get_str(const struct doca_devinfo_rep *devinfo_rep, enum softdpu_devinfo_rep_attr attr,
					 char *value, uint32_t size)
{
	if (devinfo_rep == nullptr || value == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	try {
		bool known = false;
		const std::string text = rep_value(devinfo_rep->representor(), attr, known);
		return known ? copy_out(text, value, size) : DOCA_ERROR_INVALID_VALUE;
	} catch (const std::bad_alloc &) {
		return DOCA_ERROR_NO_MEMORY;
	}
}

doca_error_t softdpu_devinfo_get_is_available(const struct doca_devinfo *devinfo, uint8_t *available)
{
	if (devinfo == nullptr || available == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*available = devinfo->function().available ? 1 : 0;
	return DOCA_SUCCESS;
}

doca_error_t softdpu_devinfo_get_mmap_max_num_devices(const struct doca_devinfo *devinfo, uint32_t *max_devices)
{
	if (devinfo == nullptr || max_devices == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*max_devices = devinfo->caps().mmap_max_devices;
	return DOCA_SUCCESS;
}

doca_error_t softdpu_topology_get_current(const char **source, const char **side)
{
	if (source == nullptr || side == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	bool out_of_memory = false;
	const std::shared_ptr<const Topology> topology = Topology::current_shared(&out_of_memory);
	if (topology == nullptr) {
		*side = nullptr;
		*source = out_of_memory ? "out of memory" : Topology::current_error().c_str();
		return out_of_memory ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_NOT_FOUND;
	}
	// Every topology that was current stays alive (topology.hpp), so its source text does too.
	*source = topology->source().c_str();
	*side = to_string(topology->side());
	return DOCA_SUCCESS;
}

doca_error_t softdpu_topology_check_file(const char *path, struct softdpu_topology_counts *counts, char *error,
					 size_t error_size)
{
	copy_error("", error, error_size);
	if (path == nullptr || counts == nullptr) {
		copy_error("NULL path or counts", error, error_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	try {
		// The side only selects which functions are local; validation is the same for both.
		Topology::ParseResult result = Topology::load_file(path, softdpu::device::Side::dpu);
		if (!result.topology) {
			copy_error(result.out_of_memory ? std::string(path) + ": out of memory" : result.error, error,
				   error_size);
			return result.out_of_memory ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_INVALID_VALUE;
		}
		*counts = {};
		for (const auto &function : result.topology->all_functions())
			++(function->side == softdpu::device::Side::host ? counts->host_functions
									 : counts->dpu_functions);
		counts->representors = static_cast<uint32_t>(result.topology->representors().size());
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		copy_error("out of memory", error, error_size);
		return DOCA_ERROR_NO_MEMORY;
	}
}

const char *softdpu_topology_get_default_text(void)
{
	// A string literal compiled into the library (NUL-terminated).
	return Topology::builtin_default_text().data();
}

doca_error_t softdpu_memory_source_check(const char *spec, char *path, size_t path_size, char *error, size_t error_size)
{
	copy_error("", error, error_size);
	if (spec == nullptr) {
		copy_error("NULL memory source", error, error_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	try {
		std::string reason;
		auto source = softdpu::device::parse_memory_source_spec(spec, reason);
		if (!source) {
			copy_error(reason, error, error_size);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (path != nullptr) {
			if (softdpu::device::is_process_kind(source->kind))
				source->path.clear(); // a running QEMU process: no file
			if (source->path.size() >= path_size) {
				copy_error("memory source path too long", error, error_size);
				return DOCA_ERROR_INVALID_VALUE;
			}
			std::memcpy(path, source->path.c_str(), source->path.size() + 1);
		}
		return DOCA_SUCCESS;
	} catch (const std::bad_alloc &) {
		copy_error("out of memory", error, error_size);
		return DOCA_ERROR_NO_MEMORY;
	}
}

} // extern "C"
