// Fuzz target: the topology parser must accept or reject any bytes with an error message, never
// crash, and whatever it accepts must satisfy the topology's invariants.
#include "device/topology.hpp"

#include <cstdint>
#include <set>
#include <string_view>

using softdpu::device::FuncType;
using softdpu::device::PciAddress;
using softdpu::device::Side;
using softdpu::device::Topology;

namespace {

void require(bool condition)
{
	if (!condition)
		__builtin_trap();
}

void check_invariants(const Topology &topology)
{
	std::set<std::string_view> names;
	for (const auto &function : topology.all_functions()) {
		require(names.insert(function->name).second);
		require((function->type == FuncType::pf) == (function->parent == nullptr));
		if (function->parent != nullptr)
			require(function->parent->side == function->side && function->parent->type == FuncType::pf);
		// Formatting and parsing an address round-trips.
		require(PciAddress::parse(function->pci.to_string()) == function->pci);
		require(topology.find_function(function->name) == function.get());
	}
	for (const auto &rep : topology.representors()) {
		require(names.insert(rep->name).second);
		require(rep->manager != nullptr && rep->manager->side == Side::dpu &&
			rep->manager->type == FuncType::pf);
		require(rep->is_emulated() == (rep->represents == nullptr));
		if (rep->represents != nullptr)
			require(topology.representor_of(*rep->represents) == rep.get());
	}
	for (const auto *function : topology.local_functions())
		require(function->side == topology.side());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	for (Side side : {Side::host, Side::dpu}) {
		Topology::ParseResult result = Topology::parse(text, "<fuzz>", side);
		require((result.topology == nullptr) != result.error.empty());
		if (result.topology)
			check_invariants(*result.topology);
		else
			require(result.error.starts_with("<fuzz>: "));
	}
	// The address parser sees arbitrary strings through doca_devinfo_is_equal_pci_addr.
	if (auto address = PciAddress::parse(text))
		require(PciAddress::parse(address->to_string()) == address);
	return 0;
}
