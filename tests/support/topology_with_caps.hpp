// The built-in topology with one function's capabilities replaced: how tests reach the documented
// NOT_SUPPORTED (and similar) returns that depend on what a device can do.
#pragma once

#include "device/topology.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace softdpu_test {

// The built-in default topology as `side` sees it, where the function named `function` (host or DPU)
// has capabilities `caps` and the defaults for the rest; null, with a test failure, if it does not load.
inline std::shared_ptr<const softdpu::device::Topology>
default_topology_with_caps(softdpu::device::Side side, const std::string &function, const nlohmann::json &caps)
{
	auto text = nlohmann::json::parse(softdpu::device::Topology::builtin_default_text());
	bool found = false;
	for (const char *section : {"host", "dpu"}) {
		for (auto &entry : text[section]["functions"]) {
			if (entry["name"] == function) {
				entry["caps"] = caps;
				found = true;
			}
		}
	}
	if (!found) {
		ADD_FAILURE() << "the built-in topology has no function " << function;
		return nullptr;
	}
	auto parsed = softdpu::device::Topology::parse(text.dump(), function + "-with-caps.json", side);
	if (!parsed.topology)
		ADD_FAILURE() << parsed.error;
	return parsed.topology;
}

} // namespace softdpu_test
