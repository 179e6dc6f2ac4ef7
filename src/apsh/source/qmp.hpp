// The RAM layout of a running QEMU guest, asked over its QMP socket: `qmp_capabilities`, then
// `human-monitor-command` with `info mtree -f`. The flat view of the "memory" address space
// lists each RAM piece as "start-end (prio N, ram): <backend> @<offset in the backend>".
#pragma once

#include "apsh/introspection.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace softdpu::apsh::source {

// Connects, negotiates and parses; every socket wait is bounded (a few seconds).
Status query_qmp_ram_ranges(const std::string &socket_path, std::vector<RamRange> &out);

// Parses `info mtree -f` text: the RAM backend's pieces in the "memory" address space, merged
// where contiguous. Fails when the text has no such view.
Status parse_mtree_ram_ranges(std::string_view text, std::vector<RamRange> &out);

} // namespace softdpu::apsh::source
